package reindex

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/logtool/logtool/index"
	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/internal/segswap"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/layout"
	"github.com/logtool/logtool/logfmt/logseg"
	"github.com/logtool/logtool/logfmt/snapshot"
)

// Mode is what a run does with the indexes it rebuilds.
type Mode int

const (
	Write  Mode = iota // replace the index files that differ from the rebuild
	DryRun             // report what Write would change; write nothing
	Check              // judge the existing index files against the log; write nothing
)

// Options configure a run over one partition.
type Options struct {
	Mode Mode
	// Offset, Time and Txn select the index files to rebuild or check. The
	// log is read in full whatever the selection.
	Offset, Time, Txn bool
	// IntervalBytes is index.interval.bytes, at least 0; Kafka's default is
	// index.DefaultIntervalBytes.
	IntervalBytes int64
	// Granularity, when positive, builds the coarse time index (see
	// GranularTime) instead of recovery's. It must be a whole number of
	// milliseconds.
	Granularity time.Duration
	// Strict makes Check count every byte difference from the rebuild as a
	// problem.
	Strict bool
	// TruncateCorruptTail makes Write cut the .log after its last valid
	// batch, as recovery does, keeping the bytes removed in a backup file
	// (see BackupName). Without it the .log is never modified.
	TruncateCorruptTail bool
	// MaxRecordBytes bounds one record read from a compressed batch
	// (logfmt.RecordIter); 0 means the default.
	MaxRecordBytes int
	// Segments restricts the run to the segments with these base offsets;
	// nil means all. Earlier segments are still read when the transaction
	// index needs their producer state.
	Segments []int64
	// Progress, when set, is called with the number of .log bytes read
	// since its last call. It is called from the goroutine running
	// Partition.
	Progress func(n int64)
}

// ErrBackupExists is returned by Partition when TruncateCorruptTail would
// overwrite a backup file holding other bytes than those it would remove.
var ErrBackupExists = errors.New("backup file already exists with other content")

// BackupName is the file TruncateCorruptTail writes the removed bytes of
// the .log at logPath to, when they start at byte pos:
// "00000000000000000000.log.truncated-4096". The name ends in none of the
// extensions Kafka's log loader acts on, so a broker leaves it alone, and
// restoring is `cat name.log name.log.truncated-N > restored.log`.
func BackupName(logPath string, pos int64) string {
	return fmt.Sprintf("%s.truncated-%d", logPath, pos)
}

