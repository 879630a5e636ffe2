package retention

import (
	"strings"
	"testing"

	"github.com/logtool/logtool/internal/target"
	"github.com/logtool/logtool/logfmt/layout"
	"github.com/logtool/logtool/topicconfig"
)

// TestReportAddInternalTopic: without a configuration source, an internal
// topic found in a log dir is left alone, as Kafka creates it compacted;
// named on the command line, or with a source, it is not.
func TestReportAddInternalTopic(t *testing.T) {
	cat, err := topicconfig.Load(nil, topicconfig.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		topic           string
		named, explicit bool
		skipped         bool
	}{
		{"__consumer_offsets", false, true, true},
		{"__consumer_offsets", true, true, false},
		{"__consumer_offsets", false, false, false},
		{"orders", false, true, false},
	} {
		cfg, err := cat.For("/d").Topic(c.topic)
		if err != nil {
			t.Fatal(err)
		}
		p := &target.Partition{Path: "/d/" + c.topic + "-0", Dir: layout.PartitionDir{Topic: c.topic}, Named: c.named}
		rep := &Report{}
		applied, err := rep.Add(p, cfg, "", c.explicit)
		skip := rep.jobs[p].Skip
		if err != nil || applied == c.skipped || (skip != "") != c.skipped || c.skipped && !strings.HasPrefix(skip, "an internal topic") {
			t.Errorf("%+v: applied %v, skip %q, err %v", c, applied, skip, err)
		}
		if rep.Configs[p.Path] != cfg {
			t.Errorf("%+v: config not kept for the report", c)
		}
	}
}
