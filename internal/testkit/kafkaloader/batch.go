package kafkaloader

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
)

// Record framing constants (Records, LegacyRecord, DefaultRecordBatch).
const (
	logOverhead         = 12 // offset int64, size int32
	headerSizeUpToMagic = 17
	magicOffset         = 16
	recordOverheadV0    = 14
	batchOverheadV2     = 61
	crcOffsetV2         = 17
	attributesOffsetV2  = 21
	lastOffsetDeltaV2   = 23
)

// batch is one entry of a .log: a legacy message (compressed wrapper or
// not) or a v2 record batch.
type batch struct {
	pos        int64
	size       int64 // the whole entry, overhead included
	magic      int8
	lastOffset int64
}

// errCorrupt is CorruptRecordException or InvalidRecordException: during
// recovery the log is cut before the batch.
var errCorrupt = errors.New("corrupt record batch")

// nextBatch is FileLogInputStream.nextBatch: ok is false at the end, which
// includes fewer than 17 bytes left and an entry running past the end (a
// torn tail is not an error to the reader); a size below the smallest
// legacy message is errCorrupt.
func nextBatch(r io.ReaderAt, pos, end int64) (b batch, ok bool, err error) {
	if pos >= end-headerSizeUpToMagic {
		return b, false, nil
	}
	var h [headerSizeUpToMagic]byte
	if _, err := r.ReadAt(h[:], pos); err != nil {
		return b, false, err
	}
	offset := int64(binary.BigEndian.Uint64(h[0:]))
	size := int64(int32(binary.BigEndian.Uint32(h[8:])))
	if size < recordOverheadV0 {
		return b, false, errCorrupt
	}
	if pos > end-logOverhead-size {
		return b, false, nil
	}
	b = batch{pos: pos, size: logOverhead + size, magic: int8(h[magicOffset]), lastOffset: offset}
	if b.magic >= 2 {
		// A v2 batch's lastOffset is baseOffset + lastOffsetDelta; a
		// legacy entry's offset is its (last inner) offset already.
		if size+logOverhead < lastOffsetDeltaV2+4 {
			return b, true, nil // ensureValid rejects it
		}
		var d [4]byte
		if _, err := r.ReadAt(d[:], pos+lastOffsetDeltaV2); err != nil {
			return b, false, err
		}
		b.lastOffset = offset + int64(int32(binary.BigEndian.Uint32(d[:])))
	}
	return b, true, nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ensureValid is the batch's ensureValid as recovery calls it: for a
// legacy entry the (outer) message's CRC-32 over magic..value, for v2 the
// size floor and the CRC-32C over attributes..end. Records inside are not
// read, nor are the messages inside a compressed wrapper.
func (b *batch) ensureValid(r io.ReaderAt) error {
	buf := make([]byte, b.size)
	if _, err := r.ReadAt(buf, b.pos); err != nil {
		return err
	}
	if b.magic < 2 {
		if crc32.ChecksumIEEE(buf[magicOffset:]) != binary.BigEndian.Uint32(buf[logOverhead:]) {
			return errCorrupt
		}
		return nil
	}
	if b.size < batchOverheadV2 || crc32.Checksum(buf[attributesOffsetV2:], castagnoli) != binary.BigEndian.Uint32(buf[crcOffsetV2:]) {
		return errCorrupt
	}
	return nil
}

func be64(b []byte) uint64 { return binary.BigEndian.Uint64(b) }
