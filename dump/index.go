package dump

import (
	"fmt"
	"strconv"

	"github.com/logtool/logtool/index"
	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/layout"
)

// The index dumps follow DumpLogSegments: every entry is printed and checked
// against the log, mismatches are collected for the end-of-run reports.
// Unlike Kafka, an index is dumped without its .log (unchecked, with a
// note), and entries past the valid prefix (a preallocated zero tail, or
// damage) are not taken for entries.

// dumpOffsetIndex dumps an .index file.
func (d *dumper) dumpOffsetIndex(it *item, size int64) {
	d.indexFile = true
	f, err := safefile.Open(it.path)
	if err != nil {
		d.problemErr(err)
		return
	}
	defer f.Close()
	base := it.name.Base
	if d.o.IndexSanityCheck {
		if size/index.OffsetEntrySize == 0 {
			d.textLine(it.path, " is empty.")
		} else if err := index.SanityCheckOffsetIndex(f, size, base, it.path); err != nil {
			d.problemErr(err)
			return
		} else {
			d.sanityPassed(it.path)
		}
		d.readable = true
		return
	}
	var lr *logfmt.SegmentReader
	if lp := sibling(it, layout.LogExt); lp != "" {
		lf, lsize, err := safefile.OpenSized(lp)
		if err != nil {
			d.problemErr(err)
		} else {
			defer lf.Close()
			lr = logfmt.NewSegmentReader(lf, lsize, lp)
			lr.MaxBatchSize, lr.Job = d.o.MaxMessageSize, d.mem
		}
	} else if it.name.Leftover == "" {
		d.note(-1, "no .log for this index: entries are not checked against the log")
	}
	r := index.NewOffsetReader(f, size, base, it.path)
	n := 0
	for r.Next() {
		if d.stop.Load() {
			return
		}
		e := r.Entry()
		n++
		d.readable = true
		logOffset, checked := int64(-1), false
		if lr != nil {
			logOffset, checked = d.checkOffsetEntry(lr, e), true
		}
		if d.o.VerifyIndexOnly || !d.items() {
			continue
		}
		if d.o.JSON {
			l := d.objStart(d.s.buf(), "index-entry")
			l = appendIntField(l, "offset", e.Offset)
			l = appendIntField(l, "position", int64(e.Position))
			if checked {
				l = append(l, `,"logOffset":`...)
				if logOffset >= 0 {
					l = strconv.AppendInt(l, logOffset, 10)
				} else {
					l = append(l, "null"...)
				}
			}
			d.s.set(append(l, "}\n"...))
		} else {
			l := append(d.s.buf(), "offset: "...)
			l = strconv.AppendInt(l, e.Offset, 10)
			l = append(l, " position: "...)
			l = strconv.AppendInt(l, int64(e.Position), 10)
			d.s.set(append(l, '\n'))
		}
	}
	d.indexEnd(r.Problems(), r.Err(), r.Layout())
	d.live.report(d, "point at the first of several batches appended at once, as a follower appends a fetch: correct for lookups")
	if n == 0 {
		d.readable = true
		if len(r.Problems()) == 0 {
			d.textLine(it.path, " is empty.")
		}
	}
}

// sanityPassed prints Kafka's "<file> passed sanity check.", or a
// "sanity-check" object in JSON.
func (d *dumper) sanityPassed(path string) {
	if d.o.JSON {
		if d.items() {
			d.s.set(append(d.objStart(d.s.buf(), "sanity-check"), `,"passed":true}`+"\n"...))
		}
		return
	}
	d.textLine(path, " passed sanity check.")
}

// checkOffsetEntry reads the batch an .index entry points at and compares
// its last offset with the entry, as Kafka does (KAFKA-7487). It returns the
// batch's last offset, -1 when no batch starts there.
func (d *dumper) checkOffsetEntry(lr *logfmt.SegmentReader, e index.OffsetEntry) int64 {
	lr.SeekTo(int64(e.Position))
	if !lr.Next() {
		why := "the log ends there"
		if err := lr.Err(); err != nil {
			why = err.Error()
		} else if lr.End() != logfmt.EndClean {
			why = lr.EndDetail()
		}
		d.job.reports.indexMismatch = add(d.job.reports.indexMismatch, d.abs, e.Offset, -1)
		d.problem(-1, fmt.Sprintf("entry for offset %d points at byte %d of the log, where no batch starts: %s", e.Offset, e.Position, why))
		return -1
	}
	last := lr.Batch().LastOffset()
	if last == e.Offset {
		return last
	}
	d.job.reports.indexMismatch = add(d.job.reports.indexMismatch, d.abs, e.Offset, last)
	if last < e.Offset {
		// The live append path indexes the last offset of a whole append,
		// which holds several batches when a follower appends a fetch.
		d.live.add(fmt.Sprintf("entry for offset %d points at a batch ending at offset %d", e.Offset, last))
	} else {
		d.problem(-1, fmt.Sprintf("entry for offset %d points at byte %d of the log, whose batch ends at offset %d, after the entry", e.Offset, e.Position, last))
	}
	return last
}

