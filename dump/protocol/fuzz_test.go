package protocol

import (
	"encoding/json"
	"testing"
)

// FuzzDecode feeds arbitrary bytes to the decoder at every version of a
// schema with every field kind: it must never panic, never claim more bytes
// than it was given, and always write valid JSON.
func FuzzDecode(f *testing.F) {
	f.Add(uint8(0), []byte(b{}.i8(1).i8(-2).i16(-1).i32(-1).i64(-5).str("name").i32(-1).i32(1).str("t").i32(1).i32(7)))
	f.Add(uint8(2), []byte(append(b{}.i8(0).i8(0).i16(0).i32(0).i64(0).uv(0).uv(0), make([]byte, 16)...).uv(0).i16(0).uv(2).uv(0).uv(4).i32(42).uv(1).uv(3).cstr("hi")))
	f.Add(uint8(1), []byte{})
	f.Fuzz(func(t *testing.T, version uint8, in []byte) {
		v, n, err := Decode(testMsg, int16(version%4), in)
		if err != nil {
			return
		}
		if n < 0 || n > len(in) {
			t.Fatalf("used %d of %d bytes", n, len(in))
		}
		if out := AppendJSON(nil, v); !json.Valid(out) {
			t.Fatalf("invalid JSON %s", out)
		}
	})
}
