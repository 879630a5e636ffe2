package protocol

import (
	"bytes"
	"encoding/base64"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/logtool/logtool/internal/jsonbytes"
)

// AppendJSON appends v as the compact JSON Kafka's JsonConverters write:
// fields in schema order, only those of the version read, tagged fields only
// when they differ from their default, bytes in padded standard base64,
// uuids in Kafka's URL-safe unpadded base64.
func AppendJSON(dst []byte, v *Value) []byte {
	return appendStruct(dst, v)
}

func appendStruct(dst []byte, v *Value) []byte {
	dst = append(dst, '{')
	first := true
	for i := range v.Struct.Fields {
		f := &v.Struct.Fields[i]
		if !f.Versions.Has(v.Version) {
			continue
		}
		fv := &v.Fields[i]
		if f.Tagged.Has(v.Version) && isDefault(f, fv) {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = AppendString(dst, f.Name)
		dst = append(dst, ':')
		dst = appendField(dst, f, fv)
	}
	return append(dst, '}')
}

// isDefault tells whether a tagged field holds its default value.
func isDefault(f *Field, v *Value) bool {
	if !v.Present {
		return true
	}
	if v.JSON != nil {
		return false
	}
	if v.Null {
		return f.DefaultNull
	}
	if f.Array {
		return !f.DefaultNull && len(v.Items) == 0
	}
	switch f.Kind {
	case String, Bytes:
		return !f.DefaultNull && len(v.Raw) == 0
	case UUID:
		for _, c := range v.Raw {
			if c != 0 {
				return false
			}
		}
		return true
	case Nested:
		return false
	}
	return v.Int == f.DefaultInt
}

func appendField(dst []byte, f *Field, v *Value) []byte {
	if v.JSON != nil {
		return append(dst, v.JSON...)
	}
	if v.Null {
		return append(dst, "null"...)
	}
	if !f.Array {
		return appendScalar(dst, f, v)
	}
	dst = append(dst, '[')
	for i := range v.Items {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendScalar(dst, f, &v.Items[i])
	}
	return append(dst, ']')
}

func appendScalar(dst []byte, f *Field, v *Value) []byte {
	if v.JSON != nil {
		return append(dst, v.JSON...)
	}
	switch f.Kind {
	case Bool:
		return strconv.AppendBool(dst, v.Int != 0)
	case String:
		return AppendStringBytes(dst, v.Raw)
	case Bytes:
		dst = append(dst, '"')
		dst = base64.StdEncoding.AppendEncode(dst, v.Raw)
		return append(dst, '"')
	case UUID:
		dst = append(dst, '"')
		dst = base64.RawURLEncoding.AppendEncode(dst, v.Raw)
		return append(dst, '"')
	case Float64:
		return AppendDouble(dst, math.Float64frombits(uint64(v.Int)))
	case Nested:
		if v.Struct == nil { // a tagged struct that was absent
			return append(dst, "null"...)
		}
		return appendStruct(dst, v)
	}
	return strconv.AppendInt(dst, v.Int, 10)
}

// AppendDouble appends d as Jackson writes a double, with Java's
// Double.toString: plain decimals with at least one fraction digit for
// 1e-3 <= |d| < 1e7, "1.5E7" notation otherwise; NaN and the infinities
// quoted, as Jackson's default QUOTE_NON_NUMERIC_NUMBERS does.
func AppendDouble(dst []byte, d float64) []byte {
	switch {
	case math.IsNaN(d):
		return append(dst, `"NaN"`...)
	case math.IsInf(d, 1):
		return append(dst, `"Infinity"`...)
	case math.IsInf(d, -1):
		return append(dst, `"-Infinity"`...)
	}
	if a := math.Abs(d); a == 0 || (a >= 1e-3 && a < 1e7) {
		s := strconv.AppendFloat(dst, d, 'f', -1, 64)
		if bytes.IndexByte(s[len(dst):], '.') < 0 {
			s = append(s, ".0"...)
		}
		return s
	}
	e := strconv.FormatFloat(d, 'e', -1, 64) // "1.5e+07"
	mant, exp, _ := strings.Cut(e, "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	n, _ := strconv.Atoi(exp)
	dst = append(dst, mant...)
	dst = append(dst, 'E')
	return strconv.AppendInt(dst, int64(n), 10)
}

// AppendString appends s as a JSON string the way Jackson writes it: '"' and
// '\' escaped, control characters as \b \t \n \f \r or \u00XX, everything
// else, '/' and non-ASCII included, as is. A string that is not UTF-8 (a
// name or path read from disk) is written as jsonbytes marks it, so that no
// byte is lost.
func AppendString(dst []byte, s string) []byte { return jsonbytes.AppendString(dst, s) }

// AppendStringBytes is AppendString for bytes, such as a string field of a
// Kafka message: bytes that are not UTF-8 are kept, marked as jsonbytes
// does, where Java's decoder would turn them into U+FFFD.
func AppendStringBytes(dst, b []byte) []byte { return jsonbytes.AppendBytes(dst, b) }

// ValidUTF8 appends b to dst with every invalid byte replaced by U+FFFD.
func ValidUTF8(dst, b []byte) []byte {
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n <= 1 {
			dst = utf8.AppendRune(dst, utf8.RuneError)
		} else {
			dst = append(dst, b[:n]...)
		}
		b = b[n:]
	}
	return dst
}
