package reindex

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/codec"
	"github.com/logtool/logtool/logfmt/layout"
)

// framing is what a reader of a segment saw.
type framing struct {
	entries [][2]int64 // position and size of each entry
	end     logfmt.End
	errPos  int64 // position of the CorruptError that stopped it; -1 for none
}

func bySegmentReader(data []byte) framing {
	r := logfmt.NewSegmentReader(bytes.NewReader(data), int64(len(data)), "f")
	f := framing{errPos: -1}
	for r.Next() {
		f.entries = append(f.entries, [2]int64{r.Batch().Pos, int64(r.Batch().Size())})
	}
	f.end = r.End()
	if ce, ok := logfmt.AsCorrupt(r.Err()); ok {
		f.errPos = ce.Pos
	}
	return f
}

func byScanner(t testing.TB, data []byte, chunk int) framing {
	s := newScanner(bytes.NewReader(data), int64(len(data)), "f", chunk)
	defer s.close()
	f := framing{errPos: -1}
	for s.next() {
		b := s.batch
		if !bytes.Equal(b.Data, data[b.Pos:b.Pos+int64(len(b.Data))]) {
			t.Fatalf("chunk %d: entry at %d does not hold the file's bytes", chunk, b.Pos)
		}
		f.entries = append(f.entries, [2]int64{b.Pos, int64(len(b.Data))})
	}
	f.end = s.end
	if s.err != nil {
		ce, ok := logfmt.AsCorrupt(s.err)
		if !ok {
			t.Fatalf("chunk %d: I/O error %v reading memory", chunk, s.err)
		}
		f.errPos = ce.Pos
	}
	return f
}

func sameFraming(t testing.TB, data []byte, chunks ...int) {
	t.Helper()
	want := bySegmentReader(data)
	for _, c := range chunks {
		if got := byScanner(t, data, c); !slices.Equal(got.entries, want.entries) || got.end != want.end || got.errPos != want.errPos {
			t.Errorf("chunk %d: %d entries, end %v, error at %d; SegmentReader: %d entries, end %v, error at %d",
				c, len(got.entries), got.end, got.errPos, len(want.entries), want.end, want.errPos)
		}
	}
}

var scanChunks = []int{1, 2, 7, 16, 17, 61, 100, 4096, chunkSize}

func genSegment(t testing.TB, magic int8, comp codec.Type) []byte {
	t.Helper()
	dir := genPartition(t, gen.Options{Magic: magic, Compression: comp, Records: 150, Keys: 10, BatchRecords: 4, ValueBytes: 60, SegmentBytes: 1 << 20, Seed: 4})
	b, err := os.ReadFile(filepath.Join(dir, layout.SegmentName(0, layout.LogExt)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestScannerFramesLikeSegmentReader holds the scanner to
// logfmt.SegmentReader's framing, at every chunk size, on valid segments and
// on each way a segment can end or break.
func TestScannerFramesLikeSegmentReader(t *testing.T) {
	for _, seg := range []struct {
		magic int8
		comp  codec.Type
	}{{0, codec.None}, {1, codec.Gzip}, {2, codec.None}, {2, codec.LZ4}} {
		log := genSegment(t, seg.magic, seg.comp)
		second := 12 + int(binary.BigEndian.Uint32(log[8:]))
		for _, tc := range []struct {
			name string
			data []byte
		}{
			{"clean", log},
			{"empty", nil},
			{"zero tail", append(slices.Clip(log), make([]byte, 5000)...)},
			{"short zero tail", append(slices.Clip(log), make([]byte, 9)...)},
			{"short garbage tail", append(slices.Clip(log), 1, 2, 3)},
			{"torn", log[:len(log)-7]},
			{"zeros then garbage", append(append(slices.Clip(log), make([]byte, 40)...), 1)},
			{"size below minimum", setInt32(log, second+8, 13)},
			{"negative size", setInt32(log, second+8, -5)},
			{"unknown magic", setByte(log, second+16, 3)},
			{"v2 size below header", setInt32(setByte(log, second+16, 2), second+8, 40)},
			{"oversized", setInt32(log, second+8, logfmt.DefaultMaxBatchSize)},
		} {
			t.Run(fmt.Sprintf("v%d-%s-%s", seg.magic, seg.comp, tc.name), func(t *testing.T) {
				sameFraming(t, tc.data, scanChunks...)
			})
		}
	}
}

func setInt32(b []byte, pos int, v int32) []byte {
	c := slices.Clone(b)
	binary.BigEndian.PutUint32(c[pos:], uint32(v))
	return c
}

func setByte(b []byte, pos int, v byte) []byte {
	c := slices.Clone(b)
	c[pos] = v
	return c
}

// TestScannerStopsEarly: closing a scanner that has not reached the end
// stops its reading goroutine (the race detector and the leak it would be
// are the judges).
func TestScannerStopsEarly(t *testing.T) {
	log := genSegment(t, 2, codec.None)
	for _, c := range []int{1, 100, 4096} {
		s := newScanner(bytes.NewReader(log), int64(len(log)), "f", c)
		if !s.next() {
			t.Fatal("no first entry")
		}
		s.close()
	}
}

// TestScannerShortFile: a file shorter than the size given is an I/O error,
// not corruption.
func TestScannerShortFile(t *testing.T) {
	log := genSegment(t, 2, codec.None)
	s := newScanner(bytes.NewReader(log[:len(log)/2]), int64(len(log)), "f", 4096)
	defer s.close()
	for s.next() {
	}
	if s.err == nil {
		t.Fatal("no error")
	}
	if _, ok := logfmt.AsCorrupt(s.err); ok {
		t.Errorf("%v is a CorruptError", s.err)
	}
}

func FuzzScanner(f *testing.F) {
	// Seeds are built in memory: gen would fsync in every fuzzing process.
	var v2 []byte
	for _, b := range []batchSpec{data(1, 0, 3, true), data(-1, 3, 4, false), marker(1, 7, logfmt.ControlAbort)} {
		v2 = append(v2, b.bytes(f)...)
	}
	v1 := logfmt.AppendLegacyMessage(nil, 1, 0, 0, 1000, []byte("k"), []byte("v"))
	v1 = logfmt.AppendLegacyMessage(v1, 1, 1, 0, 1001, nil, []byte("value"))
	v0, err := logfmt.AppendLegacyWrapper(nil, logfmt.LegacyWrapperOptions{Magic: 0, Compression: codec.Gzip},
		[]logfmt.Record{{Offset: 0, Timestamp: -1, Value: []byte("a")}, {Offset: 1, Timestamp: -1, Value: []byte("b")}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(v2, uint16(7))
	f.Add(append(slices.Clip(v2[:200]), make([]byte, 30)...), uint16(17))
	f.Add(v1, uint16(64))
	f.Add(v0, uint16(1))
	f.Fuzz(func(t *testing.T, data []byte, chunk uint16) {
		sameFraming(t, data, int(chunk)%5000+1)
	})
}
