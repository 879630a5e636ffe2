package logfmt

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"sync"

	"github.com/logtool/logtool/internal/crc32c"
	"github.com/logtool/logtool/logfmt/codec"
)

// BatchOptions describe a magic-2 batch for AppendBatch.
type BatchOptions struct {
	BaseOffset           int64
	PartitionLeaderEpoch int32
	Compression          codec.Type
	TimestampType        TimestampType // CreateTime or LogAppendTime
	Transactional        bool
	Control              bool
	DeleteHorizon        int64 // KIP-534 horizon in ms, or -1 for none
	ProducerID           int64
	ProducerEpoch        int16
	BaseSequence         int32
	// LastOffsetDelta is derived from the last record when negative; the
	// cleaner passes the original one so the batch keeps its last offset.
	LastOffsetDelta int32
	// MaxTimestamp is the append time under LogAppendTime, and the value an
	// empty batch keeps; otherwise the records' maximum is written.
	MaxTimestamp int64
}

// DefaultBatchOptions has every "none" value Kafka uses.
func DefaultBatchOptions(baseOffset int64) BatchOptions {
	return BatchOptions{
		BaseOffset: baseOffset, PartitionLeaderEpoch: NoLeaderEpoch, DeleteHorizon: NoTimestamp,
		ProducerID: NoProducerID, ProducerEpoch: -1, BaseSequence: NoSequence, LastOffsetDelta: -1,
		MaxTimestamp: NoTimestamp,
	}
}

// AppendBatch appends a magic-2 batch holding recs (absolute offsets and
// timestamps, ascending offsets) to dst, byte for byte as Kafka's
// MemoryRecordsBuilder writes it. With no records it writes the cleaner's
// empty batch: codec none, baseTimestamp -1, MaxTimestamp kept, count 0.
// It is a BatchBuilder given recs.
func AppendBatch(dst []byte, o BatchOptions, recs []Record) ([]byte, error) {
	w := builders.Get().(*BatchBuilder)
	defer builders.Put(w)
	if err := w.Reset(dst, o); err != nil {
		return dst, err
	}
	for i := range recs {
		if err := w.Append(&recs[i]); err != nil {
			w.Finish()
			return dst, err
		}
	}
	return w.Finish()
}

var builders = sync.Pool{New: func() any { return new(BatchBuilder) }}

// BatchBuilder writes a magic-2 batch a record at a time, as AppendBatch
// does, streaming the records into the compressor: it holds the batch's
// compressed bytes, one record, and the compressor's state (codec.Writer),
// never the batch's decompressed records. The header, which counts and
// checksums what follows it, is filled in by Finish. Keep one per
// goroutine and Reset it for each batch.
type BatchBuilder struct {
	o      BatchOptions
	dst    []byte // while the codec is none: the output so far
	start  int    // where the batch starts in the output
	cw     codec.Writer
	rec    []byte // one record's bytes, for the compressor
	n      int
	baseTS int64
	maxTS  int64
	last   int64 // the last record's offset
	err    error
	// After Spill: the bytes of the batch spilled (its header as zeros
	// included), the CRC-32C of the payload among them, and the header
	// Finish makes.
	spilled int64
	crc     uint32
	header  [V2HeaderSize]byte
}

// Reset starts a batch described by o, to be appended to dst.
func (w *BatchBuilder) Reset(dst []byte, o BatchOptions) error {
	*w = BatchBuilder{o: o, dst: dst, start: len(dst), cw: w.cw, rec: w.rec[:0], baseTS: NoTimestamp, maxTS: NoTimestamp}
	if o.Compression != codec.None && !o.Compression.ValidFor(2) {
		w.err = fmt.Errorf("compression %s is not valid for magic 2", o.Compression)
		return w.err
	}
	w.dst = append(w.dst, make([]byte, V2HeaderSize)...)
	return nil
}

// Append adds r, which must come after the records before it.
func (w *BatchBuilder) Append(r *Record) error {
	if w.err != nil {
		return w.err
	}
	if w.n == 0 {
		w.baseTS = r.Timestamp
		if w.o.DeleteHorizon >= 0 {
			w.baseTS = w.o.DeleteHorizon
		}
		if w.o.Compression != codec.None {
			w.cw.Reset(w.dst, w.o.Compression, 2)
			w.dst = nil
		}
	}
	if w.o.Compression == codec.None {
		w.dst, w.err = appendRecord(w.dst, w.o.BaseOffset, w.baseTS, r)
	} else if w.rec, w.err = appendRecord(w.rec[:0], w.o.BaseOffset, w.baseTS, r); w.err == nil {
		_, w.err = w.cw.Write(w.rec)
	}
	w.n++
	w.maxTS, w.last = max(w.maxTS, r.Timestamp), r.Offset
	return w.err
}

