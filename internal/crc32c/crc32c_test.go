package crc32c

import (
	"fmt"
	"hash/crc32"
	"math/rand"
	"testing"
)

// TestUpdate compares Update with hash/crc32 at every length up to past
// two blocks of the longest lanes, at each alignment the lanes can start
// at, from a checksum of something before.
func TestUpdate(t *testing.T) {
	buf := make([]byte, 2*3*maxLane+200)
	rand.New(rand.NewSource(1)).Read(buf)
	for n := 0; n+8 <= len(buf); n++ {
		for off := range 8 {
			p := buf[off : off+n]
			if got, want := Update(0x1234abcd, p), crc32.Update(0x1234abcd, castagnoli, p); got != want {
				t.Fatalf("%d bytes at %d: %08x, want %08x", n, off, got, want)
			}
		}
	}
	if got, want := Checksum(buf), crc32.Checksum(buf, castagnoli); got != want {
		t.Fatalf("Checksum: %08x, want %08x", got, want)
	}
}

func FuzzUpdate(f *testing.F) {
	f.Add(uint32(0), []byte("123456789012345678901234"))
	f.Fuzz(func(t *testing.T, crc uint32, p []byte) {
		if got, want := Update(crc, p), crc32.Update(crc, castagnoli, p); got != want {
			t.Fatalf("%d bytes: %08x, want %08x", len(p), got, want)
		}
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
