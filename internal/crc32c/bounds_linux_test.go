package crc32c

import (
	"hash/crc32"
	"os"
	"syscall"
	"testing"
)

// TestBounds runs Update on slices that start just after and end just before
// pages that fault when touched: neither way may read a byte outside p,
// whatever its length.
func TestBounds(t *testing.T) {
	ps := os.Getpagesize()
	mem, err := syscall.Mmap(-1, 0, 4*ps, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		t.Skip(err)
	}
	defer syscall.Munmap(mem)
	for i := range mem {
		mem[i] = byte(i*7 + i>>8)
	}
	for _, guard := range [][]byte{mem[:ps], mem[3*ps:]} {
		if err := syscall.Mprotect(guard, syscall.PROT_NONE); err != nil {
			t.Skip(err)
		}
	}
	data := mem[ps : 3*ps : 3*ps]
	paths(func(path string) {
		for n := 0; n <= len(data); n++ {
			for _, p := range [][]byte{data[:n:n], data[len(data)-n:]} {
				if got, want := Update(0, p), crc32.Update(0, castagnoli, p); got != want {
					t.Fatalf("%s: %d bytes: %08x, want %08x", path, n, got, want)
				}
			}
		}
	})
}
