package fetch

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/checkpoint"
	"github.com/logtool/logtool/logfmt/codec"
	"github.com/logtool/logtool/logfmt/layout"
)

func genPartition(t *testing.T) *layout.Partition {
	t.Helper()
	return genWith(t, gen.Options{Topics: []string{"t"}, Magic: 2, Records: 3000, Keys: 50, TransactionalRatio: 0.5, AbortRatio: 0.4,
		SegmentBytes: 32 << 10, Seed: 9})
}

// genWith generates the partition t-0 as o says.
func genWith(t *testing.T, o gen.Options) *layout.Partition {
	t.Helper()
	dir := t.TempDir()
	o.Out = dir
	if _, err := gen.Generate(o); err != nil {
		t.Fatal(err)
	}
	p, err := layout.ReadPartition(filepath.Join(dir, "t-0"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// batchesOf reads the batches of spans in order, with TxnState's verdict on
// each transactional data batch.
func batchesOf(t *testing.T, pt *Partition, spans SpanList) (firsts []int64, states map[int64]TxnState) {
	t.Helper()
	states = map[int64]TxnState{}
	for s := range spans.All() {
		seg, err := logfmt.OpenSegment(s.Segment.Log)
		if err != nil {
			t.Fatal(err)
		}
		seg.SeekTo(s.Start)
		for seg.Pos() < s.End && seg.Next() {
			h := seg.Batch().Header()
			firsts = append(firsts, h.BaseOffset())
			if h.IsTransactional() && !h.IsControl() {
				states[h.BaseOffset()] = pt.TxnState(h.ProducerID(), h.BaseOffset())
			}
		}
		if err := seg.Err(); err != nil {
			t.Fatal(err)
		}
		seg.Close()
	}
	return firsts, states
}

// TestSpans: the log's units hold every batch once, in order; the range's
// units and the tail after them are a run of them; TxnState agrees with
// what a read_uncommitted Reader says of each record.
func TestSpans(t *testing.T) {
	p := genPartition(t)
	o := DefaultOptions()
	o.Isolation, o.UnitBytes = ReadUncommitted, 8<<10
	o.FromOffset, o.ToOffset = 1000, 1999
	pt, err := Open(p, o)
	if err != nil {
		t.Fatal(err)
	}
	all, states := batchesOf(t, pt, pt.LogSpans())
	var want []int64
	for _, s := range p.Segments {
		seg, err := logfmt.OpenSegment(s.Log)
		if err != nil {
			t.Fatal(err)
		}
		for seg.Next() {
			want = append(want, seg.Batch().Header().BaseOffset())
		}
		seg.Close()
	}
	if len(all) != len(want) || pt.LogSpans().Len() < 4 {
		t.Fatalf("the log's %d units hold %d batches, want %d", pt.LogSpans().Len(), len(all), len(want))
	}
	for i := range want {
		if all[i] != want[i] {
			t.Fatalf("batch %d starts at %d, want %d", i, all[i], want[i])
		}
	}
	from, end := pt.Range()
	if from != 1000 || end != 2000 {
		t.Fatalf("range [%d, %d), want [1000, 2000)", from, end)
	}
	inRange, _ := batchesOf(t, pt, pt.Spans())
	tail, _ := batchesOf(t, pt, pt.Tail())
	run := append(inRange, tail...)
	start := len(all) - len(run)
	for i := range run {
		if run[i] != all[start+i] {
			t.Fatalf("range and tail batch %d starts at %d, want %d", i, run[i], all[start+i])
		}
	}
	if inRange[0] > from || len(inRange) > 1 && inRange[1] <= from || inRange[len(inRange)-1] < end-1 {
		t.Errorf("the range's units hold batches %d to %d, want the range [%d, %d) in them", inRange[0], inRange[len(inRange)-1], from, end)
	}

	o.FromOffset, o.ToOffset = NoOffset, NoOffset
	pt, err = Open(p, o)
	if err != nil {
		t.Fatal(err)
	}
	r := pt.Reader()
	defer r.Close()
	seen := map[TxnState]int{}
	for r.Next() {
		rec := r.Record()
		if !rec.Transactional || rec.Control {
			continue
		}
		// Records of one batch share its verdict; batchesOf keyed it by base.
		base := rec.Offset
		for base >= 0 && states[base] == NotTransactional {
			base--
		}
		if states[base] != rec.Txn {
			t.Fatalf("offset %d: TxnState %s, the reader says %s", rec.Offset, states[base], rec.Txn)
		}
		seen[rec.Txn]++
	}
	if r.Err() != nil {
		t.Fatal(r.Err())
	}
	if seen[Aborted] == 0 || seen[Committed] == 0 {
		t.Errorf("records by transaction state: %v; want aborted and committed ones", seen)
	}
}

// TestWholeLog starts below the log start offset, where what DeleteRecords
// left is still on disk.
func TestWholeLog(t *testing.T) {
	p := genPartition(t)
	logDir := filepath.Dir(p.Path)
	data := checkpoint.AppendOffsets(nil, []checkpoint.OffsetEntry{{Topic: "t", Partition: 0, Offset: 100}})
	if err := os.WriteFile(filepath.Join(logDir, layout.LogStartOffsetCheckpointFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, whole := range []bool{false, true} {
		o := DefaultOptions()
		o.WholeLog = whole
		pt, err := Open(p, o)
		if err != nil {
			t.Fatal(err)
		}
		from, _ := pt.Range()
		want := int64(100)
		if whole {
			want = 0
		}
		if from != want || pt.Stats().LogStartOffset != 100 {
			t.Errorf("whole log %v: range from %d, log start %d; want %d and 100", whole, from, pt.Stats().LogStartOffset, want)
		}
	}
}

// TestUnitRecords: with UnitRecords a unit ends once it holds that many
// records, whatever its size, and the units still hold every batch once.
func TestUnitRecords(t *testing.T) {
	p := genPartition(t)
	o := DefaultOptions()
	o.Isolation, o.UnitRecords = ReadUncommitted, 100
	pt, err := Open(p, o)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := Open(p, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	all, _ := batchesOf(t, pt, pt.LogSpans())
	want, _ := batchesOf(t, whole, whole.LogSpans())
	if !slices.Equal(all, want) {
		t.Fatalf("units of 100 records hold batches %v, want %v", all, want)
	}
	checkUnitRecords(t, pt, 100, func(b *logfmt.Batch) int { return int(b.Header().RecordCount()) })
	if pt.LogSpans().Len() <= whole.LogSpans().Len() {
		t.Fatalf("%d units of 100 records, against %d of 16 MiB", pt.LogSpans().Len(), whole.LogSpans().Len())
	}
}

// TestUnitRecordsLegacyWrappers: a compressed legacy wrapper holds many
// records, and counts for them (bounded above by the offsets it spans), so
// that a unit of such wrappers still ends near UnitRecords.
func TestUnitRecordsLegacyWrappers(t *testing.T) {
	dir := t.TempDir()
	g := gen.Options{Out: dir, Topics: []string{"t"}, Magic: 1, Compression: codec.Gzip, Records: 3000, BatchRecords: 50, Keys: 50,
		SegmentBytes: 1 << 20, Seed: 9}
	if _, err := gen.Generate(g); err != nil {
		t.Fatal(err)
	}
	p, err := layout.ReadPartition(filepath.Join(dir, "t-0"))
	if err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	o.Isolation, o.UnitRecords = ReadUncommitted, 100
	pt, err := Open(p, o)
	if err != nil {
		t.Fatal(err)
	}
	var it logfmt.RecordIter
	checkUnitRecords(t, pt, 100, func(b *logfmt.Batch) int {
		if err := it.Reset(b); err != nil {
			t.Fatal(err)
		}
		n := 0
		for ; it.Next(); n++ {
		}
		return n
	})
}

// checkUnitRecords checks that no unit of pt holds limit records or more
// before its last batch, with count telling a batch's records.
func checkUnitRecords(t *testing.T, pt *Partition, limit int, count func(*logfmt.Batch) int) {
	t.Helper()
	for sp := range pt.LogSpans().All() {
		seg, err := logfmt.OpenSegment(sp.Segment.Log)
		if err != nil {
			t.Fatal(err)
		}
		seg.SeekTo(sp.Start)
		records, batches, last := 0, 0, 0
		for seg.Pos() < sp.End && seg.Next() {
			last = count(seg.Batch())
			records += last
			batches++
		}
		seg.Close()
		if batches > 1 && records-last >= limit {
			t.Fatalf("a unit holds %d records in %d batches, %d or more before its last batch", records, batches, limit)
		}
	}
}

// TestOnUnit: the units given to OnUnit as the first pass cuts them are
// the log's, in order.
func TestOnUnit(t *testing.T) {
	p := genPartition(t)
	for _, unitBytes := range []int64{1, 5 << 10, 1 << 30} {
		var got []Span
		o := DefaultOptions()
		o.UnitBytes = unitBytes
		o.OnUnit = func(sp Span) { got = append(got, sp) }
		pt, err := Open(p, o)
		if err != nil {
			t.Fatal(err)
		}
		if want := slices.Collect(pt.LogSpans().All()); !slices.Equal(got, want) || len(got) < len(p.Segments) {
			t.Errorf("unit bytes %d: OnUnit was given %v, want the log's %v", unitBytes, got, want)
		}
	}
}

// TestTornInsideIsDamage: a torn entry is a write cut short only at the
// end of the log; in an earlier segment its records are missing from
// what is read, so Open fails, and a plan is not taken in its stead. The
// same tear in the last segment stays a note.
func TestTornInsideIsDamage(t *testing.T) {
	for _, last := range []bool{false, true} {
		p := genPlain(t, 6000)
		s := p.Segments[0]
		if last {
			s = p.Segments[len(p.Segments)-1]
		}
		fi, err := os.Stat(s.Log)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(s.Log, fi.Size()-5); err != nil {
			t.Fatal(err)
		}
		_, err = Open(p, DefaultOptions())
		if ce, ok := logfmt.AsCorrupt(err); last && err != nil || !last && (!ok || ce.File != s.Log) {
			t.Errorf("torn end of the last segment %v: Open's error %v", last, err)
		}
		o := DefaultOptions()
		o.UnitBytes = 4 << 10
		if pl, ok := NewPlan(p, o); ok {
			if _, ok := scanPlan(t, pl); ok == !last {
				t.Errorf("torn end of the last segment %v: plan taken %v", last, ok)
			}
		}
	}
}
