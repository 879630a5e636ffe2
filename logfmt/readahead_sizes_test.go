package logfmt

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
)

// framed makes entries of the given total sizes that frame as v2 batches
// (the reader checks framing only), with random bodies.
func framed(sizes []int) []byte {
	rng := rand.New(rand.NewPCG(27, 1))
	var data []byte
	for i, n := range sizes {
		e := make([]byte, n)
		for j := range e {
			e[j] = byte(rng.Uint32())
		}
		binary.BigEndian.PutUint64(e, uint64(i))
		binary.BigEndian.PutUint32(e[8:], uint32(n-LogOverhead))
		e[MagicOffset] = 2
		data = append(data, e...)
	}
	return data
}

// TestReadAheadRealSizes holds the read-ahead reader, with its real room
// and chunk sizes, to the plain one on entries around those sizes and
// several chunks long, read whole, cut short by a failing read in the
// middle of a join, and with seeks back, forward and into an entry.
func TestReadAheadRealSizes(t *testing.T) {
	const c, r = aheadChunkSize, aheadRoom
	sizes := []int{100, c, 37 + V2HeaderSize, c + r, c + r + 1, c - 1, r, r + 1, 4*c + 5, c, 1 << 20, 3<<20 + 17,
		V2HeaderSize, c - r, c - r - 1, 2 * c, 2*c + 1, windowSize - r, windowSize - r + 1, 80}
	data := framed(sizes)
	size := int64(len(data))
	var starts []int64
	for p, i := int64(0), 0; i < len(sizes); p, i = p+int64(sizes[i]), i+1 {
		starts = append(starts, p)
	}
	readers := map[string]io.ReaderAt{"whole": bytes.NewReader(data)}
	for _, i := range []int{1, 4, 8, 11, 15} {
		for _, d := range []int64{1, c / 2, int64(sizes[i]) - 1} {
			cut := starts[i] + d
			readers[fmt.Sprintf("cut %d", cut)] = cutReader{data, cut}
		}
	}
	seeks := [][2]int64{{-1, 0}, {5, 0}, {9, starts[3]}, {2, starts[11]}, {10, starts[8] + 12345}, {11, starts[4]}, {3, size}}
	for name, rd := range readers {
		for _, sk := range seeks {
			plain := NewSegmentReader(rd, size, "seg")
			want := trace(plain, int(sk[0]), sk[1])
			plain.Close()
			ahead := NewSegmentReader(rd, size, "seg", ReadAheadWindows)
			got := trace(ahead, int(sk[0]), sk[1])
			ahead.Close()
			if got != want {
				t.Fatalf("%s, seek after %d to %d: read-ahead reads\n%s\nplain reads\n%s", name, sk[0], sk[1], got, want)
			}
		}
	}
}

// TestSharedBuffersConcurrent has readers of both kinds open, read and
// close at once, so that windows, joins and the spare pass between them:
// each must still read its own bytes.
func TestSharedBuffersConcurrent(t *testing.T) {
	const c = aheadChunkSize
	data := framed([]int{100, windowSize - 7, 3<<20 + 5, windowSize, 200, windowSize + 1, c + 7, 2 << 20, 90})
	small := framed([]int{300, 70, 5000})
	want := trace(NewSegmentReader(bytes.NewReader(data), int64(len(data)), "seg"), -1, 0)
	wantSmall := trace(NewSegmentReader(bytes.NewReader(small), int64(len(small)), "seg"), -1, 0)
	done := make(chan string)
	for g := range 6 {
		go func() {
			var bad string
			for i := range 6 {
				d, w := data, want
				if (g+i)%3 == 2 {
					d, w = small, wantSmall
				}
				var src []WindowSource
				if (g+i)%2 == 0 {
					src = append(src, ReadAheadWindows)
				}
				sr := NewSegmentReader(bytes.NewReader(d), int64(len(d)), "seg", src...)
				if got := trace(sr, -1, 0); got != w && bad == "" {
					bad = fmt.Sprintf("goroutine %d, round %d (%v) reads\n%s\nwant\n%s", g, i, src, got, w)
				}
				sr.Close()
			}
			done <- bad
		}()
	}
	for range 6 {
		if bad := <-done; bad != "" {
			t.Error(bad)
		}
	}
}

// TestSpareKeptForLargeEntries: a buffer a reader keeps (a window past
// windowSize, at most keptLarge) is not taken from a large entry's spare
// one. It was, and held it for the reader's life: the next large entry or
// record, with no spare left, was allocated again (with four workers on
// 20 MiB zstd records, compact and export took up to 139 and 117 MiB).
func TestSpareKeptForLargeEntries(t *testing.T) {
	spare.Lock()
	saved := spare.b
	spare.b = [2][]byte{}
	spare.Unlock()
	t.Cleanup(func() {
		spare.Lock()
		spare.b = saved
		spare.Unlock()
	})
	large := make([]byte, 3<<20)
	putLarge(large)
	if w := getLarge(2 * windowSize); cap(w) > keptLarge {
		t.Fatalf("a window of %d bytes took the spare buffer of %d", 2*windowSize, cap(w))
	}
	if b := getLarge(len(large)); &b[0] != &large[0] {
		t.Fatal("the next large entry did not get the spare buffer")
	}
}
