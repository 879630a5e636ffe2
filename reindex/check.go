package reindex

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/logtool/logtool/index"
	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/logfmt/layout"
	"github.com/logtool/logtool/logfmt/logseg"
)

// openChecks opens the existing index files selected for checking.
func (r *run) openChecks(s layout.Segment, res *rebuilt) error {
	open := func(path string) (*os.File, int64, error) {
		f, err := safefile.Open(path)
		if err != nil {
			return nil, 0, err
		}
		res.files = append(res.files, f)
		st, err := f.Stat()
		if err != nil {
			return nil, 0, err
		}
		return f, st.Size(), nil
	}
	if r.o.Offset && s.Index != "" {
		f, size, err := open(s.Index)
		if err != nil {
			return err
		}
		res.offsets = newOffsetCheck(r.c, s.Index, f, size, s.Base)
	}
	if r.o.Time && s.TimeIndex != "" {
		f, size, err := open(s.TimeIndex)
		if err != nil {
			return err
		}
		res.times = newTimeCheck(r.c, s.TimeIndex, f, size, s.Base)
	}
	return nil
}

// check finishes Check mode for a segment: read errors of the checks,
// missing files, and the byte differences from the rebuild.
func (r *run) check(s layout.Segment, sr *SegmentReport, res *rebuilt) error {
	diffSev, missingSev := Difference, Note
	if r.o.Strict {
		diffSev, missingSev = Problem, Problem
	}
	base := indexPath(s.Log)
	if r.o.Offset {
		fr := FileReport{Kind: OffsetIndex, Path: base + layout.IndexExt, Entries: len(res.rec.Offsets), Before: -1, Action: Unchanged}
		if oc := res.offsets; oc == nil {
			fr.Action = Differs
			r.c.add("missing", Finding{Severity: missingSev, File: fr.Path, Pos: -1, Entry: -1,
				Msg: "absent; a broker rebuilds it when it loads the segment"})
		} else {
			if oc.err != nil {
				return oc.err
			}
			fr.Before = int(oc.layout.ValidBytes / index.OffsetEntrySize)
			d, err := diffOffsets(oc.src, oc.layout.ValidBytes, s.Base, fr.Path, res.rec.Offsets)
			if err != nil {
				return err
			}
			if r.judge(fr.Path, oc.problems, oc.layout, d, index.OffsetEntrySize, fr.Before, diffSev) {
				fr.Action = Differs
			}
		}
		sr.Files = append(sr.Files, fr)
	}
	if r.o.Time {
		want := res.timeEntries()
		fr := FileReport{Kind: TimeIndex, Path: base + layout.TimeIndexExt, Entries: len(want), Before: -1, Action: Unchanged}
		if tc := res.times; tc == nil {
			fr.Action = Differs
			msg := "absent; a broker creates it empty, and then takes the .log's modification time for the segment's largest timestamp"
			if ls, err := logseg.Open(s); err == nil && ls.Load == logseg.Recovered {
				msg = fmt.Sprintf("absent; a broker recovers the segment when it loads it (%s), which rebuilds both indexes", ls.Why)
			}
			r.c.add("missing", Finding{Severity: missingSev, File: fr.Path, Pos: -1, Entry: -1, Msg: msg})
		} else {
			if tc.err != nil {
				return tc.err
			}
			fr.Before = int(tc.layout.ValidBytes / index.TimeEntrySize)
			d, err := diffTimes(tc.src, tc.layout.ValidBytes, s.Base, fr.Path, want)
			if err != nil {
				return err
			}
			if r.judge(fr.Path, tc.problems, tc.layout, d, index.TimeEntrySize, fr.Before, diffSev) {
				fr.Action = Differs
			}
		}
		sr.Files = append(sr.Files, fr)
	}
	if r.o.Txn {
		fr := FileReport{Kind: TxnIndex, Path: base + layout.TxnIndexExt, Entries: len(res.aborted), Before: -1, Action: Unchanged}
		f, err := safefile.Open(fr.Path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if len(res.aborted) == 0 {
				fr.Action = NotNeeded
				break
			}
			fr.Action = Differs
			for _, t := range res.aborted {
				r.c.problem("missing", fr.Path, -1, -1, "absent, but the segment aborts a transaction, so read_committed consumers would receive its records", txnText(t), none)
			}
		case err != nil:
			return err
		default:
			defer f.Close()
			st, err := f.Stat()
			if err != nil {
				return err
			}
			fr.Before = int(st.Size() / index.TxnEntrySize)
			before := r.c.rep.Counts
			if _, err := checkTxns(r.c, f, st.Size(), fr.Path, res.aborted, res.cleaned, r.o.Strict); err != nil {
				return err
			}
			if r.c.rep.Counts != before {
				fr.Action = Differs
			}
		}
		sr.Files = append(sr.Files, fr)
	}
	return nil
}

