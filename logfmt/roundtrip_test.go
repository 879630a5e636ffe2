package logfmt

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/logtool/logtool/logfmt/codec"
)

// testRecords makes n records from offset base with holes every fifth
// offset, some null keys and tombstones, and headers for magic 2.
func testRecords(rng *rand.Rand, base int64, n int, magic int8) []Record {
	recs := make([]Record, 0, n)
	off, ts := base, int64(1_700_000_000_000)
	for i := 0; i < n; i++ {
		r := Record{Offset: off, Timestamp: ts + int64(rng.IntN(1000)) - 300}
		if magic == 0 {
			r.Timestamp = NoTimestamp
		}
		if i%3 != 0 {
			r.Key = fmt.Appendf(nil, "key-%d", rng.IntN(50))
		}
		if i%7 != 3 {
			r.Value = bytes.Repeat([]byte{byte('a' + i%26)}, rng.IntN(300))
		}
		if magic == 2 && i%2 == 0 {
			r.Headers = []Header{{Key: []byte("h"), Value: []byte("v")}, {Key: []byte(""), Value: nil}}
		}
		recs = append(recs, r)
		off += 1 + int64(i%5/4) // a hole after every fifth record, as compaction leaves
		ts += 10
	}
	return recs
}

// encode writes recs as one entry (or as n uncompressed legacy entries).
func encode(t *testing.T, magic int8, c codec.Type, recs []Record) []byte {
	t.Helper()
	if magic == 2 {
		o := DefaultBatchOptions(recs[0].Offset)
		o.Compression = c
		b, err := AppendBatch(nil, o, recs)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	if c == codec.None {
		var b []byte
		for _, r := range recs {
			b = AppendLegacyMessage(b, magic, r.Offset, 0, r.Timestamp, r.Key, r.Value)
		}
		return b
	}
	b, err := AppendLegacyWrapper(nil, LegacyWrapperOptions{Magic: magic, Compression: c, TimestampType: CreateTime}, recs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// readAll reads every record of a segment image, checking CRCs.
func readAll(t *testing.T, data []byte) []Record {
	t.Helper()
	sr := NewSegmentReader(bytes.NewReader(data), int64(len(data)), "mem")
	var it RecordIter
	var out []Record
	for sr.Next() {
		b := sr.Batch()
		if err := b.Validate(); err != nil {
			t.Fatalf("batch at %d: %v", b.Pos, err)
		}
		if err := it.Reset(b); err != nil {
			t.Fatal(err)
		}
		for it.Next() {
			r := *it.Record()
			r.Key, r.Value = clone(r.Key), clone(r.Value)
			r.Headers = append([]Header(nil), r.Headers...)
			for i := range r.Headers {
				r.Headers[i] = Header{Key: clone(r.Headers[i].Key), Value: clone(r.Headers[i].Value)}
			}
			if !r.CRCValid {
				t.Errorf("record %d: CRC invalid", r.Offset)
			}
			out = append(out, r)
		}
		if err := it.Err(); err != nil {
			t.Fatal(err)
		}
	}
	if sr.Err() != nil || sr.End() != EndClean {
		t.Fatalf("end %v err %v", sr.End(), sr.Err())
	}
	return out
}

func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

func sameRecords(t *testing.T, got, want []Record, magic int8) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d records, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Offset != w.Offset || g.Timestamp != w.Timestamp || !bytes.Equal(g.Key, w.Key) || !bytes.Equal(g.Value, w.Value) ||
			(g.Key == nil) != (w.Key == nil) || (g.Value == nil) != (w.Value == nil) || g.Magic != magic {
			t.Fatalf("record %d: got off=%d ts=%d key=%q value=%d bytes (nil %v), want off=%d ts=%d key=%q value=%d bytes (nil %v)",
				i, g.Offset, g.Timestamp, g.Key, len(g.Value), g.Value == nil, w.Offset, w.Timestamp, w.Key, len(w.Value), w.Value == nil)
		}
		if len(g.Headers) != len(w.Headers) {
			t.Fatalf("record %d: %d headers, want %d", i, len(g.Headers), len(w.Headers))
		}
		for j := range w.Headers {
			if !bytes.Equal(g.Headers[j].Key, w.Headers[j].Key) || !bytes.Equal(g.Headers[j].Value, w.Headers[j].Value) ||
				(g.Headers[j].Value == nil) != (w.Headers[j].Value == nil) {
				t.Fatalf("record %d header %d differs", i, j)
			}
		}
	}
}

func TestRoundTripEveryMagicAndCodec(t *testing.T) {
	for magic := int8(0); magic <= 2; magic++ {
		for c := codec.None; c <= codec.Zstd; c++ {
			if !c.ValidFor(magic) {
				continue
			}
			t.Run(fmt.Sprintf("v%d-%s", magic, c), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(magic), uint64(c)))
				var seg []byte
				var want []Record
				base := int64(100)
				for batch := 0; batch < 5; batch++ {
					recs := testRecords(rng, base, 1+rng.IntN(40), magic)
					seg = append(seg, encode(t, magic, c, recs)...)
					want = append(want, recs...)
					base = recs[len(recs)-1].Offset + 3
				}
				sameRecords(t, readAll(t, seg), want, magic)
			})
		}
	}
}

