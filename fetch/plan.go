package fetch

import (
	"cmp"
	"math"
	"os"

	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/layout"
	"github.com/logtool/logtool/logfmt/logseg"
)

// Plan is a partition cut into units before its .log files are read, at
// the batch positions its offset indexes give, for a caller that reads
// every unit whole anyway (grep's key pass): what that reading learns
// (UnitScan) stands in for Open's first pass, and the log is read once.
//
// The positions are hints. Open takes the plan only when each unit ended
// cleanly exactly where the next began, so that every cut is a batch
// boundary of the log read from its start; when no unit held more records
// than two units may (UnitScan.Batch); and when no batch is transactional
// or a marker: resolving transactions takes Open's pass. Otherwise the
// caller opens the partition with Open.
type Plan struct {
	pt         *Partition
	units      []unit
	added      int
	leo        int64
	ok         bool
	txn        bool
	maxRecords int64 // of a unit
}

// NewPlan cuts the log of p into units as Options.UnitBytes and
// UnitRecords ask, at its indexes' entries. ok is false when it cannot: a
// .log that is not a regular file Open could read, or a stretch without
// entries (a segment whose index is gone, a batch larger than a unit) of
// more bytes or offsets than two units may hold, which Open would cut.
func NewPlan(p *layout.Partition, o Options) (pl *Plan, ok bool) {
	pt := newPartition(p, o)
	pl = &Plan{pt: pt, ok: true, maxRecords: math.MaxInt64}
	if len(pt.segs) > 0 {
		pl.leo = pt.segs[0].Base
	}
	unitBytes := cmp.Or(o.UnitBytes, defaultUnitBytes)
	unitRecords := o.UnitRecords
	if unitRecords <= 0 {
		unitRecords = math.MaxInt64
	} else {
		pl.maxRecords = 2 * min(unitRecords, math.MaxInt64/2)
	}
	for i, s := range pt.segs {
		st, err := os.Lstat(s.Log)
		if err != nil || !st.Mode().IsRegular() {
			return nil, false
		}
		size := st.Size()
		// An entry's offset is the last of the batch at its position:
		// offsets bound the records between two entries.
		u, first := unit{seg: i}, s.Base
		lastPos, lastOff := int64(0), s.Base
		stretch := func(pos, off int64) bool {
			ok := pos-lastPos <= 2*unitBytes && off-lastOff <= pl.maxRecords
			lastPos, lastOff = pos, off
			return ok
		}
		for e := range logseg.IndexEntries(s) {
			pos := int64(e.Position)
			if pos >= size {
				break
			}
			if !stretch(pos, e.Offset) {
				return nil, false
			}
			if pos-u.start >= unitBytes || e.Offset-first >= unitRecords {
				u.end = pos
				pl.units = append(pl.units, u)
				u.start, first = pos, e.Offset
			}
		}
		// The last segment's end offset is known only once it is read.
		next := lastOff
		if i+1 < len(pt.segs) {
			next = pt.segs[i+1].Base
		}
		if !stretch(size, next) {
			return nil, false
		}
		u.end = size
		pl.units = append(pl.units, u)
	}
	return pl, true
}

// Spans are the planned units, in order.
func (pl *Plan) Spans() SpanList { return SpanList{pl.pt, pl.units} }

// UnitScan is what reading one planned unit whole tells the plan.
type UnitScan struct {
	next       int64 // the offset after the batches read
	txn        bool
	end        int64
	state      logfmt.End
	detail     string
	done       bool
	records    int64 // as UnitRecords counts them
	maxRecords int64
	batches    int64
}

// Scan is the scan of a unit of the plan, before its first batch.
func (pl *Plan) Scan() UnitScan { return UnitScan{maxRecords: pl.maxRecords} }

// Batch takes in the next batch of the unit, and tells whether the unit
// holds no more records than two units of Options.UnitRecords: the stretch
// after a segment's last index entry is bounded by its bytes alone. Past
// that, reading the unit further would hold what the bound is for; the
// unit is left unfinished.
func (sc *UnitScan) Batch(b *logfmt.Batch) bool {
	leo := b.LastOffset() // a first batch counts its own records only
	if sc.batches > 0 {
		leo = sc.next
	}
	sc.batches++
	sc.records += unitCount(b, leo)
	sc.next = max(sc.next, b.LastOffset()+1)
	if b.Magic() >= 2 {
		h := b.Header()
		sc.txn = sc.txn || h.ProducerID() >= 0 && (h.IsTransactional() || h.IsControl())
	}
	return sc.records <= sc.maxRecords
}

// Finish takes in how the unit's reader, bounded by the unit's end,
// stopped. A unit left unfinished makes the plan unusable.
func (sc *UnitScan) Finish(r *logfmt.SegmentReader) {
	sc.end, sc.state, sc.detail = r.Pos(), r.End(), r.EndDetail()
	sc.done = r.Err() == nil && r.End() != logfmt.EndNone
}

// Add takes in the scan of the next unit; units are added in order.
func (pl *Plan) Add(sc *UnitScan) {
	u := &pl.units[pl.added]
	pl.added++
	if !sc.done {
		pl.ok = false
	}
	if !pl.ok {
		return
	}
	s := pl.pt.segs[u.seg]
	pl.leo = max(pl.leo, s.Base, sc.next)
	pl.txn = pl.txn || sc.txn
	if pl.added < len(pl.units) && pl.units[pl.added].seg == u.seg {
		pl.ok = sc.state == logfmt.EndClean && sc.end == u.end
		return
	}
	u.end = sc.end
	if pl.pt.tornInside(u.seg, sc.state) {
		pl.ok = false // Open's first pass reports the damage
		return
	}
	if sc.state != logfmt.EndClean {
		pl.pt.note(s, sc.state, sc.detail)
	}
}

// Transactional tells whether a unit added holds a transactional batch or
// a marker: the caller will need Open.
func (pl *Plan) Transactional() bool { return pl.txn }

// Open opens the partition from the scans of every planned unit. ok is
// false when they do not stand in for Open's first pass: a unit that did
// not end where the next began, or failed, or a transaction to resolve.
func (pl *Plan) Open() (pt *Partition, ok bool, err error) {
	if !pl.ok || pl.txn || pl.added < len(pl.units) {
		return nil, false, nil
	}
	pt = pl.pt
	if len(pt.segs) == 0 {
		return pt, true, nil
	}
	pt.units, pt.stats.LogEndOffset = pl.units, pl.leo
	if err := pt.finish(); err != nil {
		return nil, true, err
	}
	return pt, true, nil
}

// Usable tells whether the units added so far ended where the next began.
func (pl *Plan) Usable() bool { return pl.ok }
