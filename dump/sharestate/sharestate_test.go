package sharestate

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"testing"

	"github.com/logtool/logtool/dump/protocol"
)

type b []byte

func (x b) i8(v int8) b    { return append(x, byte(v)) }
func (x b) i16(v int16) b  { return binary.BigEndian.AppendUint16(x, uint16(v)) }
func (x b) i32(v int32) b  { return binary.BigEndian.AppendUint32(x, uint32(v)) }
func (x b) i64(v int64) b  { return binary.BigEndian.AppendUint64(x, uint64(v)) }
func (x b) uv(v int) b     { return binary.AppendUvarint(x, uint64(v)) }
func (x b) str(s string) b { return append(x.i16(int16(len(s))), s...) }

// topicID is Kafka's Uuid "Uj5wn_FqTXirEASvVZRY1w", the one of Kafka's own
// DumpLogSegments test, as its 16 bytes.
var topicID = []byte{0x52, 0x3e, 0x70, 0x9f, 0xf1, 0x6a, 0x4d, 0x78, 0xab, 0x10, 0x04, 0xaf, 0x55, 0x94, 0x58, 0xd7}

func shareKey(typ int16) b { return append(b{}.i16(typ).str("gs1"), topicID...).i32(0) }

// batch is one state batch: first and last offset, delivery state and
// count, and its empty tagged fields.
func batch(x b) b { return x.i64(0).i64(4).i8(2).i16(1).uv(0) }

func TestFormat(t *testing.T) {
	for _, c := range []struct {
		name       string
		key, value []byte
		k, v       string
	}{
		{"snapshot", shareKey(0), batch(b{}.i16(0).i32(0).i32(0).i32(0).i64(0).i64(1700000000000).i64(1700000000001).uv(2)).uv(0),
			`{"type":"0","data":{"groupId":"gs1","topicId":"Uj5wn_FqTXirEASvVZRY1w","partition":0}}`,
			`{"version":"0","data":{"snapshotEpoch":0,"stateEpoch":0,"leaderEpoch":0,"startOffset":0,"createTimestamp":1700000000000,"writeTimestamp":1700000000001,"stateBatches":[{"firstOffset":0,"lastOffset":4,"deliveryState":2,"deliveryCount":1}]}}`},
		{"update", shareKey(1), batch(b{}.i16(0).i32(0).i32(0).i64(0).uv(2)).uv(0),
			`{"type":"1","data":{"groupId":"gs1","topicId":"Uj5wn_FqTXirEASvVZRY1w","partition":0}}`,
			`{"version":"0","data":{"snapshotEpoch":0,"leaderEpoch":0,"startOffset":0,"stateBatches":[{"firstOffset":0,"lastOffset":4,"deliveryState":2,"deliveryCount":1}]}}`},
		{"update with deliveryCompleteCount (Kafka 4.2)", shareKey(1), b{}.i16(0).i32(3).i32(5).i64(-1).uv(1).uv(1).uv(0).uv(4).i32(11),
			`{"type":"1","data":{"groupId":"gs1","topicId":"Uj5wn_FqTXirEASvVZRY1w","partition":0}}`,
			`{"version":"0","data":{"snapshotEpoch":3,"leaderEpoch":5,"startOffset":-1,"deliveryCompleteCount":11,"stateBatches":[]}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := Format(c.key, c.value, 0)
			if f.Err != nil {
				t.Fatal(f.Err)
			}
			if f.Key != c.k || f.Value != c.v || !f.HasValue {
				t.Fatalf("got  %s %s\nwant %s %s", f.Key, f.Value, c.k, c.v)
			}
		})
	}
	if f := Format(shareKey(0), nil, 0); f.Err != nil || f.Value != "<DELETE>" {
		t.Fatalf("tombstone: %+v", f)
	}
	// As in Kafka's test: a key of type 32767 is an unknown record type.
	if f := Format(b{}.i16(32767), nil, 0); !errors.Is(f.Err, protocol.ErrUnknownType) || f.Key != "Unknown record type 32767 at offset 0, skipping." {
		t.Fatalf("unknown type: %+v", f)
	}
	// An update key with a snapshot's value: the batches' count is read
	// where the update has none, and the record is skipped.
	if f := Format(shareKey(1), b{}.i16(0).i32(0).i32(0).i32(0).i64(0).i64(0).i64(0).uv(0).uv(0), 0); f.Err == nil {
		t.Fatalf("mismatched value decoded: %+v", f)
	}
}

// FuzzFormat: any key and value render without panicking, as JSON when
// they decode.
func FuzzFormat(f *testing.F) {
	f.Add([]byte(shareKey(0)), []byte(batch(b{}.i16(0).i32(0).i32(0).i32(0).i64(0).i64(1).i64(2).uv(2)).uv(0)))
	f.Add([]byte(shareKey(1)), []byte(b{}.i16(0).i32(3).i32(5).i64(-1).uv(1).uv(1).uv(0).uv(4).i32(11)))
	f.Add([]byte{0, 1}, []byte(nil))
	f.Fuzz(func(t *testing.T, key, value []byte) {
		r := Format(key, value, 1)
		if r.Err == nil && (!json.Valid([]byte(r.Key)) || (r.Value != "<DELETE>" && !json.Valid([]byte(r.Value)))) {
			t.Fatalf("%q %q", r.Key, r.Value)
		}
	})
}
