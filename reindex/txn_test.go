package reindex

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/logtool/logtool/index"
	"github.com/logtool/logtool/internal/testkit/indextest"
	"github.com/logtool/logtool/internal/testkit/txnbatch"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/checkpoint"
	"github.com/logtool/logtool/logfmt/layout"
	"github.com/logtool/logtool/logfmt/snapshot"
)

// writeSegments writes a partition t-0 in a new log directory, one segment
// per group of batches, and returns the partition directory.
func writeSegments(t *testing.T, segments ...[]txnbatch.Spec) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "t-0")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, seg := range segments {
		var log []byte
		for _, s := range seg {
			log = append(log, s.Bytes(t)...)
		}
		if err := os.WriteFile(filepath.Join(dir, layout.SegmentName(seg[0].Base, layout.LogExt)), log, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func writeSnapshot(t *testing.T, dir string, at int64, entries ...snapshot.Entry) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, layout.SegmentName(at, layout.SnapshotExt)), snapshot.Append(nil, entries), 0o644); err != nil {
		t.Fatal(err)
	}
}

func txnEntries(t *testing.T, dir string, base int64) []index.AbortedTxn {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, layout.SegmentName(base, layout.TxnIndexExt)))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	txns, probs := indextest.ParseTxnIndex(b, "")
	if len(probs) > 0 {
		t.Fatalf("%v", probs)
	}
	return txns
}

// TestTxnStateAtSegmentBase checks which producer state each segment's
// rebuild starts from: the latest snapshot above the log start and at or
// below the base, replayed up to the base, as LogLoader.recoverSegment
// builds it.
func TestTxnStateAtSegmentBase(t *testing.T) {
	const a, b = 7, 8
	segs := [][]txnbatch.Spec{
		{txnbatch.Data(a, 0, 2, true), txnbatch.Data(b, 2, 2, true), txnbatch.Data(-1, 4, 2, false)},
		{txnbatch.Marker(a, 6, logfmt.ControlAbort), txnbatch.Data(b, 7, 1, true)},
		{txnbatch.Marker(b, 8, logfmt.ControlAbort)},
	}
	abortA := index.AbortedTxn{ProducerID: a, FirstOffset: 0, LastOffset: 6, LastStableOffset: 2}
	abortB := index.AbortedTxn{ProducerID: b, FirstOffset: 2, LastOffset: 8, LastStableOffset: 9}
	for _, tc := range []struct {
		name     string
		setup    func(t *testing.T, dir string)
		seg6     []index.AbortedTxn
		seg8     []index.AbortedTxn
		segments []int64
	}{{
		name: "replayed from the log start",
		seg6: []index.AbortedTxn{abortA}, seg8: []index.AbortedTxn{abortB},
	}, {
		name: "snapshots at the bases",
		setup: func(t *testing.T, dir string) {
			writeSnapshot(t, dir, 6, snapshot.Entry{ProducerID: a, CurrentTxnFirstOffset: 0}, snapshot.Entry{ProducerID: b, CurrentTxnFirstOffset: 2})
		},
		seg6: []index.AbortedTxn{abortA}, seg8: []index.AbortedTxn{abortB},
	}, {
		name: "a snapshot inside an earlier segment, replayed from there",
		setup: func(t *testing.T, dir string) {
			writeSnapshot(t, dir, 2, snapshot.Entry{ProducerID: a, CurrentTxnFirstOffset: 0})
		},
		seg6:     []index.AbortedTxn{abortA},
		seg8:     []index.AbortedTxn{abortB},
		segments: []int64{6, 8},
	}, {
		name: "the snapshot wins over the log before it",
		setup: func(t *testing.T, dir string) {
			writeSnapshot(t, dir, 6, snapshot.Entry{ProducerID: b, CurrentTxnFirstOffset: 2})
		},
		seg8: []index.AbortedTxn{abortB},
	}, {
		name: "snapshots at or below the log start are not used",
		setup: func(t *testing.T, dir string) {
			writeSnapshot(t, dir, 6, snapshot.Entry{ProducerID: a, CurrentTxnFirstOffset: 0}, snapshot.Entry{ProducerID: b, CurrentTxnFirstOffset: 2})
			cp := checkpoint.AppendOffsets(nil, []checkpoint.OffsetEntry{{Topic: "t", Partition: 0, Offset: 6}})
			if err := os.WriteFile(filepath.Join(dir, "..", layout.LogStartOffsetCheckpointFile), cp, 0o644); err != nil {
				t.Fatal(err)
			}
		},
		// From the log start, 6: producer b's transaction opens at 7.
		seg8: []index.AbortedTxn{{ProducerID: b, FirstOffset: 7, LastOffset: 8, LastStableOffset: 9}},
	}, {
		// Segment 6 cannot use a snapshot at 7; segment 8 must, though it
		// contradicts the log: it replays from offset 7 on top of it.
		name: "a snapshot is used by the segments at or above it",
		setup: func(t *testing.T, dir string) {
			writeSnapshot(t, dir, 7, snapshot.Entry{ProducerID: a, CurrentTxnFirstOffset: 5})
		},
		seg6: []index.AbortedTxn{abortA},
		seg8: []index.AbortedTxn{{ProducerID: b, FirstOffset: 7, LastOffset: 8, LastStableOffset: 5}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeSegments(t, segs...)
			if tc.setup != nil {
				tc.setup(t, dir)
			}
			rep := mustPartition(t, dir, Options{Txn: true, Segments: tc.segments})
			if rep.Counts[Problem] != 0 {
				t.Fatalf("problems:\n%s", findingsText(rep))
			}
			if got := txnEntries(t, dir, 6); !slices.Equal(got, tc.seg6) {
				t.Errorf("segment 6: %+v, want %+v", got, tc.seg6)
			}
			if got := txnEntries(t, dir, 8); !slices.Equal(got, tc.seg8) {
				t.Errorf("segment 8: %+v, want %+v", got, tc.seg8)
			}
			if _, err := os.Stat(filepath.Join(dir, layout.SegmentName(0, layout.TxnIndexExt))); !os.IsNotExist(err) {
				t.Errorf("segment 0 has no aborted transaction but got a .txnindex (%v)", err)
			}
		})
	}
}