// Spill writes the output made so far to out and lets go of it, so that a
// compressed batch of any size is written holding only what was compressed
// since the last Spill. The batch's header goes out as zeros: once Finish
// has returned the rest of the batch, Header is what to write over them.
// Before the first record, and with zstd (codec.Writer.Spill), it writes
// nothing.
func (w *BatchBuilder) Spill(out io.Writer) error {
	if w.err != nil || w.n == 0 || w.o.Compression == codec.None {
		return w.err
	}
	w.err = w.cw.Spill(func(p []byte) error {
		if _, err := out.Write(p); err != nil {
			return err
		}
		if w.spilled == 0 { // the output before the batch, and its header
			w.spilled = V2HeaderSize
			p = p[w.start+V2HeaderSize:]
			w.start = 0
		}
		w.spilled += int64(len(p))
		w.crc = crc32c.Update(w.crc, p)
		return nil
	})
	return w.err
}

// Spilled reports whether Spill wrote part of the batch: Finish then
// returns only the rest, and Header the header.
func (w *BatchBuilder) Spilled() bool { return w.spilled > 0 }

// Header is the header of a batch that Spill wrote, valid after Finish.
func (w *BatchBuilder) Header() []byte { return w.header[:] }

// Finish fills in the header and returns the output with the batch
// appended; on error, the output as Reset found it. After Spill, it returns
// the rest of the batch, and the header is Header.
func (w *BatchBuilder) Finish() ([]byte, error) {
	o := w.o
	dst := w.dst
	w.dst = nil // do not keep the caller's buffer alive in a pool
	if o.Compression != codec.None && w.n > 0 {
		out, err := w.cw.Close()
		if w.err == nil {
			w.err = err
		}
		dst = out
	}
	if w.err != nil {
		return dst[:w.start], w.err
	}
	attrs := byte(o.Compression)
	maxTS := w.maxTS
	if w.n == 0 {
		attrs, maxTS = 0, o.MaxTimestamp
	}
	if o.TimestampType == LogAppendTime {
		attrs |= attrTimestampType
		if w.n > 0 {
			maxTS = o.MaxTimestamp
		}
	}
	if o.Transactional {
		attrs |= attrTransactional
	}
	if o.Control {
		attrs |= attrControl
	}
	if o.DeleteHorizon >= 0 && w.n > 0 {
		attrs |= attrDeleteHorizon
	}
	lastDelta := o.LastOffsetDelta
	if lastDelta < 0 {
		if w.n == 0 {
			return dst[:w.start], fmt.Errorf("an empty batch needs its original last offset delta")
		}
		d := w.last - o.BaseOffset
		if d < 0 || d > 1<<31-1 {
			return dst[:w.start], fmt.Errorf("last offset %d does not fit a batch based at %d", w.last, o.BaseOffset)
		}
		lastDelta = int32(d)
	}
	h, size := dst[w.start:], int64(len(dst)-w.start)
	if w.spilled > 0 {
		h, size = w.header[:], w.spilled+int64(len(dst))
	}
	be := binary.BigEndian
	be.PutUint64(h[0:], uint64(o.BaseOffset))
	be.PutUint32(h[8:], uint32(size-LogOverhead))
	be.PutUint32(h[12:], uint32(o.PartitionLeaderEpoch))
	h[16] = 2
	be.PutUint16(h[21:], uint16(attrs))
	be.PutUint32(h[23:], uint32(lastDelta))
	be.PutUint64(h[27:], uint64(w.baseTS))
	be.PutUint64(h[35:], uint64(maxTS))
	be.PutUint64(h[43:], uint64(o.ProducerID))
	be.PutUint16(h[51:], uint16(o.ProducerEpoch))
	be.PutUint32(h[53:], uint32(o.BaseSequence))
	be.PutUint32(h[57:], uint32(w.n))
	if w.spilled > 0 {
		payload := crc32c.Update(w.crc, dst)
		be.PutUint32(h[17:], crc32Concat(crc32c.Checksum(h[21:]), payload, size-V2HeaderSize))
		return dst, nil
	}
	be.PutUint32(h[17:], crc32c.Checksum(h[21:]))
	return dst, nil
}

