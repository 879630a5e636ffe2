package codec

import (
	"encoding/binary"
	"math/bits"
)

// xxHash32 primes, from the xxHash specification.
const (
	prime32_1 = 2654435761
	prime32_2 = 2246822519
	prime32_3 = 3266489917
	prime32_4 = 668265263
	prime32_5 = 374761393
)

// xxh32 is the 32-bit xxHash of b, which LZ4 frames use for the header and
// block checksums. pierrec/lz4 keeps its copy internal.
func xxh32(b []byte, seed uint32) uint32 {
	n := len(b)
	var h uint32
	if n >= 16 {
		v1 := seed + prime32_1 + prime32_2
		v2 := seed + prime32_2
		v3 := seed
		v4 := seed - prime32_1
		for ; len(b) >= 16; b = b[16:] {
			v1 = xxh32Round(v1, binary.LittleEndian.Uint32(b[0:]))
			v2 = xxh32Round(v2, binary.LittleEndian.Uint32(b[4:]))
			v3 = xxh32Round(v3, binary.LittleEndian.Uint32(b[8:]))
			v4 = xxh32Round(v4, binary.LittleEndian.Uint32(b[12:]))
		}
		h = bits.RotateLeft32(v1, 1) + bits.RotateLeft32(v2, 7) + bits.RotateLeft32(v3, 12) + bits.RotateLeft32(v4, 18)
	} else {
		h = seed + prime32_5
	}
	h += uint32(n)
	for ; len(b) >= 4; b = b[4:] {
		h += binary.LittleEndian.Uint32(b) * prime32_3
		h = bits.RotateLeft32(h, 17) * prime32_4
	}
	for _, c := range b {
		h += uint32(c) * prime32_5
		h = bits.RotateLeft32(h, 11) * prime32_1
	}
	h ^= h >> 15
	h *= prime32_2
	h ^= h >> 13
	h *= prime32_3
	h ^= h >> 16
	return h
}

func xxh32Round(acc, in uint32) uint32 {
	return bits.RotateLeft32(acc+in*prime32_2, 13) * prime32_1
}