// indexEnd reports what ended an index's valid entries.
func (d *dumper) indexEnd(probs []index.Problem, err error, lay index.Layout) {
	for _, p := range probs {
		d.problem(p.Pos, p.Msg)
	}
	if err != nil {
		d.problemErr(err)
	}
	if lay.ZeroTail > 0 {
		d.note(lay.ValidBytes, fmt.Sprintf("%d zero bytes of preallocated entries at the end (the active segment's index, or a crash)", lay.ZeroTail))
	}
}

// dumpTimeIndex dumps a .timeindex file.
func (d *dumper) dumpTimeIndex(it *item, size int64) {
	d.indexFile = true
	f, err := safefile.Open(it.path)
	if err != nil {
		d.problemErr(err)
		return
	}
	defer f.Close()
	base := it.name.Base
	if d.o.IndexSanityCheck {
		if err := index.SanityCheckTimeIndex(f, size, base, it.path); err != nil {
			d.problemErr(err)
			return
		}
		d.sanityPassed(it.path)
		d.readable = true
		return
	}
	var find *batchFinder
	if lp := sibling(it, layout.LogExt); lp != "" {
		lf, lsize, err := safefile.OpenSized(lp)
		if err != nil {
			d.problemErr(err)
		} else {
			defer lf.Close()
			find = &batchFinder{sr: logfmt.NewSegmentReader(lf, lsize, lp)}
			find.sr.Job = d.mem
			if ip := sibling(it, layout.IndexExt); ip != "" {
				if xf, xsize, err := safefile.OpenSized(ip); err == nil {
					defer xf.Close()
					find.idx = &offsetCursor{r: index.NewOffsetReader(xf, xsize, base, ip)}
				}
			}
		}
	} else if it.name.Leftover == "" {
		d.note(-1, "no .log for this index: entries are not checked against the log")
	}
	r := index.NewTimeReader(f, size, base, it.path)
	for r.Next() {
		if d.stop.Load() {
			return
		}
		e := r.Entry()
		d.readable = true
		if find != nil {
			d.checkTimeEntry(find, e)
		}
		if d.o.VerifyIndexOnly || !d.items() {
			continue
		}
		if d.o.JSON {
			l := d.objStart(d.s.buf(), "timeindex-entry")
			l = appendIntField(l, "timestamp", e.Timestamp)
			l = appendIntField(l, "offset", e.Offset)
			d.s.set(append(l, "}\n"...))
		} else {
			l := append(d.s.buf(), "timestamp: "...)
			l = strconv.AppendInt(l, e.Timestamp, 10)
			l = append(l, " offset: "...)
			l = strconv.AppendInt(l, e.Offset, 10)
			d.s.set(append(l, '\n'))
		}
	}
	d.indexEnd(r.Problems(), r.Err(), r.Layout())
	d.live.report(d, "point inside their batch, at the record with the largest timestamp, as a live broker indexes: correct for lookups")
	if size == 0 || r.Layout().ValidBytes == 0 {
		d.readable = true
	}
}

// checkTimeEntry applies Kafka's time index checks to one entry: the batch
// holding the offset must end at it, and the batch's largest record
// timestamp must equal the entry's. (That timestamps increase, the reader
// has checked.)
func (d *dumper) checkTimeEntry(find *batchFinder, e index.TimeEntry) {
	hint := int64(0)
	if find.idx != nil {
		hint = find.idx.lookup(e.Offset)
	}
	if !find.find(d, e.Offset, hint) {
		d.job.reports.timeNotFound = add(d.job.reports.timeNotFound, d.abs, e.Offset, -1)
		d.problem(-1, fmt.Sprintf("entry (%d, offset %d): no batch in the log holds the offset", e.Timestamp, e.Offset))
		return
	}
	if find.last != e.Offset {
		d.job.reports.timeNotFound = add(d.job.reports.timeNotFound, d.abs, e.Offset, find.last)
		if find.first <= e.Offset && find.maxTs == e.Timestamp {
			// Recent brokers index the exact offset of the record with the
			// largest timestamp, inside its batch.
			d.live.add(fmt.Sprintf("entry (%d, offset %d) points inside the batch ending at offset %d", e.Timestamp, e.Offset, find.last))
		} else {
			d.problem(-1, fmt.Sprintf("entry (%d, offset %d): the batch holding the offset ends at offset %d", e.Timestamp, e.Offset, find.last))
		}
		return
	}
	if find.maxTs != e.Timestamp {
		d.job.reports.timeMismatch = add(d.job.reports.timeMismatch, d.abs, e.Timestamp, find.maxTs)
		d.problem(-1, fmt.Sprintf("entry (%d, offset %d): the batch's largest record timestamp is %d", e.Timestamp, e.Offset, find.maxTs))
	}
}

