package fetch

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/internal/testkit/testutil"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/layout"
)

// scanPlan reads each planned unit whole, as a caller of Plan does, and
// opens the partition from what it learned.
func scanPlan(t *testing.T, pl *Plan) (*Partition, bool) {
	t.Helper()
	for sp := range pl.Spans().All() {
		f, err := safefile.Open(sp.Segment.Log)
		if err != nil {
			t.Fatal(err)
		}
		r := logfmt.NewSegmentReader(f, sp.End, sp.Segment.Log)
		r.SeekTo(sp.Start)
		sc := pl.Scan()
		for r.Next() && sc.Batch(r.Batch()) {
		}
		if sc.records <= sc.maxRecords {
			sc.Finish(r)
		}
		r.Close()
		f.Close()
		pl.Add(&sc)
	}
	pt, ok, err := pl.Open()
	if err != nil {
		t.Fatal(err)
	}
	return pt, ok
}

func genPlain(t *testing.T, records int) *layout.Partition {
	t.Helper()
	return genWith(t, gen.Options{Topics: []string{"t"}, Magic: 2, Records: records, Keys: 50, BatchRecords: 5, SegmentBytes: 64 << 10, Seed: 3})
}

// TestPlanAsOpen: where the plan is taken, the partition it opens is the
// one Open's first pass opens: the same figures, notes and range, and
// units that hold the same batches; where the indexes lie or a
// transaction needs resolving, the plan is refused.
func TestPlanAsOpen(t *testing.T) {
	cases := []struct {
		name   string
		damage func(t *testing.T, p *layout.Partition)
		ok     bool
	}{
		{"clean", func(*testing.T, *layout.Partition) {}, true},
		{"torn tail", func(t *testing.T, p *layout.Partition) {
			testutil.AppendBytes(t, p.Segments[len(p.Segments)-1].Log, []byte{0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 1, 0, 0, 0, 0, 0, 2})
		}, true},
		{"zero tail", func(t *testing.T, p *layout.Partition) {
			testutil.AppendBytes(t, p.Segments[0].Log, make([]byte, 5000))
		}, true},
		// Segments of more than two units without an entry are Open's to cut.
		{"no indexes", func(t *testing.T, p *layout.Partition) {
			for i := range p.Segments {
				os.Remove(p.Segments[i].Index)
				p.Segments[i].Index = ""
			}
		}, false},
		{"entries past the end", func(t *testing.T, p *layout.Partition) {
			s := p.Segments[0]
			entry := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, 1<<20), 1<<30)
			testutil.AppendBytes(t, s.Index, entry)
		}, true},
		{"entry inside a batch", func(t *testing.T, p *layout.Partition) {
			rewriteEntries(t, p.Segments[1].Index, func(i int, pos uint32) uint32 {
				if i == 3 {
					return pos + 7
				}
				return pos
			})
		}, false},
		{"entries on the wrong batches", func(t *testing.T, p *layout.Partition) {
			rewriteEntries(t, p.Segments[0].Index, func(i int, pos uint32) uint32 { return pos + 1 })
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := genPlain(t, 6000)
			if len(p.Segments) < 3 {
				t.Fatalf("%d segments, want 3 or more", len(p.Segments))
			}
			c.damage(t, p)
			for _, o := range []Options{
				{FromOffset: NoOffset, ToOffset: NoOffset, FromTime: NoTime, ToTime: NoTime, UnitBytes: 4 << 10},
				{FromOffset: 1000, ToOffset: 4000, FromTime: NoTime, ToTime: NoTime, UnitBytes: 8 << 10, UnitRecords: 100},
				{FromOffset: NoOffset, ToOffset: NoOffset, FromTime: NoTime, ToTime: NoTime},
			} {
				want, err := Open(p, o)
				if err != nil {
					t.Fatal(err)
				}
				var got *Partition
				pl, ok := NewPlan(p, o)
				if ok {
					got, ok = scanPlan(t, pl)
				}
				// Units of 16 MiB are whole segments here: no entry is used.
				if ok != (c.ok || o.UnitBytes == 0) {
					t.Fatalf("options %+v: plan taken %v, want %v", o, ok, c.ok)
				}
				if !ok {
					continue
				}
				if !reflect.DeepEqual(got.Stats(), want.Stats()) {
					t.Errorf("stats %+v, Open's %+v", got.Stats(), want.Stats())
				}
				gf, ge := got.Range()
				wf, we := want.Range()
				if gf != wf || ge != we {
					t.Errorf("range [%d, %d), Open's [%d, %d)", gf, ge, wf, we)
				}
				for _, l := range []func(*Partition) SpanList{(*Partition).LogSpans, (*Partition).Spans, (*Partition).Tail} {
					g, _ := batchesOf(t, got, l(got))
					w, _ := batchesOf(t, want, l(want))
					if !slices.Equal(g, w) {
						t.Errorf("units hold batches %v, Open's %v", g, w)
					}
				}
				if o.UnitBytes == 4<<10 && got.LogSpans().Len() < 2*len(p.Segments) {
					t.Errorf("%d units of 4 KiB in %d segments", got.LogSpans().Len(), len(p.Segments))
				}
			}
		})
	}
}

