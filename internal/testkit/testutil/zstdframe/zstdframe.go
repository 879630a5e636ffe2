// Package zstdframe writes zstd frames by hand, for tests that need frames
// an encoder would not write. It imports nothing of logtool, so that the
// codec's own tests can use it.
package zstdframe

import "encoding/binary"

// RLE is a frame written in one segment that declares size bytes of
// content, so a window as large, and holds them as RLE blocks of one byte
// repeated 128 KiB times: a window of size bytes in a few bytes per 128 KiB.
func RLE(size int) []byte {
	f := binary.LittleEndian.AppendUint32(nil, 0xFD2FB528)
	f = append(f, 0xE0) // an 8-byte content size, single segment, no checksum
	f = binary.LittleEndian.AppendUint64(f, uint64(size))
	for size > 0 {
		n := min(size, 128<<10)
		size -= n
		h := uint32(n)<<3 | 1<<1 // RLE
		if size == 0 {
			h |= 1 // last block
		}
		f = append(f, byte(h), byte(h>>8), byte(h>>16), 0)
	}
	return f
}
