package find

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/logtool/logtool/index"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/layout"
)

// FuzzLookup runs both lookups over arbitrary segment and index bytes:
// whatever the input, they end without panicking, and an answer they give is
// a record of the segment at or after the target.
func FuzzLookup(f *testing.F) {
	// Seeds are built in memory: gen would fsync in every fuzzing process.
	var log []byte
	for base := int64(0); base < 200; base += 10 {
		o := logfmt.DefaultBatchOptions(base)
		var recs []logfmt.Record
		for i := range int64(10) {
			recs = append(recs, logfmt.Record{Offset: base + i, Timestamp: 1000 + 3*(base+i), Value: bytes.Repeat([]byte("v"), 40)})
		}
		var err error
		if log, err = logfmt.AppendBatch(log, o, recs); err != nil {
			f.Fatal(err)
		}
	}
	rec := index.NewRecovery(0, 300)
	seg := logfmt.NewSegmentReader(bytes.NewReader(log), int64(len(log)), "")
	for seg.Next() {
		rec.Add(seg.Batch().LastOffset(), seg.Batch().MaxTimestamp(), seg.Batch().Size())
	}
	rec.Finish()
	idx, _ := rec.OffsetIndexBytes()
	tidx, _ := rec.TimeIndexBytes()
	f.Add(log, idx, tidx, int64(57))
	f.Add(log, idx[:len(idx)-3], append(tidx, 0, 0, 0), int64(1300))
	f.Add(log[:len(log)-9], idx, tidx, int64(199))
	f.Add([]byte{}, []byte{}, []byte{}, int64(0))
	stem := layout.SegmentName(0, "")
	f.Fuzz(func(t *testing.T, log, idx, tidx []byte, target int64) {
		if target < 0 {
			target = -target
		}
		dir := filepath.Join(t.TempDir(), "t-0")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for ext, b := range map[string][]byte{layout.LogExt: log, layout.IndexExt: idx, layout.TimeIndexExt: tidx} {
			if err := os.WriteFile(filepath.Join(dir, stem+ext), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if res, err := Offset(dir, target, Options{}); err == nil && res.Found && res.Offset < target {
			t.Fatalf("offset %d: answer %d", target, res.Offset)
		}
		if res, err := Timestamp(dir, target, Options{}); err == nil && res.Found && res.Timestamp < target {
			t.Fatalf("timestamp %d: answer %d", target, res.Timestamp)
		}
	})
}
