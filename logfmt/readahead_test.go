package logfmt

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/logtool/logtool/logfmt/codec"
)

// cutReader reads data but fails with errCut at and beyond cut, like a
// disk with a bad sector.
type cutReader struct {
	data []byte
	cut  int64
}

var errCut = errors.New("input/output error")

func (r cutReader) ReadAt(p []byte, off int64) (int, error) {
	if off >= r.cut {
		return 0, errCut
	}
	n := copy(p, r.data[off:min(r.cut, int64(len(r.data)))])
	if n < len(p) {
		if r.cut < int64(len(r.data)) {
			return n, errCut
		}
		return n, io.EOF
	}
	return n, nil
}

// trace reads a segment as dump does (Next, Resync after damage) and
// writes down everything the reader says, seeking once to seekTo after
// seekAt entries when seekAt >= 0.
func trace(sr *SegmentReader, seekAt int, seekTo int64) string {
	var b strings.Builder
	entries := 0
	for steps := 0; steps < 10000; steps++ {
		if entries == seekAt {
			sr.SeekTo(seekTo)
			fmt.Fprintf(&b, "seek %d\n", seekTo)
			entries++
		}
		if sr.Next() {
			e := sr.Batch()
			fmt.Fprintf(&b, "entry %d %d %08x\n", e.Pos, len(e.Data), crc32.ChecksumIEEE(e.Data))
			entries++
			continue
		}
		fmt.Fprintf(&b, "stop at %d: %v %q %v\n", sr.Pos(), sr.End(), sr.EndDetail(), sr.Err())
		if sr.Err() == nil && sr.End() != EndTorn {
			break
		}
		if !sr.Resync() {
			fmt.Fprintf(&b, "no resync: %v\n", sr.Err())
			break
		}
		fmt.Fprintf(&b, "resync to %d\n", sr.Pos())
	}
	return b.String()
}

// checkReadAhead compares a reader with read-ahead, its buffers sized
// room and chunk, against a plain one on the same input.
func checkReadAhead(t *testing.T, r io.ReaderAt, size int64, room, chunk, seekAt int, seekTo int64) {
	t.Helper()
	plain := NewSegmentReader(r, size, "seg")
	plain.MaxBatchSize = 1 << 20
	want := trace(plain, seekAt, seekTo)
	ahead := NewSegmentReader(r, size, "seg", ReadAheadWindows)
	ahead.MaxBatchSize = 1 << 20
	ahead.aheadSizes = [2]int{room, chunk}
	got := trace(ahead, seekAt, seekTo)
	ahead.Close()
	if got != want {
		t.Fatalf("room %d, chunk %d, seek after %d to %d: read-ahead reads\n%s\nplain reads\n%s", room, chunk, seekAt, seekTo, got, want)
	}
}

// windowInputs are segments of every magic and codec, with batches from a
// few bytes to a few KiB, so that entries straddle windows of any size in
// every way: clean, and damaged in each way a reader tells apart.
func windowInputs(t *testing.T) map[string][]byte {
	rng := rand.New(rand.NewPCG(5, 6))
	var seg []byte
	for i := range 30 {
		magic := int8(i % 3)
		c := codec.Type(i % 5)
		if !c.ValidFor(magic) {
			c = codec.None
		}
		seg = append(seg, encode(t, magic, c, testRecords(rng, int64(i*100), 1+rng.IntN(20), magic))...)
	}
	flipped := bytes.Clone(seg)
	flipped[len(seg)/3] ^= 0x40
	return map[string][]byte{
		"clean":     seg,
		"zero tail": append(bytes.Clone(seg), make([]byte, 9000)...),
		"torn":      seg[:len(seg)-7],
		"flipped":   flipped,
		"garbage":   append(append(bytes.Clone(seg[:500]), bytes.Repeat([]byte{0xff}, 100)...), seg[500:]...),
		"one byte":  {1},
	}
}

