package reindex

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/internal/lockfile"
	"github.com/logtool/logtool/logfmt/checkpoint"
	"github.com/logtool/logtool/logfmt/layout"
)

// TestNewEndNeedsLockAndDropsEpochs (issue 36, C): a cut of the last
// segment rewrites the log directory's recovery point checkpoint only under
// the directory's lock; without it the run fails before the .log is
// touched. With it, the leader epochs starting at or past the new log end
// are dropped too, as LeaderEpochFileCache.truncateFromEnd drops them, and
// the per-partition cleaner checkpoint is lowered to it. A log start offset
// past the new end, which makes a broker delete every segment, is warned of.
func TestNewEndNeedsLockAndDropsEpochs(t *testing.T) {
	dir := genPartition(t, gen.Options{Magic: 2, Records: 300, BatchRecords: 5, Seed: 36})
	logDir := filepath.Dir(dir)
	log := filepath.Join(dir, layout.SegmentName(0, layout.LogExt))
	bs := batchesOf(t, log)
	bad := bs[len(bs)/2]
	flipByte(t, log, bad.pos+62)
	end := bad.base // the log end offset after the cut
	epochs := filepath.Join(dir, layout.LeaderEpochCheckpointFile)
	if err := os.WriteFile(epochs, checkpoint.AppendLeaderEpochs(nil, []checkpoint.EpochEntry{{Epoch: 0, StartOffset: 0}, {Epoch: 1, StartOffset: end}}), 0o644); err != nil {
		t.Fatal(err)
	}
	cleaner := filepath.Join(dir, layout.CleanerCheckpointFile)
	if err := os.WriteFile(cleaner, checkpoint.AppendCleaner(nil, checkpoint.CleanerCheckpoint{FirstDirtyOffset: end + 7, LastCleanTimeMs: 42}), 0o644); err != nil {
		t.Fatal(err)
	}
	// DeleteRecords moved the log start into the records the cut removes.
	logStart := filepath.Join(logDir, layout.LogStartOffsetCheckpointFile)
	if err := os.WriteFile(logStart, checkpoint.AppendOffsets(nil, []checkpoint.OffsetEntry{{Topic: "t", Partition: 0, Offset: end + 1}}), 0o644); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	o := all(Write)
	o.TruncateCorruptTail = true
	if _, err := Partition(dir, o); err == nil || !strings.Contains(err.Error(), "lock is not held") {
		t.Fatalf("without the lock: %v", err)
	}
	if b, _ := os.ReadFile(log); !slices.Equal(b, before) {
		t.Fatal("the .log was cut although its checkpoints could not be written")
	}

	l, err := lockfile.Acquire(logDir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	rep := mustPartition(t, dir, o)
	if len(rep.Checkpoints) != 4 {
		t.Errorf("checkpoints %v, want the recovery point, the high watermark, the leader epochs and the cleaner checkpoint\n%s", rep.Checkpoints, findingsText(rep))
	}
	if !strings.Contains(findingsText(rep), fmt.Sprintf("warning: the log start offset %d of t-0 is past the log end offset %d after the cut: a broker deletes every segment", end+1, end)) {
		t.Errorf("no warning about the log start offset\n%s", findingsText(rep))
	}
	if b, err := os.ReadFile(cleaner); err != nil || string(b) != fmt.Sprintf("1\n%d 42\n", end) {
		t.Errorf("cleaner-checkpoint %q, %v; want its first dirty offset at %d", b, err, end)
	}
	f, err := os.Open(epochs)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := checkpoint.ReadLeaderEpochs(f, epochs)
	if err != nil || !slices.Equal(got, []checkpoint.EpochEntry{{Epoch: 0, StartOffset: 0}}) {
		t.Errorf("leader epochs %v, %v; want epoch 0 alone", got, err)
	}
	rp, err := checkpoint.ReadOffsetsFile(filepath.Join(logDir, layout.RecoveryPointCheckpointFile))
	if err != nil || len(rp) != 1 || rp[0].Offset != end {
		t.Errorf("recovery points %v, %v; want %d", rp, err, end)
	}
}
