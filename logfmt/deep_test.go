package logfmt

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/logtool/logtool/logfmt/codec"
)

// batchReader is what SegmentReader, DeepReader and HeaderReader have in
// common.
type batchReader interface {
	Next() bool
	Batch() *Batch
	Pos() int64
	Err() error
	End() End
	EndDetail() string
	Resync() bool
}

// deepTrace is everything a deep reader of seg sees through r: each batch
// with its checksum verdict and records, each error and where the data
// stops, resynchronising past damage as dump does.
func deepTrace(r batchReader, skip func(*Batch) bool) string {
	var sb strings.Builder
	it := RecordIter{MaxRecordBytes: 1 << 20, File: "seg"}
	for {
		for r.Next() {
			b := r.Batch()
			fmt.Fprintf(&sb, "batch %d+%d pos %d crc %d/%d valid %v\n", b.Pos, len(b.Data), r.Pos(), b.StoredCRC(), b.ComputeCRC(), b.Validate())
			if skip != nil && skip(b) && b.Pos%2 == 0 {
				continue // skipped, and not read: half the skipped are read anyway
			}
			if err := it.Reset(b); err != nil {
				fmt.Fprintf(&sb, "  reset %v\n", err)
				continue
			}
			fmt.Fprintf(&sb, "  first %d count %d\n", it.BaseOffset(), it.Count())
			for it.Next() {
				sb.WriteString(recordLine(it.Record()))
			}
			// After an error a stream has been read to its end, and its
			// records are no longer kept; no caller uses them then.
			fmt.Fprintf(&sb, "  err %v kept %v\n", it.Err(), it.Err() != nil || it.Kept())
		}
		fmt.Fprintf(&sb, "stop %v %v %q at %d\n", r.Err(), r.End(), r.EndDetail(), r.Pos())
		if _, corrupt := AsCorrupt(r.Err()); !corrupt && r.End() != EndTorn {
			break
		}
		ok := r.Resync()
		fmt.Fprintf(&sb, "resync %v to %d %v\n", ok, r.Pos(), r.Err())
		if !ok {
			break
		}
	}
	return sb.String()
}

func recordLine(r *Record) string {
	show := func(b []byte) string {
		switch {
		case b == nil:
			return "null"
		case len(b) > 32:
			return fmt.Sprintf("%d:%08x", len(b), crc32.ChecksumIEEE(b))
		}
		return fmt.Sprintf("%q", b)
	}
	var h []string
	for _, x := range r.Headers {
		h = append(h, show(x.Key)+"="+show(x.Value))
	}
	return fmt.Sprintf("  %d %d %v a%d s%d m%d %db crc %d %v %v %s %s [%s]\n", r.Offset, r.Timestamp, r.TimestampType,
		r.Attributes, r.Sequence, r.Magic, r.Size, r.CRC, r.CRCValid, r.Compression, show(r.Key), show(r.Value), strings.Join(h, " "))
}

// tuning is a DeepReader's sizes, tiny ones included, so that runs hold
// one batch or many, the window one run or several, and batches and
// records pass the bounds.
type tuning struct{ workers, window, runSize, maxCopy int }

var tunings = []tuning{
	{2, 0, 0, 0}, {2, 1, 1, 1 << 20}, {3, 2, 100, 1 << 20}, {4, 3, 700, 500}, {8, 16, 3000, 1 << 20}, {2, 4, 1 << 20, 2000},
}

func newTuned(sr *SegmentReader, tu tuning) *DeepReader {
	d := NewDeepReader(sr, tu.workers)
	d.MaxRecordBytes = 1 << 20
	if tu.window > 0 {
		d.window, d.runSize, d.maxCopy = tu.window, tu.runSize, tu.maxCopy
	}
	return d
}

// sameDeep holds a DeepReader of every tuning to the sequential reader on
// seg, and returns what they saw.
func sameDeep(t *testing.T, seg []byte, skip func(*Batch) bool) string {
	t.Helper()
	sr := NewSegmentReader(bytes.NewReader(seg), int64(len(seg)), "seg")
	want := deepTrace(sr, skip)
	for _, tu := range tunings {
		sr := NewSegmentReader(bytes.NewReader(seg), int64(len(seg)), "seg")
		d := newTuned(sr, tu)
		d.Skip = skip
		got := deepTrace(d, skip)
		d.Close()
		if got != want {
			t.Fatalf("%+v: differs from one goroutine:\n%s", tu, firstDiff(got, want))
		}
	}
	return want
}