// TestTxnProblemsReported: a batch Kafka's recovery would fail on is a
// problem with its position, and the rebuild goes on.
func TestTxnProblemsReported(t *testing.T) {
	dir := writeSegments(t, []txnbatch.Spec{txnbatch.Data(3, 0, 1, true), txnbatch.Data(3, 1, 1, false), txnbatch.Marker(3, 2, logfmt.ControlAbort)})
	rep := mustPartition(t, dir, Options{Txn: true})
	if rep.Counts[Problem] != 1 || !strings.Contains(findingsText(rep), "InvalidTxnStateException") {
		t.Fatalf("want one problem about the plain batch:\n%s", findingsText(rep))
	}
	if f := rep.Findings[0]; f.Pos <= 0 {
		t.Errorf("position %d, want the plain batch's", f.Pos)
	}
	want := []index.AbortedTxn{{ProducerID: 3, FirstOffset: 0, LastOffset: 2, LastStableOffset: 3}}
	if got := txnEntries(t, dir, 0); !slices.Equal(got, want) {
		t.Errorf("%+v, want %+v", got, want)
	}
}

// TestTxnCorruptSnapshotSkipped: a producer snapshot that does not parse is
// passed over for the next older one, as Kafka's loader does
// (logseg.LatestSnapshot), with a note naming it; it is left in place.
func TestTxnCorruptSnapshotSkipped(t *testing.T) {
	const a, b = 7, 8
	dir := writeSegments(t,
		[]txnbatch.Spec{txnbatch.Data(a, 0, 2, true), txnbatch.Data(b, 2, 2, true), txnbatch.Data(-1, 4, 2, false)},
		[]txnbatch.Spec{txnbatch.Marker(a, 6, logfmt.ControlAbort), txnbatch.Data(b, 7, 1, true)},
		[]txnbatch.Spec{txnbatch.Marker(b, 8, logfmt.ControlAbort)})
	// The older snapshot contradicts the log, so which one segment 8
	// starts from is seen in its .txnindex.
	writeSnapshot(t, dir, 7, snapshot.Entry{ProducerID: a, CurrentTxnFirstOffset: 5})
	bad := filepath.Join(dir, layout.SegmentName(8, layout.SnapshotExt))
	if err := os.WriteFile(bad, []byte("not a snapshot"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep := mustPartition(t, dir, Options{Txn: true})
	want := []index.AbortedTxn{{ProducerID: b, FirstOffset: 7, LastOffset: 8, LastStableOffset: 5}}
	if got := txnEntries(t, dir, 8); !slices.Equal(got, want) {
		t.Errorf("segment 8: %+v, want %+v from the snapshot at 7", got, want)
	}
	if text := findingsText(rep); !strings.Contains(text, "unreadable producer snapshot") || !strings.Contains(text, bad) {
		t.Errorf("no note naming %s:\n%s", bad, text)
	}
	if _, err := os.Stat(bad); err != nil {
		t.Errorf("the corrupt snapshot is gone: %v", err)
	}
}
