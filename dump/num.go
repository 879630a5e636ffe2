package dump

import (
	"math"
	"math/bits"
)

// digits4 holds the four decimal digits of every number below 10000, so
// appendUint writes four digits per division: a dump line is mostly long
// numbers (offsets, positions, 13-digit timestamps, CRCs), and formatting
// them is most of the work of a shallow dump.
var digits4 = func() (t [10000][4]byte) {
	for i := range t {
		n := i
		for j := 3; j >= 0; j-- {
			t[i][j] = byte('0' + n%10)
			n /= 10
		}
	}
	return t
}()

var pow10 = func() (t [20]uint64) {
	t[0] = 1
	for i := 1; i < len(t); i++ {
		t[i] = t[i-1] * 10
	}
	return t
}()

// decimalLen is the number of decimal digits of u.
func decimalLen(u uint64) int {
	n := (bits.Len64(u)*1233)>>12 + 1 // 1233/4096 ≈ log10(2)
	if u < pow10[n-1] {
		n--
	}
	return max(n, 1)
}

// appendUint appends u in decimal, as strconv.AppendUint(b, u, 10), writing
// the digits in place.
func appendUint(b []byte, u uint64) []byte {
	if u < 10 {
		return append(b, byte('0'+u))
	}
	n := decimalLen(u)
	l := len(b)
	if cap(b)-l < n {
		b = append(b, make([]byte, n)...)
	}
	b = b[:l+n]
	i := l + n
	for u >= 10000 {
		q := u / 10000
		i -= 4
		*(*[4]byte)(b[i:]) = digits4[u-q*10000]
		u = q
	}
	d := &digits4[u]
	switch i - l {
	case 4:
		*(*[4]byte)(b[l:]) = *d
	case 3:
		b[l], b[l+1], b[l+2] = d[1], d[2], d[3]
	case 2:
		b[l], b[l+1] = d[2], d[3]
	case 1:
		b[l] = d[3]
	}
	return b
}

// appendInt appends v in decimal, as strconv.AppendInt(b, v, 10).
func appendInt(b []byte, v int64) []byte {
	if v >= 0 {
		return appendUint(b, uint64(v))
	}
	b = append(b, '-')
	if v == math.MinInt64 {
		return append(b, "9223372036854775808"...)
	}
	return appendUint(b, uint64(-v))
}
