// Package textdec is how record keys and values are shown as text and in
// JSON strings, by the decoder a user names (kafka-dump-log.sh's
// --key-decoder-class and --value-decoder-class): shared by dump, find and
// grep so that the same flag prints the same bytes alike everywhere.
package textdec

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/logtool/logtool/internal/jsonbytes"
	"github.com/logtool/logtool/logfmt/protocol"
)

// Decoder turns a record key or value into text.
type Decoder int

const (
	String Decoder = iota // UTF-8, as Kafka's StringDecoder (bad bytes become U+FFFD)
	Hex                   // lower-case hex
	Base64                // standard base64 with padding
	None                  // not printed
)

var names = [...]string{"string", "hex", "base64", "none"}

func (d Decoder) String() string { return names[d] }

// AppendText appends b as text output shows it: UTF-8 as Java decodes it
// (bad bytes become U+FFFD), hex or base64. Null and None are the caller's
// to show.
func (d Decoder) AppendText(dst, b []byte) []byte {
	switch d {
	case Hex:
		return hex.AppendEncode(dst, b)
	case Base64:
		return base64.StdEncoding.AppendEncode(dst, b)
	}
	return appendUTF8(dst, b)
}

// AppendJSON appends b as a JSON string decoded the same way, or null. The
// string decoder keeps every byte (jsonbytes' rule), where text cannot.
func (d Decoder) AppendJSON(dst, b []byte) []byte {
	if b == nil {
		return append(dst, "null"...)
	}
	if d == String {
		return jsonbytes.AppendBytes(dst, b)
	}
	dst = append(dst, '"')
	dst = d.AppendText(dst, b)
	return append(dst, '"')
}

// AppendJSONPieces appends b as AppendJSON does, about n bytes of b at a
// time, handing dst to flush after each piece but the last and going on
// with the buffer flush returns: the JSON of a large value (up to six times
// it, a control byte escaping to \u00XX) is then never held whole. The
// form is chosen for the whole of b, as AppendJSON chooses it, and base64
// pieces are cut on a multiple of 3 so that they join with no padding
// between them.
func (d Decoder) AppendJSONPieces(dst, b []byte, n int, flush func([]byte) []byte) []byte {
	if b == nil {
		return append(dst, "null"...)
	}
	piece, end := d.AppendText, `"`
	switch {
	case d == String && utf8.Valid(b):
		// Escapes are of single ASCII bytes, so any cut is safe.
		dst, piece = append(dst, '"'), jsonbytes.AppendEscaped
	case d == String:
		dst, piece, end = append(dst, `{"base64":"`...), jsonbytes.AppendBase64, `"}`
		n -= n % 3
	case d == Base64:
		dst = append(dst, '"')
		n -= n % 3
	default:
		dst = append(dst, '"')
	}
	for len(b) > n {
		dst = flush(piece(dst, b[:n]))
		b = b[n:]
	}
	return append(piece(dst, b), end...)
}

// PieceEnd is where a piece of about n bytes of b (n < len(b)) ends so that
// decoding the pieces one after the other gives what decoding b whole does:
// on a multiple of 3 for base64, and for UTF-8 not inside a sequence, which
// starts at most 3 bytes before a continuation byte (any invalid byte
// becomes U+FFFD on its own either way).
func (d Decoder) PieceEnd(b []byte, n int) int {
	switch d {
	case Hex:
		return n
	case Base64:
		return n - n%3
	}
	if utf8.RuneStart(b[n]) {
		return n
	}
	for k := n - 1; k > n-utf8.UTFMax; k-- {
		if utf8.RuneStart(b[k]) {
			return k
		}
	}
	return n
}

// appendUTF8 appends b as Java prints bytes decoded as UTF-8: every invalid
// byte becomes U+FFFD.
func appendUTF8(dst, b []byte) []byte {
	if utf8.Valid(b) {
		return append(dst, b...)
	}
	return protocol.ValidUTF8(dst, b)
}

// Parse parses "string", "hex", "base64" or "none".
func Parse(s string) (Decoder, error) {
	for i, n := range names {
		if s == n {
			return Decoder(i), nil
		}
	}
	return 0, fmt.Errorf("unknown decoder %q (want string, hex, base64 or none)", s)
}

// OfClass maps the decoder classes kafka-dump-log.sh takes to logtool's
// decoders: the StringDecoder of org.apache.kafka.tools.api or of the older
// kafka.serializer is string; DefaultDecoder, which Kafka prints as a Java
// array reference ("[B@1b6d3586"), is hex, the bytes themselves.
func OfClass(class string) (Decoder, error) {
	name := class
	for _, pkg := range []string{"org.apache.kafka.tools.api.", "kafka.serializer."} {
		name = strings.TrimPrefix(name, pkg)
	}
	switch name {
	case "StringDecoder":
		return String, nil
	case "DefaultDecoder":
		return Hex, nil
	case "IntegerDecoder", "LongDecoder":
		return 0, fmt.Errorf("%s: logtool has no integer decoders; the hex decoder shows the bytes", class)
	}
	return 0, fmt.Errorf("unknown decoder class %q: logtool knows Kafka's StringDecoder and DefaultDecoder, and its own decoders by name", class)
}
