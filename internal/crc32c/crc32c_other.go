//go:build !amd64

package crc32c

const fast = false

// wide is a variable only so that tests on amd64 can turn it off.
var wide = false

func lanes(crc uint32, p []byte, n int, j *[2]uint64) uint32 { panic("unreachable") }

func fold(crc uint32, p []byte, k *folding) uint32 { panic("unreachable") }
