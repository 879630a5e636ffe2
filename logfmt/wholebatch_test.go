package logfmt

import (
	"encoding/binary"
	"fmt"

	"github.com/logtool/logtool/internal/testkit/codectest"
	"github.com/logtool/logtool/logfmt/codec"
)

// wholeIter is RecordIter as it was before it streamed: it decompresses a
// whole batch, up to Limit bytes, before parsing it. The tests hold the
// streaming iterator to it: same records, same errors.
type wholeIter struct {
	// Limit caps the decompressed size of one batch; 0 means codec.DefaultLimit.
	Limit int
	// File names the file in errors.
	File string

	b         *Batch
	buf       []byte
	data      []byte // v2 records area or legacy inner message set
	dataPos   int64  // file position of data[0], or -1 when data is decompressed
	p         int
	remaining int32 // v2: records still to read
	index     int
	rec       Record
	err       error
	done      bool

	// legacy state
	legacyBase  int64 // added to v1 inner relative offsets; -1 for absolute (v0)
	legacyCount int
	legacyFirst int64
	wrapper     LegacyMessage
}

// Reset prepares iteration over b's records, decompressing if needed. An
// error is also kept for Err.
func (it *wholeIter) Reset(b *Batch) error {
	it.b, it.p, it.index, it.err, it.done = b, 0, 0, nil, false
	it.data, it.dataPos, it.wrapper = nil, -1, nil
	if b.Magic() >= 2 {
		it.err = it.resetV2()
	} else {
		it.err = it.resetLegacy()
	}
	if it.err != nil {
		it.done = true
	}
	return it.err
}

func (it *wholeIter) limit() int {
	if it.Limit > 0 {
		return it.Limit
	}
	return codec.DefaultLimit
}

func (it *wholeIter) corrupt(pos int64, format string, args ...any) error {
	if pos < 0 {
		pos = it.b.Pos
	}
	return Corruptf(it.File, pos, format, args...)
}

func (it *wholeIter) resetV2() error {
	h := it.b.Header()
	it.remaining = h.RecordCount()
	if it.remaining < 0 {
		return it.corrupt(it.b.Pos+57, "record batch declares %d records", it.remaining)
	}
	area := it.b.Data[V2HeaderSize:]
	if c := h.Compression(); c != codec.None {
		if !c.ValidFor(2) {
			return it.corrupt(it.b.Pos+21, "unknown compression type id %d", int(c))
		}
		var err error
		it.buf, err = codectest.Decompress(it.buf[:0], c, area, 2, it.limit())
		if err != nil {
			return &CorruptError{File: it.File, Pos: it.b.Pos + V2HeaderSize, Msg: fmt.Sprintf("cannot decompress %s records", c), Err: err}
		}
		it.data = it.buf
		return nil
	}
	it.data, it.dataPos = area, it.b.Pos+V2HeaderSize
	return nil
}

// posAt maps a position in data to a file position when data was not
// decompressed; inside a compressed payload only the batch position is known.
func (it *wholeIter) posAt(p int) int64 {
	if it.dataPos < 0 {
		return it.b.Pos
	}
	return it.dataPos + int64(p)
}

func (it *wholeIter) resetLegacy() error {
	m := it.b.Legacy()
	it.wrapper = m
	if m.Compression() == codec.None {
		it.legacyCount, it.legacyFirst = 1, m.Offset()
		return nil
	}
	c := m.Compression()
	if !c.ValidFor(m.Magic()) {
		return it.corrupt(it.b.Pos+legacyAttrOffset, "compression type %s is not valid for magic %d", c, m.Magic())
	}
	key, value, err := m.KeyValue()
	if err != nil {
		return WithFile(err, it.File, it.b.Pos)
	}
	_ = key
	if value == nil {
		return it.corrupt(-1, "compressed message set with null value")
	}
	it.buf, err = codectest.Decompress(it.buf[:0], c, value, m.Magic(), it.limit())
	if err != nil {
		return &CorruptError{File: it.File, Pos: it.b.Pos, Msg: fmt.Sprintf("cannot decompress %s wrapper", c), Err: err}
	}
	it.data = it.buf
	// The absolute offsets of v1 inner messages depend on the last inner
	// relative offset, not on the count: compaction leaves holes.
	var lastRel int64
	n := 0
	for p := 0; p < len(it.data); n++ {
		inner, err := it.innerAt(p)
		if err != nil {
			return err
		}
		if n == 0 {
			it.legacyFirst = inner.Offset()
		}
		lastRel = inner.Offset()
		p += len(inner)
	}
	if n == 0 {
		return it.corrupt(-1, "invalid compressed message set: no inner messages")
	}
	it.legacyCount = n
	it.legacyBase = -1
	if m.Magic() > 0 {
		wrapperOffset := m.Offset()
		if wrapperOffset == 0 {
			it.legacyBase = 0 // librdkafka sends 0 in produce requests; Kafka then reads inner offsets as absolute
		} else {
			it.legacyBase = wrapperOffset - lastRel
			if it.legacyBase < 0 {
				return it.corrupt(-1, "wrapper offset %d is below the last inner relative offset %d", wrapperOffset, lastRel)
			}
		}
		it.legacyFirst += it.legacyBase
	}
	return nil
}

