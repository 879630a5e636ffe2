package crc32c

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"math/rand"
	"testing"
)

// paths runs f with each way Update has on this machine: the lanes, and
// fold where the processor has it.
func paths(f func(path string)) {
	has := wide
	defer func() { wide = has }()
	for _, w := range []bool{false, true} {
		if w && !has {
			continue
		}
		wide = w
		f(map[bool]string{false: "lanes", true: "fold"}[w])
	}
}

// TestUpdate compares Update with hash/crc32 at every length up to past
// two blocks of the longest lanes, at each alignment the lanes can start
// at, from a checksum of something before.
func TestUpdate(t *testing.T) {
	buf := make([]byte, 2*3*maxLane+200)
	rand.New(rand.NewSource(1)).Read(buf)
	paths(func(path string) {
		for n := 0; n+8 <= len(buf); n++ {
			for off := range 8 {
				p := buf[off : off+n]
				if got, want := Update(0x1234abcd, p), crc32.Update(0x1234abcd, castagnoli, p); got != want {
					t.Fatalf("%s: %d bytes at %d: %08x, want %08x", path, n, off, got, want)
				}
			}
		}
		if got, want := Checksum(buf), crc32.Checksum(buf, castagnoli); got != want {
			t.Fatalf("%s: Checksum: %08x, want %08x", path, got, want)
		}
	})
}

// TestFoldedZeros checks fold where carries would show: inputs of all ones
// bits and of zeros from every starting checksum bit.
func TestFoldedZeros(t *testing.T) {
	ones := bytes.Repeat([]byte{0xff}, 1500)
	zeros := make([]byte, 1500)
	paths(func(path string) {
		for n := 256; n <= len(ones); n += 37 {
			for bit := range 32 {
				crc := uint32(1) << bit
				for _, p := range [][]byte{ones[:n], zeros[:n]} {
					if got, want := Update(crc, p), crc32.Update(crc, castagnoli, p); got != want {
						t.Fatalf("%s: %d bytes of %#x from %08x: %08x, want %08x", path, n, p[0], crc, got, want)
					}
				}
			}
		}
	})
}

func FuzzUpdate(f *testing.F) {
	f.Add(uint32(0), []byte("123456789012345678901234"))
	f.Add(uint32(0xffffffff), bytes.Repeat([]byte{0xa5}, 300))
	f.Fuzz(func(t *testing.T, crc uint32, p []byte) {
		want := crc32.Update(crc, castagnoli, p)
		paths(func(path string) {
			if got := Update(crc, p); got != want {
				t.Fatalf("%s: %d bytes: %08x, want %08x", path, len(p), got, want)
			}
		})
	})
}

// BenchmarkUpdate runs Update next to hash/crc32 on the same bytes, at the
// sizes of small (a few records), producer-filled (16 KiB) and large
// batches.
func BenchmarkUpdate(b *testing.B) {
	for _, n := range []int{200, 1200, 4000, 17000, 1 << 20} {
		buf := make([]byte, n+1)
		for _, c := range []struct {
			name string
			f    func([]byte) uint32
		}{
			{"crc32c", Checksum},
			{"crc32c-lanes", func(p []byte) uint32 {
				defer func(w bool) { wide = w }(wide)
				wide = false
				return Checksum(p)
			}},
			{"hash-crc32", func(p []byte) uint32 { return crc32.Checksum(p, castagnoli) }},
		} {
			b.Run(fmt.Sprintf("%s/%d", c.name, n), func(b *testing.B) {
				b.SetBytes(int64(n))
				for b.Loop() {
					c.f(buf[1:])
				}
			})
		}
	}
}
