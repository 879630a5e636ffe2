// Package protocol decodes the binary encoding of Kafka's generated messages
// (the records of __consumer_offsets, __transaction_state and
// __cluster_metadata, and KRaft's control records) from schema tables, and
// writes them as the JSON Kafka's generated JsonConverters write, so that
// logtool's decoders print what kafka-dump-log.sh prints.
//
// A schema is a table of fields transcribed from Kafka's message JSON
// definitions: each field has the versions it exists in, the versions in
// which it may be null, and, for flexible versions, whether it travels as a
// tagged field. The wire rules, from Kafka's MessageGenerator:
//
//   - integers are big-endian; uuid is 16 bytes; bool is one byte;
//   - in non-flexible versions a string has an int16 length (-1 null), bytes
//     an int32 length (-1 null) and an array an int32 count (-1 null);
//   - in flexible versions all three carry an unsigned varint of length+1 (0
//     null), and every struct ends with its tagged fields: an unsigned varint
//     count, then per field an unsigned varint tag, an unsigned varint size
//     and the field's bytes. Unknown tags are skipped, as Kafka skips them;
//   - a nullable struct (not an array of structs) is preceded by an int8
//     marker, negative for null.
package protocol

// Kind is a field's wire type.
type Kind uint8

const (
	Bool Kind = iota
	Int8
	Int16
	Uint16
	Int32
	Uint32
	Int64
	String
	Bytes
	UUID
	Nested  // a struct; Field.Struct is its schema
	Float64 // IEEE 754 binary64; Value.Int holds its bits
)

// Versions is an inclusive range of message versions; the zero value is
// "version 0 only". Use Since for "n+" and Never for "none".
type Versions struct{ Min, Max int16 }

const maxVersion = 1<<15 - 1

// Since is the range "n+".
func Since(n int16) Versions { return Versions{n, maxVersion} }

// Never is the empty range ("none").
var Never = Versions{1, 0}

// Has reports whether v lies in the range.
func (r Versions) Has(v int16) bool { return v >= r.Min && v <= r.Max }

// Field is one field of a struct.
type Field struct {
	Name     string // JSON name: Kafka's field name with its first letter lower-cased
	Kind     Kind
	Array    bool    // an array of Kind
	Struct   *Struct // the element or field type when Kind is Nested
	Versions Versions
	Nullable Versions // versions in which the value may be null; Never by default
	Tagged   Versions // versions in which the field is tagged; Never by default
	Tag      int
	// Default is the value of an absent tagged field: tagged fields are
	// written to JSON only when they differ from it, as Kafka's JsonConverter
	// does. Integers and bools (1 for true) use DefaultInt.
	DefaultInt  int64
	DefaultNull bool // the default is null (nullable strings, bytes, arrays)
}

// Struct is a list of fields: a message or a nested struct.
type Struct struct {
	Fields []Field
}

// Message is a top-level message type.
type Message struct {
	Name     string
	Valid    Versions
	Flexible Versions
	Struct
}

// F builds a field present in versions r.
func F(name string, k Kind, r Versions) Field {
	return Field{Name: name, Kind: k, Versions: r, Nullable: Never, Tagged: Never}
}

// Null returns f, nullable in versions r.
func (f Field) Null(r Versions) Field { f.Nullable = r; return f }

// Arr returns f as an array of its kind.
func (f Field) Arr() Field { f.Array = true; return f }

// Of returns f as a struct-typed field (or array of structs) of s.
func (f Field) Of(s *Struct) Field { f.Kind, f.Struct = Nested, s; return f }

// TaggedAs returns f as the tagged field tag in versions r, with the given
// integer default.
func (f Field) TaggedAs(tag int, r Versions, def int64) Field {
	f.Tag, f.Tagged, f.DefaultInt = tag, r, def
	return f
}

// NullDefault returns f with a null default.
func (f Field) NullDefault() Field { f.DefaultNull = true; return f }
