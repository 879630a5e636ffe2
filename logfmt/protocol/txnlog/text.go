package txnlog

import (
	"encoding/binary"
	"fmt"
	"strconv"

	p "github.com/logtool/logtool/logfmt/protocol"
)

// FormatText renders a __transaction_state record as kafka-dump-log.sh 3.7
// to 3.9 print it (TransactionLog.formatRecordKeyAndValue):
//
//	transaction_metadata::transactionalId=<id>
//	producerId:<id>,producerEpoch:<e>,state=<name>,partitions=[t-0,t-1],txnLastUpdateTimestamp=<ms>,txnTimeoutMs=<ms>
//
// A tombstone is <DELETE>, a key of another type "unknown::version=<type>"
// without a value. Partitions are listed as the record holds them, where
// Kafka lists its hash set's order; an Empty transaction has none, as in
// Kafka. Values that Kafka 3.x would stop at (a newer value version, an
// unknown state) are still decoded, or reported as errors.
func FormatText(k, v []byte, offset int64) p.Formatted {
	skip := func(err error) p.Formatted {
		return p.Formatted{Key: "Error at offset " + strconv.FormatInt(offset, 10) + ", skipping. " + err.Error(), Err: err}
	}
	if len(k) < 2 {
		return skip(fmt.Errorf("key of %d bytes has no record type", len(k)))
	}
	if typ := int16(binary.BigEndian.Uint16(k)); typ != 0 {
		return p.Formatted{Key: "unknown::version=" + strconv.Itoa(int(typ))}
	}
	kv, _, err := p.Decode(key, 0, k[2:])
	if err != nil {
		return skip(err)
	}
	f := p.Formatted{Key: "transaction_metadata::transactionalId=" + string(kv.Field("transactionalId").Raw), HasValue: true}
	if v == nil {
		f.Value = "<DELETE>"
		return f
	}
	if len(v) < 2 {
		return skip(fmt.Errorf("value of %d bytes has no version", len(v)))
	}
	vv, _, err := p.Decode(value, int16(binary.BigEndian.Uint16(v)), v[2:])
	if err != nil {
		return skip(err)
	}
	status := vv.Field("transactionStatus").Int
	if status < 0 || status >= int64(len(States)) {
		return skip(fmt.Errorf("unknown transaction state id %d", status))
	}
	b := []byte("producerId:")
	b = strconv.AppendInt(b, vv.Field("producerId").Int, 10)
	b = append(b, ",producerEpoch:"...)
	b = strconv.AppendInt(b, vv.Field("producerEpoch").Int, 10)
	b = append(b, ",state="...)
	b = append(b, States[status]...)
	b = append(b, ",partitions=["...)
	if status != 0 { // Empty
		n := 0
		for _, t := range vv.Field("transactionPartitions").Items {
			for _, id := range t.Field("partitionIds").Items {
				if n > 0 {
					b = append(b, ',')
				}
				n++
				b = append(b, t.Field("topic").Raw...)
				b = append(b, '-')
				b = strconv.AppendInt(b, id.Int, 10)
			}
		}
	}
	b = append(b, "],txnLastUpdateTimestamp="...)
	b = strconv.AppendInt(b, vv.Field("transactionLastUpdateTimestampMs").Int, 10)
	b = append(b, ",txnTimeoutMs="...)
	b = strconv.AppendInt(b, vv.Field("transactionTimeoutMs").Int, 10)
	f.Value = string(b)
	return f
}
