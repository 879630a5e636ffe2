package logfmt

import (
	"encoding/binary"
	"hash/crc32"

	"github.com/logtool/logtool/logfmt/codec"
)

// Legacy message field positions within an entry (offset, size, then the
// message). Magic 1 adds an int64 timestamp after the attributes.
const (
	legacyCRCOffset   = 12
	legacyAttrOffset  = 17
	legacyTSOffset    = 18
	legacyKeyLenV0    = 18
	legacyKeyLenV1    = 26
	legacyMinSizeV1   = 22 // LegacyRecord.RECORD_OVERHEAD_V1
	legacyHeaderBytes = LogOverhead
)

// LegacyMessage is a view of one magic-0 or magic-1 entry: the int64 offset,
// the int32 size and the message. For a compressed wrapper the offset is that
// of the last inner message and the value holds the compressed inner set.
type LegacyMessage []byte

func (m LegacyMessage) Offset() int64      { return int64(binary.BigEndian.Uint64(m[0:])) }
func (m LegacyMessage) Size() int32        { return int32(binary.BigEndian.Uint32(m[8:])) }
func (m LegacyMessage) CRC() uint32        { return binary.BigEndian.Uint32(m[legacyCRCOffset:]) }
func (m LegacyMessage) Magic() int8        { return int8(m[MagicOffset]) }
func (m LegacyMessage) Attributes() int8   { return int8(m[legacyAttrOffset]) }
func (m LegacyMessage) ComputeCRC() uint32 { return crc32.ChecksumIEEE(m[MagicOffset:]) }

// Compression is the codec in bits 0-2 (Kafka masks with 0x07; some Go
// clients wrongly use 0x03).
func (m LegacyMessage) Compression() codec.Type {
	return codec.Type(m[legacyAttrOffset] & attrCodecMask)
}

// Timestamp is the v1 timestamp field; magic 0 has none and reports -1.
func (m LegacyMessage) Timestamp() int64 {
	if m.Magic() == 0 {
		return NoTimestamp
	}
	return int64(binary.BigEndian.Uint64(m[legacyTSOffset:]))
}

// TimestampType ignores bit 3 for magic 0, as Kafka does.
func (m LegacyMessage) TimestampType() TimestampType {
	if m.Magic() == 0 {
		return NoTimestampType
	}
	if m[legacyAttrOffset]&attrTimestampType != 0 {
		return LogAppendTime
	}
	return CreateTime
}

// minSize is the smallest message size for this magic; Kafka's reader only
// insists on the v0 minimum before looking at the magic, so a shorter v1
// message is caught here instead.
func (m LegacyMessage) minSize() int { return m.minSizeOf(m.Magic()) }

func (LegacyMessage) minSizeOf(magic int8) int {
	if magic == 0 {
		return legacyMinSize
	}
	return legacyMinSizeV1
}

// KeyValue slices the key and the value out of the message. A nil slice means
// null (length -1); an empty non-nil slice means zero bytes.
func (m LegacyMessage) KeyValue() (key, value []byte, err error) {
	if len(m) < LogOverhead+m.minSize() {
		return nil, nil, Corruptf("", 0, "message size %d is below the minimum %d for magic %d", len(m)-LogOverhead, m.minSize(), m.Magic())
	}
	p := legacyKeyLenV0
	if m.Magic() == 1 {
		p = legacyKeyLenV1
	}
	key, p, err = legacySlice(m, p, "key")
	if err != nil {
		return nil, nil, err
	}
	value, _, err = legacySlice(m, p, "value")
	return key, value, err
}

func legacySlice(m []byte, p int, what string) ([]byte, int, error) {
	if p+4 > len(m) {
		return nil, p, Corruptf("", 0, "message ends before the %s length", what) // the field would start past the end: blame the message
	}
	n := int32(binary.BigEndian.Uint32(m[p:]))
	p += 4
	if n < 0 {
		return nil, p, nil
	}
	if int64(n) > int64(len(m)-p) {
		return nil, p, Corruptf("", int64(p-4), "%s length %d exceeds the %d bytes left in the message", what, n, len(m)-p)
	}
	return m[p : p+int(n) : p+int(n)], p + int(n), nil
}
