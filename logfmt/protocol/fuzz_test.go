package protocol_test

import (
	"encoding/json"
	"testing"

	p "github.com/logtool/logtool/logfmt/protocol"
)

// FuzzDecode feeds arbitrary bytes to the decoder at every version of a
// schema with every field kind: it must never panic, never claim more bytes
// than it was given, and always write valid JSON.
func FuzzDecode(f *testing.F) {
	f.Add(uint8(0), []byte(b{}.I8(1).I8(-2).I16(-1).I32(-1).I64(-5).Str("name").I32(-1).I32(1).Str("t").I32(1).I32(7)))
	f.Add(uint8(2), []byte(append(b{}.I8(0).I8(0).I16(0).I32(0).I64(0).Uv(0).Uv(0), make([]byte, 16)...).Uv(0).I16(0).Uv(2).Uv(0).Uv(4).I32(42).Uv(1).Uv(3).CStr("hi")))
	f.Add(uint8(1), []byte{})
	f.Fuzz(func(t *testing.T, version uint8, in []byte) {
		v, n, err := p.Decode(testMsg, int16(version%4), in)
		if err != nil {
			return
		}
		if n < 0 || n > len(in) {
			t.Fatalf("used %d of %d bytes", n, len(in))
		}
		if out := p.AppendJSON(nil, v); !json.Valid(out) {
			t.Fatalf("invalid JSON %s", out)
		}
	})
}