// judge reports the differences of a checked .index or .timeindex from its
// rebuild. A file with problems is not compared: the problems say more. It
// reports whether the file differs from the rebuild.
func (r *run) judge(path string, problems int, l index.Layout, d *diffs, esize, entries int, sev Severity) bool {
	if problems > 0 {
		return true
	}
	d.report(r.c, path, esize, sev)
	if l.ZeroTail > 0 {
		r.c.add("zerotail", Finding{Severity: sev, File: path, Pos: l.ValidBytes, Entry: -1,
			Msg: fmt.Sprintf("%d zero bytes follow the entries (%d): the preallocated index of an active segment, which a broker trims when the segment rolls or the broker stops", l.ZeroTail, entries)})
	}
	return len(d.groups) > 0 || l.ZeroTail > 0
}

// The checks below judge an existing index by what lookups need from it, not
// by equality with a rebuild: a live broker writes different, equally valid
// files. They walk the index alongside the batches of the log, so the index
// is never held in memory.

// offsetCheck judges an .index. An entry (O, P) is right when P is where a
// batch starts, every batch before P ends below O (else a lookup of an
// offset up to that end would start past the batch holding it), and some
// batch from P up to the next entry's position holds an offset of at least O.
// Recovery writes O as the last offset of the batch at P; a leader of an
// older release wrote the first, a follower the last of several batches it
// appended at once: all three pass.
type offsetCheck struct {
	c    *collector
	path string
	src  io.ReaderAt
	r    *index.OffsetReader
	cur  index.OffsetEntry
	n    int // entry number of cur
	ok   bool

	open     bool // openE waits for its upper bound: the next entry or the end
	openE    index.OffsetEntry
	openN    int
	prevLast int64 // last offset of the batch before the current one
	prevPos  int64 // where that batch starts

	problems int
	layout   index.Layout
	err      error
}

func newOffsetCheck(c *collector, path string, r io.ReaderAt, size, base int64) *offsetCheck {
	o := &offsetCheck{c: c, path: path, src: r, r: index.NewOffsetReader(r, size, base, path), n: -1, prevLast: base - 1, prevPos: -1}
	o.advance()
	return o
}

func (o *offsetCheck) advance() {
	if o.ok = o.r.Next(); o.ok {
		o.cur, o.n = o.r.Entry(), o.n+1
		return
	}
	for _, p := range o.r.Problems() {
		o.problem("format", p.Entry, p.Msg, "", rawEntry(o.src, p.Pos, index.OffsetEntrySize, func(b []byte) string {
			return fmt.Sprintf("relative offset %d at byte %d", int32(binary.BigEndian.Uint32(b)), int32(binary.BigEndian.Uint32(b[4:])))
		}))
	}
	o.layout, o.err = o.r.Layout(), o.r.Err()
}

// rawEntry describes the entry at pos of an index file for a problem the
// reader found there: the decoded fields of a whole entry, or the bytes of
// a partial one.
func rawEntry(r io.ReaderAt, pos int64, size int, decode func([]byte) string) string {
	b := make([]byte, size)
	n, _ := r.ReadAt(b, pos)
	if n == size {
		return decode(b)
	}
	return fmt.Sprintf("%d bytes %x", n, b[:n])
}

func (o *offsetCheck) problem(group string, entry int, msg, expected, found string) {
	o.problems++
	o.c.problem(group, o.path, int64(entry)*index.OffsetEntrySize, entry, msg, expected, found)
}