// crc32Concat is the CRC-32C of a then b, from a's CRC, b's and b's
// length. Extending a CRC by n zero bytes is linear in the CRC, so the
// register a leaves behind, carried through b's length in zeros, is what
// separates b's CRC from the concatenation's; the zeros are run through the
// hardware CRC, a few milliseconds for 10 MiB.
func crc32Concat(a, b uint32, n int64) uint32 {
	var zeros [32 << 10]byte
	za, z0 := a, uint32(0)
	for n > 0 {
		k := min(n, int64(len(zeros)))
		za, z0 = crc32c.Update(za, zeros[:k]), crc32c.Update(z0, zeros[:k])
		n -= k
	}
	return za ^ z0 ^ b
}

// appendRecord appends r as a DefaultRecord of a batch based at baseOffset
// and baseTS.
func appendRecord(dst []byte, baseOffset, baseTS int64, r *Record) ([]byte, error) {
	d := r.Offset - baseOffset
	if d < 0 || d > 1<<31-1 {
		return dst, fmt.Errorf("record offset %d does not fit a batch based at %d", r.Offset, baseOffset)
	}
	tsDelta := r.Timestamp - baseTS
	size := 1 + varlongLen(tsDelta) + varintLen(int32(d)) + bytesLen(r.Key) + bytesLen(r.Value) + varintLen(int32(len(r.Headers)))
	for _, h := range r.Headers {
		size += bytesLen(h.Key) + bytesLen(h.Value)
	}
	dst = appendVarint(dst, int32(size))
	dst = append(dst, byte(r.Attributes))
	dst = appendVarlong(dst, tsDelta)
	dst = appendVarint(dst, int32(d))
	dst = appendBytes(dst, r.Key)
	dst = appendBytes(dst, r.Value)
	dst = appendVarint(dst, int32(len(r.Headers)))
	for _, h := range r.Headers {
		dst = appendBytes(dst, h.Key)
		dst = appendBytes(dst, h.Value)
	}
	return dst, nil
}

func bytesLen(b []byte) int {
	if b == nil {
		return 1
	}
	return varintLen(int32(len(b))) + len(b)
}

func appendBytes(dst, b []byte) []byte {
	if b == nil {
		return appendVarint(dst, -1)
	}
	return append(appendVarint(dst, int32(len(b))), b...)
}

func varlongLen(v int64) int {
	u := uint64(v<<1) ^ uint64(v>>63)
	n := 1
	for u >= 0x80 {
		u >>= 7
		n++
	}
	return n
}

// AppendLegacyMessage appends one uncompressed magic-0/1 entry. attributes
// may carry the timestamp-type bit; timestamp is ignored for magic 0.
func AppendLegacyMessage(dst []byte, magic int8, offset int64, attributes int8, timestamp int64, key, value []byte) []byte {
	start := len(dst)
	dst = binary.BigEndian.AppendUint64(dst, uint64(offset))
	dst = append(dst, 0, 0, 0, 0, 0, 0, 0, 0) // size and crc, filled below
	dst = append(dst, byte(magic), byte(attributes))
	if magic > 0 {
		dst = binary.BigEndian.AppendUint64(dst, uint64(timestamp))
	}
	dst = appendLegacyBytes(dst, key)
	dst = appendLegacyBytes(dst, value)
	m := dst[start:]
	binary.BigEndian.PutUint32(m[8:], uint32(len(m)-LogOverhead))
	binary.BigEndian.PutUint32(m[12:], crc32.ChecksumIEEE(m[MagicOffset:]))
	return dst
}

func appendLegacyBytes(dst, b []byte) []byte {
	if b == nil {
		return binary.BigEndian.AppendUint32(dst, 0xffffffff)
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(b)))
	return append(dst, b...)
}

// LegacyWrapperOptions describe a compressed magic-0/1 wrapper.
type LegacyWrapperOptions struct {
	Magic         int8
	Compression   codec.Type
	TimestampType TimestampType // magic 1 only
	LogAppendTime int64         // the wrapper and inner timestamp under LogAppendTime
}

// AppendLegacyWrapper compresses recs into one wrapper message whose offset
// is the last record's. Inner offsets are absolute for magic 0 and relative
// to the first record for magic 1, keeping any holes between offsets, which
// is how Kafka's cleaner rebuilds compacted wrappers. It is a
// WrapperBuilder given recs.
func AppendLegacyWrapper(dst []byte, o LegacyWrapperOptions, recs []Record) ([]byte, error) {
	w := wrapperBuilders.Get().(*WrapperBuilder)
	defer wrapperBuilders.Put(w)
	if err := w.Reset(dst, o); err != nil {
		return dst, err
	}
	for i := range recs {
		if err := w.Append(&recs[i]); err != nil {
			w.Finish()
			return dst, err
		}
	}
	return w.Finish()
}

