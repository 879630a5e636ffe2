package logfmt

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/logtool/logtool/logfmt/codec"
)

// franz-go's kmsg is an independent Kafka codec: batches logfmt writes must
// parse there field for field, and batches kmsg builds must read here.

func independentDecompress(t *testing.T, c codec.Type, b []byte) []byte {
	t.Helper()
	var r io.Reader
	switch c {
	case codec.None:
		return b
	case codec.Gzip:
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	case codec.LZ4:
		r = lz4.NewReader(bytes.NewReader(b))
	case codec.Zstd:
		zr, err := zstd.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		r = zr
	default:
		t.Fatalf("no independent decoder for %s", c)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("%s: %v", c, err)
	}
	return out
}

// Batches of 30 small records, and of 30 records of 200 KiB, which the
// builder streams into the compressor (zstd through its streaming encoder)
// and the iterator reads through its window.
func TestKmsgReadsLogfmtBatches(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, big := range []bool{false, true} {
		testKmsgReadsLogfmtBatches(t, rng, big)
	}
}

func testKmsgReadsLogfmtBatches(t *testing.T, rng *rand.Rand, big bool) {
	for _, c := range []codec.Type{codec.None, codec.Gzip, codec.LZ4, codec.Zstd} {
		recs := testRecords(rng, 500, 30, 2)
		if big {
			for i := range recs {
				recs[i].Value = fmt.Appendf(nil, "%0*d", 200<<10, i)
			}
		}
		o := DefaultBatchOptions(500)
		o.Compression, o.ProducerID, o.ProducerEpoch, o.BaseSequence, o.PartitionLeaderEpoch = c, 77, 2, 1000, 5
		b, err := AppendBatch(nil, o, recs)
		if err != nil {
			t.Fatal(err)
		}
		var kb kmsg.RecordBatch
		if err := kb.ReadFrom(b); err != nil {
			t.Fatal(err)
		}
		if kb.FirstOffset != 500 || int(kb.Length)+12 != len(b) || kb.PartitionLeaderEpoch != 5 || kb.Magic != 2 ||
			kb.ProducerID != 77 || kb.ProducerEpoch != 2 || kb.FirstSequence != 1000 || int(kb.NumRecords) != len(recs) ||
			int64(kb.LastOffsetDelta) != recs[len(recs)-1].Offset-500 || kb.Attributes&7 != int16(c) ||
			kb.FirstTimestamp != recs[0].Timestamp || kb.MaxTimestamp != maxTimestamp(recs) {
			t.Fatalf("%s: kmsg sees %+v", c, kb)
		}
		if got := uint32(kb.CRC); got != crc32.Checksum(b[21:], castagnoli) {
			t.Fatalf("%s: CRC %x", c, got)
		}
		raw := independentDecompress(t, c, kb.Records)
		for i := range recs {
			var kr kmsg.Record
			if err := kr.ReadFrom(raw); err != nil {
				t.Fatal(err)
			}
			raw = raw[varintLen(kr.Length)+int(kr.Length):]
			w := recs[i]
			if 500+int64(kr.OffsetDelta) != w.Offset || recs[0].Timestamp+kr.TimestampDelta64 != w.Timestamp ||
				!bytes.Equal(kr.Key, w.Key) || !bytes.Equal(kr.Value, w.Value) || (kr.Value == nil) != (w.Value == nil) ||
				len(kr.Headers) != len(w.Headers) {
				t.Fatalf("%s record %d: kmsg %+v, want %+v", c, i, kr, w)
			}
		}
		if len(raw) != 0 {
			t.Fatalf("%s: %d bytes after the last record", c, len(raw))
		}
		sameRecords(t, readAll(t, b), recs, 2)
	}
}

func maxTimestamp(recs []Record) int64 {
	m := int64(-1)
	for _, r := range recs {
		m = max(m, r.Timestamp)
	}
	return m
}