func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d:\n got  %s\n want %s", i+1, g[i], w[i])
		}
	}
	return fmt.Sprintf("got %d lines, want %d", len(g), len(w))
}

// deepSegment is a segment of every magic and codec, mixed: runs of batches
// of one format, uncompressed control batches among compressed ones, a run
// of uncompressed batches, and a batch past 2000 bytes.
func deepSegment(t *testing.T, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 1))
	var seg []byte
	off := int64(0)
	add := func(magic int8, c codec.Type, n int) {
		recs := testRecords(rng, off, n, magic)
		seg = append(seg, encode(t, magic, c, recs)...)
		off = recs[len(recs)-1].Offset + 1
	}
	for magic := int8(0); magic <= 2; magic++ {
		for c := codec.None; c <= codec.Zstd; c++ {
			if !c.ValidFor(magic) {
				continue
			}
			for range 3 + rng.IntN(4) {
				add(magic, c, 1+rng.IntN(12))
				if magic == 2 && rng.IntN(3) == 0 {
					o := DefaultBatchOptions(off)
					o.Control, o.Transactional, o.ProducerID = true, true, 7
					b, err := AppendBatch(nil, o, []Record{{Offset: off, Key: []byte{0, 0, 0, 1}, Value: []byte{0, 0, 0, 0, 0, 5}}})
					if err != nil {
						t.Fatal(err)
					}
					seg, off = append(seg, b...), off+1
				}
			}
		}
	}
	add(2, codec.Gzip, 60)
	for range 5 {
		add(2, codec.None, 3)
	}
	add(2, codec.Zstd, 5)
	return seg
}

// batchStarts lists where seg's batches start.
func batchStarts(seg []byte) []int {
	var out []int
	sr := NewSegmentReader(bytes.NewReader(seg), int64(len(seg)), "seg")
	for sr.Next() {
		out = append(out, int(sr.Batch().Pos))
	}
	return out
}

func TestDeepReaderMatchesOneGoroutine(t *testing.T) {
	for seed := range uint64(3) {
		seg := deepSegment(t, seed)
		sameDeep(t, seg, nil)
		// Skip every batch whose position is odd; deepTrace reads some.
		sameDeep(t, seg, func(b *Batch) bool { return b.Pos%3 == 0 })
	}
}

// TestDeepReaderDamage damages batches of the mixed segment, one at a time,
// with the corruption matrix's kinds of damage (internal/testkit/faulttest): the
// records, positions, errors and resynchronisation must be those of one
// goroutine.
func TestDeepReaderDamage(t *testing.T) {
	seg := deepSegment(t, 7)
	starts := batchStarts(seg)
	damages := []struct {
		name  string
		apply func(e []byte) []byte
	}{
		{"offset", func(e []byte) []byte { e[7] ^= 0xff; return e }},
		{"length", func(e []byte) []byte { e[11] ^= 0x01; return e }},
		{"length-2GB", func(e []byte) []byte { e[8] = 0x7f; return e }},
		{"magic-unknown", func(e []byte) []byte { e[16] = 3; return e }},
		{"magic-other", func(e []byte) []byte { e[16] = (e[16] + 1) % 3; return e }},
		{"crc", func(e []byte) []byte { e[13] ^= 0xff; e[19] ^= 0xff; return e }},
		{"attributes", func(e []byte) []byte { e[17] ^= 0x07; e[22] ^= 0x07; return e }},
		{"attributes-crc-fixed", func(e []byte) []byte { e[17] ^= 0x07; e[22] ^= 0x07; return fixCRC(e) }},
		{"payload", func(e []byte) []byte { e[len(e)*2/3] ^= 0xff; return e }},
		{"payload-crc-fixed", func(e []byte) []byte { e[len(e)*2/3] ^= 0xff; return fixCRC(e) }},
		{"payload-cut", func(e []byte) []byte { return fixCRC(resize(e[:len(e)-5], int8(e[16]))) }},
		{"zeros", func(e []byte) []byte { return make([]byte, len(e)) }},
	}
	for _, dm := range damages {
		for _, i := range []int{1, len(starts) / 2, len(starts) - 3} {
			end := len(seg)
			if i+1 < len(starts) {
				end = starts[i+1]
			}
			e := dm.apply(bytes.Clone(seg[starts[i]:end]))
			bad := append(append(bytes.Clone(seg[:starts[i]]), e...), seg[end:]...)
			t.Run(fmt.Sprintf("%s/%d", dm.name, i), func(t *testing.T) {
				// Damage in the middle does not hide the batches after it.
				last := fmt.Sprintf("batch %d+", starts[len(starts)-1]+len(bad)-len(seg))
				if got := sameDeep(t, bad, nil); i < len(starts)-3 && !strings.Contains(got, last) {
					t.Errorf("the last batch (%s) is not read:\n%s", last, got)
				}
			})
		}
	}
	// Torn at the end, and cut at every few bytes of a compressed batch in
	// the middle.
	t.Run("torn", func(t *testing.T) { sameDeep(t, seg[:len(seg)-7], nil) })
	for cut := starts[len(starts)/2]; cut < starts[len(starts)/2+1]; cut += 37 {
		t.Run(fmt.Sprintf("cut%d", cut), func(t *testing.T) { sameDeep(t, seg[:cut], nil) })
	}
}

