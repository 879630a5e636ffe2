// Package kafkatest decodes segment bytes independently of logfmt, with
// franz-go's kmsg and the standard decompressors, so that tests can hold
// logtool's readers and writers to a second implementation. Only tests
// import it.
package kafkatest

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Batch is one entry of a log as kmsg sees it.
type Batch struct {
	Pos           int64
	Size          int
	Magic         int8
	First, Last   int64 // offsets of the first and last records (a v2 header's base and last)
	ProducerID    int64
	ProducerEpoch int16
	LeaderEpoch   int32
	Transactional bool
	Control       bool
	Records       []Record
}

// Record is one record with its absolute offset and timestamp.
type Record struct {
	Offset        int64
	Timestamp     int64
	TimestampType string // CreateTime, LogAppendTime or NoTimestampType
	Key, Value    []byte // nil for null
	Headers       []Header
	Sequence      int32
}

// Header is a record header; a nil Value is null.
type Header struct {
	Key   string
	Value []byte
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Entries splits a segment's bytes into entries by their size fields, up to
// the first that does not fit; it checks nothing else.
func Entries(data []byte) (entries [][]byte, pos []int64) {
	for p := 0; len(data)-p >= 17; {
		size := int(int32(binary.BigEndian.Uint32(data[p+8:])))
		if size < 14 || size > len(data)-p-12 {
			break
		}
		entries = append(entries, data[p:p+12+size])
		pos = append(pos, int64(p))
		p += 12 + size
	}
	return entries, pos
}

// Decode decodes one entry in full: checksums (inner ones too), every record.
func Decode(entry []byte) (Batch, error) {
	if len(entry) < 17 {
		return Batch{}, errors.New("short entry")
	}
	if int(int32(binary.BigEndian.Uint32(entry[8:])))+12 != len(entry) {
		return Batch{}, errors.New("the size field does not frame the entry")
	}
	switch entry[16] {
	case 2:
		return decodeV2(entry)
	case 0, 1:
		return decodeLegacy(entry)
	}
	return Batch{}, fmt.Errorf("magic %d", entry[16])
}

func decodeV2(entry []byte) (Batch, error) {
	var kb kmsg.RecordBatch
	if err := kb.ReadFrom(entry); err != nil {
		return Batch{}, err
	}
	if uint32(kb.CRC) != crc32.Checksum(entry[21:], castagnoli) {
		return Batch{}, errors.New("bad CRC")
	}
	b := Batch{Size: len(entry), Magic: 2, First: kb.FirstOffset, Last: kb.FirstOffset + int64(kb.LastOffsetDelta),
		ProducerID: kb.ProducerID, ProducerEpoch: kb.ProducerEpoch, LeaderEpoch: kb.PartitionLeaderEpoch,
		Transactional: kb.Attributes&0x10 != 0, Control: kb.Attributes&0x20 != 0}
	raw, err := decompress(int(kb.Attributes&7), kb.Records, 2)
	if err != nil {
		return Batch{}, err
	}
	tsType := "CreateTime"
	if kb.Attributes&0x08 != 0 {
		tsType = "LogAppendTime"
	}
	for i := int32(0); i < kb.NumRecords; i++ {
		var kr kmsg.Record
		if err := kr.ReadFrom(raw); err != nil {
			return Batch{}, fmt.Errorf("record %d: %w", i, err)
		}
		n := len(binary.AppendVarint(nil, int64(kr.Length))) + int(kr.Length)
		if kr.Length < 0 || n > len(raw) {
			return Batch{}, fmt.Errorf("record %d: bad length", i)
		}
		raw = raw[n:]
		r := Record{Offset: kb.FirstOffset + int64(kr.OffsetDelta), Timestamp: kb.FirstTimestamp + kr.TimestampDelta64,
			TimestampType: tsType, Key: kr.Key, Value: kr.Value, Sequence: -1}
		if tsType == "LogAppendTime" {
			r.Timestamp = kb.MaxTimestamp
		}
		if kb.FirstSequence >= 0 {
			r.Sequence = int32((int64(kb.FirstSequence) + int64(kr.OffsetDelta)) % (1 << 31))
		}
		for _, h := range kr.Headers {
			r.Headers = append(r.Headers, Header{Key: h.Key, Value: h.Value})
		}
		b.Records = append(b.Records, r)
	}
	if len(raw) != 0 {
		return Batch{}, fmt.Errorf("%d bytes after the last record", len(raw))
	}
	return b, nil
}

func decodeLegacy(entry []byte) (Batch, error) {
	m, err := legacy(entry)
	if err != nil {
		return Batch{}, err
	}
	b := Batch{Size: len(entry), Magic: m.Magic, ProducerID: -1, ProducerEpoch: -1, LeaderEpoch: -1}
	c := int(m.Attributes & 7)
	if c == 0 {
		r := legacyRecord(m, m.Offset)
		b.First, b.Last, b.Records = m.Offset, m.Offset, []Record{r}
		return b, nil
	}
	if m.Value == nil {
		return Batch{}, errors.New("compressed wrapper without a value")
	}
	inner, err := decompress(c, m.Value, m.Magic)
	if err != nil {
		return Batch{}, err
	}
	var msgs []kmsg.MessageV1
	for q := 0; q < len(inner); {
		if len(inner)-q < 26 {
			return Batch{}, errors.New("stray bytes in the inner set")
		}
		n := int(int32(binary.BigEndian.Uint32(inner[q+8:])))
		if n < 14 || 12+n > len(inner)-q {
			return Batch{}, errors.New("bad inner size")
		}
		im, err := legacy(inner[q : q+12+n])
		if err != nil {
			return Batch{}, fmt.Errorf("inner message: %w", err)
		}
		if im.Magic != m.Magic || im.Attributes&7 != 0 {
			return Batch{}, errors.New("inner message magic or codec")
		}
		msgs = append(msgs, im)
		q += 12 + n
	}
	if len(msgs) == 0 {
		return Batch{}, errors.New("empty wrapper")
	}
	base := int64(0) // magic 0: inner offsets are absolute
	if m.Magic == 1 && m.Offset != 0 {
		base = m.Offset - msgs[len(msgs)-1].Offset
	}
	for _, im := range msgs {
		r := legacyRecord(im, im.Offset+base)
		if m.Magic == 1 {
			r.TimestampType = legacyTSType(m)
			if r.TimestampType == "LogAppendTime" {
				r.Timestamp = m.Timestamp
			}
		}
		b.Records = append(b.Records, r)
	}
	b.First, b.Last = b.Records[0].Offset, b.Records[len(b.Records)-1].Offset
	if b.Last != m.Offset && !(m.Magic == 1 && m.Offset == 0) {
		return Batch{}, errors.New("wrapper offset is not its last inner offset")
	}
	return b, nil
}

// legacy parses a magic-0 or magic-1 message as a MessageV1 (magic 0 has no
// timestamp), checking its CRC.
func legacy(entry []byte) (kmsg.MessageV1, error) {
	if crc32.ChecksumIEEE(entry[16:]) != binary.BigEndian.Uint32(entry[12:]) {
		return kmsg.MessageV1{}, errors.New("bad CRC")
	}
	if entry[16] == 0 {
		var m0 kmsg.MessageV0
		if err := m0.ReadFrom(entry); err != nil {
			return kmsg.MessageV1{}, err
		}
		return kmsg.MessageV1{Offset: m0.Offset, Magic: 0, Attributes: m0.Attributes, Timestamp: -1, Key: m0.Key, Value: m0.Value}, nil
	}
	var m kmsg.MessageV1
	if err := m.ReadFrom(entry); err != nil {
		return m, err
	}
	return m, nil
}

func legacyTSType(m kmsg.MessageV1) string {
	switch {
	case m.Magic == 0:
		return "NoTimestampType"
	case m.Attributes&0x08 != 0:
		return "LogAppendTime"
	}
	return "CreateTime"
}

func legacyRecord(m kmsg.MessageV1, offset int64) Record {
	return Record{Offset: offset, Timestamp: m.Timestamp, TimestampType: legacyTSType(m), Key: m.Key, Value: m.Value, Sequence: -1}
}

// decompress undoes a codec with the standard libraries.
func decompress(c int, b []byte, magic int8) ([]byte, error) {
	var r io.Reader
	switch c {
	case 0:
		return b, nil
	case 1:
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		r = zr
	case 2:
		return unsnappy(b)
	case 3:
		if magic == 0 && len(b) >= 7 {
			// Kafka writes magic-0 LZ4 frames with its broken header
			// checksum (KAFKA-3160); patch it for a standard decoder.
			b = append([]byte{}, b...)
			b[6] = 0x82
		}
		r = lz4.NewReader(bytes.NewReader(b))
	case 4:
		zr, err := zstd.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		defer zr.Close()
		r = zr
	default:
		return nil, fmt.Errorf("codec %d", c)
	}
	return io.ReadAll(r)
}

// unsnappy reads xerial-framed snappy (16-byte header, length-prefixed
// blocks) or a raw block.
func unsnappy(b []byte) ([]byte, error) {
	if !bytes.HasPrefix(b, []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}) {
		return s2.Decode(nil, b)
	}
	var out []byte
	for p := 16; p < len(b); {
		if len(b)-p < 4 {
			return nil, errors.New("snappy block length cut")
		}
		n := int(binary.BigEndian.Uint32(b[p:]))
		if n > len(b)-p-4 {
			return nil, errors.New("snappy block cut")
		}
		block, err := s2.Decode(nil, b[p+4:p+4+n])
		if err != nil {
			return nil, err
		}
		out = append(out, block...)
		p += 4 + n
	}
	return out, nil
}

// Transactions labels each batch as a read_committed consumer judges it:
// "committed", "aborted" or "ongoing" for transactional data batches (by the
// next marker of the same producer), "" for the others. lso is the first
// offset of the earliest ongoing transaction, or -1.
func Transactions(batches []Batch) (labels []string, lso int64) {
	labels = make([]string, len(batches))
	open := map[int64][]int{}
	for i, b := range batches {
		switch {
		case b.Magic < 2 || b.ProducerID < 0:
		case b.Control:
			if len(b.Records) == 0 || len(b.Records[0].Key) < 4 {
				continue
			}
			label := "committed"
			if binary.BigEndian.Uint16(b.Records[0].Key[2:]) == 0 {
				label = "aborted"
			}
			for _, j := range open[b.ProducerID] {
				labels[j] = label
			}
			delete(open, b.ProducerID)
		case b.Transactional:
			open[b.ProducerID] = append(open[b.ProducerID], i)
		}
	}
	lso = -1
	for _, idx := range open {
		for _, j := range idx {
			labels[j] = "ongoing"
		}
		if f := batches[idx[0]].First; lso < 0 || f < lso {
			lso = f
		}
	}
	return labels, lso
}