func TestReadAheadMatchesPlainReader(t *testing.T) {
	sizes := [][2]int{{0, 1}, {1, 1}, {3, 7}, {16, 100}, {64, 33}, {1000, 50}, {100, 4096}, {70000, 1 << 20}}
	for name, data := range windowInputs(t) {
		for _, s := range sizes {
			t.Run(fmt.Sprintf("%s/%d-%d", name, s[0], s[1]), func(t *testing.T) {
				checkReadAhead(t, bytes.NewReader(data), int64(len(data)), s[0], s[1], -1, 0)
				checkReadAhead(t, bytes.NewReader(data), int64(len(data)), s[0], s[1], 3, 0)
				checkReadAhead(t, bytes.NewReader(data), int64(len(data)), s[0], s[1], 5, int64(len(data)/2))
				checkReadAhead(t, cutReader{data, int64(len(data)) * 2 / 3}, int64(len(data)), s[0], s[1], -1, 0)
			})
		}
	}
}

// TestReadAheadPooledBuffers reads files larger than a buffer with the
// default sizes, twice, so that pooled buffers are reused.
func TestReadAheadPooledBuffers(t *testing.T) {
	seg := windowInputs(t)["clean"]
	var big []byte
	for len(big) < 2*aheadChunkSize+aheadRoom {
		big = append(big, seg...)
	}
	for range 2 {
		want := trace(NewSegmentReader(bytes.NewReader(big), int64(len(big)), "seg"), -1, 0)
		sr := NewSegmentReader(bytes.NewReader(big), int64(len(big)), "seg", ReadAheadWindows)
		got := trace(sr, -1, 0)
		sr.Close()
		if got != want {
			t.Fatal("read-ahead with pooled buffers reads differently from the plain reader")
		}
	}
}

// FuzzReadAhead holds the read-ahead reader to the plain one on any
// input, buffer sizes, seek and failing read.
func FuzzReadAhead(f *testing.F) {
	seeds := fuzzSeeds()
	two := append(bytes.Clone(seeds[0]), seeds[len(seeds)-3]...)
	for i, s := range append(seeds, two) {
		f.Add(s, uint8(i*7), uint8(i*3), uint8(i), uint16(i*11), uint16(len(s)-i))
	}
	f.Fuzz(func(t *testing.T, data []byte, room, chunk, seekAt uint8, seekTo, cut uint16) {
		var r io.ReaderAt = bytes.NewReader(data)
		if int(cut) < len(data) {
			r = cutReader{data, int64(cut)}
		}
		checkReadAhead(t, r, int64(len(data)), int(room), int(chunk)+1, int(seekAt)%8-1, int64(seekTo))
	})
}

// TestWindowsReused reads a file larger than a window with readers one
// after the other, and two at once: a closed reader's window serves the
// next, and readers open at the same time never share one.
func TestWindowsReused(t *testing.T) {
	seg := windowInputs(t)["clean"]
	var big []byte
	for len(big) < 2*windowSize {
		big = append(big, seg...)
	}
	want := trace(NewSegmentReader(bytes.NewReader(big), int64(len(big)), "seg"), -1, 0)
	first := func(sr *SegmentReader) *byte {
		if !sr.Next() {
			t.Fatal(sr.Err())
		}
		return &sr.buf[0]
	}
	a := NewSegmentReader(bytes.NewReader(big), int64(len(big)), "seg")
	pa := first(a)
	a.Close()
	b := NewSegmentReader(bytes.NewReader(big), int64(len(big)), "seg")
	c := NewSegmentReader(bytes.NewReader(big), int64(len(big)), "seg")
	pb, pc := first(b), first(c)
	if pb != pa && pc != pa {
		t.Error("the closed reader's window was not reused")
	}
	if pb == pc {
		t.Fatal("two open readers share a window")
	}
	// Both read on to the end, alternately, with the same bytes as alone.
	b.SeekTo(0)
	c.SeekTo(0)
	for b.Next() {
		if !c.Next() || !bytes.Equal(b.Batch().Data, c.Batch().Data) {
			t.Fatal("two open readers read differently")
		}
	}
	b.Close()
	c.Close()
	d := NewSegmentReader(bytes.NewReader(big), int64(len(big)), "seg")
	if got := trace(d, -1, 0); got != want {
		t.Error("a reader on a reused window reads differently")
	}
	d.Close()
	// A file smaller than a window is read in a free window too.
	e := NewSegmentReader(bytes.NewReader(seg), int64(len(seg)), "small")
	pe := first(e)
	e.Close()
	f := NewSegmentReader(bytes.NewReader(seg), int64(len(seg)), "small")
	if first(f) != pe {
		t.Error("a small file's window was not reused")
	}
	f.Close()
}
