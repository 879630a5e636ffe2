package crc32c

import "golang.org/x/sys/cpu"

var fast = cpu.X86.HasSSE42 && cpu.X86.HasPCLMULQDQ

// wide is whether inputs of foldMin bytes or more go through fold: 28 ns
// where the lanes take 39 on 1.2 KB, half their time from 4 KB on
// (BenchmarkUpdate). It also uses AVX-512 instructions on 128- and 256-bit
// registers, which need AVX512VL.
var wide = fast && cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512VPCLMULQDQ

// lanes returns the (unnegated) checksum crc moved over p: three lanes of n
// bytes at once, n a positive multiple of 8 and at most maxLane, joined with
// j, then the rest of p, under 24 bytes, one lane.
//
//go:noescape
func lanes(crc uint32, p []byte, n int, j *[2]uint64) uint32

// fold returns the (unnegated) checksum crc moved over p, of 256 bytes or
// more, with the multipliers of k.
//
//go:noescape
func fold(crc uint32, p []byte, k *folding) uint32
