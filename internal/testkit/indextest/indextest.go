// Package indextest reads whole index files for tests: the form of the
// index package's streaming readers that returns everything at once.
package indextest

import (
	"bytes"

	"github.com/logtool/logtool/index"
)

// ParseOffsetIndex reads the .index file b of a segment starting at base:
// its valid prefix, layout and problems (index.OffsetReader).
func ParseOffsetIndex(b []byte, base int64, file string) (index.OffsetIndex, []index.Problem) {
	r := index.NewOffsetReader(bytes.NewReader(b), int64(len(b)), base, file)
	var ix index.OffsetIndex
	for r.Next() {
		ix.Entries = append(ix.Entries, r.Entry())
	}
	ix.Layout = r.Layout()
	return ix, r.Problems()
}

// ParseTimeIndex reads the .timeindex file b of a segment starting at base
// (index.TimeReader).
func ParseTimeIndex(b []byte, base int64, file string) (index.TimeIndex, []index.Problem) {
	r := index.NewTimeReader(bytes.NewReader(b), int64(len(b)), base, file)
	var ix index.TimeIndex
	for r.Next() {
		ix.Entries = append(ix.Entries, r.Entry())
	}
	ix.Layout = r.Layout()
	return ix, r.Problems()
}

// ParseTxnIndex reads the .txnindex file b (index.TxnReader): its entries,
// and the problems of each and of what follows them.
func ParseTxnIndex(b []byte, file string) ([]index.AbortedTxn, []index.Problem) {
	r := index.NewTxnReader(bytes.NewReader(b), int64(len(b)), file)
	var txns []index.AbortedTxn
	var probs []index.Problem
	for r.Next() {
		txns = append(txns, r.Txn())
		probs = append(probs, r.Problems()...)
	}
	return txns, append(probs, r.Problems()...)
}
