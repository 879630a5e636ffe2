package grep

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"

	"github.com/logtool/logtool/logfmt"
)

// Spec is what the user asked to match, as the flags give it.
type Spec struct {
	Keys          []string // --key: exact keys, as typed
	KeysHex       []string // --key-hex: exact keys in hex
	KeyRegexps    []string // --key-regex
	ValueContains []string // --value-contains
	ValueRegexps  []string // --value-regex
	Headers       []string // --header NAME or NAME=VALUE
}

// Empty reports whether no matcher was given.
func (s *Spec) Empty() bool {
	return len(s.Keys)+len(s.KeysHex)+len(s.KeyRegexps)+len(s.ValueContains)+len(s.ValueRegexps)+len(s.Headers) == 0
}

// Matcher decides which records match. Matchers of one part of a record are
// alternatives (--key a --key-regex b: either); the parts given must all
// match (--key a --header h: both). A part that has matchers never matches
// null: a keyless record matches no key matcher, a tombstone no value
// matcher, a record without headers (every legacy one) no header matcher.
// Control records are never asked.
type Matcher struct {
	keys    [][]byte
	keyRes  []*regexp.Regexp
	values  [][]byte
	valRes  []*regexp.Regexp
	headers []headerMatch
}

// headerMatch is one --header: a name, and a value unless any will do.
type headerMatch struct {
	name     []byte
	value    []byte
	anyValue bool
}

// SpecError is a matcher that cannot be compiled: a usage error.
type SpecError struct{ Err error }

func (e *SpecError) Error() string { return e.Err.Error() }
func (e *SpecError) Unwrap() error { return e.Err }

func specErr(format string, args ...any) error {
	return &SpecError{Err: fmt.Errorf(format, args...)}
}

// NewMatcher compiles a Spec. Regular expressions are Go's (RE2 syntax),
// which match in time linear in the input, so no pattern can make a search
// hang. They are not anchored (use ^ and $), and read a key or value as
// UTF-8 with each invalid byte as U+FFFD: binary keys are for --key-hex.
func NewMatcher(s Spec) (*Matcher, error) {
	if s.Empty() {
		return nil, specErr("no matcher: give --key, --key-hex, --key-regex, --value-contains, --value-regex or --header")
	}
	m := &Matcher{}
	for _, k := range s.Keys {
		m.keys = append(m.keys, []byte(k))
	}
	for _, h := range s.KeysHex {
		k, err := ParseHex(h)
		if err != nil {
			return nil, specErr("--key-hex %q: %v", h, err)
		}
		m.keys = append(m.keys, k)
	}
	var err error
	if m.keyRes, err = compile("--key-regex", s.KeyRegexps); err != nil {
		return nil, err
	}
	for _, v := range s.ValueContains {
		m.values = append(m.values, []byte(v))
	}
	if m.valRes, err = compile("--value-regex", s.ValueRegexps); err != nil {
		return nil, err
	}
	for _, h := range s.Headers {
		hm, err := parseHeader(h)
		if err != nil {
			return nil, err
		}
		m.headers = append(m.headers, hm)
	}
	return m, nil
}

func compile(flag string, patterns []string) ([]*regexp.Regexp, error) {
	var out []*regexp.Regexp
	for _, p := range patterns {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, specErr("%s %q: %v", flag, p, err)
		}
		out = append(out, re)
	}
	return out, nil
}

// ParseHex reads a key given in hex: pairs of hex digits, in either case,
// optionally split by spaces or colons ("6b:65:79", "6B 65 79") and
// optionally prefixed 0x, as hex dumps print bytes. "" is the empty key.
func ParseHex(s string) ([]byte, error) {
	t := strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	t = strings.Map(func(r rune) rune {
		if r == ' ' || r == ':' {
			return -1
		}
		return r
	}, t)
	b, err := hex.DecodeString(t)
	if err != nil {
		return nil, fmt.Errorf("not hex bytes (pairs of 0-9, a-f; spaces and colons between them allowed)")
	}
	return b, nil
}

