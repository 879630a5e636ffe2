// Package jsonbytes writes byte strings into JSON without losing a byte:
// the one rule every JSON output of logtool follows for keys, values,
// headers, names and paths read from disk.
//
// A byte string that is valid UTF-8 is a JSON string. Any other is the
// object {"base64": "<padded standard base64>"}, so that a reader can tell
// it from text and get the bytes back exactly; replacing bad bytes with
// U+FFFD, as Java's decoder and Go's encoding/json do, would lose them. A
// null key or value is null.
package jsonbytes

import "unicode/utf8"

// Append appends b under the package's rule; nil is null.
func Append(dst, b []byte) []byte {
	if b == nil {
		return append(dst, "null"...)
	}
	return AppendBytes(dst, b)
}

// AppendBytes appends b, never null, as a JSON string when it is valid
// UTF-8, else as {"base64": ...}: for byte strings that cannot be null,
// such as header keys.
func AppendBytes(dst, b []byte) []byte {
	if !utf8.Valid(b) {
		return AppendMarked(dst, b)
	}
	return appendQuoted(dst, b)
}

// AppendString is AppendBytes for a string, such as a path or a name read
// from disk, which Go holds as bytes that need not be UTF-8.
func AppendString(dst []byte, s string) []byte {
	if !utf8.ValidString(s) {
		return AppendMarked(dst, []byte(s))
	}
	return appendQuoted(dst, s)
}

// AppendMarked appends {"base64": ...} for b, the form of bytes that are
// not UTF-8 where text was asked for.
func AppendMarked(dst, b []byte) []byte {
	dst = append(dst, `{"base64":"`...)
	dst = AppendBase64(dst, b)
	return append(dst, `"}`...)
}

const hexUpper = "0123456789ABCDEF"

// appendQuoted writes valid UTF-8 as Jackson does: '"' and '\' escaped,
// control characters as \b \t \n \f \r or \u00XX, everything else, '/' and
// non-ASCII included, as is.
func appendQuoted[T string | []byte](dst []byte, s T) []byte {
	dst = append(dst, '"')
	dst = appendEscaped(dst, s)
	return append(dst, '"')
}

// AppendEscaped appends valid UTF-8 as appendQuoted does, without the
// quotes: a long string can be written a piece at a time, each escaped on
// its own, as the escapes are of single bytes.
func AppendEscaped(dst, b []byte) []byte { return appendEscaped(dst, b) }

func appendEscaped[T string | []byte](dst []byte, s T) []byte {
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\r':
			dst = append(dst, '\\', 'r')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexUpper[c>>4], hexUpper[c&0xf])
		}
		start = i + 1
	}
	return append(dst, s[start:]...)
}

// Text is a string read from disk, such as a path, for the fields of the
// structs commands give encoding/json: it is written under the package's
// rule, where a plain string's bytes that are not UTF-8 would become U+FFFD.
type Text string

// MarshalJSON writes t as AppendString does.
func (t Text) MarshalJSON() ([]byte, error) { return AppendString(nil, string(t)), nil }
