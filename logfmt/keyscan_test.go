package logfmt

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/logtool/logtool/logfmt/codec"
)

// keyView is what NextKey promises to set.
type keyView struct {
	Offset     int64
	Key, Value []byte
	Null       bool
	Attributes int8
	Magic      int8
	Size       int
}

// scanBoth reads a batch with Next and with NextKey and returns the two
// views and errors.
func scanBoth(b *Batch) (full, keys []keyView, fullErr, keyErr error) {
	read := func(next func(*RecordIter) bool) ([]keyView, error) {
		it := RecordIter{MaxRecordBytes: 1 << 20, File: "f"}
		if err := it.Reset(b); err != nil {
			return nil, err
		}
		var out []keyView
		for next(&it) {
			r := it.Record()
			out = append(out, keyView{r.Offset, bytes.Clone(r.Key), bytes.Clone(r.Value), r.Value == nil, r.Attributes, r.Magic, r.Size})
		}
		return out, it.Err()
	}
	full, fullErr = read((*RecordIter).Next)
	keys, keyErr = read((*RecordIter).NextKey)
	return
}

func sameScan(t *testing.T, b *Batch) {
	t.Helper()
	full, keys, fullErr, keyErr := scanBoth(b)
	if !reflect.DeepEqual(full, keys) {
		t.Fatalf("NextKey read %+v, Next read %+v", keys, full)
	}
	if (fullErr == nil) != (keyErr == nil) || fullErr != nil && fullErr.Error() != keyErr.Error() {
		t.Fatalf("NextKey error %v, Next error %v", keyErr, fullErr)
	}
}

func TestNextKeyMatchesNext(t *testing.T) {
	for _, tc := range []struct {
		magic int8
		c     codec.Type
	}{{2, codec.None}, {2, codec.LZ4}, {2, codec.Zstd}, {1, codec.None}, {1, codec.Gzip}, {0, codec.Snappy}} {
		rng := rand.New(rand.NewPCG(1, uint64(tc.magic)))
		data := encode(t, tc.magic, tc.c, testRecords(rng, 100, 40, tc.magic))
		sr := NewSegmentReader(bytes.NewReader(data), int64(len(data)), "f")
		n := 0
		for sr.Next() {
			sameScan(t, sr.Batch())
			n++
		}
		if sr.Err() != nil || n == 0 {
			t.Fatalf("magic %d %s: %d entries, %v", tc.magic, tc.c, n, sr.Err())
		}
	}
}

// TestNextKeyCorruption flips every byte of a records area and checks that
// NextKey stops where Next does, with the same error.
func TestNextKeyCorruption(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	good := encode(t, 2, codec.None, testRecords(rng, 0, 6, 2))
	errs := 0
	for i := V2HeaderSize; i < len(good); i++ {
		for _, v := range []byte{0xff, 0x80, 0x00, 0x7f, 0x01} {
			b := append([]byte{}, good...)
			b[i] = v
			batch := Batch{Data: b}
			sameScan(t, &batch)
			if _, _, err, _ := scanBoth(&batch); err != nil {
				errs++
			}
		}
	}
	if errs == 0 {
		t.Fatal("no corruption was detected")
	}
	for _, delta := range []int{1, -1} {
		b := append([]byte{}, good...)
		b[60] = byte(int(b[60]) + delta)
		batch := Batch{Data: b}
		sameScan(t, &batch)
		if _, _, err, _ := scanBoth(&batch); err == nil {
			t.Fatalf("record count off by %d: no error", delta)
		}
	}
}

// FuzzNextKey checks NextKey against Next on arbitrary record areas behind a
// valid v2 framing.
func FuzzNextKey(f *testing.F) {
	rng := rand.New(rand.NewPCG(7, 8))
	var recs []Record
	for _, r := range testRecords(rng, 0, 3, 2) {
		r.Value = r.Value[:min(len(r.Value), 8)]
		recs = append(recs, r)
	}
	b, _ := AppendBatch(nil, DefaultBatchOptions(0), recs)
	f.Add(int32(3), b[V2HeaderSize:])
	f.Add(int32(1), []byte{0x0e, 0, 0, 0, 1, 2, 0x76, 0})
	f.Fuzz(func(t *testing.T, count int32, area []byte) {
		o := DefaultBatchOptions(0)
		o.LastOffsetDelta = 0
		b, _ := AppendBatch(nil, o, nil)
		b = append(b, area...)
		n := uint32(len(b) - LogOverhead)
		b[8], b[9], b[10], b[11] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
		b[57], b[58], b[59], b[60] = byte(count>>24), byte(count>>16), byte(count>>8), byte(count)
		sameScan(t, &Batch{Data: b})
	})
}

// BenchmarkNextKey reads uncompressed segments with NextKey: benchSegment's
// 20 records a batch, and grep's case of 10 (10-byte keys, 100-byte values,
// no headers). "read" frames the batches too, as a command does; "iter"
// walks batches framed beforehand, to weigh RecordIter alone.
func BenchmarkNextKey(b *testing.B) {
	for _, n := range []int{20, 10} {
		seg := benchSegment(b, codec.None, 16<<20, n)
		var batches []Batch
		sr := NewSegmentReader(bytes.NewReader(seg), int64(len(seg)), "bench")
		for sr.Next() {
			pos := sr.Batch().Pos
			batches = append(batches, Batch{Pos: pos, Data: seg[pos : pos+int64(sr.Batch().Size())]})
		}
		for _, framed := range []bool{false, true} {
			name := fmt.Sprintf("read/batch=%d", n)
			if framed {
				name = fmt.Sprintf("iter/batch=%d", n)
			}
			b.Run(name, func(b *testing.B) {
				b.SetBytes(int64(len(seg)))
				b.ReportAllocs()
				var it RecordIter
				records := 0
				keys := func(batch *Batch) {
					if err := it.Reset(batch); err != nil {
						b.Fatal(err)
					}
					for it.NextKey() {
						records++
					}
					if it.Err() != nil {
						b.Fatal(it.Err())
					}
				}
				for b.Loop() {
					if framed {
						for i := range batches {
							keys(&batches[i])
						}
						continue
					}
					sr := NewSegmentReader(bytes.NewReader(seg), int64(len(seg)), "bench")
					for sr.Next() {
						keys(sr.Batch())
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(records), "ns/record")
			})
		}
	}
}