// parseHeader reads NAME or NAME=VALUE. The name is everything before the
// first '=', so a name cannot hold one (Kafka allows it, but such names are
// rare); the value is everything after it, '=' included. NAME= matches an
// empty value, which is not a null one.
func parseHeader(s string) (headerMatch, error) {
	name, value, hasValue := strings.Cut(s, "=")
	if name == "" {
		return headerMatch{}, specErr("--header %q: want NAME or NAME=VALUE, with a name", s)
	}
	return headerMatch{name: []byte(name), value: []byte(value), anyValue: !hasValue}, nil
}

// HasKeyMatchers tells whether the key is one of the parts to match.
func (m *Matcher) HasKeyMatchers() bool { return len(m.keys)+len(m.keyRes) > 0 }

// KeyOnly tells whether the key alone decides a match.
func (m *Matcher) KeyOnly() bool {
	return m.HasKeyMatchers() && len(m.values)+len(m.valRes)+len(m.headers) == 0
}

// needsHeaders tells whether matching needs a record's headers, which
// RecordIter.NextKey does not read.
func (m *Matcher) needsHeaders() bool { return len(m.headers) > 0 }

// Key tells whether a key passes the key matchers; every non-null key does
// when there are none.
func (m *Matcher) Key(key []byte) bool {
	if key == nil {
		return false
	}
	if !m.HasKeyMatchers() {
		return true
	}
	for _, k := range m.keys {
		if bytes.Equal(k, key) {
			return true
		}
	}
	for _, re := range m.keyRes {
		if re.Match(key) {
			return true
		}
	}
	return false
}

// maxSoughtKeys is how many exact keys a search looks for in a batch's
// bytes before reading its keys (seekKeys): each search costs about a
// quarter of reading the keys.
const maxSoughtKeys = 2

// seekKeys returns what to look for in a batch's bytes to learn that no
// key the key matchers accept is there, where every key lies whole, as it
// was written: a part of each exact key, from the byte rarest in sample
// (of the data searched) on, as a search runs at the speed its first byte
// is skipped at. nil when the matchers are not a few exact keys.
func (m *Matcher) seekKeys(sample func() []byte) [][]byte {
	if !m.HasKeyMatchers() || len(m.keyRes) > 0 || len(m.keys) > maxSoughtKeys {
		return nil
	}
	var count [256]int
	for _, c := range sample() {
		count[c]++
	}
	out := make([][]byte, len(m.keys))
	for i, k := range m.keys {
		// Two bytes at least, which bytes.Index checks before comparing.
		j := 0
		for p := 1; p < len(k)-1; p++ {
			if count[k[p]] < count[k[j]] {
				j = p
			}
		}
		out[i] = k[j:]
	}
	return out
}

// mayHoldKey tells whether b may hold a key: whether it holds any of the
// parts seekKeys returned.
func mayHoldKey(b []byte, sought [][]byte) bool {
	for _, k := range sought {
		if bytes.Contains(b, k) {
			return true
		}
	}
	return false
}

// Match tells whether a record matches.
func (m *Matcher) Match(r *logfmt.Record) bool {
	if m.HasKeyMatchers() && !m.Key(r.Key) {
		return false
	}
	return m.value(r.Value) && m.header(r.Headers)
}

func (m *Matcher) value(v []byte) bool {
	if len(m.values)+len(m.valRes) == 0 {
		return true
	}
	if v == nil {
		return false
	}
	for _, s := range m.values {
		if bytes.Contains(v, s) {
			return true
		}
	}
	for _, re := range m.valRes {
		if re.Match(v) {
			return true
		}
	}
	return false
}

func (m *Matcher) header(hs []logfmt.Header) bool {
	if len(m.headers) == 0 {
		return true
	}
	for _, h := range hs {
		for _, hm := range m.headers {
			if bytes.Equal(h.Key, hm.name) && (hm.anyValue || h.Value != nil && bytes.Equal(h.Value, hm.value)) {
				return true
			}
		}
	}
	return false
}
