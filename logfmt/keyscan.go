package logfmt

// NextKey is Next for callers that need only each record's Offset, Key and
// Value, as the cleaner's offset map does: a magic-2 record is checked just
// as Next checks it, but its timestamp, sequence and headers are not
// decoded. Only Offset, Key, Value, Attributes, Magic and Size of Record are
// set (Headers is emptied); the other fields keep stale values. Legacy
// entries, and any record the short path does not accept, go through Next,
// so errors, positions and messages are the same as Next's.
func (it *RecordIter) NextKey() bool {
	if it.done || it.b.Magic() < 2 || !it.keyV2() {
		return it.Next()
	}
	return true
}

// keyV2 reads the record at it.p when it is well formed and reports whether
// it did; on false nothing has moved, and Next then reports the problem.
func (it *RecordIter) keyV2() bool {
	if it.remaining == 0 {
		return false
	}
	b := it.data[it.p:]
	length, n, err := readVarint(b)
	if err != nil || length < 1 || int(length) > len(b)-n {
		return false
	}
	body := b[n : n+int(length)]
	p := 1 // attributes
	_, k, err := readVarlong(body[p:])
	if err != nil {
		return false
	}
	p += k
	offDelta, k, err := readVarint(body[p:])
	if err != nil {
		return false
	}
	p += k
	key, p, ok := bytesAt(body, p)
	if !ok {
		return false
	}
	value, p, ok := bytesAt(body, p)
	if !ok {
		return false
	}
	count, k, err := readVarint(body[p:])
	if err != nil {
		return false
	}
	p += k
	if count < 0 || int(count) > len(body)-p {
		return false
	}
	for i := int32(0); i < count; i++ {
		var hk []byte
		if hk, p, ok = bytesAt(body, p); !ok || hk == nil {
			return false
		}
		if _, p, ok = bytesAt(body, p); !ok {
			return false
		}
	}
	if p != len(body) {
		return false
	}
	r := &it.rec
	r.Offset = it.b.Header().BaseOffset() + int64(offDelta)
	r.Key, r.Value, r.Headers = key, value, r.Headers[:0]
	r.Attributes, r.Magic, r.Size = int8(body[0]), 2, n+int(length)
	it.p += n + int(length)
	it.remaining--
	it.index++
	return true
}

// bytesAt is varBytes without the error text, which keeps it small enough
// to inline on the hot path.
func bytesAt(b []byte, p int) ([]byte, int, bool) {
	l, n, err := readVarint(b[p:])
	if err != nil {
		return nil, p, false
	}
	p += n
	if l < 0 {
		return nil, p, true
	}
	if int(l) > len(b)-p {
		return nil, p, false
	}
	return b[p : p+int(l) : p+int(l)], p + int(l), true
}
