package logseg

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/logtool/logtool/index"
	"github.com/logtool/logtool/internal/testkit/kafkasamples"
	"github.com/logtool/logtool/internal/testkit/txnbatch"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/layout"
	"github.com/logtool/logtool/logfmt/snapshot"
)

func applyAll(t *testing.T, p *ProducerState, specs []txnbatch.Spec) ([]index.AbortedTxn, []error) {
	t.Helper()
	var got []index.AbortedTxn
	var errs []error
	it := &logfmt.RecordIter{}
	for _, s := range specs {
		b := logfmt.Batch{Data: s.Bytes(t)}
		a, ok, err := p.Apply(&b, it)
		if err != nil {
			errs = append(errs, err)
		}
		if ok {
			got = append(got, a)
		}
	}
	return got, errs
}

func TestProducerStateApply(t *testing.T) {
	const a, b, c = 10, 20, 30
	for _, tc := range []struct {
		name    string
		load    []snapshot.Entry
		batches []txnbatch.Spec
		want    []index.AbortedTxn
		errs    int
		open    int
	}{{
		name: "the last stable offset is the earliest other open transaction",
		batches: []txnbatch.Spec{txnbatch.Data(a, 0, 2, true), txnbatch.Data(b, 2, 2, true), txnbatch.Data(c, 4, 1, false),
			txnbatch.Marker(a, 5, logfmt.ControlAbort), txnbatch.Marker(b, 6, logfmt.ControlAbort)},
		want: []index.AbortedTxn{{ProducerID: a, FirstOffset: 0, LastOffset: 5, LastStableOffset: 2}, {ProducerID: b, FirstOffset: 2, LastOffset: 6, LastStableOffset: 7}},
	}, {
		name: "a transaction starts at its first transactional batch",
		batches: []txnbatch.Spec{txnbatch.Data(a, 0, 2, true), txnbatch.Data(a, 2, 2, true), txnbatch.Data(b, 4, 1, true), txnbatch.Data(a, 5, 1, true),
			txnbatch.Marker(b, 6, logfmt.ControlAbort), txnbatch.Marker(a, 7, logfmt.ControlAbort)},
		want: []index.AbortedTxn{{ProducerID: b, FirstOffset: 4, LastOffset: 6, LastStableOffset: 0}, {ProducerID: a, FirstOffset: 0, LastOffset: 7, LastStableOffset: 8}},
	}, {
		name:    "commits and markers of closed transactions index nothing",
		batches: []txnbatch.Spec{txnbatch.Data(a, 0, 1, true), txnbatch.Marker(a, 1, logfmt.ControlCommit), txnbatch.Marker(a, 2, logfmt.ControlAbort), txnbatch.Marker(b, 3, logfmt.ControlAbort)},
	}, {
		name:    "an empty control batch completes nothing",
		batches: []txnbatch.Spec{txnbatch.Data(a, 0, 1, true), {Base: 1, N: 0, PID: a, Txn: true, IsMarker: true}},
		open:    1,
	}, {
		name:    "batches without a producer id do not count",
		batches: []txnbatch.Spec{txnbatch.Data(-1, 0, 3, false), {Base: 3, N: 1, PID: -1, IsMarker: true, Control: logfmt.ControlAbort}},
	}, {
		name:    "a snapshot's open transactions",
		load:    []snapshot.Entry{{ProducerID: a, CurrentTxnFirstOffset: 3}, {ProducerID: b, CurrentTxnFirstOffset: -1}, {ProducerID: c, CurrentTxnFirstOffset: 7}},
		batches: []txnbatch.Spec{txnbatch.Marker(a, 10, logfmt.ControlAbort), txnbatch.Marker(b, 11, logfmt.ControlAbort), txnbatch.Marker(c, 12, logfmt.ControlAbort)},
		want:    []index.AbortedTxn{{ProducerID: a, FirstOffset: 3, LastOffset: 10, LastStableOffset: 7}, {ProducerID: c, FirstOffset: 7, LastOffset: 12, LastStableOffset: 13}},
	}, {
		name:    "a plain batch inside a transaction stops Kafka's recovery",
		batches: []txnbatch.Spec{txnbatch.Data(a, 0, 1, true), txnbatch.Data(a, 1, 1, false), txnbatch.Marker(a, 2, logfmt.ControlAbort)},
		want:    []index.AbortedTxn{{ProducerID: a, FirstOffset: 0, LastOffset: 2, LastStableOffset: 3}},
		errs:    1,
	}, {
		name:    "a control record that is no marker stops Kafka's recovery",
		batches: []txnbatch.Spec{txnbatch.Data(a, 0, 1, true), {Base: 1, N: 1, PID: a, Txn: true, IsMarker: true, Control: logfmt.ControlLeaderChange}},
		errs:    1,
		open:    1,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			p := NewProducerState()
			p.Load(tc.load)
			got, errs := applyAll(t, p, tc.batches)
			if !slices.Equal(got, tc.want) {
				t.Errorf("entries %+v, want %+v", got, tc.want)
			}
			if len(errs) != tc.errs {
				t.Errorf("errors %v, want %d", errs, tc.errs)
			}
			for _, err := range errs {
				if _, ok := logfmt.AsCorrupt(err); !ok {
					t.Errorf("error %v is not a CorruptError", err)
				}
			}
			if p.Open() != tc.open {
				t.Errorf("%d open transactions, want %d", p.Open(), tc.open)
			}
		})
	}
}

