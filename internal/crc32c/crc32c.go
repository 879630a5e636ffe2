// Package crc32c computes CRC-32C (Castagnoli), the checksum of Kafka's v2
// record batches, as hash/crc32 does, faster on the short inputs most
// batches are. The standard library runs three CRC32 instructions at once
// only over blocks of 504 or 4032 bytes, and a batch of 1.2 KB spent as long
// on its last 192 bytes, one instruction at a time, and on joining the
// blocks' checksums through tables, as on its first 1008: on amd64 Update
// splits any input of 24 bytes or more into three lanes and joins their
// checksums with two carry-less multiplications. Where the processor
// multiplies 512-bit registers without carries (AVX-512 VPCLMULQDQ), inputs
// of 256 bytes or more are folded 256 bytes at a time instead, and only
// their last 16 bytes and what follows go through CRC32 instructions.
package crc32c

import (
	"hash/crc32"
	"sync"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Checksum is the CRC-32C of p.
func Checksum(p []byte) uint32 { return Update(0, p) }

// Update is the CRC-32C of the bytes crc is the CRC-32C of followed by p,
// as crc32.Update(crc, crc32.MakeTable(crc32.Castagnoli), p) is.
func Update(crc uint32, p []byte) uint32 {
	if !fast || len(p) < 3*8 {
		return crc32.Update(crc, castagnoli, p)
	}
	joinsOnce.Do(makeJoins)
	crc = ^crc
	if wide && len(p) >= foldMin {
		return ^fold(crc, p, &folds)
	}
	for len(p) >= 3*maxLane+3*8 {
		crc = lanes(crc, p[:3*maxLane], maxLane, &joins[maxLane/8-1])
		p = p[3*maxLane:]
	}
	n := len(p) / (3 * 8) * 8
	return ^lanes(crc, p, n, &joins[n/8-1])
}

// maxLane is the longest lane: longer inputs go a few lanes' worth at a
// time, with a join each, which costs as much as about 16 bytes.
const maxLane = 4096

// joins holds, for lanes of 8(i+1) bytes, what the checksums of the first
// and second lanes are multiplied by to join them to the third's: x^(16L·8-33)
// and x^(8L·8-33) modulo the polynomial, over lanes of L bytes. A carry-less
// product of a checksum and x^(n-33), run through a CRC32 instruction, is
// the checksum moved n bits on.
var joins [maxLane / 8][2]uint64

// foldMin is the least input fold takes, four 64-byte blocks; at that size
// it already takes 6.7 ns where the lanes take 9.
const foldMin = 256

// folding holds what fold multiplies the two halves of a 16-byte lane by to
// move it on n bytes: x^(8n+63) for the first (the higher terms) and
// x^(8n-1) for the second, each a reflected 32-bit polynomial in the high
// half of its 64 bits, so that a carry-less product lands as the 16 bytes
// that follow hold it.
type folding struct {
	by256, by192, by128, by64 [4][2]uint64 // the same in each lane
	lanes                     [4][2]uint64 // lanes 0-2 of 64 bytes moved to lane 3
	by16                      [2]uint64
}

var folds folding

// joinsOnce makes joins at the first checksum: made at start, they were a
// 30th of every command's start, --help's too.
var joinsOnce sync.Once

func makeJoins() {
	// Polynomials as the checksum holds them: bit i is the coefficient
	// of x^(31-i), and x^32 is the polynomial's low terms, reflected.
	mulx := func(v uint32, n int) uint32 {
		for range n {
			if v&1 != 0 {
				v = v>>1 ^ 0x82F63B78
			} else {
				v >>= 1
			}
		}
		return v
	}
	// x^n as a checksum: x^31 is 1.
	pow := func(n int) uint64 { return uint64(mulx(1, n-31)) << 32 }
	by := func(n int) [2]uint64 { return [2]uint64{pow(8*n + 63), pow(8*n - 1)} }
	for i := range 4 {
		folds.by256[i], folds.by192[i], folds.by128[i], folds.by64[i] = by(256), by(192), by(128), by(64)
	}
	folds.lanes = [4][2]uint64{by(48), by(32), by(16)}
	folds.by16 = by(16)
	// x^95 and x^31: lanes of 8 bytes.
	a, b := mulx(1, 64), uint32(1)
	for i := range joins {
		joins[i] = [2]uint64{uint64(a), uint64(b)}
		a, b = mulx(a, 128), mulx(b, 64)
	}
}
