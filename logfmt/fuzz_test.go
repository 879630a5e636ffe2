package logfmt

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/logtool/logtool/logfmt/codec"
)

// fuzzSeeds are a batch of each magic and codec, no bytes and zeros.
func fuzzSeeds() [][]byte {
	rng := rand.New(rand.NewPCG(11, 12))
	t := &testing.T{}
	var seeds [][]byte
	for magic := int8(0); magic <= 2; magic++ {
		for c := codec.None; c <= codec.Zstd; c++ {
			if c.ValidFor(magic) {
				seeds = append(seeds, encode(t, magic, c, testRecords(rng, 0, 3, magic)))
			}
		}
	}
	return append(seeds, []byte{}, make([]byte, 40))
}

// FuzzSegment reads arbitrary bytes as a segment, deep-iterating every batch
// that passes its CRC. It must never panic, and every error must be typed and
// point inside the input.
func FuzzSegment(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sr := NewSegmentReader(bytes.NewReader(data), int64(len(data)), "fuzz")
		sr.MaxBatchSize = 1 << 20
		it := RecordIter{MaxRecordBytes: 1 << 20}
		var last int64 = -1
		for {
			for sr.Next() {
				b := sr.Batch()
				if b.Pos <= last || b.Pos+int64(b.Size()) > int64(len(data)) {
					t.Fatalf("batch at %d size %d after %d in %d bytes", b.Pos, b.Size(), last, len(data))
				}
				last = b.Pos
				b.LastOffset()
				b.MaxTimestamp()
				if it.Reset(b) != nil {
					continue
				}
				for it.Next() {
				}
				if err := it.Err(); err != nil {
					checkCorrupt(t, err, len(data))
				}
			}
			if sr.Err() == nil {
				break
			}
			checkCorrupt(t, sr.Err(), len(data))
			if !sr.Resync() {
				break
			}
		}
	})
}

func checkCorrupt(t *testing.T, err error, n int) {
	ce, ok := AsCorrupt(err)
	if !ok {
		t.Fatalf("untyped error %v", err)
	}
	if ce.Pos < 0 || ce.Pos >= int64(n) {
		t.Fatalf("error position %d outside %d bytes: %v", ce.Pos, n, err)
	}
}

// FuzzRecords feeds arbitrary record areas to the v2 and legacy record
// parsers behind a valid framing, so the fuzzer spends its time in them.
func FuzzRecords(f *testing.F) {
	f.Add(byte(2), byte(0), int32(1), []byte{0x0e, 0, 0, 0, 1, 2, 0x76, 0})
	f.Add(byte(1), byte(1), int32(1), []byte{0x1f, 0x8b})
	f.Add(byte(0), byte(3), int32(1), []byte{0x04, 0x22, 0x4d, 0x18, 0x60, 0x40, 0x1a})
	f.Fuzz(func(t *testing.T, magic, attrs byte, count int32, area []byte) {
		magic %= 3
		var b []byte
		if magic == 2 {
			o := DefaultBatchOptions(0)
			o.LastOffsetDelta = 0
			b, _ = AppendBatch(nil, o, nil)
			b[22] = attrs
			b = append(b, area...)
			be := b[8:12]
			n := uint32(len(b) - 12)
			be[0], be[1], be[2], be[3] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
			b[57], b[58], b[59], b[60] = byte(count>>24), byte(count>>16), byte(count>>8), byte(count)
		} else {
			b = AppendLegacyMessage(nil, int8(magic), int64(count), int8(attrs&7), 0, nil, area)
		}
		batch := Batch{Data: b}
		it := RecordIter{MaxRecordBytes: 1 << 20}
		if it.Reset(&batch) != nil {
			return
		}
		for it.Next() {
		}
		if err := it.Err(); err != nil {
			if _, ok := AsCorrupt(err); !ok {
				t.Fatalf("untyped error %v", err)
			}
		}
	})
}
