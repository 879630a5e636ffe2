// Package prototest builds the binary encoding of Kafka's generated
// messages field by field, and checks what the coordinator log decoders
// built on package protocol print for it. Tests of those decoders make
// their inputs with it, never with the decoder under test.
package prototest

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"slices"
	"testing"

	"github.com/logtool/logtool/logfmt/protocol"
)

// Wire is a message being built: each method appends one field, big-endian
// as Kafka writes it.
type Wire []byte

// I8, I16, I32 and I64 append an integer.
func (w Wire) I8(v int8) Wire   { return append(w, byte(v)) }
func (w Wire) I16(v int16) Wire { return binary.BigEndian.AppendUint16(w, uint16(v)) }
func (w Wire) I32(v int32) Wire { return binary.BigEndian.AppendUint32(w, uint32(v)) }
func (w Wire) I64(v int64) Wire { return binary.BigEndian.AppendUint64(w, uint64(v)) }

// F64 appends a float64 as its IEEE 754 bits.
func (w Wire) F64(v float64) Wire { return w.I64(int64(math.Float64bits(v))) }

// Uv appends an unsigned varint: a flexible version's lengths, counts
// (both plus one, zero for null) and tagged field headers.
func (w Wire) Uv(v int) Wire { return binary.AppendUvarint(w, uint64(v)) }

// Str appends a non-flexible string: an int16 length, then the bytes.
func (w Wire) Str(s string) Wire { return append(w.I16(int16(len(s))), s...) }

// CStr appends a flexible (compact) string: a varint of length+1, then the
// bytes.
func (w Wire) CStr(s string) Wire { return append(w.Uv(len(s)+1), s...) }

// Bytes appends non-flexible bytes: an int32 length, then the bytes.
func (w Wire) Bytes(v []byte) Wire { return append(w.I32(int32(len(v))), v...) }

// UUID appends a uuid of 16 bytes c.
func (w Wire) UUID(c byte) Wire {
	for range 16 {
		w = append(w, c)
	}
	return w
}

// Format is a coordinator log decoder's Format.
type Format func(key, value []byte, offset int64) protocol.Formatted

// Case is a record and the key and value its decoder must print for it;
// an unnamed struct, so that case tables may list its fields in order.
type Case = struct {
	Name       string
	Key, Value []byte
	K, V       string
}

// CheckFormat decodes each case at offset 0, in a subtest of its own: it
// must decode, print the key and value wanted, and print JSON.
func CheckFormat(t *testing.T, format Format, cases []Case) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			f := format(c.Key, c.Value, 0)
			if f.Err != nil {
				t.Fatal(f.Err)
			}
			if f.Key != c.K || f.Value != c.V || !f.HasValue {
				t.Fatalf("got  %s %s\nwant %s %s", f.Key, f.Value, c.K, c.V)
			}
			if !json.Valid([]byte(f.Key)) || (f.Value != "<DELETE>" && !json.Valid([]byte(f.Value))) {
				t.Fatal("not JSON")
			}
		})
	}
}

// Fuzz feeds any key and value to the coordinator log's decoder: it must
// not panic, a record that decodes must print as JSON, and the record
// written back by Encode from what was decoded must print the same.
func Fuzz(f *testing.F, c protocol.Coordinator) {
	f.Fuzz(func(t *testing.T, key, value []byte) {
		r := c.Format(key, value, 1)
		if r.Err != nil {
			return
		}
		if !json.Valid([]byte(r.Key)) || (r.Value != "<DELETE>" && !json.Valid([]byte(r.Value))) {
			t.Fatalf("%q %q", r.Key, r.Value)
		}
		typ := int16(binary.BigEndian.Uint16(key))
		rt := c[typ]
		k, _, err := protocol.Decode(rt.Key, 0, key[2:])
		if err != nil {
			t.Fatal(err)
		}
		key2 := append(Wire{}.I16(typ), Encode(rt.Key, 0, k)...)
		var value2 []byte
		if value != nil {
			version := int16(binary.BigEndian.Uint16(value))
			v, _, err := protocol.Decode(rt.Value, version, value[2:])
			if err != nil {
				t.Fatal(err)
			}
			value2 = append(Wire{}.I16(version), Encode(rt.Value, version, v)...)
		}
		if r2 := c.Format(key2, value2, 1); r2 != r {
			t.Fatalf("written back as %x %x, printed\n%+v\nnot\n%+v", key2, value2, r2, r)
		}
	})
}

// Encode writes v, a value Decode returned for message m at version, back
// in the wire encoding: a second, independent model of the wire rules, for
// round-trip tests. Tagged fields are written when present, by tag; unknown
// tags the decoder skipped are gone.
func Encode(m *protocol.Message, version int16, v *protocol.Value) []byte {
	e := encoder{version: version, flexible: m.Flexible.Has(version)}
	e.structure(&m.Struct, v)
	return e.w
}

type encoder struct {
	w        Wire
	version  int16
	flexible bool
}

// length writes a length or count, or -1 for null.
func (e *encoder) length(n int, short bool) {
	switch {
	case e.flexible:
		e.w = e.w.Uv(n + 1)
	case short:
		e.w = e.w.I16(int16(n))
	default:
		e.w = e.w.I32(int32(n))
	}
}

func (e *encoder) structure(s *protocol.Struct, v *protocol.Value) {
	var tagged []int
	for i := range s.Fields {
		f := &s.Fields[i]
		if !f.Versions.Has(e.version) {
			continue
		}
		if e.flexible && f.Tagged.Has(e.version) {
			if v.Fields[i].Present {
				tagged = append(tagged, i)
			}
			continue
		}
		e.field(f, &v.Fields[i])
	}
	if !e.flexible {
		return
	}
	slices.SortFunc(tagged, func(a, b int) int { return s.Fields[a].Tag - s.Fields[b].Tag })
	e.w = e.w.Uv(len(tagged))
	for _, i := range tagged {
		inner := encoder{version: e.version, flexible: true}
		inner.field(&s.Fields[i], &v.Fields[i])
		e.w = append(e.w.Uv(s.Fields[i].Tag).Uv(len(inner.w)), inner.w...)
	}
}

func (e *encoder) field(f *protocol.Field, v *protocol.Value) {
	if !f.Array {
		e.single(f, v)
		return
	}
	if v.Null {
		e.length(-1, false)
		return
	}
	e.length(len(v.Items), false)
	for i := range v.Items {
		e.single(f, &v.Items[i])
	}
}

func (e *encoder) single(f *protocol.Field, v *protocol.Value) {
	switch f.Kind {
	case protocol.Bool, protocol.Int8:
		e.w = e.w.I8(int8(v.Int))
	case protocol.Int16, protocol.Uint16:
		e.w = e.w.I16(int16(v.Int))
	case protocol.Int32, protocol.Uint32:
		e.w = e.w.I32(int32(v.Int))
	case protocol.Int64, protocol.Float64:
		e.w = e.w.I64(v.Int)
	case protocol.UUID:
		e.w = append(e.w, v.Raw...)
	case protocol.String, protocol.Bytes:
		if v.Null {
			e.length(-1, f.Kind == protocol.String)
			return
		}
		e.length(len(v.Raw), f.Kind == protocol.String)
		e.w = append(e.w, v.Raw...)
	case protocol.Nested:
		if f.Nullable.Has(e.version) && !f.Array {
			if v.Null {
				e.w = e.w.I8(-1)
				return
			}
			e.w = e.w.I8(1)
		}
		e.structure(f.Struct, v)
	}
}