// tally counts index entries that differ from what Kafka's recovery writes
// but are what a live broker writes, to note them once per file.
type tally struct {
	n     int
	first string
}

func (t *tally) add(example string) {
	if t.n == 0 {
		t.first = example
	}
	t.n++
}

func (t *tally) report(d *dumper, what string) {
	if t.n > 0 {
		d.note(-1, fmt.Sprintf("%d entries %s (the first: %s)", t.n, what, t.first))
	}
	*t = tally{}
}

// offsetCursor walks an .index file forward for lookups of non-decreasing
// targets, so a time index is checked in one pass over each file.
type offsetCursor struct {
	r       *index.OffsetReader
	cur     index.OffsetEntry
	have    bool
	next    index.OffsetEntry
	hasNext bool
	done    bool
}

// lookup returns the position of the greatest entry not above target, or 0.
func (c *offsetCursor) lookup(target int64) int64 {
	for {
		if !c.hasNext {
			if c.done || !c.r.Next() {
				c.done = true
				break
			}
			c.next, c.hasNext = c.r.Entry(), true
		}
		if c.next.Offset > target {
			break
		}
		c.cur, c.have, c.hasNext = c.next, true, false
	}
	if c.have {
		return int64(c.cur.Position)
	}
	return 0
}

// batchFinder finds, for non-decreasing offsets, the first batch whose last
// offset reaches each one, reading the log forward once.
type batchFinder struct {
	sr   *logfmt.SegmentReader
	idx  *offsetCursor
	have bool
	// the batch found last
	first, last, maxTs int64
}

func (f *batchFinder) find(d *dumper, offset, hint int64) bool {
	if f.have && f.last >= offset {
		return true
	}
	f.have = false
	if hint > f.sr.Pos() {
		f.sr.SeekTo(hint)
	}
	for f.sr.Next() {
		b := f.sr.Batch()
		if b.LastOffset() < offset {
			continue
		}
		f.first, f.last, f.maxTs = b.EntryOffset(), b.LastOffset(), logfmt.NoTimestamp
		f.have = true
		d.it.File = f.sr.File()
		if d.it.Reset(b) != nil {
			// The log's own dump reports the damage; the header is the
			// best account of the batch left.
			f.maxTs = b.MaxTimestamp()
			return true
		}
		f.first = d.it.BaseOffset()
		for d.it.Next() {
			f.maxTs = max(f.maxTs, d.it.Record().Timestamp)
		}
		return true
	}
	return false
}

// dumpTxnIndex dumps a .txnindex file.
func (d *dumper) dumpTxnIndex(it *item, size int64) {
	f, err := safefile.Open(it.path)
	if err != nil {
		d.problemErr(err)
		return
	}
	defer f.Close()
	d.readable = true
	r := index.NewTxnReader(f, size, it.path)
	for r.Next() {
		t := r.Txn()
		for _, p := range r.Problems() {
			d.problem(p.Pos, p.Msg)
		}
		if !d.items() {
			continue
		}
		if d.o.JSON {
			l := d.objStart(d.s.buf(), "txnindex-entry")
			l = appendIntField(l, "version", 0)
			l = appendIntField(l, "producerId", t.ProducerID)
			l = appendIntField(l, "firstOffset", t.FirstOffset)
			l = appendIntField(l, "lastOffset", t.LastOffset)
			l = appendIntField(l, "lastStableOffset", t.LastStableOffset)
			d.s.set(append(l, "}\n"...))
		} else {
			l := append(d.s.buf(), "version: 0 producerId: "...)
			l = strconv.AppendInt(l, t.ProducerID, 10)
			l = append(l, " firstOffset: "...)
			l = strconv.AppendInt(l, t.FirstOffset, 10)
			l = append(l, " lastOffset: "...)
			l = strconv.AppendInt(l, t.LastOffset, 10)
			l = append(l, " lastStableOffset: "...)
			l = strconv.AppendInt(l, t.LastStableOffset, 10)
			d.s.set(append(l, '\n'))
		}
	}
	for _, p := range r.Problems() {
		d.problem(p.Pos, p.Msg)
	}
	if err := r.Err(); err != nil {
		d.problemErr(err)
	}
}
