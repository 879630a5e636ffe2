// Package txnbatch builds the small v2 batches, data and transaction
// markers, of the hand-built partitions that the producer-state tests read.
package txnbatch

import (
	"testing"

	"github.com/logtool/logtool/logfmt"
)

// Spec describes a v2 batch.
type Spec struct {
	Base     int64
	N        int   // records; 0 for an empty control batch
	PID      int64 // -1: no producer
	Txn      bool
	Control  logfmt.ControlType
	IsMarker bool
}

// Data is a batch of n data records of producer pid from base.
func Data(pid, base int64, n int, txn bool) Spec {
	return Spec{Base: base, N: n, PID: pid, Txn: txn}
}

// Marker is a transaction marker of producer pid at offset.
func Marker(pid, offset int64, t logfmt.ControlType) Spec {
	return Spec{Base: offset, N: 1, PID: pid, Txn: true, Control: t, IsMarker: true}
}

// Bytes encodes the batch.
func (s Spec) Bytes(t testing.TB) []byte {
	t.Helper()
	o := logfmt.DefaultBatchOptions(s.Base)
	o.ProducerID, o.ProducerEpoch, o.Transactional, o.Control = s.PID, 0, s.Txn, s.IsMarker
	if s.PID >= 0 {
		o.BaseSequence = 0
	}
	var recs []logfmt.Record
	for i := range s.N {
		r := logfmt.Record{Offset: s.Base + int64(i), Timestamp: 1_700_000_000_000 + s.Base + int64(i), Value: []byte("v")}
		if s.IsMarker {
			r.Key, r.Value = logfmt.ControlKey(s.Control), logfmt.AppendEndTxnMarker(nil, logfmt.EndTxnMarker{})
		}
		recs = append(recs, r)
	}
	if s.IsMarker && s.N == 0 {
		o.LastOffsetDelta = 0
	}
	b, err := logfmt.AppendBatch(nil, o, recs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