// A v1 wrapper whose inner offsets have holes (what Kafka's <=3.x cleaner
// writes) must map back to the original absolute offsets: franz-go and
// kafka-go compute them from the count and get this wrong.
func TestLegacyWrapperHolesUseLastRelativeOffset(t *testing.T) {
	recs := []Record{{Offset: 10, Value: []byte("a")}, {Offset: 13, Value: []byte("b")}, {Offset: 17, Value: []byte("c")}}
	for _, magic := range []int8{0, 1} {
		b, err := AppendLegacyWrapper(nil, LegacyWrapperOptions{Magic: magic, Compression: codec.Gzip}, recs)
		if err != nil {
			t.Fatal(err)
		}
		got := readAll(t, b)
		for i, r := range got {
			if r.Offset != recs[i].Offset {
				t.Errorf("magic %d record %d: offset %d, want %d", magic, i, r.Offset, recs[i].Offset)
			}
		}
		batch := Batch{Data: b}
		var it RecordIter
		if err := it.Reset(&batch); err != nil {
			t.Fatal(err)
		}
		if it.BaseOffset() != 10 || batch.LastOffset() != 17 || it.Count() != 3 {
			t.Errorf("magic %d: base %d last %d count %d", magic, it.BaseOffset(), batch.LastOffset(), it.Count())
		}
	}
}

func TestLogAppendTimeWrapperOverridesInnerTimestamps(t *testing.T) {
	recs := []Record{{Offset: 0, Timestamp: 5, Value: []byte("a")}, {Offset: 1, Timestamp: 6, Value: []byte("b")}}
	b, err := AppendLegacyWrapper(nil, LegacyWrapperOptions{Magic: 1, Compression: codec.Snappy, TimestampType: LogAppendTime, LogAppendTime: 777}, recs)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range readAll(t, b) {
		if r.Timestamp != 777 || r.TimestampType != LogAppendTime {
			t.Errorf("offset %d: %s %d, want LogAppendTime 777", r.Offset, r.TimestampType, r.Timestamp)
		}
	}
	batch := Batch{Data: b}
	if batch.MaxTimestamp() != 777 || batch.TimestampType() != LogAppendTime {
		t.Errorf("wrapper: %s %d", batch.TimestampType(), batch.MaxTimestamp())
	}
}

