package txnlog

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/logtool/logtool/logfmt/protocol/prototest"
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
			`{"version":"0","data":{"producerId":7,"producerEpoch":1,"transactionTimeoutMs":60000,"transactionStatus":1,"transactionPartitions":[{"topic":"t","partitionIds":[0]}],"transactionLastUpdateTimestampMs":10,"transactionStartTimestampMs":5}}`},
		{"v0 null partitions, status 9", b{}.I16(0).I64(7).I16(1).I32(60000).I8(9).I32(-1).I64(10).I64(-1),
			`{"version":"0","data":{"producerId":7,"producerEpoch":1,"transactionTimeoutMs":60000,"transactionStatus":9,"transactionPartitions":null,"transactionLastUpdateTimestampMs":10,"transactionStartTimestampMs":-1}}`},
		// The bytes of Kafka's example in KAFKA-20712, with the status a
		// number as Kafka 4.0 to 4.3 print it.
		{"v1 tagged previousProducerId", b{}.I16(1).I64(0).I16(0).I32(60000).I8(0).Uv(0).I64(1781778768194).I64(-1).Uv(1).Uv(0).Uv(8).I64(0),
			`{"version":"1","data":{"producerId":0,"previousProducerId":0,"producerEpoch":0,"transactionTimeoutMs":60000,"transactionStatus":0,"transactionPartitions":null,"transactionLastUpdateTimestampMs":1781778768194,"transactionStartTimestampMs":-1}}`},
		{"v1 all tags", b{}.I16(1).I64(9).I16(2).I32(1).I8(7).Uv(1).I64(1).I64(2).Uv(3).Uv(0).Uv(8).I64(8).Uv(1).Uv(8).I64(10).Uv(2).Uv(2).I16(2),
			`{"version":"1","data":{"producerId":9,"previousProducerId":8,"nextProducerId":10,"producerEpoch":2,"transactionTimeoutMs":1,"transactionStatus":7,"transactionPartitions":[],"transactionLastUpdateTimestampMs":1,"transactionStartTimestampMs":2,"clientTransactionVersion":2}}`},
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

// TestFormatText: Kafka 3.7 to 3.9's line, as in a Strimzi transcript of
// kafka-dump-log.sh 3.9 ("producerId:1,producerEpoch:0,state=Ongoing,
// partitions=[output-topic-0],txnLastUpdateTimestamp=...,txnTimeoutMs=60000").
func TestFormatText(t *testing.T) {
	key := b{}.I16(0).Str("kafka-txn-0")
	parts := b{}.I32(2).Str("output-topic").I32(2).I32(0).I32(3).Str("other").I32(1).I32(7)
	for _, c := range []struct {
		name       string
		key, value []byte
		wantKey    string
		want       string
		hasValue   bool
	}{
		{"ongoing", key, append(b{}.I16(0).I64(1).I16(0).I32(60000).I8(1), parts.I64(1742739702876).I64(1742739702800)...),
			"transaction_metadata::transactionalId=kafka-txn-0",
			"producerId:1,producerEpoch:0,state=Ongoing,partitions=[output-topic-0,output-topic-3,other-7],txnLastUpdateTimestamp=1742739702876,txnTimeoutMs=60000", true},
		// Kafka adds no partitions to an Empty transaction.
		{"empty", key, append(b{}.I16(0).I64(1).I16(0).I32(60000).I8(0), parts.I64(5).I64(-1)...),
			"transaction_metadata::transactionalId=kafka-txn-0",
			"producerId:1,producerEpoch:0,state=Empty,partitions=[],txnLastUpdateTimestamp=5,txnTimeoutMs=60000", true},
		{"v1 value", key, b{}.I16(1).I64(9).I16(2).I32(1).I8(4).Uv(1).I64(1).I64(2).Uv(0),
			"transaction_metadata::transactionalId=kafka-txn-0",
			"producerId:9,producerEpoch:2,state=CompleteCommit,partitions=[],txnLastUpdateTimestamp=1,txnTimeoutMs=1", true},
		{"tombstone", key, nil, "transaction_metadata::transactionalId=kafka-txn-0", "<DELETE>", true},
		{"other type", b{}.I16(3).Str("x"), b{}.I16(0), "unknown::version=3", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := FormatText(c.key, c.value, 0)
			if f.Err != nil || f.Key != c.wantKey || f.Value != c.want || f.HasValue != c.hasValue {
				t.Fatalf("got  %q %q %v %v\nwant %q %q", f.Key, f.Value, f.HasValue, f.Err, c.wantKey, c.want)
			}
		})
	}
	for _, v := range [][]byte{b{}.I16(0).I64(1).I16(0).I32(60000).I8(8).I32(-1).I64(5).I64(-1), b{}.I16(0).I64(1)} {
		if f := FormatText(key, v, 42); f.Err == nil || f.Key[:len("Error at offset 42, skipping. ")] != "Error at offset 42, skipping. " {
			t.Errorf("%x: %q %v", v, f.Key, f.Err)
		}
	}
}

func FuzzFormatText(f *testing.F) {
	f.Add([]byte(b{}.I16(0).Str("txn")), []byte(b{}.I16(0).I64(7).I16(1).I32(60000).I8(1).I32(1).Str("t").I32(1).I32(0).I64(10).I64(5)))
	f.Add([]byte(b{}.I16(0).Str("txn")), []byte(b{}.I16(1).I64(0).I16(0).I32(60000).I8(0).Uv(0).I64(1).I64(-1).Uv(0)))
	f.Fuzz(func(t *testing.T, key, value []byte) {
		r := FormatText(key, value, 1)
		if r.Err == nil && r.HasValue && r.Value != "<DELETE>" && !strings.HasPrefix(r.Value, "producerId:") {
			t.Fatalf("%q %q", r.Key, r.Value)
		}
	})
}
