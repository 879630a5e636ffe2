package jsonbytes

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"testing"
)

// TestRoundTrip: whatever the bytes, a JSON decoder gets them back: a
// string for valid UTF-8, {"base64"} for anything else, null for nil.
func TestRoundTrip(t *testing.T) {
	for _, b := range [][]byte{{0xff, 0xff, 0xff, 0xff}, {0}, {0xc3}, {0xa9}, []byte("héllo \"\\\b\f\x01/"), {}, nil} {
		out := Append(nil, b)
		var v any
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatalf("% x: %s is not JSON: %v", b, out, err)
		}
		var got []byte
		switch v := v.(type) {
		case nil:
			if b != nil {
				t.Errorf("% x: null", b)
			}
			continue
		case string:
			got = []byte(v)
		case map[string]any:
			got, _ = base64.StdEncoding.DecodeString(v["base64"].(string))
		}
		if !bytes.Equal(got, b) {
			t.Errorf("% x: %s gives back % x", b, out, got)
		}
		if s := AppendString(nil, string(b)); !bytes.Equal(s, out) {
			t.Errorf("% x: AppendString %s, Append %s", b, s, out)
		}
	}
}
