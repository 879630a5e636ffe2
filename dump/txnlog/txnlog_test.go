package txnlog

import (
	"encoding/binary"
	"encoding/json"
	"testing"
)

type b []byte

func (x b) i8(v int8) b    { return append(x, byte(v)) }
func (x b) i16(v int16) b  { return binary.BigEndian.AppendUint16(x, uint16(v)) }
func (x b) i32(v int32) b  { return binary.BigEndian.AppendUint32(x, uint32(v)) }
func (x b) i64(v int64) b  { return binary.BigEndian.AppendUint64(x, uint64(v)) }
func (x b) uv(v int) b     { return binary.AppendUvarint(x, uint64(v)) }
func (x b) str(s string) b { return append(x.i16(int16(len(s))), s...) }

func TestFormat(t *testing.T) {
	key := b{}.i16(0).str("txn")
	for _, c := range []struct {
		name  string
		value []byte
		want  string
	}{
		{"v0 ongoing", b{}.i16(0).i64(7).i16(1).i32(60000).i8(1).i32(1).str("t").i32(1).i32(0).i64(10).i64(5),
			`{"version":"0","data":{"producerId":7,"producerEpoch":1,"transactionTimeoutMs":60000,"transactionStatus":"Ongoing","transactionPartitions":[{"topic":"t","partitionIds":[0]}],"transactionLastUpdateTimestampMs":10,"transactionStartTimestampMs":5}}`},
		{"v0 null partitions, unknown status", b{}.i16(0).i64(7).i16(1).i32(60000).i8(9).i32(-1).i64(10).i64(-1),
			`{"version":"0","data":{"producerId":7,"producerEpoch":1,"transactionTimeoutMs":60000,"transactionStatus":9,"transactionPartitions":null,"transactionLastUpdateTimestampMs":10,"transactionStartTimestampMs":-1}}`},
		// Kafka's own example after KAFKA-20712, byte for byte.
		{"v1 tagged previousProducerId", b{}.i16(1).i64(0).i16(0).i32(60000).i8(0).uv(0).i64(1781778768194).i64(-1).uv(1).uv(0).uv(8).i64(0),
			`{"version":"1","data":{"producerId":0,"previousProducerId":0,"producerEpoch":0,"transactionTimeoutMs":60000,"transactionStatus":"Empty","transactionPartitions":null,"transactionLastUpdateTimestampMs":1781778768194,"transactionStartTimestampMs":-1}}`},
		{"v1 all tags", b{}.i16(1).i64(9).i16(2).i32(1).i8(7).uv(1).i64(1).i64(2).uv(3).uv(0).uv(8).i64(8).uv(1).uv(8).i64(10).uv(2).uv(2).i16(2),
			`{"version":"1","data":{"producerId":9,"previousProducerId":8,"nextProducerId":10,"producerEpoch":2,"transactionTimeoutMs":1,"transactionStatus":"PrepareEpochFence","transactionPartitions":[],"transactionLastUpdateTimestampMs":1,"transactionStartTimestampMs":2,"clientTransactionVersion":2}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := Format(key, c.value, 0)
			if f.Err != nil {
				t.Fatal(f.Err)
			}
			if f.Key != `{"type":"0","data":{"transactionalId":"txn"}}` || f.Value != c.want {
				t.Fatalf("got  %s %s\nwant %s", f.Key, f.Value, c.want)
			}
			if !json.Valid([]byte(f.Value)) {
				t.Fatal("not JSON")
			}
		})
	}
}

func FuzzFormat(f *testing.F) {
	f.Add([]byte(b{}.i16(0).str("txn")), []byte(b{}.i16(0).i64(7).i16(1).i32(60000).i8(1).i32(-1).i64(10).i64(5)))
	f.Add([]byte(b{}.i16(0).str("txn")), []byte(b{}.i16(1).i64(0).i16(0).i32(60000).i8(0).uv(0).i64(1).i64(-1).uv(1).uv(0).uv(8).i64(0)))
	f.Fuzz(func(t *testing.T, key, value []byte) {
		r := Format(key, value, 1)
		if r.Err == nil && (!json.Valid([]byte(r.Key)) || (r.Value != "<DELETE>" && !json.Valid([]byte(r.Value)))) {
			t.Fatalf("%q %q", r.Key, r.Value)
		}
	})
}
