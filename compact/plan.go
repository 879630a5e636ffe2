package compact

import (
	"fmt"
	"math"
	"strings"

	"github.com/logtool/logtool/internal/human"
)

// plan is LogCleanerManager's view of a partition: its cleanable range and
// whether it is eligible.
type plan struct {
	firstDirty      int64
	forceCheckpoint bool // the checkpoint was out of range and reset
	uncleanable     int64
	activeBase      int64 // segments at or above are active; leo when the idle active segment is rolled
	rolled          bool
	cleanBytes      int64
	cleanableBytes  int64
	ratio           float64
	delay           int64 // ms past the max lag, 0 when within it
	expired         int   // tombstones and markers whose horizon has passed, counted only when otherwise not eligible
	eligible        bool
	reason          string
}

// span returns the indexes [i, j) of the segments LocalLog.logSegments(from,
// to) returns: from the one containing from (the first when none does) to
// the last whose base offset is below to; empty when from == to.
func span(segs []segment, from, to int64) (int, int) {
	if from == to {
		return 0, 0
	}
	i := 0
	for k := range segs {
		if segs[k].Base <= from {
			i = k
		}
	}
	j := i
	for j < len(segs) && segs[j].Base < to {
		j++
	}
	return i, j
}

func sizeOf(segs []segment) int64 {
	var n int64
	for i := range segs {
		n += segs[i].Size
	}
	return n
}

// nonActiveFrom is UnifiedLog.nonActiveLogSegmentsFrom.
func (pl *plan) nonActiveFrom(segs []segment, from int64) []segment {
	i, j := span(segs, from, pl.activeBase)
	return segs[i:j]
}

// makePlan computes the cleanable range and the eligibility of p at now.
func makePlan(p *partition, o *Options) (*plan, error) {
	pl := &plan{}
	segs := p.segs
	last := &segs[len(segs)-1]
	pl.activeBase = last.Base
	if o.MaxLag != Unlimited && last.Size > 0 {
		ts, err := last.FirstBatchTimestamp()
		if err != nil {
			return nil, err
		}
		// An idle active segment past the max lag is what Kafka would have
		// rolled on the next append.
		if ts > 0 && ts < o.Now-o.MaxLag {
			pl.activeBase, pl.rolled = p.leo, true
		}
	}

	// LogCleanerManager.cleanableOffsets.
	pl.firstDirty = p.cp.offset
	if pl.firstDirty < 0 {
		pl.firstDirty = p.logStart
	} else if pl.firstDirty < p.logStart || pl.firstDirty > p.leo {
		pl.firstDirty, pl.forceCheckpoint = p.logStart, true
	}
	uncleanable := min(p.lso, pl.activeBase)
	if o.MinLag > 0 {
		for _, s := range pl.nonActiveFrom(segs, pl.firstDirty) {
			ts, _, err := s.LargestTimestamp()
			if err != nil {
				return nil, err
			}
			if ts > o.Now-o.MinLag {
				uncleanable = min(uncleanable, s.Base)
				break
			}
		}
	}
	uncleanable = max(pl.firstDirty, uncleanable)

	// calculateCleanableBytes and LogToClean: round down to a segment.
	pl.uncleanable = pl.activeBase
	if na := pl.nonActiveFrom(segs, uncleanable); len(na) > 0 {
		pl.uncleanable = na[0].Base
	}
	i, j := span(segs, -1, pl.firstDirty)
	pl.cleanBytes = sizeOf(segs[i:j])
	i, j = span(segs, min(pl.firstDirty, pl.uncleanable), pl.uncleanable)
	pl.cleanableBytes = sizeOf(segs[i:j])
	if total := pl.cleanBytes + pl.cleanableBytes; total > 0 {
		pl.ratio = float64(pl.cleanableBytes) / float64(total)
	}
	pl.rolled = pl.rolled && pl.uncleanable > last.Base

	if err := pl.maxCompactionDelay(segs, o); err != nil {
		return nil, err
	}
	var why []string
	switch {
	case pl.cleanBytes+pl.cleanableBytes == 0:
		why = append(why, "nothing to clean")
	case pl.delay > 0 && pl.cleanableBytes > 0:
		pl.eligible = true
		why = append(why, "max lag exceeded by "+human.Duration(pl.delay))
		if pl.ratio > o.MinCleanableRatio {
			why = append(why, fmt.Sprintf("dirty ratio %.2f > %.2f", pl.ratio, o.MinCleanableRatio))
		}
	case pl.ratio > o.MinCleanableRatio:
		pl.eligible = true
		why = append(why, fmt.Sprintf("dirty ratio %.2f > %.2f", pl.ratio, o.MinCleanableRatio))
	default:
		why = append(why, fmt.Sprintf("dirty ratio %.2f <= %.2f", pl.ratio, o.MinCleanableRatio))
		if pl.delay > 0 {
			why = append(why, "max lag exceeded by "+human.Duration(pl.delay)+" but the segments past it are not cleanable yet")
		}
	}
	if !pl.eligible && pl.cleanBytes > 0 {
		n, err := expiredDeletes(p, pl, o)
		if err != nil {
			return nil, err
		}
		if n > 0 {
			pl.eligible, pl.expired = true, n
			past := "delete horizon"
			if o.MaxLag != Unlimited {
				past += " or deadline"
			}
			why = append(why, fmt.Sprintf("%d tombstone(s) or marker(s) past their %s", n, past))
		}
	}
	if pl.rolled && pl.eligible {
		why = append(why, "idle active segment cleaned as rolled")
	}
	pl.reason = strings.Join(why, "; ")
	return pl, nil
}

