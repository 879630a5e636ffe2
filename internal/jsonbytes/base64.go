package jsonbytes

import (
	"encoding/base64"
	"encoding/binary"
)

// pairs maps 12 bits to the two base64 characters that encode them, high
// byte first, so that 6 input bytes become 8 output bytes with four table
// reads and one store; base64 is the largest cost of an export, and the
// standard encoder reads its table once per output byte.
var pairs = func() (t [4096]uint16) {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	for i := range t {
		t[i] = uint16(alphabet[i>>6])<<8 | uint16(alphabet[i&63])
	}
	return t
}()

// AppendBase64 appends the padded standard base64 of src, the bytes
// base64.StdEncoding.AppendEncode writes.
func AppendBase64(dst, src []byte) []byte {
	n := base64.StdEncoding.EncodedLen(len(src))
	if cap(dst)-len(dst) < n {
		dst = append(dst[:cap(dst)], make([]byte, len(dst)+n-cap(dst))...)[:len(dst)]
	}
	out := dst[len(dst) : len(dst)+n]
	i, o := 0, 0
	// Each step loads 8 bytes and uses 6, so it stops 2 short of the end.
	for ; len(src)-i >= 8 && len(out)-o >= 8; i, o = i+6, o+8 {
		v := binary.BigEndian.Uint64(src[i:])
		binary.BigEndian.PutUint64(out[o:], uint64(pairs[v>>52])<<48|uint64(pairs[v>>40&0xfff])<<32|
			uint64(pairs[v>>28&0xfff])<<16|uint64(pairs[v>>16&0xfff]))
	}
	base64.StdEncoding.Encode(out[o:], src[i:])
	return dst[:len(dst)+n]
}
