package logfmt

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/logtool/logtool/logfmt/codec"
)

// benchSegment builds a segment image of about size bytes: batches of 20
// records with 100-byte values, as gen writes by default.
func benchSegment(b *testing.B, c codec.Type, size int) []byte {
	b.Helper()
	rng := rand.New(rand.NewPCG(1, 1))
	var seg []byte
	var recs []Record
	off := int64(0)
	for len(seg) < size {
		recs = recs[:0]
		for i := 0; i < 20; i++ {
			recs = append(recs, Record{Offset: off, Timestamp: 1_700_000_000_000 + off,
				Key: fmt.Appendf(nil, "key-%06d", rng.IntN(100000)), Value: fmt.Appendf(nil, `{"id":%d,"event":"click","pad":"%090d"}`, off, rng.Int64())[:100]})
			off++
		}
		o := DefaultBatchOptions(recs[0].Offset)
		o.Compression = c
		var err error
		if seg, err = AppendBatch(seg, o, recs); err != nil {
			b.Fatal(err)
		}
	}
	return seg
}

// BenchmarkShallowCRC is the shallow pass of dump, verify and reindex:
// framing plus CRC of every batch, from a file.
func BenchmarkShallowCRC(b *testing.B) {
	seg := benchSegment(b, codec.None, 64<<20)
	path := filepath.Join(b.TempDir(), "00000000000000000000.log")
	if err := os.WriteFile(path, seg, 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(seg)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sf, err := OpenSegment(path)
		if err != nil {
			b.Fatal(err)
		}
		for sf.Next() {
			if err := sf.Batch().Validate(); err != nil {
				b.Fatal(err)
			}
		}
		if sf.Err() != nil {
			b.Fatal(sf.Err())
		}
		sf.Close()
	}
}

func benchDeep(b *testing.B, c codec.Type) {
	seg := benchSegment(b, c, 16<<20)
	b.SetBytes(int64(len(seg)))
	b.ReportAllocs()
	b.ResetTimer()
	var it RecordIter
	for i := 0; i < b.N; i++ {
		sr := NewSegmentReader(bytes.NewReader(seg), int64(len(seg)), "bench")
		for sr.Next() {
			if err := it.Reset(sr.Batch()); err != nil {
				b.Fatal(err)
			}
			for it.Next() {
			}
			if it.Err() != nil {
				b.Fatal(it.Err())
			}
		}
	}
}

func BenchmarkDeepUncompressed(b *testing.B) { benchDeep(b, codec.None) }
func BenchmarkDeepLZ4(b *testing.B)          { benchDeep(b, codec.LZ4) }
func BenchmarkDeepZstd(b *testing.B)         { benchDeep(b, codec.Zstd) }

func BenchmarkAppendBatch(b *testing.B) {
	recs := make([]Record, 20)
	for i := range recs {
		recs[i] = Record{Offset: int64(i), Timestamp: int64(i), Key: []byte("key-000001"), Value: bytes.Repeat([]byte("v"), 100)}
	}
	o := DefaultBatchOptions(0)
	buf, _ := AppendBatch(nil, o, recs)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		buf, _ = AppendBatch(buf[:0], o, recs)
	}
}
