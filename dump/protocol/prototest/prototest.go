// Package prototest builds the binary encoding of Kafka's generated
// messages field by field, and checks what the coordinator log decoders
// built on package protocol print for it. Tests of those decoders make
// their inputs with it, never with the decoder under test.
package prototest

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"testing"

	"github.com/logtool/logtool/dump/protocol"
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

// Fuzz feeds any key and value to format: it must not panic, and a record
// that decodes must print as JSON.
func Fuzz(f *testing.F, format Format) {
	f.Fuzz(func(t *testing.T, key, value []byte) {
		r := format(key, value, 1)
		if r.Err == nil && (!json.Valid([]byte(r.Key)) || (r.Value != "<DELETE>" && !json.Valid([]byte(r.Value)))) {
			t.Fatalf("%q %q", r.Key, r.Value)
		}
	})
}
