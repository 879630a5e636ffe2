package verify

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/codec"
)

// fuzzSeeds are well-formed segments of each kind of entry, and damaged
// ones.
func fuzzSeeds(f *testing.F) [][]byte {
	recs := []logfmt.Record{
		{Offset: 0, Timestamp: 1_700_000_000_000, Key: []byte("k0"), Value: []byte("v0")},
		{Offset: 1, Timestamp: 1_700_000_000_001, Key: []byte("k1"), Value: nil, Headers: []logfmt.Header{{Key: []byte("h"), Value: []byte("x")}}},
		{Offset: 2, Timestamp: 1_700_000_000_002, Value: []byte("v2")},
	}
	var seeds [][]byte
	for _, c := range []codec.Type{codec.None, codec.LZ4, codec.Zstd} {
		o := logfmt.DefaultBatchOptions(0)
		o.Compression, o.PartitionLeaderEpoch = c, 0
		b, err := logfmt.AppendBatch(nil, o, recs)
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	marker := logfmt.DefaultBatchOptions(3)
	marker.Control, marker.Transactional, marker.ProducerID, marker.ProducerEpoch = true, true, 7, 0
	m, err := logfmt.AppendBatch(nil, marker, []logfmt.Record{{Offset: 3, Key: logfmt.ControlKey(logfmt.ControlAbort),
		Value: logfmt.AppendEndTxnMarker(nil, logfmt.EndTxnMarker{})}})
	if err != nil {
		f.Fatal(err)
	}
	seeds = append(seeds, append(append([]byte(nil), seeds[0]...), m...))
	var legacy []byte
	for i, r := range recs {
		legacy = logfmt.AppendLegacyMessage(legacy, int8(i%2), r.Offset, 0, r.Timestamp, r.Key, r.Value)
	}
	seeds = append(seeds, legacy)
	for _, magic := range []int8{0, 1} {
		w, err := logfmt.AppendLegacyWrapper(nil, logfmt.LegacyWrapperOptions{Magic: magic, Compression: codec.Gzip}, recs)
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, w)
	}
	seeds = append(seeds, seeds[0][:40], append(append([]byte(nil), seeds[1]...), make([]byte, 64)...), nil)
	return seeds
}

// FuzzVerifySegment gives verify a partition holding one segment of
// arbitrary bytes. It must not fail or panic, and when it finds nothing
// wrong the segment must read as well-formed batches with increasing
// offsets.
func FuzzVerifySegment(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	// One directory for all inputs: a fresh one each time costs more than
	// the verification.
	part := filepath.Join(f.TempDir(), "t-0")
	if err := os.Mkdir(part, 0o755); err != nil {
		f.Fatal(err)
	}
	log := filepath.Join(part, "00000000000000000000.log")
	f.Fuzz(func(t *testing.T, data []byte) {
		mustWrite(t, log, data)
		r := run(t, Options{Deep: true}, part)
		if len(r.failures) > 0 {
			t.Fatalf("failures: %v", r.failures)
		}
		if r.problems > 0 {
			return
		}
		sr := logfmt.NewSegmentReader(bytes.NewReader(data), int64(len(data)), log)
		last := int64(-1)
		for sr.Next() {
			b := sr.Batch()
			if err := b.Validate(); err != nil {
				t.Fatalf("verify found nothing, but %v", err)
			}
			if first := b.EntryOffset(); b.Magic() >= 2 && first <= last || b.LastOffset() <= last {
				t.Fatalf("verify found nothing, but offsets do not increase at byte %d", b.Pos)
			}
			last = b.LastOffset()
		}
		if sr.Err() != nil || sr.End() != logfmt.EndClean {
			t.Fatalf("verify found nothing, but the segment ends %v: %v", sr.End(), sr.Err())
		}
	})
}