var wrapperBuilders = sync.Pool{New: func() any { return new(WrapperBuilder) }}

// WrapperBuilder writes a compressed magic-0/1 wrapper a record at a time,
// as AppendLegacyWrapper does, streaming the inner messages into the
// compressor: like BatchBuilder, it holds the compressed bytes and one
// message, and Finish fills in the wrapper's fields.
type WrapperBuilder struct {
	o     LegacyWrapperOptions
	orig  []byte // the output as Reset found it
	cw    codec.Writer
	rec   []byte
	n     int
	first int64
	last  int64
	maxTS int64
	err   error
	value int // where the compressed value starts
}

// Reset starts a wrapper described by o, to be appended to dst.
func (w *WrapperBuilder) Reset(dst []byte, o LegacyWrapperOptions) error {
	*w = WrapperBuilder{o: o, orig: dst, cw: w.cw, rec: w.rec[:0], maxTS: NoTimestamp}
	if o.Compression == codec.None || !o.Compression.ValidFor(o.Magic) {
		w.err = fmt.Errorf("compression %s is not valid for a magic %d wrapper", o.Compression, o.Magic)
		return w.err
	}
	// Offset, size, CRC, magic, attributes, timestamp for magic 1, a null
	// key and the value's length: filled in by Finish.
	w.value = len(dst) + legacyKeyLenV0 + 8
	if o.Magic > 0 {
		w.value += 8
	}
	return w.cw.Reset(append(dst, make([]byte, w.value-len(dst))...), o.Compression, o.Magic)
}

// Append adds r, whose offset must be above the one before.
func (w *WrapperBuilder) Append(r *Record) error {
	if w.err != nil {
		return w.err
	}
	if w.n > 0 && r.Offset <= w.last {
		w.err = fmt.Errorf("offsets must increase: %d after %d", r.Offset, w.last)
		return w.err
	}
	if w.n == 0 {
		w.first = r.Offset
	}
	off := r.Offset
	if w.o.Magic > 0 {
		off -= w.first
	}
	var innerAttr int8
	ts := r.Timestamp
	if w.o.Magic > 0 && w.o.TimestampType == LogAppendTime {
		innerAttr, ts = attrTimestampType, w.o.LogAppendTime
	}
	w.rec = AppendLegacyMessage(w.rec[:0], w.o.Magic, off, innerAttr, ts, r.Key, r.Value)
	_, w.err = w.cw.Write(w.rec)
	w.n++
	w.last, w.maxTS = r.Offset, max(w.maxTS, ts)
	return w.err
}

// Finish fills in the wrapper and returns the output with it appended; on
// error, the output as Reset found it.
func (w *WrapperBuilder) Finish() ([]byte, error) {
	orig := w.orig
	w.orig = nil                      // do not keep the caller's buffer alive in a pool
	if w.err != nil && w.value == 0 { // Reset refused the codec
		return orig, w.err
	}
	dst, err := w.cw.Close()
	if w.err == nil {
		w.err = err
	}
	if w.err == nil && w.n == 0 {
		w.err = fmt.Errorf("a compressed wrapper needs at least one message")
	}
	if w.err != nil {
		return orig, w.err
	}
	attr := int8(w.o.Compression)
	maxTS := w.maxTS
	if w.o.Magic > 0 && w.o.TimestampType == LogAppendTime {
		attr |= attrTimestampType
		maxTS = w.o.LogAppendTime
	}
	m := dst[len(orig):]
	be := binary.BigEndian
	be.PutUint64(m, uint64(w.last))
	be.PutUint32(m[8:], uint32(len(m)-LogOverhead))
	m[MagicOffset], m[legacyAttrOffset] = byte(w.o.Magic), byte(attr)
	p := legacyKeyLenV0
	if w.o.Magic > 0 {
		be.PutUint64(m[legacyTSOffset:], uint64(maxTS))
		p = legacyKeyLenV1
	}
	be.PutUint32(m[p:], 0xffffffff) // a null key
	be.PutUint32(m[p+4:], uint32(len(dst)-w.value))
	be.PutUint32(m[legacyCRCOffset:], crc32.ChecksumIEEE(m[MagicOffset:]))
	return dst, nil
}