// batch is called for every valid batch, in order.
func (o *offsetCheck) batch(pos, last int64) {
	for o.ok && int64(o.cur.Position) < pos {
		o.problem("boundary", o.n, "position is not where a batch starts",
			fmt.Sprintf("a batch start (batches start at bytes %d and %d)", o.prevPos, pos), fmt.Sprintf("byte %d", o.cur.Position))
		o.advance()
	}
	if o.ok && int64(o.cur.Position) == pos {
		o.closeOpen()
		if o.cur.Offset <= o.prevLast {
			o.problem("order", o.n, fmt.Sprintf("the batch before byte %d ends at offset %d, so lookups of offsets %d to %d would start past the batch holding them",
				pos, o.prevLast, o.cur.Offset, o.prevLast), fmt.Sprintf("offset above %d", o.prevLast), fmt.Sprintf("offset %d", o.cur.Offset))
		}
		o.open, o.openE, o.openN = true, o.cur, o.n
		o.advance()
	}
	o.prevLast, o.prevPos = last, pos
}

// closeOpen checks the upper bound of the entry waiting for it: the batches
// it covers end at prevLast.
func (o *offsetCheck) closeOpen() {
	if o.open && o.openE.Offset > o.prevLast {
		o.problem("beyond", o.openN, fmt.Sprintf("no batch from byte %d to the next entry holds the offset: they end at offset %d", o.openE.Position, o.prevLast),
			fmt.Sprintf("offset at most %d", o.prevLast), fmt.Sprintf("offset %d", o.openE.Offset))
	}
	o.open = false
}

// finish is called after the last valid batch, which ends at valid; the
// .log has size bytes.
func (o *offsetCheck) finish(valid, size int64) {
	o.closeOpen()
	for o.ok {
		p := int64(o.cur.Position)
		switch {
		case p < valid:
			o.problem("boundary", o.n, "position is not where a batch starts",
				fmt.Sprintf("a batch start (the last starts at byte %d)", o.prevPos), fmt.Sprintf("byte %d", p))
		case p < size:
			o.problem("past", o.n, fmt.Sprintf("position lies in the %d bytes after the last valid batch, which recovery removes", size-valid),
				fmt.Sprintf("a position below %d", valid), fmt.Sprintf("byte %d", p))
		default:
			o.problem("past", o.n, fmt.Sprintf("position is past the end of the .log (%d bytes)", size),
				fmt.Sprintf("a position below %d", valid), fmt.Sprintf("byte %d", p))
		}
		o.advance()
	}
}

// timeCheck judges a .timeindex. An entry (T, O) is right when some record
// up to the batch holding O has timestamp T or more (else the log does not
// support T, and a broker would take T for the segment's largest timestamp),
// and no batch before that one reaches T (else lookups of timestamps up to
// what that batch holds would start past it). Recovery writes the last offset
// of the first batch reaching T; a live broker may write the exact offset of
// the record inside it; a coarse index writes the first offset of a bucket:
// all pass.
type timeCheck struct {
	c    *collector
	path string
	src  io.ReaderAt
	r    *index.TimeReader
	cur  index.TimeEntry
	n    int
	ok   bool

	runMax     int64 // largest timestamp of the batches before the current one
	runMaxPos  int64 // the first batch that reached it
	runMaxLast int64
	last       int64 // last offset of the batches seen

	problems int
	layout   index.Layout
	err      error
}

func newTimeCheck(c *collector, path string, r io.ReaderAt, size, base int64) *timeCheck {
	t := &timeCheck{c: c, path: path, src: r, r: index.NewTimeReader(r, size, base, path), n: -1, runMax: -1, last: base - 1}
	t.advance()
	return t
}

func (t *timeCheck) advance() {
	if t.ok = t.r.Next(); t.ok {
		t.cur, t.n = t.r.Entry(), t.n+1
		return
	}
	for _, p := range t.r.Problems() {
		t.problem("format", p.Entry, p.Msg, "", rawEntry(t.src, p.Pos, index.TimeEntrySize, func(b []byte) string {
			return fmt.Sprintf("timestamp %d at relative offset %d", int64(binary.BigEndian.Uint64(b)), int32(binary.BigEndian.Uint32(b[8:])))
		}))
	}
	t.layout, t.err = t.r.Layout(), t.r.Err()
}

func (t *timeCheck) problem(group string, entry int, msg, expected, found string) {
	t.problems++
	t.c.problem(group, t.path, int64(entry)*index.TimeEntrySize, entry, msg, expected, found)
}