func TestLogfmtReadsKmsgBatches(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for n := 1; n < 40; n += 7 {
		var records []byte
		var want []Record
		base, baseTS := int64(1<<33), int64(1_600_000_000_000)
		for i := 0; i < n; i++ {
			kr := kmsg.NewRecord()
			kr.OffsetDelta = int32(i * 2)
			if i > 0 { // Kafka's builder takes the first record's timestamp as the base
				kr.TimestampDelta64 = int64(rng.IntN(5000))
			}
			kr.Key = fmt.Appendf(nil, "k%d", i)
			if i%4 != 1 {
				kr.Value = bytes.Repeat([]byte("x"), rng.IntN(200))
			}
			kr.Headers = []kmsg.Header{{Key: "hk", Value: []byte("hv")}}
			body := kr.AppendTo(nil)
			kr.Length = int32(len(body) - 1) // AppendTo wrote a 1-byte placeholder length
			records = kr.AppendTo(records)
			want = append(want, Record{Offset: base + int64(kr.OffsetDelta), Timestamp: baseTS + kr.TimestampDelta64, Key: kr.Key, Value: kr.Value,
				Headers: []Header{{Key: []byte("hk"), Value: []byte("hv")}}})
		}
		kb := kmsg.RecordBatch{FirstOffset: base, PartitionLeaderEpoch: -1, Magic: 2, LastOffsetDelta: int32((n - 1) * 2),
			FirstTimestamp: baseTS, MaxTimestamp: maxTimestamp(want), ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1,
			NumRecords: int32(n), Records: records}
		b := kb.AppendTo(nil)
		binary.BigEndian.PutUint32(b[8:], uint32(len(b)-12))
		binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], castagnoli))
		sameRecords(t, readAll(t, b), want, 2)
		// And logfmt writes the very same bytes for the same batch.
		o := DefaultBatchOptions(base)
		mine, err := AppendBatch(nil, o, want)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(mine, b) {
			t.Fatalf("n=%d: logfmt and kmsg bytes differ:\n%x\n%x", n, mine, b)
		}
	}
}

func TestKmsgLegacyMessages(t *testing.T) {
	m := kmsg.MessageV1{Offset: 12, Magic: 1, Attributes: 0, Timestamp: 1234, Key: []byte("key"), Value: []byte("value")}
	b := m.AppendTo(nil)
	binary.BigEndian.PutUint32(b[8:], uint32(len(b)-12))
	binary.BigEndian.PutUint32(b[12:], crc32.ChecksumIEEE(b[16:]))
	if mine := AppendLegacyMessage(nil, 1, 12, 0, 1234, []byte("key"), []byte("value")); !bytes.Equal(mine, b) {
		t.Fatalf("v1: logfmt %x, kmsg %x", mine, b)
	}
	got := readAll(t, b)
	if len(got) != 1 || got[0].Offset != 12 || got[0].Timestamp != 1234 || string(got[0].Key) != "key" {
		t.Fatalf("v1: %+v", got)
	}
	m0 := kmsg.MessageV0{Offset: 3, Magic: 0, Key: nil, Value: []byte("v0")}
	b = m0.AppendTo(nil)
	binary.BigEndian.PutUint32(b[8:], uint32(len(b)-12))
	binary.BigEndian.PutUint32(b[12:], crc32.ChecksumIEEE(b[16:]))
	if mine := AppendLegacyMessage(nil, 0, 3, 0, -1, nil, []byte("v0")); !bytes.Equal(mine, b) {
		t.Fatalf("v0: logfmt %x, kmsg %x", mine, b)
	}
	var back kmsg.MessageV1
	if err := back.ReadFrom(AppendLegacyMessage(nil, 1, 5, 8, 99, nil, []byte("z"))); err != nil || back.Timestamp != 99 || back.Attributes != 8 || back.Key != nil {
		t.Fatalf("kmsg reads logfmt v1: %+v %v", back, err)
	}
}

// castagnoli is hash/crc32's: the tests check logtool's checksums with it.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)
