package logfmt

import (
	"math"

	"github.com/logtool/logtool/logfmt/codec"
)

// CheckHeader is the strict check of a batch on its own, before its
// records are read, beside Validate (the framing and checksum Kafka's
// recovery checks, which a batch is to have passed): the header fields no
// writer gets wrong, which the checksum may cover and recovery does not
// read: for v2 a last offset
// delta of 0 or more, a record count of 0 or more and no more records than
// offsets, a codec Kafka assigned, a partition leader epoch of -1 or more;
// for a legacy message a codec its magic allows. It reads only the header,
// so a header view (HeaderReader) can be checked. The error is a
// *CorruptError whose position is in the batch's file.
func (b *Batch) CheckHeader() error {
	if b.Magic() < 2 {
		m := b.Legacy()
		if c := m.Compression(); !c.ValidFor(m.Magic()) {
			return Corruptf("", b.Pos+17, "message uses compression type %s, which magic %d does not allow", c, m.Magic())
		}
		return nil
	}
	h := b.Header()
	switch {
	case h.LastOffsetDelta() < 0:
		return Corruptf("", b.Pos+23, "record batch has a negative last offset delta %d", h.LastOffsetDelta())
	case int64(h.RecordCount()) > int64(h.LastOffsetDelta())+1:
		return Corruptf("", b.Pos+57, "record batch declares %d records but spans only %d offsets", h.RecordCount(), int64(h.LastOffsetDelta())+1)
	case !h.Compression().ValidFor(2):
		return Corruptf("", b.Pos+21, "record batch uses compression type id %d, which Kafka never assigned", int(h.Compression()))
	case h.RecordCount() < 0:
		return Corruptf("", b.Pos+57, "record batch declares %d records", h.RecordCount())
	case h.PartitionLeaderEpoch() < NoLeaderEpoch:
		// The leader epoch lies outside the checksum; brokers write -1 for
		// none and never another negative number.
		return Corruptf("", b.Pos+12, "record batch has a negative partition leader epoch %d (only -1, for none, is valid)", h.PartitionLeaderEpoch())
	}
	return nil
}

// CheckRecords parses every record of a batch that passed Validate and
// CheckHeader as a consumer would: record fields, offsets increasing within
// the batch and inside its offsets [first, last] (a legacy wrapper's first
// offset is only known from its records), inner legacy messages with their own
// checksums and magic, a wrapper offset that is its last inner message's,
// control records whose key names a type and, for transaction markers,
// whose value reads. It returns the batch's first offset as the records
// give it, and the number of records read.
func CheckRecords(b *Batch, it *RecordIter, first, last int64) (int64, int64, error) {
	if err := it.Reset(b); err != nil {
		return first, 0, err
	}
	first = it.BaseOffset()
	magic := b.Magic()
	inner := magic < 2 && b.Compression() != codec.None
	prev, n := int64(math.MinInt64), int64(0)
	for it.Next() {
		r := it.Record()
		n++
		switch {
		case r.Offset <= prev:
			return first, n, Corruptf("", b.Pos, "record at offset %d follows offset %d in the same batch: offsets must increase", r.Offset, prev)
		case magic >= 2 && (r.Offset < first || r.Offset > last):
			return first, n, Corruptf("", b.Pos, "record offset %d lies outside its batch's offsets %d to %d", r.Offset, first, last)
		case inner && !r.CRCValid:
			return first, n, Corruptf("", b.Pos, "inner message at offset %d: checksum mismatch: stored %d", r.Offset, r.CRC)
		case inner && r.Magic != magic:
			return first, n, Corruptf("", b.Pos, "inner message at offset %d has magic %d inside a magic %d wrapper", r.Offset, r.Magic, magic)
		}
		if b.IsControl() {
			_, t, err := ParseControlKey(r.Key)
			if err == nil && t.IsTxnMarker() {
				_, err = ParseEndTxnMarker(r.Value)
			}
			if err != nil {
				return first, n, Corruptf("", b.Pos, "control record at offset %d: %v", r.Offset, err)
			}
		}
		prev = r.Offset
	}
	if err := it.Err(); err != nil {
		return first, n, err
	}
	if inner && prev != last {
		return first, n, Corruptf("", b.Pos, "wrapper offset %d is not the offset %d of its last inner message", last, prev)
	}
	return first, n, nil
}