// TestSnapshotEntries: each producer's entry follows ProducerStateEntry: a
// data batch is the producer's last, a marker sets the coordinator epoch
// and timestamp and ends the transaction, a new epoch forgets the batch,
// an empty control batch only makes the producer known.
func TestSnapshotEntries(t *testing.T) {
	p := NewProducerState()
	specs := []txnbatch.Spec{txnbatch.Data(7, 0, 3, true), txnbatch.Marker(7, 3, logfmt.ControlCommit), txnbatch.Data(8, 4, 2, false), txnbatch.Data(7, 6, 1, true)}
	if _, errs := applyAll(t, p, specs); len(errs) > 0 {
		t.Fatal(errs)
	}
	empty := txnbatch.Spec{Base: 7, N: 0, PID: 9, Txn: true, IsMarker: true}
	if _, errs := applyAll(t, p, []txnbatch.Spec{empty}); len(errs) > 0 {
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
	m := txnbatch.Marker(7, 7, logfmt.ControlAbort)
	b := logfmt.Batch{Data: m.Bytes(t)}
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

// TestLatestSnapshot: the snapshot loaded is the newest above the log start
// and at or below the offset that parses; one that does not is passed over
// and named, and left in place; one that cannot be read fails the load.
func TestLatestSnapshot(t *testing.T) {
	dir := t.TempDir()
	path := func(at int64) string { return filepath.Join(dir, layout.SegmentName(at, layout.SnapshotExt)) }
	good := snapshot.Append(nil, []snapshot.Entry{{ProducerID: 4, CurrentTxnFirstOffset: -1}})
	for at, b := range map[int64][]byte{2: good, 3: good, 5: []byte("not a snapshot"), 9: good} {
		if err := os.WriteFile(path(at), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	paths := []string{path(2), path(9), path(5), path(3)} // in no order
	c, err := LatestSnapshot(paths, 2, 8)
	if err != nil {
		t.Fatal(err)
	}
	if c.Offset != 3 || c.Path != path(3) || len(c.Entries) != 1 || c.Entries[0].ProducerID != 4 {
		t.Errorf("chose %d %s %+v, want the snapshot at 3", c.Offset, c.Path, c.Entries)
	}
	if len(c.Skipped) != 1 || c.Skipped[0].File != path(5) {
		t.Errorf("skipped %v, want the snapshot at 5", c.Skipped)
	}
	if _, err := os.Stat(path(5)); err != nil {
		t.Errorf("the corrupt snapshot is gone: %v", err)
	}
	if c, err := LatestSnapshot(paths, 3, 4); err != nil || c.Offset != 3 || c.Path != "" || c.Entries != nil {
		t.Errorf("none in range: %+v %v, want the log start and no entries", c, err)
	}
	if _, err := LatestSnapshot([]string{path(7)}, 0, 8); err == nil {
		t.Error("a snapshot that cannot be read was skipped, want the load to fail as Kafka's does")
	}
}