func (t *timeCheck) batch(pos, last, maxTS int64) {
	for t.ok && t.cur.Offset <= last {
		m := max(t.runMax, maxTS)
		switch {
		case t.cur.Timestamp > m:
			t.problem("unsupported", t.n, fmt.Sprintf("no record up to offset %d has this timestamp or a later one", t.cur.Offset),
				fmt.Sprintf("a timestamp up to %d", m), fmt.Sprintf("timestamp %d", t.cur.Timestamp))
		case t.runMax > t.cur.Timestamp:
			t.problem("late", t.n, fmt.Sprintf("the batch at byte %d (last offset %d) already reaches timestamp %d, so lookups of timestamps from %d to %d would start past it",
				t.runMaxPos, t.runMaxLast, t.runMax, t.cur.Timestamp, t.runMax),
				fmt.Sprintf("offset at most %d", t.runMaxLast), fmt.Sprintf("offset %d", t.cur.Offset))
		}
		t.advance()
	}
	if maxTS > t.runMax {
		t.runMax, t.runMaxPos, t.runMaxLast = maxTS, pos, last
	}
	t.last = last
}

func (t *timeCheck) finish() {
	for t.ok {
		t.problem("past", t.n, "offset is past the last offset of the valid batches",
			fmt.Sprintf("offset at most %d", t.last), fmt.Sprintf("offset %d", t.cur.Offset))
		t.advance()
	}
}

// diffs groups the byte differences between a file and its rebuild.
type diffs struct {
	groups []*diffGroup
}

type diffGroup struct {
	why             string
	count           int
	entry           int
	expected, found string
}

func (d *diffs) add(why string, entry int, expected, found string) {
	for _, g := range d.groups {
		if g.why == why {
			g.count++
			return
		}
	}
	d.groups = append(d.groups, &diffGroup{why: why, count: 1, entry: entry, expected: expected, found: found})
}

// report turns the groups into one finding each, about the first entry of
// the group.
func (d *diffs) report(c *collector, path string, esize int, sev Severity) {
	for _, g := range d.groups {
		msg := g.why
		if g.count > 1 {
			msg = fmt.Sprintf("%s (%d entries like this one)", g.why, g.count)
		}
		c.add("diff:"+g.why, Finding{Severity: sev, File: path, Pos: int64(g.entry * esize), Entry: g.entry, Msg: msg, Expected: g.expected, Found: g.found})
	}
}

func offsetText(e index.OffsetEntry) string {
	return fmt.Sprintf("offset %d at byte %d", e.Offset, e.Position)
}

func timeText(e index.TimeEntry) string {
	return fmt.Sprintf("timestamp %d at offset %d", e.Timestamp, e.Offset)
}

const none = "none"

// diffOffsets compares the valid entries of an .index, read again from r,
// with the rebuild.
func diffOffsets(r io.ReaderAt, size, base int64, path string, want []index.OffsetEntry) (*diffs, error) {
	d := &diffs{}
	rd := index.NewOffsetReader(r, size, base, path)
	i, j := 0, 0
	for ok := rd.Next(); ok || j < len(want); {
		switch {
		case ok && j < len(want) && rd.Entry() == want[j]:
			ok, i, j = rd.Next(), i+1, j+1
		case ok && j < len(want) && rd.Entry().Offset == want[j].Offset:
			d.add("indexes the offset at another batch start than recovery does: a follower appends several batches at once and indexes where the append starts",
				i, offsetText(want[j]), offsetText(rd.Entry()))
			ok, i, j = rd.Next(), i+1, j+1
		case ok && (j == len(want) || rd.Entry().Offset < want[j].Offset):
			d.add("is an entry recovery does not write: a live broker counts index.interval.bytes from its last start and per append, so its entries fall elsewhere",
				i, none, offsetText(rd.Entry()))
			ok, i = rd.Next(), i+1
		default:
			d.add("is missing an entry recovery writes: lookups scan further from the entry before it",
				i, offsetText(want[j]), none)
			j++
		}
	}
	return d, rd.Err()
}

