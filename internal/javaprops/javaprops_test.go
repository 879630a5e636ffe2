package javaprops

import (
	"maps"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     map[string]string
	}{
		{"equals", "a=b", map[string]string{"a": "b"}},
		{"colon", "a:b", map[string]string{"a": "b"}},
		{"space", "a b", map[string]string{"a": "b"}},
		{"spaces around", "  a  =  b c  ", map[string]string{"a": "b c  "}},
		{"only one separator", "a = = b", map[string]string{"a": "= b"}},
		{"space then colon", "a :b", map[string]string{"a": "b"}},
		{"no value", "a", map[string]string{"a": ""}},
		{"empty value", "a=", map[string]string{"a": ""}},
		{"comments", "# x=1\n! y=2\n   # z=3\na=1", map[string]string{"a": "1"}},
		{"comment does not continue", "# c \\\na=1", map[string]string{"a": "1"}},
		{"blank lines", "\n\n  \t\na=1\n\n", map[string]string{"a": "1"}},
		{"continuation", "a=one, \\\n    two, \\\n\tthree", map[string]string{"a": "one, two, three"}},
		{"even backslashes do not continue", "a=x\\\\\nb=y", map[string]string{"a": `x\`, "b": "y"}},
		{"continuation into an empty line ends", "a=x\\\n\nb=y", map[string]string{"a": "x", "b": "y"}},
		{"continuation at the end", "a=x\\", map[string]string{"a": "x"}},
		{"crlf and cr", "a=1\r\nb=2\rc=3", map[string]string{"a": "1", "b": "2", "c": "3"}},
		{"escapes", `a=t\tn\nr\rf\fq\qcolon\:eq\=`, map[string]string{"a": "t\tn\nr\rf\fq" + "qcolon:eq="}},
		{"escaped key separators", `my\ key\=x\:y = v`, map[string]string{"my key=x:y": "v"}},
		{"unicode", `a=caf\u00e9 \u20AC`, map[string]string{"a": "café €"}},
		{"surrogate pair", `a=\uD83D\uDE00`, map[string]string{"a": "😀"}},
		{"last wins", "a=1\na=2", map[string]string{"a": "2"}},
		{"jaas", `sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required \
    username="ops" \
    password="s3cr=t";`, map[string]string{"sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required username="ops" password="s3cr=t";`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got, tc.want) {
				t.Errorf("Parse(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestParseMalformedUnicode(t *testing.T) {
	for _, in := range []string{`a=\u12`, `a=\uzzzz`, "ok=1\nb=\\u00"} {
		if _, err := Parse([]byte(in)); err == nil || !strings.Contains(err.Error(), "line") {
			t.Errorf("Parse(%q): err = %v, want a malformed escape error with its line", in, err)
		}
	}
}

// escape writes s as a key or value Parse reads back as s.
func escape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case strings.ContainsRune(`\=:#! `, r):
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\f':
			b.WriteString(`\f`)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// FuzzParse: no input panics, and what Parse returns, written back out,
// parses to the same properties.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"a=b", "# c\n!d\n", "a=x\\\n  y", `k\:=\u00e9\t`, "a b:c\r\nd", "\\", `\u`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		props, err := Parse(data)
		if err != nil || !utf8.Valid(data) {
			return
		}
		var b strings.Builder
		for k, v := range props {
			b.WriteString(escape(k) + "=" + escape(v) + "\n")
		}
		again, err := Parse([]byte(b.String()))
		if err != nil {
			t.Fatalf("re-parse of %q: %v", b.String(), err)
		}
		if !maps.Equal(props, again) {
			t.Fatalf("%q parsed to %q, written back as %q, parsed to %q", data, props, b.String(), again)
		}
	})
}
