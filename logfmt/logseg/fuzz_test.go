package logseg

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/logtool/logtool/index"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/layout"
)

// FuzzSegment loads arbitrary segment and index bytes and asks every rule:
// whatever the input, none panics, and what they answer holds together.
func FuzzSegment(f *testing.F) {
	// Seeds are built in memory: gen would fsync in every fuzzing process.
	const base = 100
	var log []byte
	for first := int64(base); first < base+200; first += 10 {
		var recs []logfmt.Record
		for i := range int64(10) {
			recs = append(recs, logfmt.Record{Offset: first + i, Timestamp: 1000 + 3*(first+i), Value: bytes.Repeat([]byte("v"), 40)})
		}
		var err error
		if log, err = logfmt.AppendBatch(log, logfmt.DefaultBatchOptions(first), recs); err != nil {
			f.Fatal(err)
		}
	}
	rec := index.NewRecovery(base, 300)
	seg := logfmt.NewSegmentReader(bytes.NewReader(log), int64(len(log)), "")
	for seg.Next() {
		rec.Add(seg.Batch().LastOffset(), seg.Batch().MaxTimestamp(), seg.Batch().Size())
	}
	rec.Finish()
	idx, _ := rec.OffsetIndexBytes()
	tidx, _ := rec.TimeIndexBytes()
	txn := index.AppendAbortedTxn(nil, index.AbortedTxn{ProducerID: 1, FirstOffset: base, LastOffset: base + 5, LastStableOffset: base})
	f.Add(log, idx, tidx, txn, int64(157))
	f.Add(log, idx[:len(idx)-3], append(tidx, make([]byte, 24)...), []byte{}, int64(1300))
	f.Add(log[:len(log)-9], []byte{}, tidx, txn[:20], int64(199))
	f.Add([]byte{}, idx, []byte{}, []byte{}, int64(0))
	f.Fuzz(func(t *testing.T, log, idx, tidx, txn []byte, target int64) {
		dir := t.TempDir()
		s := layout.Segment{Base: base}
		for _, file := range []struct {
			path *string
			ext  string
			b    []byte
		}{{&s.Log, layout.LogExt, log}, {&s.Index, layout.IndexExt, idx}, {&s.TimeIndex, layout.TimeIndexExt, tidx}, {&s.TxnIndex, layout.TxnIndexExt, txn}} {
			// An empty input stands for an absent index file.
			if len(file.b) == 0 && file.ext != layout.LogExt {
				continue
			}
			*file.path = filepath.Join(dir, layout.SegmentName(base, file.ext))
			if err := os.WriteFile(*file.path, file.b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		sg, err := Open(s)
		if err != nil {
			t.Fatal(err)
		}
		if next, err := sg.NextOffset(); err == nil && next < base {
			t.Errorf("next offset %d below the base", next)
		}
		if ts, src, err := sg.LargestTimestamp(); err == nil && (ts < 0 || src == FromMtime && ts != sg.LastModified) {
			t.Errorf("largest timestamp %d from %s", ts, src)
		}
		if ts, err := sg.FirstBatchTimestamp(); err == nil && ts < 0 {
			t.Errorf("first batch timestamp %d", ts)
		}
		if e, ok, why := sg.OffsetFloor(target); ok && (why != "" || e.Offset > target || e.Position <= 0) {
			t.Errorf("offset floor of %d: %+v %q", target, e, why)
		}
		if e, ok, why := sg.TimeFloor(target); ok && (why != "" || e.Timestamp > target) {
			t.Errorf("time floor of %d: %+v %q", target, e, why)
		}
		if ts, src, err := sg.MaxTimestampSoFar(); err == nil && src == FromTimeIndex && sg.Load == Indexed {
			if e, ok, _ := sg.TimeFloor(math.MaxInt64); ok && e.Timestamp != ts {
				t.Errorf("max timestamp so far %d, last time index entry %+v", ts, e)
			}
		}
	})
}
