package logfmt

import (
	"encoding/binary"

	"github.com/logtool/logtool/logfmt/codec"
)

// Batch is one shallow entry of a log: a v2 record batch, a legacy message, or
// a legacy compressed wrapper (which Kafka also treats as one batch). Data is
// the whole entry, offset and size fields included.
type Batch struct {
	Pos  int64  // byte position of the entry in its file
	Data []byte // the entry; owned by the reader and valid until its next Next

	// dec, for a batch a DeepReader gave out, is what its worker found,
	// valid as long as Data.
	dec *decoded
}

// Magic is byte 16, which every magic keeps at the same place.
func (b *Batch) Magic() int8 { return int8(b.Data[MagicOffset]) }

// Size is the entry's length in bytes, the 12-byte log overhead included.
func (b *Batch) Size() int {
	if b.dec != nil && b.dec.size > 0 {
		return b.dec.size
	}
	return len(b.Data)
}

// headerOnly tells a header view (see HeaderReader), whose records cannot
// be read.
func (b *Batch) headerOnly() bool { return b.dec != nil && b.dec.size > 0 }

// Header views a magic-2 batch header. Do not call it for legacy entries.
func (b *Batch) Header() BatchHeader { return BatchHeader(b.Data[:V2HeaderSize]) }

// Legacy views a magic-0/1 entry. Do not call it for v2 batches.
func (b *Batch) Legacy() LegacyMessage { return LegacyMessage(b.Data) }

// LastOffset is the offset of the last record; for a legacy wrapper that is
// the wrapper's own offset.
func (b *Batch) LastOffset() int64 {
	if b.Magic() >= 2 {
		return b.Header().LastOffset()
	}
	return int64(binary.BigEndian.Uint64(b.Data))
}

// EntryOffset is the int64 at byte 0: the base offset of a v2 batch, the
// (last) offset of a legacy message.
func (b *Batch) EntryOffset() int64 { return int64(binary.BigEndian.Uint64(b.Data)) }

// MaxTimestamp is what Kafka's recovery uses for the time index: the v2
// header field, a v1 message's timestamp, or -1 for magic 0.
func (b *Batch) MaxTimestamp() int64 {
	if b.Magic() >= 2 {
		return b.Header().MaxTimestamp()
	}
	return b.Legacy().Timestamp()
}

func (b *Batch) TimestampType() TimestampType {
	if b.Magic() >= 2 {
		return b.Header().TimestampType()
	}
	return b.Legacy().TimestampType()
}

func (b *Batch) Compression() codec.Type {
	if b.Magic() >= 2 {
		return b.Header().Compression()
	}
	return b.Legacy().Compression()
}

// StoredCRC is the checksum written in the entry.
func (b *Batch) StoredCRC() uint32 {
	if b.Magic() >= 2 {
		return b.Header().CRC()
	}
	return b.Legacy().CRC()
}

// ComputeCRC recomputes the checksum: CRC-32C over attributes..end for v2,
// CRC-32 (IEEE) over magic..end for legacy messages. For a batch a
// DeepReader gave out, its worker has.
func (b *Batch) ComputeCRC() uint32 {
	if b.dec != nil {
		return b.dec.crc
	}
	return b.computeCRC()
}

func (b *Batch) computeCRC() uint32 {
	if b.Magic() >= 2 {
		return b.Header().ComputeCRC(b.Data)
	}
	return b.Legacy().ComputeCRC()
}

// Validate is Kafka's ensureValid: the entry is big enough for its magic and
// its checksum matches. For a legacy wrapper only the wrapper is checked, as
// in LogSegment.recover.
func (b *Batch) Validate() error {
	if b.Magic() >= 2 {
		if b.Size() < V2HeaderSize {
			return Corruptf("", b.Pos, "record batch size %d is below the %d-byte header", b.Size(), V2HeaderSize)
		}
		if h := b.Header(); h.RecordCount() < 0 {
			return Corruptf("", b.Pos, "record batch declares %d records", h.RecordCount())
		}
	} else if b.Size() < LogOverhead+b.Legacy().minSize() {
		return Corruptf("", b.Pos, "message size %d is below the minimum %d for magic %d", b.Size()-LogOverhead, b.Legacy().minSize(), b.Magic())
	}
	if s, c := b.StoredCRC(), b.ComputeCRC(); s != c {
		return Corruptf("", b.Pos, "checksum mismatch: stored %d, computed %d", s, c)
	}
	return nil
}

// IsControl is true for v2 control batches (transaction markers, KRaft control records).
func (b *Batch) IsControl() bool { return b.Magic() >= 2 && b.Header().IsControl() }