// fixCRC sets the checksum of a v2 batch or a legacy message after an edit.
func fixCRC(e []byte) []byte {
	if len(e) < V2HeaderSize || len(e) < HeaderSizeUpToMagic+4 {
		return e
	}
	b := Batch{Data: e}
	switch e[MagicOffset] {
	case 2:
		binary.BigEndian.PutUint32(e[17:], b.ComputeCRC())
	case 0, 1:
		binary.BigEndian.PutUint32(e[12:], b.ComputeCRC())
	}
	return e
}

// TestDeepReaderBomb: payloads that decompress past a run's bound are left
// to the caller, whose iterator streams them, with the same result.
func TestDeepReaderBomb(t *testing.T) {
	var seg []byte
	for i := range 6 {
		recs := []Record{{Offset: int64(i * 2), Value: make([]byte, 60<<10)}, {Offset: int64(i*2 + 1), Value: []byte("x")}}
		o := DefaultBatchOptions(int64(i * 2))
		o.Compression = codec.Zstd
		var err error
		if seg, err = AppendBatch(seg, o, recs); err != nil {
			t.Fatal(err)
		}
	}
	sameDeep(t, seg, nil)
}

// TestDeepReaderNextKey: NextKey over payloads a worker decompressed gives
// what it gives over the batch.
func TestDeepReaderNextKey(t *testing.T) {
	seg := deepSegment(t, 9)
	keys := func(r batchReader) string {
		var sb strings.Builder
		var it RecordIter
		for r.Next() {
			if it.Reset(r.Batch()) != nil {
				continue
			}
			for it.NextKey() {
				rec := it.Record()
				fmt.Fprintf(&sb, "%d %q %q %d %d %d %v\n", rec.Offset, rec.Key, rec.Value, rec.Attributes, rec.Magic, rec.Size, rec.Key == nil)
			}
		}
		return sb.String()
	}
	want := keys(NewSegmentReader(bytes.NewReader(seg), int64(len(seg)), "seg"))
	d := newTuned(NewSegmentReader(bytes.NewReader(seg), int64(len(seg)), "seg"), tuning{3, 2, 500, 1 << 20})
	defer d.Close()
	if got := keys(d); got != want {
		t.Fatal(firstDiff(got, want))
	}
}

// TestDeepReaderCloseEarly stops reading with runs in flight.
func TestDeepReaderCloseEarly(t *testing.T) {
	seg := deepSegment(t, 4)
	for n := range 12 {
		d := newTuned(NewSegmentReader(bytes.NewReader(seg), int64(len(seg)), "seg"), tuning{3, 4, 200, 1 << 20})
		for range n {
			d.Next()
		}
		d.Close()
	}
}

// TestDeepReaderOneWorker is the segment reader itself.
func TestDeepReaderOneWorker(t *testing.T) {
	seg := deepSegment(t, 5)
	sr := NewSegmentReader(bytes.NewReader(seg), int64(len(seg)), "seg")
	d := NewDeepReader(sr, 1)
	for d.Next() {
		if d.Batch() != sr.Batch() || d.Batch().dec != nil {
			t.Fatal("one worker: not the segment reader's batch")
		}
	}
	d.Close()
}

