package logfmt

import (
	"encoding/binary"

	"github.com/logtool/logtool/internal/crc32c"
	"github.com/logtool/logtool/logfmt/codec"
)

// Sizes and positions shared by every magic (Kafka's Records and RecordBatch).
const (
	LogOverhead         = 12 // int64 offset + int32 size in front of every entry
	MagicOffset         = 16 // the magic byte is at byte 16 of every entry
	HeaderSizeUpToMagic = 17
	V2HeaderSize        = 61 // RECORD_BATCH_OVERHEAD
	legacyMinSize       = 14 // LegacyRecord.RECORD_OVERHEAD_V0: the smallest size field Kafka accepts
	MinEntrySize        = LogOverhead + legacyMinSize
)

// Sentinels Kafka writes for "none".
const (
	NoTimestamp   int64 = -1
	NoProducerID  int64 = -1
	NoSequence    int32 = -1
	NoLeaderEpoch int32 = -1
)

// TimestampType is the meaning of a batch's timestamps.
type TimestampType int8

const (
	NoTimestampType TimestampType = -1 // magic 0: there are no timestamps
	CreateTime      TimestampType = 0
	LogAppendTime   TimestampType = 1
)

func (t TimestampType) String() string {
	switch t {
	case CreateTime:
		return "CreateTime"
	case LogAppendTime:
		return "LogAppendTime"
	}
	return "NoTimestampType"
}

// Attribute bits of a v2 batch (the low byte of the int16) and of a legacy message.
const (
	attrCodecMask     = 0x07
	attrTimestampType = 0x08
	attrTransactional = 0x10
	attrControl       = 0x20
	attrDeleteHorizon = 0x40
)

// BatchHeader is a view of the 61-byte header of a magic-2 record batch. It
// does not copy: it is valid as long as the bytes under it are.
type BatchHeader []byte

func (h BatchHeader) BaseOffset() int64           { return int64(binary.BigEndian.Uint64(h[0:])) }
func (h BatchHeader) BatchLength() int32          { return int32(binary.BigEndian.Uint32(h[8:])) }
func (h BatchHeader) PartitionLeaderEpoch() int32 { return int32(binary.BigEndian.Uint32(h[12:])) }
func (h BatchHeader) Magic() int8                 { return int8(h[16]) }
func (h BatchHeader) CRC() uint32                 { return binary.BigEndian.Uint32(h[17:]) }
func (h BatchHeader) Attributes() int16           { return int16(binary.BigEndian.Uint16(h[21:])) }
func (h BatchHeader) LastOffsetDelta() int32      { return int32(binary.BigEndian.Uint32(h[23:])) }
func (h BatchHeader) BaseTimestamp() int64        { return int64(binary.BigEndian.Uint64(h[27:])) }
func (h BatchHeader) MaxTimestamp() int64         { return int64(binary.BigEndian.Uint64(h[35:])) }
func (h BatchHeader) ProducerID() int64           { return int64(binary.BigEndian.Uint64(h[43:])) }
func (h BatchHeader) ProducerEpoch() int16        { return int16(binary.BigEndian.Uint16(h[51:])) }
func (h BatchHeader) BaseSequence() int32         { return int32(binary.BigEndian.Uint32(h[53:])) }
func (h BatchHeader) RecordCount() int32          { return int32(binary.BigEndian.Uint32(h[57:])) }

// LastOffset is baseOffset + lastOffsetDelta; compaction keeps it even when
// the last records are gone.
func (h BatchHeader) LastOffset() int64 { return h.BaseOffset() + int64(h.LastOffsetDelta()) }

func (h BatchHeader) Compression() codec.Type { return codec.Type(h[22] & attrCodecMask) }
func (h BatchHeader) IsTransactional() bool   { return h[22]&attrTransactional != 0 }
func (h BatchHeader) IsControl() bool         { return h[22]&attrControl != 0 }
func (h BatchHeader) HasDeleteHorizon() bool  { return h[22]&attrDeleteHorizon != 0 }

func (h BatchHeader) TimestampType() TimestampType {
	if h[22]&attrTimestampType != 0 {
		return LogAppendTime
	}
	return CreateTime
}

// DeleteHorizon is the KIP-534 delete horizon, or -1 when the batch has none.
func (h BatchHeader) DeleteHorizon() int64 {
	if h.HasDeleteHorizon() {
		return h.BaseTimestamp()
	}
	return NoTimestamp
}

// LastSequence follows DefaultRecordBatch.incrementSequence: sequences wrap
// from MaxInt32 to 0.
func (h BatchHeader) LastSequence() int32 {
	return IncrementSequence(h.BaseSequence(), h.LastOffsetDelta())
}

// IncrementSequence adds delta to a producer sequence the way Kafka does,
// wrapping past MaxInt32 to 0; NoSequence stays NoSequence.
func IncrementSequence(seq, delta int32) int32 {
	if seq == NoSequence {
		return NoSequence
	}
	if seq > 1<<31-1-delta {
		return delta - (1<<31 - 1 - seq) - 1
	}
	return seq + delta
}

// ComputeCRC is the CRC-32C over attributes..end, the bytes the stored CRC
// covers. The partition leader epoch is outside it because the broker stamps
// the epoch on append.
func (h BatchHeader) ComputeCRC(entry []byte) uint32 {
	return crc32c.Checksum(entry[21:])
}