// innerAt frames the inner entry at p of a decompressed legacy set.
func (it *wholeIter) innerAt(p int) (LegacyMessage, error) {
	rest := it.data[p:]
	if len(rest) < HeaderSizeUpToMagic {
		return nil, it.corrupt(-1, "inner message set ends with %d stray bytes (at byte %d of the decompressed set)", len(rest), p)
	}
	size := int32(binary.BigEndian.Uint32(rest[8:]))
	if size < legacyMinSize || int64(size) > int64(len(rest)-LogOverhead) {
		return nil, it.corrupt(-1, "inner message size %d is invalid (at byte %d of the decompressed set)", size, p)
	}
	inner := LegacyMessage(rest[:LogOverhead+int(size)])
	if inner.Magic() > 1 {
		return nil, it.corrupt(-1, "inner message has magic %d (at byte %d of the decompressed set)", inner.Magic(), p)
	}
	if inner.Compression() != codec.None {
		return nil, it.corrupt(-1, "inner messages must not be compressed (at byte %d of the decompressed set)", p)
	}
	return inner, nil
}

// BaseOffset is the first record's offset. For a legacy wrapper it is only
// known after decompression, which Reset did.
func (it *wholeIter) BaseOffset() int64 {
	if it.b.Magic() >= 2 {
		return it.b.Header().BaseOffset()
	}
	return it.legacyFirst
}

// Count is the number of records: the v2 header's count, or the number of
// messages in a legacy entry.
func (it *wholeIter) Count() int {
	if it.b.Magic() >= 2 {
		return int(it.b.Header().RecordCount())
	}
	return it.legacyCount
}

// Next advances to the next record.
func (it *wholeIter) Next() bool {
	if it.done {
		return false
	}
	var err error
	var ok bool
	if it.b.Magic() >= 2 {
		ok, err = it.nextV2()
	} else {
		ok, err = it.nextLegacy()
	}
	if err != nil {
		it.err = err
	}
	if !ok {
		it.done = true
	}
	return ok
}

// Record is the current record; valid until the next call to Next or Reset.
func (it *wholeIter) Record() *Record { return &it.rec }

// Err is the first error met, nil at a clean end.
func (it *wholeIter) Err() error { return it.err }

func (it *wholeIter) nextV2() (bool, error) {
	if it.remaining == 0 {
		if it.p != len(it.data) {
			return false, it.corrupt(it.posAt(it.p), "incorrect declared batch size: %d bytes remain after the last of %d records", len(it.data)-it.p, it.b.Header().RecordCount())
		}
		return false, nil
	}
	start := it.p
	if start == len(it.data) {
		// Nothing is there to point at: the count field is what is wrong.
		return false, it.corrupt(it.b.Pos+57, "record batch declares %d records but its data ends after %d",
			it.b.Header().RecordCount(), it.index)
	}
	length, n, err := readVarint(it.data[it.p:])
	if err != nil {
		return false, it.corrupt(it.posAt(start), "record %d length: %v", it.index, err)
	}
	body := it.data[it.p+n:]
	if length < 0 || int(length) > len(body) {
		return false, it.corrupt(it.posAt(start), "record %d length %d exceeds the %d bytes left", it.index, length, len(body))
	}
	body = body[:length]
	h := it.b.Header()
	r := &it.rec
	r.Magic, r.Size, r.CRC, r.CRCValid, r.Compression = 2, n+int(length), 0, true, codec.None
	if err := parseV2(body, h, r); err != nil {
		return false, it.corrupt(it.posAt(start), "record %d: %v", it.index, err)
	}
	it.p += n + int(length)
	it.remaining--
	it.index++
	return true, nil
}

func (it *wholeIter) nextLegacy() (bool, error) {
	r := &it.rec
	var m LegacyMessage
	if it.data == nil { // an uncompressed message is its own only record
		if it.index > 0 {
			return false, nil
		}
		m = it.wrapper
		r.Offset = m.Offset()
	} else {
		if it.p >= len(it.data) {
			return false, nil
		}
		var err error
		if m, err = it.innerAt(it.p); err != nil {
			return false, err
		}
		it.p += len(m)
		r.Offset = m.Offset()
		if it.legacyBase >= 0 {
			r.Offset += it.legacyBase
		}
	}
	key, value, err := m.KeyValue()
	if err != nil {
		if it.data == nil {
			return false, WithFile(err, it.File, it.b.Pos)
		}
		return false, it.corrupt(-1, "inner message %d: %v", it.index, err)
	}
	r.Key, r.Value, r.Headers = key, value, r.Headers[:0]
	r.Magic, r.Attributes, r.Sequence, r.Size = m.Magic(), m.Attributes(), NoSequence, len(m)
	r.CRC = m.CRC()
	r.CRCValid = r.CRC == m.ComputeCRC()
	r.Compression = m.Compression()
	r.Timestamp, r.TimestampType = m.Timestamp(), m.TimestampType()
	// Inside a v1 wrapper the wrapper's timestamp type wins, and under
	// LogAppendTime so does its timestamp (LegacyRecord.timestamp()).
	if it.data != nil && m.Magic() > 0 && it.wrapper.Magic() > 0 {
		r.TimestampType = it.wrapper.TimestampType()
		if r.TimestampType == LogAppendTime {
			r.Timestamp = it.wrapper.Timestamp()
		}
	}
	it.index++
	return true, nil
}
