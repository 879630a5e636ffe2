package compact

import (
	"strings"
	"testing"

	"github.com/logtool/logtool/topicconfig"
)

// TestReportTextReasons: the row's reason leaves out the max lag, which
// has its column, but not what a reason adds to it; the other reasons are
// notes.
func TestReportTextReasons(t *testing.T) {
	results := []*Result{
		{Name: "a-0", Eligible: true, SegmentsBefore: 2, FirstUncleanableOffset: 10, MaxLagExceededByMs: 3_600_000,
			Reason: "max lag exceeded by 1h; dirty ratio 0.60 > 0.50"},
		{Name: "b-0", SegmentsBefore: 2, FirstDirtyOffset: 5, FirstUncleanableOffset: 5, MaxLagExceededByMs: 3_600_000,
			Reason: "dirty ratio 0.20 <= 0.50; max lag exceeded by 1h but the segments past it are not cleanable yet"},
		{Name: "c-0", Eligible: true, SegmentsBefore: 1, FirstUncleanableOffset: 7, MaxLagExceededByMs: 60_000,
			Reason: "max lag exceeded by 1m"},
	}
	var b strings.Builder
	rep := &Report{Results: results, DryRun: true, Config: (&topicconfig.Run{}).NewReport(nil)}
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"a-0        yes       0-9                0 B   1h            dirty ratio 0.60 > 0.50\n",
		"b-0        no        none               0 B   1h            dirty ratio 0.20 <= 0.50\n",
		"c-0        yes       0-6                0 B   1m            max lag\n",
		"\nb-0: max lag exceeded by 1h but the segments past it are not cleanable yet\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "a-0: max lag") || strings.Count(out, "max lag exceeded") != 1 {
		t.Errorf("the max lag repeated:\n%s", out)
	}
}
