package txnlog

import (
	"encoding/binary"
	"encoding/json"
	"strings"
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
			`{"version":"0","data":{"producerId":7,"producerEpoch":1,"transactionTimeoutMs":60000,"transactionStatus":1,"transactionPartitions":[{"topic":"t","partitionIds":[0]}],"transactionLastUpdateTimestampMs":10,"transactionStartTimestampMs":5}}`},
		{"v0 null partitions, status 9", b{}.i16(0).i64(7).i16(1).i32(60000).i8(9).i32(-1).i64(10).i64(-1),
			`{"version":"0","data":{"producerId":7,"producerEpoch":1,"transactionTimeoutMs":60000,"transactionStatus":9,"transactionPartitions":null,"transactionLastUpdateTimestampMs":10,"transactionStartTimestampMs":-1}}`},
		// The bytes of Kafka's example in KAFKA-20712, with the status a
		// number as Kafka 4.0 to 4.3 print it.
		{"v1 tagged previousProducerId", b{}.i16(1).i64(0).i16(0).i32(60000).i8(0).uv(0).i64(1781778768194).i64(-1).uv(1).uv(0).uv(8).i64(0),
			`{"version":"1","data":{"producerId":0,"previousProducerId":0,"producerEpoch":0,"transactionTimeoutMs":60000,"transactionStatus":0,"transactionPartitions":null,"transactionLastUpdateTimestampMs":1781778768194,"transactionStartTimestampMs":-1}}`},
		{"v1 all tags", b{}.i16(1).i64(9).i16(2).i32(1).i8(7).uv(1).i64(1).i64(2).uv(3).uv(0).uv(8).i64(8).uv(1).uv(8).i64(10).uv(2).uv(2).i16(2),
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
	f.Add([]byte(b{}.i16(0).str("txn")), []byte(b{}.i16(0).i64(7).i16(1).i32(60000).i8(1).i32(-1).i64(10).i64(5)))
	f.Add([]byte(b{}.i16(0).str("txn")), []byte(b{}.i16(1).i64(0).i16(0).i32(60000).i8(0).uv(0).i64(1).i64(-1).uv(1).uv(0).uv(8).i64(0)))
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
	key := b{}.i16(0).str("kafka-txn-0")
	parts := b{}.i32(2).str("output-topic").i32(2).i32(0).i32(3).str("other").i32(1).i32(7)
	for _, c := range []struct {
		name       string
		key, value []byte
		wantKey    string
		want       string
		hasValue   bool
	}{
		{"ongoing", key, append(b{}.i16(0).i64(1).i16(0).i32(60000).i8(1), parts.i64(1742739702876).i64(1742739702800)...),
			"transaction_metadata::transactionalId=kafka-txn-0",
			"producerId:1,producerEpoch:0,state=Ongoing,partitions=[output-topic-0,output-topic-3,other-7],txnLastUpdateTimestamp=1742739702876,txnTimeoutMs=60000", true},
		// Kafka adds no partitions to an Empty transaction.
		{"empty", key, append(b{}.i16(0).i64(1).i16(0).i32(60000).i8(0), parts.i64(5).i64(-1)...),
			"transaction_metadata::transactionalId=kafka-txn-0",
			"producerId:1,producerEpoch:0,state=Empty,partitions=[],txnLastUpdateTimestamp=5,txnTimeoutMs=60000", true},
		{"v1 value", key, b{}.i16(1).i64(9).i16(2).i32(1).i8(4).uv(1).i64(1).i64(2).uv(0),
			"transaction_metadata::transactionalId=kafka-txn-0",
			"producerId:9,producerEpoch:2,state=CompleteCommit,partitions=[],txnLastUpdateTimestamp=1,txnTimeoutMs=1", true},
		{"tombstone", key, nil, "transaction_metadata::transactionalId=kafka-txn-0", "<DELETE>", true},
		{"other type", b{}.i16(3).str("x"), b{}.i16(0), "unknown::version=3", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := FormatText(c.key, c.value, 0)
			if f.Err != nil || f.Key != c.wantKey || f.Value != c.want || f.HasValue != c.hasValue {
				t.Fatalf("got  %q %q %v %v\nwant %q %q", f.Key, f.Value, f.HasValue, f.Err, c.wantKey, c.want)
			}
		})
	}
	for _, v := range [][]byte{b{}.i16(0).i64(1).i16(0).i32(60000).i8(8).i32(-1).i64(5).i64(-1), b{}.i16(0).i64(1)} {
		if f := FormatText(key, v, 42); f.Err == nil || f.Key[:len("Error at offset 42, skipping. ")] != "Error at offset 42, skipping. " {
			t.Errorf("%x: %q %v", v, f.Key, f.Err)
		}
	}
}

func FuzzFormatText(f *testing.F) {
	f.Add([]byte(b{}.i16(0).str("txn")), []byte(b{}.i16(0).i64(7).i16(1).i32(60000).i8(1).i32(1).str("t").i32(1).i32(0).i64(10).i64(5)))
	f.Add([]byte(b{}.i16(0).str("txn")), []byte(b{}.i16(1).i64(0).i16(0).i32(60000).i8(0).uv(0).i64(1).i64(-1).uv(0)))
	f.Fuzz(func(t *testing.T, key, value []byte) {
		r := FormatText(key, value, 1)
		if r.Err == nil && r.HasValue && r.Value != "<DELETE>" && !strings.HasPrefix(r.Value, "producerId:") {
			t.Fatalf("%q %q", r.Key, r.Value)
		}
	})
}
