package logfmt

// parseKeyV2 is parseV2 for NextKey: it checks a record body just as
// parseV2 does, but decodes only the offset, key, value and attributes,
// and is small enough to keep the offset map's read fast. It reports
// whether the body is well formed; when not, nothing is set and parseV2
// then tells what is wrong.
func parseKeyV2(body []byte, base int64, r *Record) bool {
	if len(body) < 1 {
		return false
	}
	p, ok := skipVarlong(body, 1) // timestamp delta
	if !ok {
		return false
	}
	offDelta, p, ok := varintAt(body, p)
	if !ok {
		return false
	}
	key, p, ok := bytesAt(body, p)
	if !ok {
		return false
	}
	value, p, ok := bytesAt(body, p)
	if !ok {
		return false
	}
	count, p, ok := varintAt(body, p)
	if !ok || count < 0 || int(count) > len(body)-p {
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
	r.Offset = base + int64(offDelta)
	r.Key, r.Value, r.Headers = key, value, r.Headers[:0]
	r.Attributes = int8(body[0])
	return true
}

// bytesAt is varBytes without the error text, for the hot path.
func bytesAt(b []byte, p int) ([]byte, int, bool) {
	l, p, ok := varintAt(b, p)
	if !ok {
		return nil, p, false
	}
	if l < 0 {
		return nil, p, true
	}
	if int(l) > len(b)-p {
		return nil, p, false
	}
	return b[p : p+int(l) : p+int(l)], p + int(l), true
}