// maxCompactionDelay is LogCleanerManager.maxCompactionDelay: how far the
// earliest first-batch timestamp of the dirty non-active segments is past
// now − max lag. Timestamps ≤ 0 (magic 0 has none) never count.
func (pl *plan) maxCompactionDelay(segs []segment, o *Options) error {
	if o.MaxLag == Unlimited {
		return nil
	}
	earliest := int64(math.MaxInt64)
	for _, s := range pl.nonActiveFrom(segs, pl.firstDirty) {
		ts, err := s.FirstBatchTimestamp()
		if err != nil {
			return err
		}
		if ts > 0 {
			earliest = min(earliest, ts)
		}
	}
	if until := o.Now - o.MaxLag; earliest < until {
		pl.delay = until - earliest
	}
	return nil
}

// expiredDeletes counts the tombstones and transaction markers a pass would
// remove from the clean section only because their delete horizon, or
// with a max lag their deadline, has passed: Kafka would wait for its next
// eligible clean.
func expiredDeletes(p *partition, pl *plan, o *Options) (int, error) {
	end := min(pl.firstDirty, pl.uncleanable)
	legacy := newLegacyRule(p.segs, pl.firstDirty, p.cp.cleanTime, o)
	it := o.recordIter()
	n := 0
	for k := range p.segs {
		s := &p.segs[k]
		if s.Base >= end {
			break
		}
		sc, err := openScan(s, o)
		if err != nil {
			return 0, err
		}
		it.File = s.Log
		mayDrop := legacy.mayDrop(s)
		for sc.Next() {
			b := sc.Batch()
			check := mayDrop
			if b.Magic() >= 2 {
				h := b.Header()
				check = h.HasDeleteHorizon() && h.DeleteHorizon() <= o.Now && h.RecordCount() > 0
				if check && h.IsControl() {
					n++
					continue
				}
			}
			due := o.tombstoneDue(b.MaxTimestamp()) && !b.IsControl()
			if !check && !due {
				continue
			}
			if err := it.Reset(b); err != nil {
				sc.Close()
				return 0, err
			}
			// A pass keeps the last record of the round's last legacy batch,
			// which holds the log end offset.
			held := int64(-1)
			if b.Magic() < 2 && b.LastOffset()+1 == pl.uncleanable {
				held = b.LastOffset()
			}
			for it.Next() {
				if r := it.Record(); r.Key != nil && r.Value == nil && r.Offset < end && r.Offset != held &&
					(due || b.Magic() >= 2 || !legacy.retainDelete(s, r.Offset)) {
					n++
				}
			}
			if err := it.Err(); err != nil {
				sc.Close()
				return 0, err
			}
		}
		err = sc.Err()
		sc.Close()
		if err != nil {
			return 0, err
		}
	}
	return n, nil
}
