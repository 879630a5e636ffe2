package replay

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/logtool/logtool/fetch"
	"github.com/logtool/logtool/logfmt"
)

// TestArenaKeepsRecordsInFlight copies records through the arena, reusing
// the source's buffers as the reader does, and acknowledges them in a
// random order, some late: a record must keep its bytes until its own
// acknowledgement, however many chunks are reused meanwhile.
func TestArenaKeepsRecordsInFlight(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	var a recordArena
	src := &fetch.Record{Record: &logfmt.Record{}}
	key, value, hv := make([]byte, 0, 1<<20), make([]byte, 0, 1<<20), make([]byte, 0, 64)
	type held struct {
		sl                *slot
		key, value, hv, k string
		nullKey           bool
	}
	var inFlight []held
	check := func(h held) {
		t.Helper()
		kr := &h.sl.rec
		if string(kr.Key) != h.key || (kr.Key == nil) != h.nullKey || string(kr.Value) != h.value ||
			len(kr.Headers) != 2 || kr.Headers[0].Key != h.k || string(kr.Headers[1].Value) != h.hv {
			t.Fatalf("record %d changed before its acknowledgement: key %q value %.20q headers %v", h.sl.seq, kr.Key, kr.Value, kr.Headers)
		}
	}
	for i := range 20_000 {
		// Mostly small records, some over a quarter of a chunk.
		size := 1 + rnd.IntN(200)
		if rnd.IntN(500) == 0 {
			size = chunkBytes/4 + rnd.IntN(chunkBytes)
		}
		value = value[:0]
		for j := range size {
			value = append(value, byte('a'+(i+j)%26))
		}
		key = fmt.Appendf(key[:0], "key-%d", i)
		hv = fmt.Appendf(hv[:0], "h-%d", i)
		src.Key, src.Value, src.Offset, src.Timestamp = key, value, int64(i), int64(i)
		if i%7 == 0 {
			src.Key = nil
		}
		hk := fmt.Sprintf("k%d", i/1000)
		src.Headers = []logfmt.Header{{Key: []byte(hk), Value: nil}, {Key: []byte("v"), Value: hv}}
		sl := a.record(context.Background(), src, recordBytes(src), "t", 0)
		sl.seq = i
		h := held{sl: sl, key: string(src.Key), nullKey: src.Key == nil, value: string(value), hv: string(hv), k: hk}
		check(h)
		inFlight = append(inFlight, h)
		// Acknowledge a random few, as promises of several partitions
		// would, keeping up to 3000 in flight.
		for len(inFlight) > 0 && (len(inFlight) > 3000 || rnd.IntN(3) == 0) {
			k := rnd.IntN(len(inFlight))
			check(inFlight[k])
			inFlight[k].sl.chunk.release()
			inFlight[k] = inFlight[len(inFlight)-1]
			inFlight = inFlight[:len(inFlight)-1]
		}
		// The source's buffers are reused by the next read.
		clear(value)
		clear(key)
		clear(hv)
	}
	for _, h := range inFlight {
		check(h)
		h.sl.chunk.release()
	}
	a.close()
}

// TestArenaBoundsChunksInFlight: one record of every chunk acknowledged
// late, as with --partition key-hash and one slow destination partition,
// keeps its chunk; past maxLiveChunks the records get buffers of their
// own, so that the memory held follows the records in flight. Every record
// keeps its bytes, and every chunk is free again once all are acknowledged.
func TestArenaBoundsChunksInFlight(t *testing.T) {
	var a recordArena
	src := &fetch.Record{Record: &logfmt.Record{}}
	type held struct {
		sl    *slot
		value string
	}
	var late []held
	start := liveChunks.Load()
	for i := 0; len(late) < 4*maxLiveChunks; i++ {
		src.Key, src.Value, src.Offset = []byte("k"), fmt.Appendf(nil, "value %d", i), int64(i)
		sl := a.record(context.Background(), src, recordBytes(src), "t", 0)
		if n := liveChunks.Load() - start; n > maxLiveChunks {
			t.Fatalf("record %d: %d chunks in use, more than %d", i, n, maxLiveChunks)
		}
		if i%chunkRecords == 0 || sl.chunk == nil {
			late = append(late, held{sl, string(src.Value)})
			continue
		}
		sl.chunk.release()
	}
	for _, h := range late {
		if string(h.sl.rec.Value) != h.value {
			t.Fatalf("a late record changed: %q, want %q", h.sl.rec.Value, h.value)
		}
		h.sl.chunk.release()
	}
	a.close()
	if n := liveChunks.Load() - start; n != 0 {
		t.Errorf("%d chunks still in use after every record was acknowledged", n)
	}
}

// slotOf relies on the record being a slot's first field.
func TestSlotOf(t *testing.T) {
	var sl slot
	if slotOf(&sl.rec) != &sl {
		t.Fatal("a slot's record is not its first field")
	}
}

// A record without a timestamp (-1, Kafka's NO_TIMESTAMP, which magic 1 and 2
// can store as well as magic 0 lacking one) goes out with none, so the
// producer stamps it with the send time as Kafka's producer does a null
// timestamp, as it does any other negative one; 0 and up are kept.
func TestArenaRecordWithoutTimestamp(t *testing.T) {
	var a recordArena
	defer a.close()
	for _, c := range []struct {
		ts   int64
		want time.Time
	}{{-1, time.Time{}}, {-7, time.Time{}}, {0, time.UnixMilli(0)}, {1_700_000_000_000, time.UnixMilli(1_700_000_000_000)}} {
		src := &fetch.Record{Record: &logfmt.Record{Timestamp: c.ts, Value: []byte("v")}}
		sl := a.record(context.Background(), src, recordBytes(src), "t", 0)
		if !sl.rec.Timestamp.Equal(c.want) || sl.rec.Timestamp.IsZero() != c.want.IsZero() {
			t.Errorf("timestamp %d sent as %v, want %v", c.ts, sl.rec.Timestamp, c.want)
		}
		sl.chunk.release()
	}
}
