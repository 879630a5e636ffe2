//go:build !amd64

package crc32c

const fast = false

func lanes(crc uint32, p []byte, n int, j *[2]uint64) uint32 { panic("unreachable") }
