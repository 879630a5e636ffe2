package txnlog

import (
	"encoding/json"
	"testing"

	"github.com/logtool/logtool/dump/protocol/prototest"
)

// b builds inputs field by field.
type b = prototest.Wire

func TestFormat(t *testing.T) {
	key := b{}.I16(0).Str("txn")
	for _, c := range []struct {
		name  string
		value []byte
		want  string
	}{
		{"v0 ongoing", b{}.I16(0).I64(7).I16(1).I32(60000).I8(1).I32(1).Str("t").I32(1).I32(0).I64(10).I64(5),
			`{"version":"0","data":{"producerId":7,"producerEpoch":1,"transactionTimeoutMs":60000,"transactionStatus":"Ongoing","transactionPartitions":[{"topic":"t","partitionIds":[0]}],"transactionLastUpdateTimestampMs":10,"transactionStartTimestampMs":5}}`},
		{"v0 null partitions, unknown status", b{}.I16(0).I64(7).I16(1).I32(60000).I8(9).I32(-1).I64(10).I64(-1),
			`{"version":"0","data":{"producerId":7,"producerEpoch":1,"transactionTimeoutMs":60000,"transactionStatus":9,"transactionPartitions":null,"transactionLastUpdateTimestampMs":10,"transactionStartTimestampMs":-1}}`},
		// Kafka's own example after KAFKA-20712, byte for byte.
		{"v1 tagged previousProducerId", b{}.I16(1).I64(0).I16(0).I32(60000).I8(0).Uv(0).I64(1781778768194).I64(-1).Uv(1).Uv(0).Uv(8).I64(0),
			`{"version":"1","data":{"producerId":0,"previousProducerId":0,"producerEpoch":0,"transactionTimeoutMs":60000,"transactionStatus":"Empty","transactionPartitions":null,"transactionLastUpdateTimestampMs":1781778768194,"transactionStartTimestampMs":-1}}`},
		{"v1 all tags", b{}.I16(1).I64(9).I16(2).I32(1).I8(7).Uv(1).I64(1).I64(2).Uv(3).Uv(0).Uv(8).I64(8).Uv(1).Uv(8).I64(10).Uv(2).Uv(2).I16(2),
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
	f.Add([]byte(b{}.I16(0).Str("txn")), []byte(b{}.I16(0).I64(7).I16(1).I32(60000).I8(1).I32(-1).I64(10).I64(5)))
	f.Add([]byte(b{}.I16(0).Str("txn")), []byte(b{}.I16(1).I64(0).I16(0).I32(60000).I8(0).Uv(0).I64(1).I64(-1).Uv(1).Uv(0).Uv(8).I64(0)))
	f.Fuzz(func(t *testing.T, key, value []byte) {
		r := Format(key, value, 1)
		if r.Err == nil && (!json.Valid([]byte(r.Key)) || (r.Value != "<DELETE>" && !json.Valid([]byte(r.Value)))) {
			t.Fatalf("%q %q", r.Key, r.Value)
		}
	})
}
