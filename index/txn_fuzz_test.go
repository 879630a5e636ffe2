package index

import (
	"bytes"
	"testing"
)

func FuzzParseTxnIndex(f *testing.F) {
	a := AbortedTxn{ProducerID: 7, FirstOffset: 100, LastOffset: 110, LastStableOffset: 111}
	b := AbortedTxn{ProducerID: 8, FirstOffset: 105, LastOffset: 120, LastStableOffset: 106}
	f.Add(txnBytes(a, b))
	f.Add(append(txnBytes(a), 0, 0, 0))
	f.Add(txnBytes(b, a))
	v1 := txnBytes(a, b)
	v1[34] = 1
	f.Add(v1)
	f.Fuzz(func(t *testing.T, data []byte) {
		txns, probs := ParseTxnIndex(data, "fuzz")
		checkProblems(t, probs, int64(len(data)), TxnEntrySize)
		if len(txns)*TxnEntrySize > len(data) {
			t.Fatalf("%d entries from %d bytes", len(txns), len(data))
		}
		// Entries are read in order from the start; all but the version
		// field must survive a re-encoding.
		for i, tx := range txns {
			enc := AppendAbortedTxn(nil, tx)
			if got := data[i*TxnEntrySize : (i+1)*TxnEntrySize]; !bytes.Equal(enc[2:], got[2:]) || int8(got[0]) > 0 {
				t.Fatalf("entry %d: %+v re-encodes as % x, read from % x", i, tx, enc, got)
			}
		}
		if len(probs) == 0 && len(txns)*TxnEntrySize != len(data) {
			t.Fatalf("%d entries from %d bytes without a problem", len(txns), len(data))
		}
	})
}
