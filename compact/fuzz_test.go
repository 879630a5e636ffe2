package compact

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/codec"
	"github.com/logtool/logtool/logfmt/layout"
)

// fuzzSeeds are small segments of every kind the cleaner rewrites.
func fuzzSeeds() [][]byte {
	recs := func(base int64, kvs ...kv) []logfmt.Record {
		out := make([]logfmt.Record, len(kvs))
		for i, r := range kvs {
			out[i] = logfmt.Record{Offset: base + int64(i), Timestamp: t0 + int64(i), Key: r.key, Value: r.value}
		}
		return out
	}
	v2 := func(c codec.Type, pid int64, txn bool) []byte {
		var seg []byte
		o := logfmt.DefaultBatchOptions(0)
		o.Compression, o.ProducerID, o.ProducerEpoch, o.BaseSequence, o.Transactional = c, pid, 0, 0, txn
		seg, _ = logfmt.AppendBatch(seg, o, recs(0, rec(1), rec(2), tomb(1)))
		o.BaseOffset = 3
		seg, _ = logfmt.AppendBatch(seg, o, recs(3, rec(2), keyless(5)))
		if txn {
			o.BaseOffset, o.Control, o.Compression = 5, true, codec.None
			seg, _ = logfmt.AppendBatch(seg, o, []logfmt.Record{{Offset: 5, Timestamp: t0, Key: logfmt.ControlKey(logfmt.ControlAbort), Value: logfmt.AppendEndTxnMarker(nil, logfmt.EndTxnMarker{})}})
		}
		return seg
	}
	legacy := func(magic int8, c codec.Type) []byte {
		if c == codec.None {
			var seg []byte
			for _, r := range recs(0, rec(1), tomb(2), rec(1)) {
				seg = logfmt.AppendLegacyMessage(seg, magic, r.Offset, 0, r.Timestamp, r.Key, r.Value)
			}
			return seg
		}
		seg, _ := logfmt.AppendLegacyWrapper(nil, logfmt.LegacyWrapperOptions{Magic: magic, Compression: c, TimestampType: logfmt.CreateTime},
			recs(0, rec(1), tomb(2), rec(1), keyless(3)))
		return seg
	}
	return [][]byte{v2(codec.None, -1, false), v2(codec.LZ4, 7, false), v2(codec.Zstd, 8, true), legacy(0, codec.None), legacy(1, codec.Gzip), legacy(0, codec.Snappy)}
}

// FuzzCompactSegment plans and simulates the compaction of an arbitrary
// segment followed by an active one: the dry run reads, filters and encodes
// everything a real run writes, without the fsyncs that would make fuzzing
// crawl (the writes are covered by the crash and round-trip tests). It must
// never panic or hang, never write, and never report more records or bytes
// after than before.
func FuzzCompactSegment(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := filepath.Join(t.TempDir(), "fuzz-0")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		const active = 1 << 40
		if err := os.WriteFile(filepath.Join(dir, layout.SegmentName(0, layout.LogExt)), data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, layout.SegmentName(active, layout.LogExt)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		o := testOptions(t0 + 1000)
		o.OffsetMapMemory, o.DryRun = 1<<16, true
		r, err := Compact(dir, o)
		if err != nil {
			if _, ok := logfmt.AsCorrupt(err); !ok {
				t.Fatalf("bad input gave %T %v, want a *logfmt.CorruptError", err, err)
			}
			return
		}
		if r.RecordsAfter > r.RecordsBefore || r.BytesAfter < 0 || r.SegmentsAfter > r.SegmentsBefore {
			t.Fatalf("%d records after of %d, %d bytes, %d segments of %d", r.RecordsAfter, r.RecordsBefore, r.BytesAfter, r.SegmentsAfter, r.SegmentsBefore)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 2 {
			t.Fatalf("the dry run left %d files", len(entries))
		}
	})
}
