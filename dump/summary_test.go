package dump

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSummaryLogAppendTime: under LogAppendTime a record's timestamp is its
// batch's maximum, the time the broker appended it; the base timestamp
// left from the producer is no record's. The Kafka Streams "rekey" topic of
// the Confluent 5.1.2 sample is LogAppendTime: its first batch's base
// timestamp is 1558748401612, its first record's 1558748402129.
func TestSummaryLogAppendTime(t *testing.T) {
	dir := filepath.Join(samples, "logdirs", "mscaldas2012_cp-5.1.2-lz4", "_confluent-controlcenter-5-1-2-1-actual-group-consumption-rekey-0")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("real broker samples not available: %v", err)
	}
	o := DefaultOptions()
	o.Summary = true
	_, objs := runJSON(t, o, dir)
	s := ofType(objs, "summary")
	if len(s) != 1 || s[0].num("firstTimestamp") != 1558748402129 || s[0].num("lastTimestamp") != 1558748655338 {
		t.Errorf("summary %v, want timestamps 1558748402129 to 1558748655338", s)
	}
}