func TestControlAndTransactionalBatch(t *testing.T) {
	o := DefaultBatchOptions(42)
	o.Transactional, o.Control, o.ProducerID, o.ProducerEpoch = true, true, 7, 3
	rec := Record{Offset: 42, Timestamp: 9, Key: ControlKey(ControlAbort), Value: AppendEndTxnMarker(nil, EndTxnMarker{CoordinatorEpoch: 5})}
	b, err := AppendBatch(nil, o, []Record{rec})
	if err != nil {
		t.Fatal(err)
	}
	h := BatchHeader(b)
	if !h.IsControl() || !h.IsTransactional() || h.ProducerID() != 7 || h.ProducerEpoch() != 3 || h.LastOffset() != 42 {
		t.Fatalf("header: %+v", h)
	}
	got := readAll(t, b)
	_, typ, err := ParseControlKey(got[0].Key)
	if err != nil || typ != ControlAbort || typ.String() != "ABORT" {
		t.Fatalf("control key: %v %v", typ, err)
	}
	m, err := ParseEndTxnMarker(got[0].Value)
	if err != nil || m.CoordinatorEpoch != 5 {
		t.Fatalf("marker: %+v %v", m, err)
	}
}

func TestDeleteHorizonAndEmptyBatch(t *testing.T) {
	o := DefaultBatchOptions(0)
	o.DeleteHorizon = 5000
	recs := []Record{{Offset: 0, Timestamp: 1000, Key: []byte("k")}, {Offset: 2, Timestamp: 1200, Key: []byte("j"), Value: []byte("x")}}
	b, err := AppendBatch(nil, o, recs)
	if err != nil {
		t.Fatal(err)
	}
	h := BatchHeader(b)
	if !h.HasDeleteHorizon() || h.DeleteHorizon() != 5000 || h.MaxTimestamp() != 1200 {
		t.Fatalf("horizon %d max %d", h.DeleteHorizon(), h.MaxTimestamp())
	}
	sameRecords(t, readAll(t, b), recs, 2) // negative deltas relative to the horizon read back exactly

	e := DefaultBatchOptions(10)
	e.LastOffsetDelta, e.MaxTimestamp = 4, 1234
	b, err = AppendBatch(nil, e, nil)
	if err != nil {
		t.Fatal(err)
	}
	h = BatchHeader(b)
	if len(b) != V2HeaderSize || h.RecordCount() != 0 || h.BaseTimestamp() != -1 || h.MaxTimestamp() != 1234 || h.LastOffset() != 14 {
		t.Fatalf("empty batch: len %d count %d base ts %d max ts %d last %d", len(b), h.RecordCount(), h.BaseTimestamp(), h.MaxTimestamp(), h.LastOffset())
	}
	if got := readAll(t, b); len(got) != 0 {
		t.Fatalf("empty batch yields %d records", len(got))
	}
}

func TestSegmentEnds(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	one := encode(t, 2, codec.None, testRecords(rng, 0, 3, 2))
	two := encode(t, 2, codec.None, testRecords(rng, 3, 3, 2))
	seg := append(append([]byte{}, one...), two...)

	read := func(data []byte) (*SegmentReader, int) {
		sr := NewSegmentReader(bytes.NewReader(data), int64(len(data)), "seg.log")
		n := 0
		for sr.Next() {
			n++
		}
		return sr, n
	}
	if sr, n := read(seg); n != 2 || sr.End() != EndClean || sr.Err() != nil {
		t.Errorf("clean: %d batches, %v %v", n, sr.End(), sr.Err())
	}
	if sr, n := read(append(append([]byte{}, seg...), make([]byte, 4096)...)); n != 2 || sr.End() != EndZeroTail {
		t.Errorf("zero tail: %d batches, %v %v", n, sr.End(), sr.Err())
	}
	if sr, n := read(append(append([]byte{}, seg...), make([]byte, 5)...)); n != 2 || sr.End() != EndZeroTail {
		t.Errorf("short zero tail: %d batches, %v", n, sr.End())
	}
	for cut := len(one) + 8; cut < len(seg); cut += 7 { // the first 7 bytes of an offset are zeros: indistinguishable from a zero tail
		sr, n := read(seg[:cut])
		if n != 1 || sr.End() != EndTorn || sr.Err() != nil {
			t.Fatalf("cut at %d: %d batches, %v %v", cut, n, sr.End(), sr.Err())
		}
	}
	// A size field below the minimum in the middle is corruption at that byte.
	bad := append([]byte{}, seg...)
	copy(bad[len(one)+8:], []byte{0, 0, 0, 5})
	sr, n := read(bad)
	var ce *CorruptError
	if n != 1 || !errors.As(sr.Err(), &ce) || ce.Pos != int64(len(one)) || ce.File != "seg.log" {
		t.Fatalf("bad size: %d batches, err %v", n, sr.Err())
	}
	// An unknown magic points at byte 16 of the entry.
	bad = append([]byte{}, seg...)
	bad[len(one)+MagicOffset] = 9
	if sr, _ := read(bad); !errors.As(sr.Err(), &ce) || ce.Pos != int64(len(one)+MagicOffset) {
		t.Fatalf("bad magic: %v", sr.Err())
	}
}

