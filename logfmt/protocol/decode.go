package protocol

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Value is a decoded field or struct. Byte slices alias the input.
type Value struct {
	Kind    Kind
	Null    bool
	Present bool   // false for a tagged field absent from the input
	Int     int64  // integers; bool as 0 or 1
	Raw     []byte // string, bytes or uuid contents
	Items   []Value
	// Struct values: the schema, the version it was read at, and one Value
	// per schema field.
	Struct  *Struct
	Version int16
	Fields  []Value
	// JSON, when set, replaces the value in the output: callers use it to
	// show bytes that hold a nested message as that message.
	JSON []byte
}

// Field returns the value of the named field of a struct value, or nil.
func (v *Value) Field(name string) *Value {
	if v.Struct == nil {
		return nil
	}
	for i := range v.Struct.Fields {
		if v.Struct.Fields[i].Name == name {
			return &v.Fields[i]
		}
	}
	return nil
}

// ErrShort is wrapped by errors for input that ends inside a field.
var ErrShort = errors.New("input ends inside a field")

// Decode reads a message of the given version from b and returns it with the
// number of bytes it used. Versions outside the schema's valid range are
// refused rather than guessed at.
func Decode(m *Message, version int16, b []byte) (*Value, int, error) {
	return (&Decoder{}).Decode(m, version, b)
}

// Decoder is Decode for loops over many messages: it keeps the memory of the
// values it returns and reuses it, so a value is valid only until its next
// Decode. A metadata log replay decodes a million records with one.
type Decoder struct {
	slab []Value // values handed out since the last Decode come from here
	used int
}

// Decode is the package's Decode, into the decoder's memory.
func (dec *Decoder) Decode(m *Message, version int16, b []byte) (*Value, int, error) {
	if version > m.Valid.Max {
		// The words of the exception Kafka's generated read throws, which
		// its coordinator decoders print.
		//lint:ignore ST1005 Kafka's wording, which scripts match
		return nil, 0, fmt.Errorf("Can't read version %d of %s", version, m.Name)
	}
	if !m.Valid.Has(version) {
		return nil, 0, fmt.Errorf("unsupported %s version %d", m.Name, version)
	}
	dec.used = 0
	d := decoder{b: b, version: version, flexible: m.Flexible.Has(version), dec: dec}
	top := d.values(1)
	top[0] = d.structure(&m.Struct)
	if d.err != nil {
		return nil, 0, fmt.Errorf("%s version %d: %w", m.Name, version, d.err)
	}
	return &top[0], d.p, nil
}

// values returns n zeroed values. Slices handed out earlier stay valid: a
// full slab is left to them and a larger one takes its place.
func (dec *Decoder) values(n int) []Value {
	if dec.used+n > len(dec.slab) {
		dec.slab, dec.used = make([]Value, max(2*len(dec.slab), n, 64)), 0
	}
	s := dec.slab[dec.used : dec.used+n : dec.used+n]
	clear(s)
	dec.used += n
	return s
}

// decoder reads with a sticky error: after the first failure every read
// returns zero values, and err says what went wrong.
type decoder struct {
	b        []byte
	p        int
	version  int16
	flexible bool
	err      error
	dec      *Decoder
}

func (d *decoder) values(n int) []Value { return d.dec.values(n) }

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf(format+" (at byte %d)", append(args, d.p)...)
	}
}

func (d *decoder) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > len(d.b)-d.p {
		d.fail("%w: need %d bytes, %d left", ErrShort, n, len(d.b)-d.p)
		return nil
	}
	s := d.b[d.p : d.p+n : d.p+n]
	d.p += n
	return s
}

func (d *decoder) u8() uint8 {
	if b := d.take(1); b != nil {
		return b[0]
	}
	return 0
}

func (d *decoder) u16() uint16 {
	if b := d.take(2); b != nil {
		return binary.BigEndian.Uint16(b)
	}
	return 0
}

func (d *decoder) u32() uint32 {
	if b := d.take(4); b != nil {
		return binary.BigEndian.Uint32(b)
	}
	return 0
}

func (d *decoder) u64() uint64 {
	if b := d.take(8); b != nil {
		return binary.BigEndian.Uint64(b)
	}
	return 0
}

// uvarint reads an unsigned varint of at most 5 bytes, as Kafka's
// ByteUtils.readUnsignedVarint.
func (d *decoder) uvarint() uint32 {
	var v uint32
	for i := 0; i < 5; i++ {
		c := d.u8()
		if d.err != nil {
			return 0
		}
		v |= uint32(c&0x7f) << (7 * i)
		if c < 0x80 {
			return v
		}
	}
	d.fail("unsigned varint longer than 5 bytes")
	return 0
}

