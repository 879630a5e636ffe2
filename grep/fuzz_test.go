package grep

import (
	"bytes"
	"encoding/hex"
	"errors"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/logtool/logtool/logfmt"
)

// FuzzMatcher: whatever the user types, compiling a matcher fails with a
// SpecError or gives one that answers as the rules say, quickly: Go's
// regular expressions are linear, so no pattern makes a search hang.
func FuzzMatcher(f *testing.F) {
	f.Add("key-1", "6b:65:79", "^key-\\d+$", "refund", `"amount":4\d\d`, "trace-id=abc", []byte("key-1"), []byte("a refund"), []byte("trace-id"), []byte("abc"))
	f.Add("", "0X6B", "(a+)+$", "", "(x|x|x)*y", "=v", []byte("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!"), []byte(nil), []byte("n"), []byte(nil))
	f.Add("\xff", "zz", "[", "\x00", "(?i)É", "a==b", []byte{0xff}, []byte("é"), []byte("a"), []byte("=b"))
	f.Fuzz(func(t *testing.T, key, keyHex, keyRE, contains, valueRE, header string, k, v, hk, hv []byte) {
		spec := Spec{}
		add := func(dst *[]string, s string) {
			if s != "" {
				*dst = append(*dst, s)
			}
		}
		add(&spec.Keys, key)
		add(&spec.KeysHex, keyHex)
		add(&spec.KeyRegexps, keyRE)
		add(&spec.ValueContains, contains)
		add(&spec.ValueRegexps, valueRE)
		add(&spec.Headers, header)
		m, err := NewMatcher(spec)
		if err != nil {
			var se *SpecError
			if !errors.As(err, &se) {
				t.Fatalf("error %v is not a SpecError", err)
			}
			return
		}
		r := &logfmt.Record{Key: k, Value: v}
		if hk != nil {
			r.Headers = []logfmt.Header{{Key: hk, Value: hv}}
		}
		start := time.Now()
		got := m.Match(r)
		if d := time.Since(start); d > time.Second {
			t.Fatalf("Match took %v", d)
		}
		if want := naiveMatch(spec, r); got != want {
			t.Fatalf("Match = %v, want %v for %+v on %q %q", got, want, spec, k, v)
		}
		// Bytes holding a key the matchers accept are never skipped,
		// whatever part of the keys the sample made them look for.
		stored := append(append(slices.Clone(hv), k...), hk...)
		if sought := m.seekKeys(func() []byte { return v }); sought != nil && m.Key(k) && !mayHoldKey(stored, sought) {
			t.Fatalf("%q holds key %q, but a look for %q skips it", stored, k, sought)
		}
	})
}

// naiveMatch is the rules of Matcher written out plainly.
func naiveMatch(s Spec, r *logfmt.Record) bool {
	keyOK := len(s.Keys)+len(s.KeysHex)+len(s.KeyRegexps) == 0
	for _, k := range s.Keys {
		keyOK = keyOK || r.Key != nil && string(r.Key) == k
	}
	for _, h := range s.KeysHex {
		b, _ := ParseHex(h)
		keyOK = keyOK || r.Key != nil && bytes.Equal(b, r.Key)
	}
	for _, re := range s.KeyRegexps {
		keyOK = keyOK || r.Key != nil && regexp.MustCompile(re).Match(r.Key)
	}
	valueOK := len(s.ValueContains)+len(s.ValueRegexps) == 0
	for _, c := range s.ValueContains {
		valueOK = valueOK || r.Value != nil && bytes.Contains(r.Value, []byte(c))
	}
	for _, re := range s.ValueRegexps {
		valueOK = valueOK || r.Value != nil && regexp.MustCompile(re).Match(r.Value)
	}
	headerOK := len(s.Headers) == 0
	for _, h := range s.Headers {
		name, value, hasValue := strings.Cut(h, "=")
		for _, rh := range r.Headers {
			headerOK = headerOK || string(rh.Key) == name && (!hasValue || rh.Value != nil && string(rh.Value) == value)
		}
	}
	return keyOK && valueOK && headerOK
}

// FuzzParseHex: every way of writing bytes in hex reads back as those
// bytes, and anything else is an error, never a panic.
func FuzzParseHex(f *testing.F) {
	f.Add([]byte("key"), "6b 65 79")
	f.Add([]byte{}, "0x")
	f.Add([]byte{0, 0xff}, "0xzz")
	f.Fuzz(func(t *testing.T, b []byte, s string) {
		for _, form := range []string{hex.EncodeToString(b), strings.ToUpper(hex.EncodeToString(b)), "0x" + hex.EncodeToString(b), spaced(b, ":"), spaced(b, " ")} {
			got, err := ParseHex(form)
			if err != nil || !bytes.Equal(got, b) {
				t.Fatalf("ParseHex(%q) = %x, %v; want %x", form, got, err, b)
			}
		}
		if got, err := ParseHex(s); err == nil {
			if again, err := ParseHex(hex.EncodeToString(got)); err != nil || !bytes.Equal(again, got) {
				t.Fatalf("ParseHex(%q) = %x, which does not read back", s, got)
			}
		}
	})
}

func spaced(b []byte, sep string) string {
	parts := make([]string, len(b))
	for i, c := range b {
		parts[i] = hex.EncodeToString([]byte{c})
	}
	return strings.Join(parts, sep)
}

// FuzzPreview: a text preview is one line of printable UTF-8 that reads
// back as the bytes it shows (Go's string escapes), and is cut after the
// width asked for.
func FuzzPreview(f *testing.F) {
	f.Add([]byte("plain"), 0)
	f.Add([]byte("tab\tnl\nnul\x00 bad\xff quote\" back\\ zwsp\u200b é"), 0)
	f.Add([]byte("long value"), 4)
	f.Fuzz(func(t *testing.T, b []byte, width int) {
		width = max(0, width%100)
		out := string(appendPreview(nil, b, width))
		if !utf8.ValidString(out) || strings.ContainsAny(out, "\n\r\t\x00") {
			t.Fatalf("preview %q of %q is not one printable line", out, b)
		}
		cut := strings.HasSuffix(out, "…") && width > 0 && utf8.RuneCount(b) > width
		if cut {
			out = strings.TrimSuffix(out, "…")
		}
		back, err := strconv.Unquote(`"` + strings.ReplaceAll(out, `"`, `\"`) + `"`)
		if err != nil {
			t.Fatalf("preview %q of %q does not unquote: %v", out, b, err)
		}
		if cut && !strings.HasPrefix(string(b), back) || !cut && back != string(b) {
			t.Fatalf("preview %q of %q reads back as %q", out, b, back)
		}
		if cut && utf8.RuneCountInString(back) > width {
			t.Fatalf("preview %q of %q is longer than %d", out, b, width)
		}
	})
}
