package reindex

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/logtool/logtool/internal/testkit/kafkasamples"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/layout"
	"github.com/logtool/logtool/logfmt/snapshot"
)

// TestSnapshotEntries: each producer's entry follows ProducerStateEntry: a
// data batch is the producer's last, a marker sets the coordinator epoch
// and timestamp and ends the transaction, a new epoch forgets the batch,
// an empty control batch only makes the producer known.
func TestSnapshotEntries(t *testing.T) {
	p := NewProducerState()
	specs := []batchSpec{data(7, 0, 3, true), marker(7, 3, logfmt.ControlCommit), data(8, 4, 2, false), data(7, 6, 1, true)}
	if _, errs := applyAll(t, p, specs); len(errs) > 0 {
		t.Fatal(errs)
	}
	empty := batchSpec{base: 7, n: 0, pid: 9, txn: true, isMarker: true}
	if _, errs := applyAll(t, p, []batchSpec{empty}); len(errs) > 0 {
		t.Fatal(errs)
	}
	const ts = 1_700_000_000_000
	want := []snapshot.Entry{
		{ProducerID: 7, Epoch: 0, LastSequence: 0, LastOffset: 6, OffsetDelta: 0, Timestamp: ts + 6, CoordinatorEpoch: 0, CurrentTxnFirstOffset: 6},
		{ProducerID: 8, Epoch: 0, LastSequence: 1, LastOffset: 5, OffsetDelta: 1, Timestamp: ts + 5, CoordinatorEpoch: -1, CurrentTxnFirstOffset: -1},
		{ProducerID: 9, Epoch: -1, LastSequence: -1, LastOffset: -1, Timestamp: -1, CoordinatorEpoch: -1, CurrentTxnFirstOffset: -1},
	}
	if got := p.Snapshot(); !slices.Equal(got, want) {
		t.Errorf("snapshot\n got %+v\nwant %+v", got, want)
	}
	// A marker of a new epoch forgets the producer's last batch.
	m := marker(7, 7, logfmt.ControlAbort)
	b := logfmt.Batch{Data: m.bytes(t)}
	b.Data[51], b.Data[52] = 0, 1 // producer epoch 1; outside the CRC
	if _, _, err := p.Apply(&b, &logfmt.RecordIter{}); err != nil {
		t.Fatal(err)
	}
	if e := p.Snapshot()[0]; e.Epoch != 1 || e.LastOffset != -1 || e.LastSequence != -1 || e.Timestamp != ts+7 || e.CurrentTxnFirstOffset != -1 {
		t.Errorf("after an epoch bump: %+v", e)
	}
}

// TestSnapshotMatchesBroker replays real brokers' logs and compares the
// state with the snapshot the broker wrote at the log end.
func TestSnapshotMatchesBroker(t *testing.T) {
	samples := kafkasamples.Dir("logdirs")
	snaps, _ := filepath.Glob(filepath.Join(samples, "*", "*", "*.snapshot"))
	if len(snaps) == 0 {
		kafkasamples.Skip(t, errors.New("no samples at "+samples))
	}
	checked := 0
	for _, snap := range snaps {
		b, err := os.ReadFile(snap)
		if err != nil {
			t.Fatal(err)
		}
		want, err := snapshot.Parse(b, snap)
		if err != nil || len(want) == 0 {
			continue
		}
		part, err := layout.ReadPartition(filepath.Dir(snap))
		if err != nil || len(part.Segments) == 0 || part.Segments[0].Base != 0 {
			continue
		}
		at, _ := snapshot.OffsetFromName(filepath.Base(snap))
		p := NewProducerState()
		it := &logfmt.RecordIter{}
		leo := int64(0)
		for _, s := range part.Segments {
			seg, err := logfmt.OpenSegment(s.Log)
			if err != nil {
				t.Fatal(err)
			}
			for seg.Next() && seg.Batch().LastOffset() < at {
				if _, _, err := p.Apply(seg.Batch(), it); err != nil {
					t.Fatal(err)
				}
				leo = seg.Batch().LastOffset() + 1
			}
			seg.Close()
		}
		if leo != at {
			continue
		}
		if got := p.Snapshot(); !slices.Equal(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", snap, got, want)
		}
		checked++
	}
	t.Logf("%d broker snapshots checked", checked)
}