// Partition rebuilds, or checks, the indexes of the partition directory dir
// (see the package documentation for the rules). Findings that concern the
// data, such as a corrupt tail, are reported, not returned: the error is for
// failures that stop the run (I/O, an unreadable directory, a refused
// backup). Callers writing to a log directory hold its lock.
func Partition(dir string, o Options) (*PartitionReport, error) {
	if o.Granularity < 0 || o.Granularity%time.Millisecond != 0 {
		return nil, fmt.Errorf("granularity %v is not a positive whole number of milliseconds", o.Granularity)
	}
	if o.IntervalBytes < 0 {
		return nil, fmt.Errorf("index interval %d is negative", o.IntervalBytes)
	}
	rep := &PartitionReport{Dir: dir}
	c := newCollector(rep)
	defer c.flush()
	if o.Mode == Write {
		removed, err := safefile.RemoveTemps(dir, layout.OwnTemp)
		for _, f := range removed {
			c.note(f, "removed: a temporary file an interrupted run of logtool left")
		}
		if err != nil {
			return rep, err
		}
		actions, err := segswap.Recover(dir)
		for _, a := range actions {
			c.note(dir, "completed an interrupted segment replacement as a broker would at load: "+a)
		}
		if err != nil {
			return rep, err
		}
	}
	p, err := layout.ReadPartition(dir)
	if err != nil {
		return rep, err
	}
	for _, l := range p.Leftovers {
		c.note(l, "leftover of an interrupted cleaning, split or deletion; a broker completes or removes it at load, as reindex does before it writes")
	}
	logStart, err := logseg.LogStartOffset(p)
	if err != nil {
		c.note(dir, fmt.Sprintf("log start offset unknown (%v); taking 0, as a broker does without a checkpoint entry", err))
	}
	r := &run{o: o, c: c, p: p, logStart: logStart, it: &logfmt.RecordIter{MaxRecordBytes: o.MaxRecordBytes}}
	want := map[int64]bool{}
	for _, b := range o.Segments {
		want[b] = true
	}
	for i, s := range p.Segments {
		if s.Log == "" {
			for _, f := range []string{s.Index, s.TimeIndex, s.TxnIndex} {
				if f != "" {
					c.note(f, "index file without a .log; a broker deletes it when it loads the partition")
				}
			}
			continue
		}
		if o.Segments != nil && !want[s.Base] {
			continue
		}
		sr, err := r.segment(i)
		if sr != nil {
			rep.Segments = append(rep.Segments, *sr)
		}
		if err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// run is the state of one Partition call.
type run struct {
	o        Options
	c        *collector
	p        *layout.Partition
	logStart int64
	it       *logfmt.RecordIter

	// The producer state, valid for the segment based at next, built from
	// the snapshot at origin (or from the log start when origin is the log
	// start and no snapshot was used).
	state  *ProducerState
	origin int64
	next   int64
}

// segment processes the i-th segment of the partition.
func (r *run) segment(i int) (*SegmentReport, error) {
	s := r.p.Segments[i]
	if r.o.Txn {
		if err := r.stateFor(i); err != nil {
			return nil, err
		}
	}
	sc, err := logfmt.OpenSegment(s.Log, logfmt.ReadAheadWindows)
	if err != nil {
		return nil, err
	}
	sr := &SegmentReport{Base: s.Base, Log: s.Log, Size: sc.Size()}
	res, err := r.scan(sc, s, sr)
	sc.Close()
	if err != nil {
		return sr, err
	}
	defer res.close()
	if r.o.Txn {
		r.next = math.MaxInt64
		if i+1 < len(r.p.Segments) {
			r.next = r.p.Segments[i+1].Base
		}
	}
	r.reportEnd(sr, i)
	if r.o.Mode == Check {
		return sr, r.check(s, sr, res)
	}
	if err := r.truncate(sr); err != nil {
		return sr, err
	}
	return sr, r.write(s, sr, res)
}

// rebuilt is what a scan of a segment produced.
type rebuilt struct {
	rec     *index.Recovery
	gran    *GranularTime
	aborted []index.AbortedTxn
	// cleaned holds the ABORT markers that close no transaction with data
	// (marker offset → producer id): what Kafka's cleaner leaves after
	// removing an aborted transaction's batches. It keeps the marker, and
	// the .txnindex entry, until a later pass; recovery would write none.
	cleaned map[int64]int64
	offsets *offsetCheck
	times   *timeCheck
	files   []*os.File
}

func (b *rebuilt) timeEntries() []index.TimeEntry {
	if b.gran != nil {
		return b.gran.Times
	}
	return b.rec.Times
}

func (b *rebuilt) close() {
	for _, f := range b.files {
		f.Close()
	}
}

// presize bounds the entries preallocated for a segment, so that a tiny
// interval on a huge segment grows its slices instead.
const presize = 1 << 20

// scan replays the segment as LogSegment.recover does, feeding the
// rebuilders and, in Check mode, the checks of the existing files.
func (r *run) scan(sc *logfmt.SegmentFile, s layout.Segment, sr *SegmentReport) (*rebuilt, error) {
	o := &r.o
	res := &rebuilt{rec: index.NewRecovery(s.Base, o.IntervalBytes)}
	// An entry needs more than IntervalBytes of log and a batch is at least
	// 26 bytes (a magic 0 message): enough room, bounded by presize.
	est := min(sc.Size()/max(o.IntervalBytes+1, logfmt.MinEntrySize)+2, presize)
	res.rec.Offsets = make([]index.OffsetEntry, 0, est)
	res.rec.Times = make([]index.TimeEntry, 0, est)
	if o.Time && o.Granularity > 0 {
		res.gran = NewGranularTime(s.Base, o.Granularity.Milliseconds())
	}
	if o.Mode == Check {
		if err := r.openChecks(s, res); err != nil {
			res.close()
			return nil, err
		}
	}
	prevLast := s.Base - 1
	var reported int64
	granErr := false
	for sc.Next() {
		b := sc.Batch()
		if err := b.Validate(); err != nil {
			sr.Stop = logfmt.WithFile(err, s.Log, 0)
			break
		}
		last := b.LastOffset()
		if d := last - s.Base; d < 0 || d > math.MaxInt32 {
			sr.Stop = logfmt.Corruptf(s.Log, b.Pos, "offset %d does not fit a segment based at %d (Kafka splits such a segment)", last, s.Base)
			sr.Overflow = true
			break
		}
		maxTS := b.MaxTimestamp()
		res.rec.Add(last, maxTS, b.Size())
		sr.Batches++
		if res.gran != nil {
			first := prevLast + 1
			if b.Magic() >= 2 {
				first = b.Header().BaseOffset()
			}
			if err := res.gran.addBatch(b, first, r.it); err != nil && !granErr {
				granErr = true
				r.c.note(s.Log, fmt.Sprintf("records of the batch at byte %d cannot be read (%s); the coarse time index places its bucket at the batch's first offset", b.Pos, message(err)))
			}
		}
		// Batches below the log start are not part of the producer state,
		// as in Kafka's rebuild; only a segment Kafka would have deleted
		// holds any.
		if o.Txn && last >= r.origin {
			t, ok, err := r.state.Apply(b, r.it)
			if err != nil {
				r.c.problem("txn", s.Log, b.Pos, -1, "transaction state: "+message(err), "", "")
			}
			if ok {
				res.aborted = append(res.aborted, t)
			} else if err == nil && b.IsControl() {
				if m, ok, _ := readMarker(b, r.it); ok && m.t == logfmt.ControlAbort {
					if res.cleaned == nil {
						res.cleaned = map[int64]int64{}
					}
					res.cleaned[b.Header().BaseOffset()] = b.Header().ProducerID()
				}
			}
		}
		if res.offsets != nil {
			res.offsets.batch(b.Pos, last)
		}
		if res.times != nil {
			res.times.batch(b.Pos, last, maxTS)
		}
		prevLast = last
		if o.Progress != nil && sc.Pos()-reported >= 1<<20 {
			o.Progress(sc.Pos() - reported)
			reported = sc.Pos()
		}
	}
	if err := sc.Err(); err != nil {
		if _, ok := logfmt.AsCorrupt(err); !ok {
			res.close()
			return nil, err
		}
		sr.Stop = err
	}
	if sr.Stop == nil {
		sr.End, sr.EndDetail = sc.End(), sc.EndDetail()
	}
	sr.ValidBytes = res.rec.ValidBytes()
	res.rec.Finish()
	if res.gran != nil {
		res.gran.Finish()
	}
	if o.Progress != nil {
		o.Progress(sc.Size() - reported)
	}
	if res.offsets != nil {
		res.offsets.finish(sr.ValidBytes, sr.Size)
	}
	if res.times != nil {
		res.times.finish()
	}
	return res, nil
}

// reportEnd says how the segment's data ended when that is not cleanly.
func (r *run) reportEnd(sr *SegmentReport, i int) {
	sev := Note
	if r.o.Mode == Check {
		sev = Problem
	}
	later := len(r.p.Segments) - 1 - i
	var msg string
	switch {
	case sr.Overflow:
		msg = fmt.Sprintf("%s; the indexes cover the batches before it (%d)", message(sr.Stop), sr.Batches)
		r.c.add("end", Finding{Severity: sev, File: sr.Log, Pos: sr.ValidBytes, Entry: -1, Msg: msg})
		return
	case sr.Stop != nil:
		msg = "the valid batches end here: " + message(sr.Stop)
	case sr.End == logfmt.EndTorn:
		msg = "the valid batches end here: " + sr.EndDetail
	case sr.End == logfmt.EndZeroTail:
		what := "the preallocated tail of an active segment, which recovery truncates"
		if later > 0 {
			// Only the active segment is preallocated; zeros in an older one
			// are what a crash left, and recovery would drop what follows too.
			what = fmt.Sprintf("zeros a crash left in a segment that is not the active one; recovery would truncate them and delete the later segments (%d)", later)
		}
		r.c.add("end", Finding{Severity: Note, File: sr.Log, Pos: sr.ValidBytes, Entry: -1, Msg: sr.EndDetail + ": " + what})
		return
	default:
		return
	}
	msg += fmt.Sprintf("; recovery would truncate the %d bytes after it", sr.Tail())
	if later > 0 {
		msg += fmt.Sprintf(" and delete the later segments (%d)", later)
	}
	if r.o.Mode != Check && !r.o.TruncateCorruptTail {
		msg += "; the indexes cover the valid batches and the .log is left as it is (--truncate-corrupt-tail cuts it, keeping a backup)"
	}
	r.c.add("end", Finding{Severity: sev, File: sr.Log, Pos: sr.ValidBytes, Entry: -1, Msg: msg})
}

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
			// LogSegment.sanityCheck: a missing offset index makes the
			// loader recover the segment, which rebuilds both.
			msg := "absent; a broker creates it empty, and then takes the .log's modification time for the segment's largest timestamp"
			if s.Index == "" {
				msg = "absent, as is the offset index; a broker rebuilds both when it loads the segment"
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

// indexPath is the segment's path without ".log".
func indexPath(log string) string {
	return log[:len(log)-len(layout.LogExt)]
}

// write replaces, or in DryRun reports, every selected index file whose
// content differs from the rebuild.
func (r *run) write(s layout.Segment, sr *SegmentReport, res *rebuilt) error {
	base := indexPath(s.Log)
	if r.o.Offset {
		b, err := res.rec.OffsetIndexBytes()
		if err != nil {
			return err
		}
		if err := r.put(sr, OffsetIndex, base+layout.IndexExt, b, len(res.rec.Offsets), true); err != nil {
			return err
		}
	}
	if r.o.Time {
		want := res.timeEntries()
		b := make([]byte, 0, len(want)*index.TimeEntrySize)
		for _, e := range want {
			var err error
			if b, err = index.AppendTimeEntry(b, s.Base, e); err != nil {
				return err
			}
		}
		if err := r.put(sr, TimeIndex, base+layout.TimeIndexExt, b, len(want), true); err != nil {
			return err
		}
	}
	if r.o.Txn {
		b := make([]byte, 0, len(res.aborted)*index.TxnEntrySize)
		for _, t := range res.aborted {
			b = index.AppendAbortedTxn(b, t)
		}
		// Kafka creates a .txnindex on its first entry only, and recovery
		// empties an existing one rather than deleting it.
		if err := r.put(sr, TxnIndex, base+layout.TxnIndexExt, b, len(res.aborted), len(b) > 0); err != nil {
			return err
		}
	}
	return nil
}

// put writes data to path unless the file already holds it. create says
// whether an absent file is written.
func (r *run) put(sr *SegmentReport, k Kind, path string, data []byte, entries int, create bool) error {
	fr := FileReport{Kind: k, Path: path, Entries: entries, Before: entries, Action: Unchanged}
	defer func() { sr.Files = append(sr.Files, fr) }()
	same, size, err := sameContent(path, data)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		fr.Before = -1
		if !create {
			fr.Action = NotNeeded
			return nil
		}
	case err != nil:
		return err
	case same:
		return nil
	default:
		fr.Before = int(size / int64(k.entrySize()))
	}
	if r.o.Mode == DryRun {
		fr.Action = WouldWrite
		return nil
	}
	if err := safefile.WriteFile(path, data, 0o644); err != nil {
		return err
	}
	fr.Action = Written
	return nil
}

// sameContent reports whether the file at path holds exactly want, reading
// it in pieces, and its size.
func sameContent(path string, want []byte) (bool, int64, error) {
	f, err := safefile.Open(path)
	if err != nil {
		return false, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return false, 0, err
	}
	if st.Size() != int64(len(want)) {
		return false, st.Size(), nil
	}
	buf := make([]byte, min(len(want), 64<<10))
	for off := 0; off < len(want); {
		n, err := io.ReadFull(f, buf[:min(len(buf), len(want)-off)])
		if err != nil {
			return false, st.Size(), err
		}
		if !bytes.Equal(buf[:n], want[off:off+n]) {
			return false, st.Size(), nil
		}
		off += n
	}
	return true, st.Size(), nil
}

// truncate cuts the .log after its valid batches when asked to, keeping the
// bytes removed in a backup file. The backup is complete and durable before
// the .log is touched, so a crash leaves either the old .log or the cut one
// with its backup; running again with the backup in place is harmless.
func (r *run) truncate(sr *SegmentReport) error {
	if !r.o.TruncateCorruptTail || sr.Overflow || sr.Tail() <= 0 {
		return nil
	}
	// The cut is made in place: never through a link, to a file that may
	// not even be in the log directory.
	if err := safefile.NoSymlinks(sr.Log); err != nil {
		return err
	}
	zeros, err := zeroTail(sr.Log, sr.ValidBytes, sr.Size)
	if err != nil {
		return err
	}
	if zeros {
		// A backup would be a file of zeros as long as the tail, which may
		// be gigabytes of a sparse file: its length says it all.
		if r.o.Mode == DryRun {
			r.c.note(sr.Log, fmt.Sprintf("would cut the %d bytes from byte %d; all zeros, so no backup is needed", sr.Tail(), sr.ValidBytes))
			return nil
		}
		if err := safefile.Truncate(sr.Log, sr.ValidBytes); err != nil {
			return err
		}
		sr.ZerosCut = sr.Tail()
		r.c.note(sr.Log, fmt.Sprintf("cut the %d bytes from byte %d; all zeros, so no backup was kept", sr.Tail(), sr.ValidBytes))
		return nil
	}
	backup := BackupName(sr.Log, sr.ValidBytes)
	same, err := sameTail(backup, sr.Log, sr.ValidBytes, sr.Size)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return err
	case !same:
		return fmt.Errorf("%s: %w; move it away to truncate %s", backup, ErrBackupExists, sr.Log)
	}
	if r.o.Mode == DryRun {
		r.c.note(sr.Log, fmt.Sprintf("would cut the %d bytes from byte %d, keeping them in %s", sr.Tail(), sr.ValidBytes, backup))
		return nil
	}
	if !same {
		if err := copyTail(backup, sr.Log, sr.ValidBytes, sr.Size); err != nil {
			return err
		}
	}
	if err := safefile.Truncate(sr.Log, sr.ValidBytes); err != nil {
		return err
	}
	sr.Backup = backup
	r.c.note(sr.Log, fmt.Sprintf("cut the %d bytes from byte %d; they are kept in %s", sr.Tail(), sr.ValidBytes, backup))
	return nil
}

// sameTail reports whether backup holds exactly bytes [from, to) of log.
func sameTail(backup, log string, from, to int64) (bool, error) {
	b, err := safefile.Open(backup)
	if err != nil {
		return false, err
	}
	defer b.Close()
	st, err := b.Stat()
	if err != nil {
		return false, err
	}
	if st.Size() != to-from {
		return false, nil
	}
	l, err := safefile.Open(log)
	if err != nil {
		return false, err
	}
	defer l.Close()
	x, y := make([]byte, 64<<10), make([]byte, 64<<10)
	for off := from; off < to; {
		n := int(min(int64(len(x)), to-off))
		if _, err := l.ReadAt(x[:n], off); err != nil {
			return false, err
		}
		if _, err := b.ReadAt(y[:n], off-from); err != nil {
			return false, err
		}
		if !bytes.Equal(x[:n], y[:n]) {
			return false, nil
		}
		off += int64(n)
	}
	return true, nil
}

// copyTail writes bytes [from, to) of log to backup through safefile.
func copyTail(backup, log string, from, to int64) error {
	l, err := safefile.Open(log)
	if err != nil {
		return err
	}
	defer l.Close()
	w, err := safefile.Create(backup, 0o644)
	if err != nil {
		return err
	}
	defer w.Abort()
	if _, err := io.Copy(w, io.NewSectionReader(l, from, to-from)); err != nil {
		return err
	}
	return w.Commit()
}

// stateFor makes r.state the producer state at the base of the i-th
// segment, as LogLoader.recoverSegment rebuilds it: the latest readable
// snapshot above the log start and at or below the base, then every v2
// batch with a producer id from the snapshot's offset (or the log start)
// up to the base. A state carried over from the previous segment is reused
// when it came from the same snapshot.
func (r *run) stateFor(i int) error {
	base := r.p.Segments[i].Base
	origin, entries := r.logStart, []snapshot.Entry(nil)
	for j := len(r.p.Snapshots) - 1; j >= 0; j-- {
		path := r.p.Snapshots[j]
		off, ok := snapshot.OffsetFromName(filepath.Base(path))
		if !ok || off > base || off <= r.logStart {
			continue
		}
		b, err := safefile.ReadFile(path)
		if err != nil {
			return err
		}
		e, err := snapshot.Parse(b, path)
		if err != nil {
			r.c.note(path, fmt.Sprintf("unreadable producer snapshot, skipped as Kafka skips it: %v", err))
			continue
		}
		origin, entries = off, e
		break
	}
	if r.state != nil && r.origin == origin && r.next == base {
		return nil
	}
	if r.state == nil {
		r.state = NewProducerState()
	}
	r.state.Load(entries)
	r.origin, r.next = origin, base
	for j := 0; j < i; j++ {
		s := r.p.Segments[j]
		end := base
		if j+1 < len(r.p.Segments) {
			end = r.p.Segments[j+1].Base
		}
		if s.Log == "" || end <= origin {
			continue
		}
		if err := r.replay(s.Log, origin); err != nil {
			return err
		}
	}
	return nil
}

// replay applies the batches of a segment whose last offset is at least
// from to the producer state. Like Kafka's rebuild it reads batches without
// checking their checksums, and stops where they stop framing.
func (r *run) replay(path string, from int64) error {
	sc, err := logfmt.OpenSegment(path, logfmt.ReadAheadWindows)
	if err != nil {
		return err
	}
	defer sc.Close()
	for sc.Next() {
		b := sc.Batch()
		if b.Magic() < 2 || b.LastOffset() < from {
			continue
		}
		if _, _, err := r.state.Apply(b, r.it); err != nil {
			r.c.note(path, fmt.Sprintf("producer state replay, at byte %d: %s", b.Pos, message(err)))
		}
	}
	if err := sc.Err(); err != nil {
		if _, ok := logfmt.AsCorrupt(err); !ok {
			return err
		}
		r.c.note(path, fmt.Sprintf("producer state replay stops at the corruption: %v", err))
	}
	return nil
}

// message is what an error says without the file and position a Finding
// carries anyway.
func message(err error) string {
	if ce, ok := logfmt.AsCorrupt(err); ok {
		if ce.Err != nil {
			return ce.Msg + ": " + ce.Err.Error()
		}
		return ce.Msg
	}
	return err.Error()
}
