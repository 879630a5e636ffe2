package logfmt

import "errors"

var (
	errVarintTooLong  = errors.New("varint longer than 5 bytes")
	errVarlongTooLong = errors.New("varlong longer than 10 bytes")
	errVarintShort    = errors.New("input ends inside a varint")
)

// readVarint decodes a zigzag varint as Kafka's ByteUtils.readVarint does: at
// most 5 bytes, bits past 32 silently dropped like Java's int arithmetic.
func readVarint(b []byte) (v int32, n int, err error) {
	var u uint32
	for shift := uint(0); ; shift += 7 {
		if shift > 28 {
			return 0, 0, errVarintTooLong
		}
		if n >= len(b) {
			return 0, 0, errVarintShort
		}
		c := b[n]
		n++
		u |= uint32(c&0x7f) << shift
		if c < 0x80 {
			break
		}
	}
	return int32(u>>1) ^ -int32(u&1), n, nil
}

// readVarlong is the 64-bit counterpart, at most 10 bytes.
func readVarlong(b []byte) (v int64, n int, err error) {
	var u uint64
	for shift := uint(0); ; shift += 7 {
		if shift > 63 {
			return 0, 0, errVarlongTooLong
		}
		if n >= len(b) {
			return 0, 0, errVarintShort
		}
		c := b[n]
		n++
		u |= uint64(c&0x7f) << shift
		if c < 0x80 {
			break
		}
	}
	return int64(u>>1) ^ -int64(u&1), n, nil
}

// varintAt is readVarint of b[p:] for hot paths: it returns where the
// varint ends and whether readVarint would read it, rather than an error,
// and is small enough to inline.
func varintAt(b []byte, p int) (int32, int, bool) {
	var u uint32
	for shift := uint(0); shift <= 28 && uint(p) < uint(len(b)); shift += 7 {
		c := b[p]
		p++
		u |= uint32(c&0x7f) << shift
		if c < 0x80 {
			return int32(u>>1) ^ -int32(u&1), p, true
		}
	}
	return 0, p, false
}

// skipVarlong is where the varlong at b[p:] ends, and whether readVarlong
// would read it.
func skipVarlong(b []byte, p int) (int, bool) {
	for end := min(len(b), p+10); p < end; p++ {
		if b[p] < 0x80 {
			return p + 1, true
		}
	}
	return p, false
}

func appendVarint(dst []byte, v int32) []byte {
	return appendUvarint(dst, uint64(uint32(v<<1)^uint32(v>>31)))
}

func appendVarlong(dst []byte, v int64) []byte {
	return appendUvarint(dst, uint64(v<<1)^uint64(v>>63))
}

func appendUvarint(dst []byte, u uint64) []byte {
	for u >= 0x80 {
		dst = append(dst, byte(u)|0x80)
		u >>= 7
	}
	return append(dst, byte(u))
}

func varintLen(v int32) int {
	u := uint32(v<<1) ^ uint32(v>>31)
	n := 1
	for u >= 0x80 {
		u >>= 7
		n++
	}
	return n
}