// TestPlanTransactional: a log with transactions is left to Open.
func TestPlanTransactional(t *testing.T) {
	p := genPartition(t)
	pl, ok := NewPlan(p, DefaultOptions())
	if !ok {
		t.Fatal("no plan")
	}
	if _, ok := scanPlan(t, pl); ok || !pl.Transactional() {
		t.Fatalf("plan of a transactional log taken %v, transactional %v", ok, pl.Transactional())
	}
}

// TestPlanNotRegular: a .log that is not a regular file is not planned.
func TestPlanNotRegular(t *testing.T) {
	p := genPlain(t, 100)
	log := p.Segments[0].Log
	os.Remove(log)
	if err := os.Symlink(p.Segments[0].Index, log); err != nil {
		t.Fatal(err)
	}
	if _, ok := NewPlan(p, DefaultOptions()); ok {
		t.Fatal("a symlinked .log was planned")
	}
}

// rewriteEntries changes the positions of an .index's entries.
func rewriteEntries(t *testing.T, path string, pos func(i int, pos uint32) uint32) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 8*5 {
		t.Fatalf("%s has %d bytes, want 5 entries or more", path, len(b))
	}
	for i := 0; i+8 <= len(b); i += 8 {
		binary.BigEndian.PutUint32(b[i+4:], pos(i/8, binary.BigEndian.Uint32(b[i+4:])))
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestPlanChain: a unit that read up to a batch crossing its end (the
// next unit was cut inside that batch) spoils the plan, even when the next
// unit frames cleanly from the cut, as the bytes of a batch held in a
// record's value would.
func TestPlanChain(t *testing.T) {
	p := genPlain(t, 3000)
	o := DefaultOptions()
	o.UnitBytes = 4 << 10
	pl, ok := NewPlan(p, o)
	if !ok || pl.Spans().Len() < 3 || pl.Spans().At(1).Segment != pl.Spans().At(0).Segment {
		t.Fatalf("want a segment of 2 units or more, got plan %v of %d units", ok, pl.Spans().Len())
	}
	first := pl.Spans().At(0)
	pl.Add(&UnitScan{next: 10, end: first.End - 3, state: logfmt.EndTorn, detail: "crosses the unit's end", done: true})
	if pl.Usable() {
		t.Fatal("a unit that ended 3 bytes before the next began left the plan usable")
	}
	for i := 1; i < pl.Spans().Len(); i++ {
		sp := pl.Spans().At(i)
		pl.Add(&UnitScan{next: 20, end: sp.End, state: logfmt.EndClean, done: true})
	}
	if _, ok, _ := pl.Open(); ok {
		t.Fatal("the plan was taken")
	}
}

// TestPlanUnitsBounded: a caller bounds its units (UnitBytes, UnitRecords)
// because its memory for a unit grows with the unit's records (grep's key
// pass holds a unit's versions until the units before it are in). Open's
// units keep to the bounds whatever the indexes; a planned unit must too,
// or the plan be refused: a segment whose index is gone is not one unit.
func TestPlanUnitsBounded(t *testing.T) {
	p := genPlain(t, 6000)
	for i := range p.Segments {
		os.Remove(p.Segments[i].Index)
		p.Segments[i].Index = ""
	}
	o := DefaultOptions()
	o.UnitBytes, o.UnitRecords = 4<<10, 100
	var biggest int64
	o.OnUnit = func(sp Span) { biggest = max(biggest, sp.End-sp.Start) }
	if _, err := Open(p, o); err != nil {
		t.Fatal(err)
	}
	o.OnUnit = nil
	pl, ok := NewPlan(p, o)
	if !ok {
		return // Open's to cut
	}
	if _, ok := scanPlan(t, pl); !ok {
		return
	}
	for sp := range pl.Spans().All() {
		if sp.End-sp.Start > biggest {
			t.Errorf("planned unit %s [%d, %d) of %d bytes; Open's units are %d bytes at most", filepath.Base(sp.Segment.Log), sp.Start, sp.End, sp.End-sp.Start, biggest)
		}
	}
}

// TestPlanUnitRecordsBounded: UnitRecords bounds a planned unit as it does
// Open's, within about two units of offsets, in the last segment too,
// whose end offset no next segment gives: there, with its index gone, the
// stretch after the last entry is bounded only in bytes.
func TestPlanUnitRecordsBounded(t *testing.T) {
	p := genPlain(t, 6000)
	last := &p.Segments[len(p.Segments)-1]
	os.Remove(last.Index)
	last.Index = ""
	o := DefaultOptions()
	o.UnitBytes, o.UnitRecords = 64<<10, 50
	pl, ok := NewPlan(p, o)
	if !ok {
		return // Open's to cut
	}
	pt, ok := scanPlan(t, pl)
	if !ok {
		return
	}
	// Three units' worth: a unit is cut at the entry after its bound, and
	// entries are at most two units apart.
	checkUnitRecords(t, pt, 3*50, func(b *logfmt.Batch) int { return int(b.Header().RecordCount()) })
}
