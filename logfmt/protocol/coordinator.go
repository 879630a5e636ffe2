package protocol

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
)

// RecordType is one record type of a coordinator log (__consumer_offsets,
// __transaction_state): the schemas of its key and value.
type RecordType struct {
	Key, Value *Message
	// Fix, when set, rewrites the decoded value before it is printed.
	Fix func(*Value)
}

// Coordinator is the set of record types of one coordinator log.
type Coordinator map[int16]RecordType

// ErrUnknownType is wrapped by Formatted.Err for a record type the decoder
// does not know, which a newer broker may have written.
var ErrUnknownType = errors.New("unknown record type")

// Formatted is a record rendered as Kafka's coordinator decoders render it.
// Err is set when the record could not be decoded; Key then holds Kafka's
// "skipping" text.
type Formatted struct {
	Key      string
	Value    string
	HasValue bool
	Err      error
}

// Format renders a record of a coordinator log as kafka-dump-log.sh's
// --offsets-decoder and --transaction-log-decoder do (Kafka 3.8 and later):
// the key as {"type":"<record type>","data":{...}}, the value as
// {"version":"<version>","data":{...}}, a tombstone as <DELETE>. A key is an
// int16 record type and the key message (version 0); a value is an int16
// version and the value message of the same record type.
func (c Coordinator) Format(key, value []byte, offset int64) Formatted {
	if key == nil {
		//lint:ignore ST1005 kafka-dump-log.sh's wording, which scripts match
		err := fmt.Errorf("Failed to decode message at offset %d using the specified decoder (message had a missing key)", offset)
		return Formatted{Key: err.Error(), Err: err}
	}
	skip := func(err error) Formatted {
		return Formatted{Key: "Error at offset " + strconv.FormatInt(offset, 10) + ", skipping. " + err.Error(), Err: err}
	}
	if len(key) < 2 {
		//lint:ignore ST1005 kafka-dump-log.sh's wording, which scripts match
		return skip(fmt.Errorf("Could not read version from key's buffer."))
	}
	typ := int16(binary.BigEndian.Uint16(key))
	rt, ok := c[typ]
	if !ok {
		return Formatted{Key: fmt.Sprintf("Unknown record type %d at offset %d, skipping.", typ, offset),
			Err: fmt.Errorf("%w %d", ErrUnknownType, typ)}
	}
	var f Formatted
	k, _, err := Decode(rt.Key, 0, key[2:])
	if err != nil {
		//lint:ignore ST1005 kafka-dump-log.sh's wording, which scripts match
		return skip(fmt.Errorf("Could not read record with version %d from key's buffer due to: %v.", typ, err))
	}
	f.Key = string(appendEnvelope(nil, "type", typ, k))
	if value == nil {
		f.Value, f.HasValue = "<DELETE>", true
		return f
	}
	if len(value) < 2 {
		//lint:ignore ST1005 kafka-dump-log.sh's wording, which scripts match
		return skip(fmt.Errorf("Could not read version from value's buffer."))
	}
	version := int16(binary.BigEndian.Uint16(value))
	v, _, err := Decode(rt.Value, version, value[2:])
	if err != nil {
		//lint:ignore ST1005 kafka-dump-log.sh's wording, which scripts match
		return skip(fmt.Errorf("Could not read record with version %d from value's buffer due to: %v.", version, err))
	}
	if rt.Fix != nil {
		rt.Fix(v)
	}
	f.Value, f.HasValue = string(appendEnvelope(nil, "version", version, v)), true
	return f
}

// appendEnvelope writes {"<name>":"<n>","data":<v>}.
func appendEnvelope(dst []byte, name string, n int16, v *Value) []byte {
	dst = append(dst, `{"`...)
	dst = append(dst, name...)
	dst = append(dst, `":"`...)
	dst = strconv.AppendInt(dst, int64(n), 10)
	dst = append(dst, '"', ',')
	dst = append(dst, `"data":`...)
	dst = AppendJSON(dst, v)
	return append(dst, '}')
}
