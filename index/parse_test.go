package index

// The whole-file forms of the readers, for this package's tests; other
// packages' tests have internal/testkit/indextest.

// ParseOffsetIndex parses the bytes of an .index file whose segment starts at
// base. Entries is the valid prefix (see OffsetReader). Problems list what is
// neither valid entries nor preallocated zeros.
func ParseOffsetIndex(b []byte, base int64, file string) (OffsetIndex, []Problem) {
	r := newOffsetReader(memScanner(b, OffsetEntrySize), int64(len(b)), base, file)
	for r.Next() {
	}
	// A memory scanner has no I/O to fail, so Err is always nil here, and the
	// only problems are those of the final Next.
	ix := OffsetIndex{Layout: r.Layout()}
	if n := ix.ValidBytes / OffsetEntrySize; n > 0 {
		// Decoding the checked prefix a second time beats growing a slice
		// entry by entry, and sizes it by what was found valid.
		ix.Entries = make([]OffsetEntry, n)
		for i := range ix.Entries {
			rel, pos := offsetFields(b[i*OffsetEntrySize:])
			ix.Entries[i] = OffsetEntry{Offset: base + int64(rel), Position: pos}
		}
	}
	return ix, r.Problems()
}

// ParseTimeIndex parses the bytes of a .timeindex file whose segment starts at
// base. Entries is the valid prefix (see TimeReader).
func ParseTimeIndex(b []byte, base int64, file string) (TimeIndex, []Problem) {
	r := newTimeReader(memScanner(b, TimeEntrySize), int64(len(b)), base, file)
	for r.Next() {
	}
	ix := TimeIndex{Layout: r.Layout()}
	if n := ix.ValidBytes / TimeEntrySize; n > 0 {
		ix.Entries = make([]TimeEntry, n)
		for i := range ix.Entries {
			ts, rel := timeFields(b[i*TimeEntrySize:])
			ix.Entries[i] = TimeEntry{Timestamp: ts, Offset: base + int64(rel)}
		}
	}
	return ix, r.Problems()
}

// ParseTxnIndex parses the bytes of a .txnindex file (see TxnReader).
func ParseTxnIndex(b []byte, file string) ([]AbortedTxn, []Problem) {
	r := newTxnReader(memScanner(b, TxnEntrySize), int64(len(b)), file)
	var txns []AbortedTxn
	var probs []Problem
	for r.Next() {
		txns = append(txns, r.Txn())
		probs = append(probs, r.Problems()...)
	}
	// A memory scanner has no I/O to fail, so Err is always nil here.
	return txns, append(probs, r.Problems()...)
}
