package logfmt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/logtool/logtool/logfmt/codec"
)

// iterRun is what iterating one batch gave: the records (cloned), the
// offsets and count the iterator reported, and the error of Reset or Err.
type iterRun struct {
	recs        []Record
	base, count int64
	resetErr    bool
	err         error
}

func cloneRecord(r *Record) Record {
	c := *r
	c.Key, c.Value = cloneNil(r.Key), cloneNil(r.Value)
	c.Headers = nil
	for _, h := range r.Headers {
		c.Headers = append(c.Headers, Header{cloneNil(h.Key), cloneNil(h.Value)})
	}
	return c
}

func cloneNil(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte{}, b...)
}

func runWhole(b *Batch, limit int) iterRun {
	it := wholeIter{Limit: limit, File: "f"}
	var r iterRun
	if r.err = it.Reset(b); r.err != nil {
		r.resetErr = true
		return r
	}
	r.base, r.count = it.BaseOffset(), int64(it.Count())
	for it.Next() {
		r.recs = append(r.recs, cloneRecord(it.Record()))
	}
	r.err = it.Err()
	return r
}

// runStream iterates b with a RecordIter of the given window and
// KeepBytes. While Kept holds, the records it returned earlier are checked
// to be intact at the end.
func runStream(t *testing.T, it *RecordIter, b *Batch) iterRun {
	var r iterRun
	if r.err = it.Reset(b); r.err != nil {
		r.resetErr = true
		return r
	}
	r.base, r.count = it.BaseOffset(), int64(it.Count())
	var kept []Record // not cloned: they must stay valid while Kept
	for it.Next() {
		rec := it.Record()
		r.recs = append(r.recs, cloneRecord(rec))
		k := *rec
		k.Headers = nil
		kept = append(kept, k)
	}
	r.err = it.Err()
	if it.Kept() {
		for i := range kept {
			if !bytes.Equal(kept[i].Key, r.recs[i].Key) || !bytes.Equal(kept[i].Value, r.recs[i].Value) {
				t.Fatalf("record %d changed though Kept", i)
			}
		}
	}
	return r
}

// sameAsWhole holds the streaming iterator to the whole-batch one on b:
// the same error, and when the whole batch decompressed, the same records.
// Past the whole-batch limit the two may differ: one refuses the batch, the
// other a record.
func sameAsWhole(t *testing.T, b *Batch, it *RecordIter) {
	t.Helper()
	const limit = 1 << 20
	want := runWhole(b, limit)
	it.MaxRecordBytes, it.File = limit, "f"
	got := runStream(t, it, b)
	if errors.Is(want.err, codec.ErrTooLarge) || errors.Is(got.err, codec.ErrTooLarge) {
		if !errors.Is(want.err, codec.ErrTooLarge) {
			t.Fatalf("stream refused %v; whole: %v", got.err, want.err)
		}
		return
	}
	if fmt.Sprint(got.err) != fmt.Sprint(want.err) {
		t.Fatalf("stream error %v; whole error %v", got.err, want.err)
	}
	if want.resetErr {
		if b.Magic() < 2 && !got.resetErr {
			t.Fatalf("legacy: whole failed at Reset, stream did not")
		}
		return
	}
	if got.resetErr || got.base != want.base || got.count != want.count {
		t.Fatalf("stream base %d count %d (reset error %v); whole base %d count %d", got.base, got.count, got.resetErr, want.base, want.count)
	}
	if !reflect.DeepEqual(got.recs, want.recs) {
		t.Fatalf("stream read %d records, whole %d: %+v\nwant %+v", len(got.recs), len(want.recs), got.recs, want.recs)
	}
}

// iterators are the RecordIter set-ups held to the whole-batch iterator:
// the default, a window smaller than most records, and small windows that
// keep records.
func iterators() []*RecordIter {
	return []*RecordIter{{}, {window: 7}, {window: 100, KeepBytes: 1000}, {window: 16, KeepBytes: 1 << 20}}
}

// TestStreamMatchesWhole: batches of every magic and codec with records of
// many sizes, read whole and as a stream through windows of every kind.
func TestStreamMatchesWhole(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for magic := int8(0); magic <= 2; magic++ {
		for c := codec.None; c <= codec.Zstd; c++ {
			if !c.ValidFor(magic) {
				continue
			}
			recs := testRecords(rng, 10, 30, magic)
			recs[3].Value = bytes.Repeat([]byte("big"), 100<<10) // past the default window
			data := encode(t, magic, c, recs)
			for _, it := range iterators() {
				sr := NewSegmentReader(bytes.NewReader(data), int64(len(data)), "f")
				for sr.Next() {
					sameAsWhole(t, sr.Batch(), it)
				}
				if sr.Err() != nil {
					t.Fatal(sr.Err())
				}
			}
		}
	}
}

