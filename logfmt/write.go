package logfmt

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"sync"

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

var scratchPool = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// AppendBatch appends a magic-2 batch holding recs (absolute offsets and
// timestamps, ascending offsets) to dst, byte for byte as Kafka's
// MemoryRecordsBuilder writes it. With no records it writes the cleaner's
// empty batch: codec none, baseTimestamp -1, MaxTimestamp kept, count 0.
func AppendBatch(dst []byte, o BatchOptions, recs []Record) ([]byte, error) {
	if o.Compression != codec.None && !o.Compression.ValidFor(2) {
		return dst, fmt.Errorf("compression %s is not valid for magic 2", o.Compression)
	}
	baseTS, maxTS := NoTimestamp, NoTimestamp
	if len(recs) > 0 {
		baseTS = recs[0].Timestamp
		for i := range recs {
			maxTS = max(maxTS, recs[i].Timestamp)
		}
	}
	attrs := byte(o.Compression)
	if len(recs) == 0 {
		attrs, maxTS = 0, o.MaxTimestamp
	}
	if o.TimestampType == LogAppendTime {
		attrs |= attrTimestampType
		if len(recs) > 0 {
			maxTS = o.MaxTimestamp
		}
	}
	if o.Transactional {
		attrs |= attrTransactional
	}
	if o.Control {
		attrs |= attrControl
	}
	if o.DeleteHorizon >= 0 && len(recs) > 0 {
		attrs |= attrDeleteHorizon
		baseTS = o.DeleteHorizon
	}
	lastDelta := o.LastOffsetDelta
	if lastDelta < 0 {
		if len(recs) == 0 {
			return dst, fmt.Errorf("an empty batch needs its original last offset delta")
		}
		d := recs[len(recs)-1].Offset - o.BaseOffset
		if d < 0 || d > 1<<31-1 {
			return dst, fmt.Errorf("last offset %d does not fit a batch based at %d", recs[len(recs)-1].Offset, o.BaseOffset)
		}
		lastDelta = int32(d)
	}

	start := len(dst)
	dst = append(dst, make([]byte, V2HeaderSize)...)
	if o.Compression == codec.None || len(recs) == 0 {
		var err error
		if dst, err = appendRecords(dst, o.BaseOffset, baseTS, recs); err != nil {
			return dst[:start], err
		}
	} else {
		sp := scratchPool.Get().(*[]byte)
		raw, err := appendRecords((*sp)[:0], o.BaseOffset, baseTS, recs)
		if err == nil {
			dst, err = codec.Compress(dst, o.Compression, raw, 2)
		}
		*sp = raw
		scratchPool.Put(sp)
		if err != nil {
			return dst[:start], err
		}
	}
	h := dst[start:]
	be := binary.BigEndian
	be.PutUint64(h[0:], uint64(o.BaseOffset))
	be.PutUint32(h[8:], uint32(len(h)-LogOverhead))
	be.PutUint32(h[12:], uint32(o.PartitionLeaderEpoch))
	h[16] = 2
	be.PutUint16(h[21:], uint16(attrs))
	be.PutUint32(h[23:], uint32(lastDelta))
	be.PutUint64(h[27:], uint64(baseTS))
	be.PutUint64(h[35:], uint64(maxTS))
	be.PutUint64(h[43:], uint64(o.ProducerID))
	be.PutUint16(h[51:], uint16(o.ProducerEpoch))
	be.PutUint32(h[53:], uint32(o.BaseSequence))
	be.PutUint32(h[57:], uint32(len(recs)))
	be.PutUint32(h[17:], crc32.Checksum(h[21:], castagnoli))
	return dst, nil
}

func appendRecords(dst []byte, baseOffset, baseTS int64, recs []Record) ([]byte, error) {
	for i := range recs {
		r := &recs[i]
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
// is how Kafka's cleaner rebuilds compacted wrappers.
func AppendLegacyWrapper(dst []byte, o LegacyWrapperOptions, recs []Record) ([]byte, error) {
	if len(recs) == 0 {
		return dst, fmt.Errorf("a compressed wrapper needs at least one message")
	}
	if o.Compression == codec.None || !o.Compression.ValidFor(o.Magic) {
		return dst, fmt.Errorf("compression %s is not valid for a magic %d wrapper", o.Compression, o.Magic)
	}
	var innerAttr int8
	lat := o.Magic > 0 && o.TimestampType == LogAppendTime
	if lat {
		innerAttr = attrTimestampType
	}
	sp := scratchPool.Get().(*[]byte)
	defer scratchPool.Put(sp)
	inner := (*sp)[:0]
	base := recs[0].Offset
	maxTS := NoTimestamp
	for i := range recs {
		r := &recs[i]
		off := r.Offset
		if o.Magic > 0 {
			off -= base
		}
		if i > 0 && r.Offset <= recs[i-1].Offset {
			return dst, fmt.Errorf("offsets must increase: %d after %d", r.Offset, recs[i-1].Offset)
		}
		ts := r.Timestamp
		if lat {
			ts = o.LogAppendTime
		}
		maxTS = max(maxTS, ts)
		inner = AppendLegacyMessage(inner, o.Magic, off, innerAttr, ts, r.Key, r.Value)
	}
	compressed, err := codec.Compress(nil, o.Compression, inner, o.Magic)
	*sp = inner
	if err != nil {
		return dst, err
	}
	attr := int8(o.Compression)
	if lat {
		attr |= attrTimestampType
		maxTS = o.LogAppendTime
	}
	return AppendLegacyMessage(dst, o.Magic, recs[len(recs)-1].Offset, attr, maxTS, nil, compressed), nil
}