func TestCRCFailureAndResync(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var seg []byte
	var starts []int
	for i := 0; i < 4; i++ {
		starts = append(starts, len(seg))
		seg = append(seg, encode(t, 2, codec.None, testRecords(rng, int64(i*10), 5, 2))...)
	}
	bad := append([]byte{}, seg...)
	bad[starts[1]+70]++ // a record byte of batch 1
	sr := NewSegmentReader(bytes.NewReader(bad), int64(len(bad)), "x.log")
	var valid []int64
	for sr.Next() {
		b := sr.Batch()
		if err := b.Validate(); err != nil {
			ce, ok := AsCorrupt(err)
			if !ok || ce.Pos != int64(starts[1]) {
				t.Fatalf("crc error %v", err)
			}
			continue
		}
		valid = append(valid, b.Pos)
	}
	if len(valid) != 3 {
		t.Fatalf("valid batches at %v", valid)
	}
	// A garbage size in the middle: resync finds the next batch.
	bad = append([]byte{}, seg...)
	copy(bad[starts[1]+8:], []byte{0, 0, 0, 3})
	sr = NewSegmentReader(bytes.NewReader(bad), int64(len(bad)), "x.log")
	var pos []int64
	for {
		for sr.Next() {
			pos = append(pos, sr.Batch().Pos)
		}
		if sr.Err() == nil || !sr.Resync() {
			break
		}
	}
	if fmt.Sprint(pos) != fmt.Sprint([]int64{0, int64(starts[2]), int64(starts[3])}) {
		t.Fatalf("resync positions %v, starts %v", pos, starts)
	}
}

func TestRecordCorruption(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	good := encode(t, 2, codec.None, testRecords(rng, 0, 4, 2))
	for i := V2HeaderSize; i < len(good); i++ {
		for _, v := range []byte{0xff, 0x80, 0x00, 0x7f} {
			b := append([]byte{}, good...)
			b[i] = v
			batch := Batch{Data: b}
			var it RecordIter
			if it.Reset(&batch) != nil {
				continue
			}
			for it.Next() {
			}
			if err := it.Err(); err != nil {
				if _, ok := AsCorrupt(err); !ok {
					t.Fatalf("byte %d=%x: untyped error %v", i, v, err)
				}
			}
		}
	}
	// More records declared than present.
	b := append([]byte{}, good...)
	b[60]++
	batch := Batch{Data: b}
	var it RecordIter
	it.Reset(&batch)
	for it.Next() {
	}
	if it.Err() == nil {
		t.Fatal("record count past the data: no error")
	}
	// Fewer declared than present.
	b[60] -= 2
	it.Reset(&batch)
	for it.Next() {
	}
	if it.Err() == nil {
		t.Fatal("bytes after the last record: no error")
	}
}
