package grep

import (
	"errors"
	"testing"

	"github.com/logtool/logtool/internal/target"
	"github.com/logtool/logtool/logfmt/layout"
	"github.com/logtool/logtool/topicconfig"
)

// TestPlanAudit: a partition of a log dir with no configuration is
// audited as compact, with the command line's max lag; one the command
// line says is not compacted is not, and says why; a command line whose
// minimum lag exceeds the maximum is refused.
func TestPlanAudit(t *testing.T) {
	logDir := &target.LogDir{Path: t.TempDir()}
	tp := &target.Partition{Path: logDir.Path + "/t-0", Dir: layout.PartitionDir{Name: "t-0", Topic: "t", Partition: 0}, LogDir: logDir}
	for _, tc := range []struct {
		name      string
		overrides map[string]string
		skip      string
		audited   bool
		usage     bool
	}{
		{name: "no configuration", overrides: map[string]string{topicconfig.MaxCompactionLagMs: "1000"}, audited: true},
		{name: "delete", overrides: map[string]string{topicconfig.MaxCompactionLagMs: "1000", topicconfig.CleanupPolicy: "delete"},
			skip: "cleanup.policy=delete: no erasure deadline applies"},
		{name: "min over max", overrides: map[string]string{topicconfig.MaxCompactionLagMs: "1000", topicconfig.MinCompactionLagMs: "2000"}, usage: true},
	} {
		rt, err := topicconfig.LoadRun(&target.Set{}, topicconfig.Options{Overrides: tc.overrides})
		if err != nil {
			t.Fatal(err)
		}
		var rep Report
		rep.StartAudit(rt)
		var job Job
		skip, err := rep.PlanAudit(&job, rt, tp, 5000, 1<<20)
		if _, ok := errors.AsType[*target.UsageError](err); ok != tc.usage || !tc.usage && err != nil {
			t.Errorf("%s: error %v", tc.name, err)
			continue
		}
		if tc.usage {
			continue
		}
		if skip != tc.skip || rep.Skips[tp.Path] != tc.skip || (job.Audit != nil) != tc.audited {
			t.Errorf("%s: skip %q (report %q), audit %v", tc.name, skip, rep.Skips[tp.Path], job.Audit)
		}
		if tc.audited && job.Audit.Cleaner.MaxLag != 1000 {
			t.Errorf("%s: max lag %d, want 1000", tc.name, job.Audit.Cleaner.MaxLag)
		}
		if rep.Configs[tp.Path][topicconfig.CleanupPolicy].Value == "" {
			t.Errorf("%s: no cleanup.policy in the report's configs", tc.name)
		}
	}
}
