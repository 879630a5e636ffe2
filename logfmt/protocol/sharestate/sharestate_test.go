package sharestate

import (
	"errors"
	"testing"

	"github.com/logtool/logtool/logfmt/protocol/prototest"

	"github.com/logtool/logtool/logfmt/protocol"
)

// b builds inputs field by field.
type b = prototest.Wire

// topicID is Kafka's Uuid "Uj5wn_FqTXirEASvVZRY1w", the one of Kafka's own
// DumpLogSegments test, as its 16 bytes.
var topicID = []byte{0x52, 0x3e, 0x70, 0x9f, 0xf1, 0x6a, 0x4d, 0x78, 0xab, 0x10, 0x04, 0xaf, 0x55, 0x94, 0x58, 0xd7}

func shareKey(typ int16) b { return append(b{}.I16(typ).Str("gs1"), topicID...).I32(0) }

// batch is one state batch: first and last offset, delivery state and
// count, and its empty tagged fields.
func batch(x b) b { return x.I64(0).I64(4).I8(2).I16(1).Uv(0) }

func TestFormat(t *testing.T) {
	prototest.CheckFormat(t, Format, []prototest.Case{
		{"snapshot", shareKey(0), batch(b{}.I16(0).I32(0).I32(0).I32(0).I64(0).I64(1700000000000).I64(1700000000001).Uv(2)).Uv(0),
			`{"type":"0","data":{"groupId":"gs1","topicId":"Uj5wn_FqTXirEASvVZRY1w","partition":0}}`,
			`{"version":"0","data":{"snapshotEpoch":0,"stateEpoch":0,"leaderEpoch":0,"startOffset":0,"createTimestamp":1700000000000,"writeTimestamp":1700000000001,"stateBatches":[{"firstOffset":0,"lastOffset":4,"deliveryState":2,"deliveryCount":1}]}}`},
		{"update", shareKey(1), batch(b{}.I16(0).I32(0).I32(0).I64(0).Uv(2)).Uv(0),
			`{"type":"1","data":{"groupId":"gs1","topicId":"Uj5wn_FqTXirEASvVZRY1w","partition":0}}`,
			`{"version":"0","data":{"snapshotEpoch":0,"leaderEpoch":0,"startOffset":0,"stateBatches":[{"firstOffset":0,"lastOffset":4,"deliveryState":2,"deliveryCount":1}]}}`},
		{"update with deliveryCompleteCount (Kafka 4.2)", shareKey(1), b{}.I16(0).I32(3).I32(5).I64(-1).Uv(1).Uv(1).Uv(0).Uv(4).I32(11),
			`{"type":"1","data":{"groupId":"gs1","topicId":"Uj5wn_FqTXirEASvVZRY1w","partition":0}}`,
			`{"version":"0","data":{"snapshotEpoch":3,"leaderEpoch":5,"startOffset":-1,"deliveryCompleteCount":11,"stateBatches":[]}}`},
	})
	if f := Format(shareKey(0), nil, 0); f.Err != nil || f.Value != "<DELETE>" {
		t.Fatalf("tombstone: %+v", f)
	}
	// As in Kafka's test: a key of type 32767 is an unknown record type.
	if f := Format(b{}.I16(32767), nil, 0); !errors.Is(f.Err, protocol.ErrUnknownType) || f.Key != "Unknown record type 32767 at offset 0, skipping." {
		t.Fatalf("unknown type: %+v", f)
	}
	// An update key with a snapshot's value: the batches' count is read
	// where the update has none, and the record is skipped.
	if f := Format(shareKey(1), b{}.I16(0).I32(0).I32(0).I32(0).I64(0).I64(0).I64(0).Uv(0).Uv(0), 0); f.Err == nil {
		t.Fatalf("mismatched value decoded: %+v", f)
	}
}

// FuzzFormat: any key and value render without panicking, as JSON when
// they decode, and print the same when written back from what was decoded.
func FuzzFormat(f *testing.F) {
	f.Add([]byte(shareKey(0)), []byte(batch(b{}.I16(0).I32(0).I32(0).I32(0).I64(0).I64(1).I64(2).Uv(2)).Uv(0)))
	f.Add([]byte(shareKey(1)), []byte(b{}.I16(0).I32(3).I32(5).I64(-1).Uv(1).Uv(1).Uv(0).Uv(4).I32(11)))
	f.Add([]byte{0, 1}, []byte(nil))
	prototest.Fuzz(f, records)
}
