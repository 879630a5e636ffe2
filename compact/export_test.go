package compact

// put records offset as the latest for key, and as the map's latest offset.
func (m *offsetMap) put(key []byte, offset int64) {
	h1, h2 := m.hash(key)
	m.putHashed(h1, h2, offset)
}
