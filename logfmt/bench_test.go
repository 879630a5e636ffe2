package logfmt

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/logtool/logtool/logfmt/codec"
)

// benchSegment builds a segment image of about size bytes: batches of n
// records with 100-byte values (gen writes 20 by default).
func benchSegment(b *testing.B, c codec.Type, size, n int) []byte {
	b.Helper()
	rng := rand.New(rand.NewPCG(1, 1))
	var seg []byte
	var recs []Record
	off := int64(0)
	for len(seg) < size {
		recs = recs[:0]
		for i := 0; i < n; i++ {
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
	seg := benchSegment(b, codec.None, 64<<20, 20)
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

// BenchmarkDeep iterates the records of the batches of a segment held in
// memory, side by side: "stream" is RecordIter, "whole" the whole-batch
// decode it replaced (wholeIter), and "codec" decompresses the payloads alone
// into a reused buffer, the floor for any iterator. Small batches (20
// records, 3 KB) are the common case; "big" ones (2000 records, 300 KB)
// pass the iterator's window.
func BenchmarkDeep(b *testing.B) {
	for _, size := range []struct {
		name    string
		records int
	}{{"small", 20}, {"big", 2000}} {
		for _, c := range []codec.Type{codec.None, codec.Gzip, codec.Snappy, codec.LZ4, codec.Zstd} {
			seg := benchSegment(b, c, 16<<20, size.records)
			var batches []Batch
			sr := NewSegmentReader(bytes.NewReader(seg), int64(len(seg)), "bench")
			for sr.Next() {
				bt := sr.Batch()
				batches = append(batches, Batch{Pos: bt.Pos, Data: bytes.Clone(bt.Data)})
			}
			b.Run(fmt.Sprintf("%s/%v/stream", size.name, c), func(b *testing.B) {
				var it RecordIter
				benchBatches(b, seg, batches, func(bt *Batch) error {
					if err := it.Reset(bt); err != nil {
						return err
					}
					for it.Next() {
					}
					return it.Err()
				})
			})
			b.Run(fmt.Sprintf("%s/%v/whole", size.name, c), func(b *testing.B) {
				var it wholeIter
				benchBatches(b, seg, batches, func(bt *Batch) error {
					if err := it.Reset(bt); err != nil {
						return err
					}
					for it.Next() {
					}
					return it.Err()
				})
			})
			if c == codec.None {
				continue
			}
			b.Run(fmt.Sprintf("%s/%v/codec", size.name, c), func(b *testing.B) {
				var r codec.Reader
				buf := make([]byte, recordWindow)
				benchBatches(b, seg, batches, func(bt *Batch) error {
					if err := r.Reset(c, bt.Data[V2HeaderSize:], 2, 0); err != nil {
						return err
					}
					for {
						if _, err := r.Read(buf); err == io.EOF {
							return nil
						} else if err != nil {
							return err
						}
					}
				})
			})
		}
	}
}

func benchBatches(b *testing.B, seg []byte, batches []Batch, read func(*Batch) error) {
	b.SetBytes(int64(len(seg)))
	b.ReportAllocs()
	for b.Loop() {
		for i := range batches {
			if err := read(&batches[i]); err != nil {
				b.Fatal(err)
			}
		}
	}
}

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