// TestStreamMatchesWholeDamaged damages the records, or the compressed
// payload, of a batch of every magic and codec, byte by byte and by cuts,
// and holds the stream to the whole-batch iterator on each.
func TestStreamMatchesWholeDamaged(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for magic := int8(0); magic <= 2; magic++ {
		for c := codec.None; c <= codec.Zstd; c++ {
			if !c.ValidFor(magic) {
				continue
			}
			good := encode(t, magic, c, testRecords(rng, 0, 8, magic))
			sr := NewSegmentReader(bytes.NewReader(good), int64(len(good)), "f")
			if !sr.Next() {
				t.Fatal(sr.Err())
			}
			good = good[:sr.Batch().Size()]
			start := V2HeaderSize
			if magic < 2 {
				start = LogOverhead + legacyMinSize
			}
			for i := start; i < len(good); i++ {
				for _, v := range []byte{0xff, 0x00, 0x01, 0x80} {
					bad := bytes.Clone(good)
					bad[i] ^= v
					for _, it := range iterators() {
						sameAsWhole(t, &Batch{Data: bad}, it)
					}
				}
				// Cut the payload at i, keeping the framing's lengths.
				cut := resize(bytes.Clone(good[:i]), magic)
				for _, it := range iterators() {
					sameAsWhole(t, &Batch{Data: cut}, it)
				}
			}
		}
	}
}

// resize sets the size fields of an entry cut short, so that it frames.
func resize(b []byte, magic int8) []byte {
	if len(b) < LogOverhead+legacyMinSize+4 {
		return b
	}
	binary.BigEndian.PutUint32(b[8:], uint32(len(b)-LogOverhead))
	if magic < 2 {
		// The value length is the last field: make it cover what is left.
		p := legacyKeyLenV0
		if magic == 1 {
			p = legacyKeyLenV1
		}
		if k := int(int32(binary.BigEndian.Uint32(b[p:]))); k >= 0 && p+4+k+4 <= len(b) {
			p += 4 + k
		} else {
			p += 4
		}
		if p+4 <= len(b) {
			binary.BigEndian.PutUint32(b[p:], uint32(len(b)-p-4))
		}
	}
	return b
}

// FuzzStreamMatchesWhole feeds arbitrary record areas behind a valid
// framing, of every magic and codec, to the streaming iterator through
// windows of every kind and to the whole-batch one: the same records and
// the same errors.
func FuzzStreamMatchesWhole(f *testing.F) {
	rng := rand.New(rand.NewPCG(7, 8))
	for magic := int8(0); magic <= 2; magic++ {
		for c := codec.None; c <= codec.Zstd; c++ {
			if !c.ValidFor(magic) {
				continue
			}
			b := encode(&testing.T{}, magic, c, testRecords(rng, 0, 5, magic))
			if magic == 2 {
				f.Add(byte(2), b[22], int32(5), b[V2HeaderSize:])
			} else {
				_, v, _ := LegacyMessage(b).KeyValue()
				f.Add(byte(magic), byte(c), int32(4), v)
			}
		}
	}
	f.Fuzz(func(t *testing.T, magic, attrs byte, count int32, area []byte) {
		b := fuzzBatch(magic, attrs, count, area)
		for _, it := range iterators() {
			sameAsWhole(t, &Batch{Data: b}, it)
		}
	})
}

// fuzzBatch frames area as the records of a v2 batch (magic 2) or the value
// of a legacy message, with the given attributes and count (for a legacy
// message, its offset).
func fuzzBatch(magic, attrs byte, count int32, area []byte) []byte {
	magic %= 3
	if magic < 2 {
		return AppendLegacyMessage(nil, int8(magic), int64(count), int8(attrs&7), 0, nil, area)
	}
	o := DefaultBatchOptions(0)
	o.LastOffsetDelta = 0
	b, _ := AppendBatch(nil, o, nil)
	b[22] = attrs
	b = append(b, area...)
	binary.BigEndian.PutUint32(b[8:], uint32(len(b)-LogOverhead))
	binary.BigEndian.PutUint32(b[57:], uint32(count))
	return b
}
