package crc32c

import "golang.org/x/sys/cpu"

var fast = cpu.X86.HasSSE42 && cpu.X86.HasPCLMULQDQ

// lanes returns the (unnegated) checksum crc moved over p: three lanes of n
// bytes at once, n a positive multiple of 8 and at most maxLane, joined with
// j, then the rest of p, under 24 bytes, one lane.
//
//go:noescape
func lanes(crc uint32, p []byte, n int, j *[2]uint64) uint32