// FuzzDeepReader reads arbitrary bytes, and the segments they are appended
// to, through DeepReaders with tiny windows and runs, against one
// goroutine.
func FuzzDeepReader(f *testing.F) {
	seeds := fuzzSeeds()
	all := bytes.Join(seeds, nil)
	f.Add(all, uint8(2), uint8(1), uint16(1), uint16(100))
	f.Add(all, uint8(3), uint8(3), uint16(1), uint16(1000))
	f.Add(all, uint8(2), uint8(4), uint16(200), uint16(150))
	for _, s := range seeds {
		f.Add(s, uint8(3), uint8(2), uint16(300), uint16(1000))
	}
	f.Fuzz(func(t *testing.T, data []byte, workers, window uint8, runSize, maxCopy uint16) {
		tu := tuning{2 + int(workers%7), 1 + int(window%9), 1 + int(runSize), 1 + int(maxCopy)}
		sr := NewSegmentReader(bytes.NewReader(data), int64(len(data)), "seg")
		sr.MaxBatchSize = 1 << 20
		want := deepTrace(sr, nil)
		sr = NewSegmentReader(bytes.NewReader(data), int64(len(data)), "seg")
		sr.MaxBatchSize = 1 << 20
		d := newTuned(sr, tu)
		got := deepTrace(d, nil)
		d.Close()
		if got != want {
			t.Fatalf("%+v: differs from one goroutine:\n%s", tu, firstDiff(got, want))
		}
	})
}

// traceJob reads its batch's records, on whichever goroutine runs it, and
// writes what it found to its output.
type traceJob struct {
	seq  int
	pos  int64
	want bool
	runs int
}

func (j *traceJob) Run(b *Batch, out []byte) []byte {
	j.runs++
	out = fmt.Appendf(out, "job %d at %d ran on %d\n", j.seq, j.pos, b.Pos)
	if !j.want {
		return out
	}
	it := RecordIter{MaxRecordBytes: 1 << 20, File: "seg"}
	if err := it.Reset(b); err != nil {
		return fmt.Appendf(out, "  reset %v\n", err)
	}
	for it.Next() {
		out = append(out, recordLine(it.Record())...)
	}
	return fmt.Appendf(out, "  err %v\n", it.Err())
}

// jobTrace is what the jobs of a DeepReader found, in the order it gave
// them out, resynchronising past damage.
func jobTrace(t *testing.T, d *DeepReader) string {
	seq := 0
	d.Prepare = func(b *Batch) (BatchJob, bool) {
		seq++
		j := &traceJob{seq: seq, pos: b.Pos, want: b.Pos%3 != 0}
		return j, j.want
	}
	var sb strings.Builder
	for {
		for d.Next() {
			j := d.Job().(*traceJob)
			if j.runs != 1 || j.pos != d.Batch().Pos {
				t.Fatalf("job %d of the batch at %d ran %d times, is given out with the batch at %d", j.seq, j.pos, j.runs, d.Batch().Pos)
			}
			sb.Write(d.Output())
		}
		fmt.Fprintf(&sb, "stop %v %v at %d\n", d.Err(), d.End(), d.Pos())
		if _, corrupt := AsCorrupt(d.Err()); !corrupt && d.End() != EndTorn || !d.Resync() {
			break
		}
	}
	d.Close()
	return sb.String()
}

// TestDeepReaderJobs runs a job on every batch, prepared in order, and
// gets each back with its batch, done, as one goroutine does, on the
// mixed segment whole and damaged.
func TestDeepReaderJobs(t *testing.T) {
	seg := deepSegment(t, 8)
	starts := batchStarts(seg)
	i := len(starts) / 2
	bad := bytes.Clone(seg)
	bad[starts[i]+11] ^= 0x01 // a length
	bad[starts[i+3]+(starts[i+4]-starts[i+3])*2/3] ^= 0xff
	for _, seg := range [][]byte{seg, bad, seg[:starts[i+2]+40]} {
		want := jobTrace(t, NewDeepReader(NewSegmentReader(bytes.NewReader(seg), int64(len(seg)), "seg"), 1))
		if !strings.Contains(want, "  err <nil>") {
			t.Fatalf("no job read records:\n%s", want)
		}
		for _, tu := range tunings {
			for _, onWorkers := range []bool{false, true} {
				d := newTuned(NewSegmentReader(bytes.NewReader(seg), int64(len(seg)), "seg"), tu)
				d.JobsOnWorkers = onWorkers
				got := jobTrace(t, d)
				if got != want {
					t.Fatalf("%+v, uncompressed jobs on workers %v: differs from one goroutine:\n%s", tu, onWorkers, firstDiff(got, want))
				}
			}
		}
	}
}