// length reads a length or count: compact (varint of n+1) in flexible
// versions, else an int16 (strings) or int32. It returns -1 for null.
func (d *decoder) length(short bool) int {
	if d.flexible {
		return int(int64(d.uvarint()) - 1)
	}
	if short {
		return int(int16(d.u16()))
	}
	return int(int32(d.u32()))
}

func (d *decoder) structure(s *Struct) Value {
	v := Value{Kind: Nested, Present: true, Struct: s, Version: d.version, Fields: d.values(len(s.Fields))}
	for i := range s.Fields {
		f := &s.Fields[i]
		if !f.Versions.Has(d.version) || (d.flexible && f.Tagged.Has(d.version)) {
			continue
		}
		v.Fields[i] = d.field(f)
	}
	if d.flexible {
		d.taggedFields(s, &v)
	}
	return v
}

func (d *decoder) taggedFields(s *Struct, v *Value) {
	n := d.uvarint()
	for i := uint32(0); i < n && d.err == nil; i++ {
		tag := int(d.uvarint())
		size := int(d.uvarint())
		data := d.take(size)
		if d.err != nil {
			return
		}
		for j := range s.Fields {
			f := &s.Fields[j]
			if !f.Tagged.Has(d.version) || f.Tag != tag || !f.Versions.Has(d.version) {
				continue
			}
			// The field is read from its own bytes, positions counted
			// from their start; the decoder is lent rather than copied,
			// which would move a copy to the heap for every tagged field.
			b, p := d.b, d.p
			d.b, d.p = data, 0
			v.Fields[j] = d.field(f)
			if d.err == nil && d.p != len(data) {
				d.fail("tagged field %s has %d bytes left over", f.Name, len(data)-d.p)
			}
			if d.err != nil {
				d.err = fmt.Errorf("tagged field %s: %w", f.Name, d.err)
			}
			d.b, d.p = b, p
		}
	}
}

func (d *decoder) field(f *Field) Value {
	if !f.Array {
		return d.single(f)
	}
	n := d.length(false)
	if n < 0 {
		if !f.Nullable.Has(d.version) {
			d.fail("non-nullable array %s is null", f.Name)
		}
		return Value{Kind: f.Kind, Present: true, Null: true}
	}
	// Every element takes at least one byte, except structs without fields,
	// which no schema here has; the count cannot size memory beyond the input.
	if n > len(d.b)-d.p {
		d.fail("%w: array %s claims %d elements, %d bytes left", ErrShort, f.Name, n, len(d.b)-d.p)
		return Value{}
	}
	items := d.values(n)
	for i := 0; i < n && d.err == nil; i++ {
		items[i] = d.single(f)
	}
	return Value{Kind: f.Kind, Present: true, Items: items}
}

func (d *decoder) single(f *Field) Value {
	v := Value{Kind: f.Kind, Present: true}
	switch f.Kind {
	case Bool:
		v.Int = int64(d.u8())
		if v.Int > 1 {
			v.Int = 1 // Java reads any non-zero byte as true
		}
	case Int8:
		v.Int = int64(int8(d.u8()))
	case Int16:
		v.Int = int64(int16(d.u16()))
	case Uint16:
		v.Int = int64(d.u16())
	case Int32:
		v.Int = int64(int32(d.u32()))
	case Uint32:
		v.Int = int64(d.u32())
	case Int64, Float64:
		v.Int = int64(d.u64())
	case UUID:
		v.Raw = d.take(16)
	case String, Bytes:
		n := d.length(f.Kind == String)
		if n < 0 {
			if !f.Nullable.Has(d.version) {
				d.fail("non-nullable %s is null", f.Name)
			}
			v.Null = true
			return v
		}
		v.Raw = d.take(n)
	case Nested:
		// A nullable struct is preceded by a marker byte, negative for null,
		// as Kafka's MessageDataGenerator writes it.
		if f.Nullable.Has(d.version) && !f.Array && int8(d.u8()) < 0 {
			v.Null = true
			return v
		}
		return d.structure(f.Struct)
	}
	return v
}

// KafkaError is an error for which Kafka's exception says something other
// than ours: a decoder's "skipping" line shows Kafka's text, so that it reads
// as kafka-dump-log.sh's, and stderr shows Err, which says more.
type KafkaError struct {
	Kafka string
	Err   error
}

func (e *KafkaError) Error() string { return e.Err.Error() }
func (e *KafkaError) Unwrap() error { return e.Err }

// KafkaText is what Kafka's exception says for err: a KafkaError's Kafka
// text, else err's own.
func KafkaText(err error) string {
	if ke := (*KafkaError)(nil); errors.As(err, &ke) {
		return ke.Kafka
	}
	return err.Error()
}
