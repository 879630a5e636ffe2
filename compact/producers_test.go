package compact

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logtool/logtool/logfmt/layout"
	"github.com/logtool/logtool/logfmt/snapshot"
)

// TestCorruptSnapshotSkipped: a producer snapshot that does not parse is
// passed over for the next older one, as Kafka's loader does
// (logseg.LatestSnapshot), and the result says so.
func TestCorruptSnapshotSkipped(t *testing.T) {
	b := newLog(t)
	for i := range 6 {
		b.plain(rec(i))
	}
	dir := b.flush()
	snap := func(at int64) string { return filepath.Join(dir, layout.SegmentName(at, layout.SnapshotExt)) }
	// The older snapshot holds a transaction the log does not show, so
	// which snapshot was loaded is seen in the last stable offset.
	older := snapshot.Append(nil, []snapshot.Entry{{ProducerID: 9, LastSequence: -1, LastOffset: -1, Timestamp: t0, CoordinatorEpoch: -1, CurrentTxnFirstOffset: 2}})
	if err := os.WriteFile(snap(3), older, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(snap(6), []byte("not a snapshot"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Plan(dir, testOptions(t0+day))
	if err != nil {
		t.Fatal(err)
	}
	if r.LastStableOffset != 2 {
		t.Errorf("last stable offset %d, want 2 from the snapshot at 3", r.LastStableOffset)
	}
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "unreadable producer snapshot") || !strings.Contains(r.Warnings[0], filepath.Base(snap(6))) {
		t.Errorf("warnings %q, want one naming the corrupt snapshot", r.Warnings)
	}
	if _, err := os.Stat(snap(6)); err != nil {
		t.Errorf("the corrupt snapshot is gone: %v", err)
	}
}
