package compact

import (
	"math"

	"github.com/logtool/logtool/logfmt"
)

// The map pass runs as two goroutines: one reads, checksums and parses the
// dirty segments into key digests, the other puts them in the offset map.
// Parsing and putting cost about the same and the map's cache misses leave
// the core idle, so on two cores the pass takes the time of the slower half
// rather than of both. Only digests cross over, never batch bytes, so the
// reader keeps its one read window.

// mapItemsLive is how many items are in flight; each holds up to
// mapItemKeys digests, a few MiB in all.
const (
	mapItemsLive = 3
	mapItemKeys  = 16 << 10
)

// mapItem is a run of consecutive batches, or the end of a segment or of
// the reading.
type mapItem struct {
	hs   []keyHash  // digests of the keyed records at or after firstDirty
	ends []batchEnd // where each batch's digests end in hs
	seg  *segment   // set when the item ends this segment
	next int64      // with seg: the base offset after it
	err  error      // set on the last item when reading failed
}

// batchEnd marks a batch at or after firstDirty: its digests are hs[:n].
type batchEnd struct {
	n    int
	last int64
}

func (it *mapItem) reset() {
	it.hs, it.ends, it.seg, it.err = it.hs[:0], it.ends[:0], nil, nil
}

// buildOffsetMap is Cleaner.buildOffsetMap over [firstDirty, upper).
func (ps *pass) buildOffsetMap() (bool, error) {
	m := ps.c.m
	m.reset()
	ps.validated = map[int64]bool{}
	ps.tombs = newOffsetSet(ps.firstDirty, ps.upper)
	full := make(chan *mapItem, mapItemsLive)
	free := make(chan *mapItem, mapItemsLive)
	quit := make(chan struct{})
	done := make(chan struct{})
	for k := range ps.c.keys {
		free <- &ps.c.keys[k]
	}
	go func() {
		defer close(done)
		defer close(full)
		ps.readKeys(full, free, quit)
	}()
	// Stopping early leaves the reader blocked on a send; quit frees it.
	defer func() {
		close(quit)
		<-done
	}()
	for it := range full {
		if f := ps.putItem(it); f || it.err != nil {
			return f, it.err
		}
		free <- it
	}
	return false, nil
}

// touchAhead is how many digests are touched at once before they are put:
// longer runs than one batch's overlap the cache misses of a random map
// (figures in docs/performance.md).
const touchAhead = 64

// putItem puts an item's digests in the map, stopping when it fills.
func (ps *pass) putItem(it *mapItem) bool {
	m, start, touched := ps.c.m, 0, 0
	for _, e := range it.ends {
		for i := start; i < e.n; i++ {
			if i == touched {
				touched = min(i+touchAhead, len(it.hs))
				m.touch(it.hs[i:touched])
			}
			if m.n >= m.room {
				if m.full() {
					return true
				}
				m.grow()
			}
			h := &it.hs[i]
			m.putHashed(h.h1, h.h2, h.offset)
		}
		start = e.n
		m.latest = e.last
	}
	if it.seg != nil {
		// Skip any gap up to the next segment.
		m.latest = it.next - 1
		ps.validated[it.seg.Base] = true
	}
	return false
}

// readKeys runs on its own goroutine: it reads the dirty segments in order
// and sends their digests, ending with an item that carries an error, if
// any. It stops when quit is closed.
func (ps *pass) readKeys(full chan<- *mapItem, free <-chan *mapItem, quit <-chan struct{}) {
	i, j := span(ps.p.segs, ps.firstDirty, ps.upper)
	dirty := ps.p.segs[i:j]
	txn := newTxnMeta()
	txn.add(collectAborted(ps.p.aborted, ps.firstDirty, ps.upper))
	r := keyReader{ps: ps, txn: txn, it: ps.c.o.recordIter(), full: full, free: free, quit: quit}
	for k := range dirty {
		next := ps.upper
		if k+1 < len(dirty) {
			next = dirty[k+1].Base
		}
		if !r.segment(&dirty[k], next) {
			return
		}
		ps.mapRead += ps.segDone(dirty[k].Size)
	}
}

// keyReader is the state of readKeys.
type keyReader struct {
	ps   *pass
	txn  *txnMeta
	it   logfmt.RecordIter
	cur  *mapItem
	full chan<- *mapItem
	free <-chan *mapItem
	quit <-chan struct{}
}

// take makes sure there is a current item to fill; false when quit.
func (r *keyReader) take() bool {
	if r.cur != nil {
		return true
	}
	select {
	case r.cur = <-r.free:
		r.cur.reset()
		return true
	case <-r.quit:
		return false
	}
}

// send hands the current item over; false when quit.
func (r *keyReader) send() bool {
	select {
	case r.full <- r.cur:
		r.cur = nil
		return true
	case <-r.quit:
		return false
	}
}

// fail sends err as the last item.
func (r *keyReader) fail(err error) bool {
	if !r.take() {
		return false
	}
	r.cur.err = err
	r.send()
	return false
}

func (r *keyReader) segment(s *segment, next int64) bool {
	ps, start := r.ps, r.ps.firstDirty
	m := ps.c.m
	// Nothing before the dirty range is read.
	sc, err := openStream(s, ps.c.o, func(b *logfmt.Batch) bool { return b.LastOffset() < start })
	if err != nil {
		return r.fail(err)
	}
	defer sc.Close()
	r.it.File = s.Log
	for sc.Next() {
		if !r.take() {
			return false
		}
		b := sc.Batch()
		ps.tick(int64(b.Size()))
		last := b.LastOffset()
		if b.IsControl() {
			t, _, ok, err := controlType(b, &r.it)
			if err != nil {
				return r.fail(err)
			}
			r.txn.onControlBatch(b.Header(), t, ok)
		} else if !ps.onDataBatch(r.txn, b) && last >= start {
			if err := r.it.Reset(b); err != nil {
				return r.fail(err)
			}
			lo, hi := int64(math.MinInt64), int64(math.MaxInt64) // a legacy wrapper's offsets are its records'
			if b.Magic() >= 2 {
				lo, hi = b.Header().BaseOffset(), last
			}
			for r.it.NextKey() {
				// The dead-batch shortcut counts tombstones by offset, so
				// it needs offsets inside the batch, each used once.
				rec := r.it.Record()
				if rec.Offset < lo || rec.Offset > hi {
					ps.irregular = true
				}
				lo = rec.Offset + 1
				if rec.Key != nil && rec.Offset >= start {
					h1, h2 := m.hash(rec.Key)
					r.cur.hs = append(r.cur.hs, keyHash{h1: h1, h2: h2, offset: rec.Offset})
					if rec.Value == nil {
						ps.tombs.add(rec.Offset)
					}
				}
			}
			if err := r.it.Err(); err != nil {
				return r.fail(err)
			}
		}
		if last >= start {
			r.cur.ends = append(r.cur.ends, batchEnd{n: len(r.cur.hs), last: last})
		}
		if len(r.cur.hs) >= mapItemKeys && !r.send() {
			return false
		}
	}
	if err := sc.Err(); err != nil {
		return r.fail(err)
	}
	if !r.take() {
		return false
	}
	r.cur.seg, r.cur.next = s, next
	return r.send()
}
