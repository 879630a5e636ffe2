package jsonbytes

import (
	"bytes"
	"encoding/base64"
	"testing"
)

func FuzzBase64(f *testing.F) {
	for _, s := range []string{"", "a", "ab", "abc", "abcd", "\xff\xfe\xfd\x00"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		prefix := []byte("x")
		want := base64.StdEncoding.AppendEncode(bytes.Clone(prefix), b)
		if got := AppendBase64(bytes.Clone(prefix), b); !bytes.Equal(got, want) {
			t.Fatalf("%x: %q, want %q", b, got, want)
		}
	})
}
