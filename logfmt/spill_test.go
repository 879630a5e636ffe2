package logfmt

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/logtool/logtool/logfmt/codec"
)

// TestBatchBuilderSpill: a batch written a piece at a time, its header
// written over the zeros at the end, is byte for byte the batch built
// whole, and Spill holds back nothing of it but the unfinished block.
func TestBatchBuilderSpill(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	recs := make([]Record, 300)
	for i := range recs {
		v := make([]byte, 1+rng.IntN(40<<10))
		for j := range v {
			v[j] = byte(rng.IntN(8)) // compressible, so blocks differ in size
		}
		recs[i] = Record{Offset: 100 + int64(i), Timestamp: 1700000000000 + int64(i), Key: []byte{byte(i)}, Value: v}
	}
	prior := []byte("entries before the batch")
	for _, c := range []codec.Type{codec.None, codec.Gzip, codec.Snappy, codec.LZ4, codec.Zstd} {
		t.Run(c.String(), func(t *testing.T) {
			o := DefaultBatchOptions(100)
			o.Compression = c
			want, err := AppendBatch(bytes.Clone(prior), o, recs)
			if err != nil {
				t.Fatal(err)
			}
			var w BatchBuilder
			var file bytes.Buffer
			if err := w.Reset(bytes.Clone(prior), o); err != nil {
				t.Fatal(err)
			}
			for i := range recs {
				if err := w.Append(&recs[i]); err != nil {
					t.Fatal(err)
				}
				if err := w.Spill(&file); err != nil {
					t.Fatal(err)
				}
			}
			rest, err := w.Finish()
			if err != nil {
				t.Fatal(err)
			}
			spills := c == codec.Gzip || c == codec.Snappy || c == codec.LZ4
			if w.Spilled() != spills {
				t.Fatalf("Spilled() = %v, want %v", w.Spilled(), spills)
			}
			got := append(file.Bytes(), rest...)
			if spills {
				if len(rest) > 2*len(want)/3 {
					t.Errorf("Finish kept %d bytes of a %d-byte batch", len(rest), len(want))
				}
				copy(got[len(prior):], w.Header())
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("spilled batch differs from the whole one (%d bytes, want %d)", len(got), len(want))
			}
			if err := (&Batch{Data: got[len(prior):]}).Validate(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