// diffTimes compares the valid entries of a .timeindex with the rebuild,
// matching entries by timestamp.
func diffTimes(r io.ReaderAt, size, base int64, path string, want []index.TimeEntry) (*diffs, error) {
	d := &diffs{}
	rd := index.NewTimeReader(r, size, base, path)
	i, j := 0, 0
	for ok := rd.Next(); ok || j < len(want); {
		switch {
		case ok && j < len(want) && rd.Entry() == want[j]:
			ok, i, j = rd.Next(), i+1, j+1
		case ok && j < len(want) && rd.Entry().Timestamp == want[j].Timestamp:
			why := "records the exact offset of the record with the largest timestamp, where recovery writes the last offset of its batch"
			if rd.Entry().Offset > want[j].Offset {
				why = "records the offset of a later batch with the same timestamp, as a broker does for an append of several batches"
			}
			d.add(why, i, timeText(want[j]), timeText(rd.Entry()))
			ok, i, j = rd.Next(), i+1, j+1
		case ok && (j == len(want) || rd.Entry().Timestamp < want[j].Timestamp):
			d.add("is an entry recovery does not write: a live broker writes one at index intervals counted from its last start, and one when it closes the segment",
				i, none, timeText(rd.Entry()))
			ok, i = rd.Next(), i+1
		default:
			d.add("is missing an entry recovery writes: timestamp lookups scan further from the entry before it",
				i, timeText(want[j]), none)
			j++
		}
	}
	return d, rd.Err()
}

// checkTxns compares a .txnindex, entry by entry, with the aborted
// transactions the replay found in the segment. A missing or wrong entry
// changes what read_committed consumers receive, so it is a problem; only
// the last stable offset, which bounds how far a broker searches the index,
// may differ legitimately (it depends on other producers' transactions as
// the broker saw them when the marker arrived), and so may an entry whose
// data the log cleaner removed while it kept the ABORT marker (cleaned maps
// such markers' offsets to their producers): Kafka's cleaner writes that
// entry into the cleaned segment's index, recovery would not.
func checkTxns(c *collector, r io.ReaderAt, size int64, path string, want []index.AbortedTxn, cleaned map[int64]int64, strict bool) (int, error) {
	rd := index.NewTxnReader(r, size, path)
	problems := 0
	problem := func(group string, entry int, msg, expected, found string) {
		problems++
		c.problem(group, path, int64(entry)*index.TxnEntrySize, entry, msg, expected, found)
	}
	next := func() bool {
		ok := rd.Next()
		for _, p := range rd.Problems() {
			problem("format", p.Entry, p.Msg, "", "")
		}
		return ok
	}
	d := &diffs{}
	i, j := 0, 0 // file entries and rebuilt ones consumed
	for ok := next(); ok || j < len(want); {
		switch {
		case ok && j < len(want) && rd.Txn().LastOffset == want[j].LastOffset:
			got, w := rd.Txn(), want[j]
			switch {
			case got.ProducerID != w.ProducerID || got.FirstOffset != w.FirstOffset:
				problem("wrong", i, "the transaction aborted at this offset is another one", txnText(w), txnText(got))
			case got.LastStableOffset != w.LastStableOffset:
				d.add("has another last stable offset than the replay of the log gives: it depends on the transactions of other producers as the broker saw them",
					i, fmt.Sprintf("last stable offset %d", w.LastStableOffset), fmt.Sprintf("last stable offset %d", got.LastStableOffset))
			}
			ok, i, j = next(), i+1, j+1
		case ok && (j == len(want) || rd.Txn().LastOffset < want[j].LastOffset) && cleanedAway(cleaned, rd.Txn()):
			d.add("lists a transaction whose aborted data the log cleaner removed; the cleaner keeps the entry while the marker stays, recovery would not write it",
				i, none, txnText(rd.Txn()))
			ok, i = next(), i+1
		case ok && (j == len(want) || rd.Txn().LastOffset < want[j].LastOffset):
			problem("extra", i, "no transaction is aborted at this offset in the log, so read_committed consumers would drop committed records",
				none, txnText(rd.Txn()))
			ok, i = next(), i+1
		default:
			problem("missing", i, "an aborted transaction is not indexed, so read_committed consumers would receive its records",
				txnText(want[j]), none)
			j++
		}
	}
	sev := Difference
	if strict {
		sev = Problem
	}
	d.report(c, path, index.TxnEntrySize, sev)
	return problems, rd.Err()
}

// cleanedAway reports whether t's marker is one the cleaner kept after
// removing the transaction's data.
func cleanedAway(cleaned map[int64]int64, t index.AbortedTxn) bool {
	pid, ok := cleaned[t.LastOffset]
	return ok && pid == t.ProducerID
}

func txnText(t index.AbortedTxn) string {
	return fmt.Sprintf("producer %d, offsets %d to %d, last stable offset %d", t.ProducerID, t.FirstOffset, t.LastOffset, t.LastStableOffset)
}
