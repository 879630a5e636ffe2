// Package txnlog decodes the records of __transaction_state, the
// transaction coordinator's log, as kafka-dump-log.sh
// --transaction-log-decoder prints them.
//
// The key is an int16 record type (always 0) and the transactional id; the
// value an int16 version (0, or 1 since the record became flexible, which
// added the tagged fields previousProducerId, nextProducerId and
// clientTransactionVersion) and the transaction's state. The schemas follow
// Kafka's TransactionLogKey.json and TransactionLogValue.json.
//
// Format prints transactionStatus as a number, as Kafka 4.0 to 4.3 do
// (KAFKA-20712 names the state in a later release); FormatText prints
// Kafka 3.7 to 3.9's text lines, which name it.
package txnlog

import (
	p "github.com/logtool/logtool/logfmt/protocol"
)

var (
	key = &p.Message{Name: "TransactionLogKey", Flexible: p.Never, Struct: p.Struct{Fields: []p.Field{
		p.F("transactionalId", p.String, p.Since(0)),
	}}}

	value = &p.Message{Name: "TransactionLogValue", Valid: p.Versions{Min: 0, Max: 1}, Flexible: p.Since(1), Struct: p.Struct{Fields: []p.Field{
		p.F("producerId", p.Int64, p.Since(0)),
		p.F("previousProducerId", p.Int64, p.Since(1)).TaggedAs(0, p.Since(1), -1),
		p.F("nextProducerId", p.Int64, p.Since(1)).TaggedAs(1, p.Since(1), -1),
		p.F("producerEpoch", p.Int16, p.Since(0)),
		p.F("transactionTimeoutMs", p.Int32, p.Since(0)),
		p.F("transactionStatus", p.Int8, p.Since(0)),
		p.F("transactionPartitions", p.Nested, p.Since(0)).Arr().Null(p.Since(0)).Of(&p.Struct{Fields: []p.Field{
			p.F("topic", p.String, p.Since(0)),
			p.F("partitionIds", p.Int32, p.Since(0)).Arr(),
		}}),
		p.F("transactionLastUpdateTimestampMs", p.Int64, p.Since(0)),
		p.F("transactionStartTimestampMs", p.Int64, p.Since(0)),
		p.F("clientTransactionVersion", p.Int16, p.Since(1)).TaggedAs(2, p.Since(1), 0),
	}}}

	records = p.Coordinator{0: {Key: key, Value: value}}
)

// States are Kafka's TransactionState names, by id.
var States = [...]string{"Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort", "Dead", "PrepareEpochFence"}

// Format renders a __transaction_state record's key and value.
func Format(k, v []byte, offset int64) p.Formatted {
	return records.Format(k, v, offset)
}
