package codec

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// readIn reads r to its end in pieces of the given sizes, in turn, or
// until more than max bytes have come.
func readIn(r *Reader, sizes []int, max int) ([]byte, error) {
	var out []byte
	buf := make([]byte, slices.Max(sizes))
	for i := 0; len(out) <= max; i++ {
		p := buf[:sizes[i%len(sizes)]]
		n, err := r.Read(p)
		out = append(out, p[:n]...)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// TestReaderPieces reads payloads of every codec in pieces of many sizes,
// straddling blocks and chunks, and wants the bytes of one whole read.
func TestReaderPieces(t *testing.T) {
	inputs := [][]byte{{}, []byte("x"), jsonish(1000), jsonish(100 << 10), random(70<<10, 3), make([]byte, 300<<10)}
	pieces := [][]int{{1}, {7, 1}, {4096}, {65535, 3}, {1 << 20}}
	for _, ct := range codecs {
		for magic := int8(0); magic <= 2; magic++ {
			if !ct.ValidFor(magic) {
				continue
			}
			for _, in := range inputs {
				enc, err := Compress(nil, ct, in, magic)
				if err != nil {
					t.Fatal(err)
				}
				for _, sizes := range pieces {
					var r Reader
					if err := r.Reset(ct, enc, magic, 0); err != nil {
						t.Fatal(err)
					}
					out, err := readIn(&r, sizes, len(in))
					if err != nil || !bytes.Equal(out, in) {
						t.Fatalf("%v magic %d, %d bytes in pieces of %v: got %d bytes, %v", ct, magic, len(in), sizes, len(out), err)
					}
				}
			}
		}
	}
}

// TestReaderErrorAfterData: what decodes before a fault is handed out
// first, and the fault after it, with Decompress's message.
func TestReaderErrorAfterData(t *testing.T) {
	in := jsonish(200 << 10)
	for _, ct := range codecs[1:] {
		enc, err := Compress(nil, ct, in, 2)
		if err != nil {
			t.Fatal(err)
		}
		cut := enc[:len(enc)*3/4]
		_, want := Decompress(nil, ct, cut, 2, 0)
		if want == nil {
			continue // a cut between xerial chunks goes unseen
		}
		var r Reader
		if err := r.Reset(ct, cut, 2, 0); err != nil {
			t.Fatal(err)
		}
		out, err := readIn(&r, []int{1000}, len(in))
		if err == nil || err.Error() != want.Error() {
			t.Errorf("%v: got %v, want %v", ct, err, want)
		}
		if len(out) == 0 || !bytes.HasPrefix(in, out) {
			t.Errorf("%v: %d bytes before the error, not a prefix of the input", ct, len(out))
		}
	}
}

// TestStreamsInBoundedMemory: 256 MiB of zeros, in one payload of each
// codec, read through a 64 KiB buffer and written in 1 MiB pieces, without
// allocating anything near the payload's size.
func TestStreamsInBoundedMemory(t *testing.T) {
	const size = 256 << 20
	zeros := make([]byte, 1<<20)
	for _, ct := range codecs[1:] {
		t.Run(ct.String(), func(t *testing.T) {
			measure := func(f func()) uint64 {
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				f()
				runtime.ReadMemStats(&after)
				return after.TotalAlloc - before.TotalAlloc
			}
			var w Writer
			var enc []byte
			write := func() {
				if err := w.Reset(nil, ct, 2); err != nil {
					t.Fatal(err)
				}
				for range size / len(zeros) {
					if _, err := w.Write(zeros); err != nil {
						t.Fatal(err)
					}
				}
				var err error
				if enc, err = w.Close(); err != nil {
					t.Fatal(err)
				}
			}
			write() // warm the pools
			// Appending grows a large slice by a quarter at a time, so an output
			// of n bytes takes about 5n of allocations; a GC that empties the codec
			// pools mid-write (a loaded runner) can double it.
			if a := measure(write); a > 16<<20+12*uint64(len(enc)) {
				t.Errorf("writing: allocated %d MiB for %d KiB of output", a>>20, len(enc)>>10)
			}
			var r Reader
			buf := make([]byte, 64<<10)
			read := func() {
				if err := r.Reset(ct, enc, 2, 0); err != nil {
					t.Fatal(err)
				}
				n, err := io.CopyBuffer(struct{ io.Writer }{io.Discard}, &r, buf)
				if err != nil || n != size {
					t.Fatalf("read %d bytes, %v", n, err)
				}
			}
			read()
			if a := measure(read); a > 16<<20 {
				t.Errorf("reading: allocated %d MiB", a>>20)
			}
		})
	}
}

// TestWriterPieces: a payload written in pieces decodes to what was
// written, and for every codec but zstd past zstdOneShot, its bytes are
// those of Compress given it whole.
func TestWriterPieces(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, ct := range codecs {
		for magic := int8(0); magic <= 2; magic++ {
			if !ct.ValidFor(magic) {
				continue
			}
			for _, in := range [][]byte{{}, jsonish(10), jsonish(100 << 10), random(100<<10, 9), jsonish(3 << 20)} {
				t.Run(fmt.Sprintf("%v/magic%d/%d", ct, magic, len(in)), func(t *testing.T) {
					var w Writer
					if err := w.Reset([]byte("dst"), ct, magic); err != nil {
						t.Fatal(err)
					}
					for rest := in; len(rest) > 0; {
						n := min(len(rest), 1+rng.IntN(70<<10))
						if _, err := w.Write(rest[:n]); err != nil {
							t.Fatal(err)
						}
						rest = rest[n:]
					}
					got, err := w.Close()
					if err != nil || string(got[:3]) != "dst" {
						t.Fatalf("Close: %q..., %v", got[:min(3, len(got))], err)
					}
					whole, err := Compress([]byte("dst"), ct, in, magic)
					if err != nil {
						t.Fatal(err)
					}
					if !(ct == Zstd && len(in) > zstdOneShot) && !bytes.Equal(got, whole) {
						t.Errorf("%d bytes differ from Compress's %d", len(got), len(whole))
					}
					back, err := Decompress(nil, ct, got[3:], magic, len(in))
					if err != nil || !bytes.Equal(back, in) {
						t.Errorf("decodes to %d bytes, %v", len(back), err)
					}
				})
			}
		}
	}
}
