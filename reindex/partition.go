package reindex

import (
	"fmt"
	"math"
	"os"
	"time"

	"github.com/logtool/logtool/index"
	"github.com/logtool/logtool/internal/hugemem"
	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/internal/segswap"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/layout"
	"github.com/logtool/logtool/logfmt/logseg"
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
	// Workers is how many goroutines read one segment (see
	// logfmt.HeaderReader); below 2, one.
	Workers int
	// ListAll lists every finding; without it, a few of a kind about one
	// file are listed and the rest counted (Finding.Left).
	ListAll bool
	// Job is the command's job the readers hold large entries against.
	Job *logfmt.Job
}

// Partition rebuilds, or checks, the indexes of the partition directory dir
// (see the package documentation for the rules). Findings that concern the
// data, such as a corrupt tail, are reported, not returned: the error is for
// failures that stop the run (I/O, an unreadable directory, a refused
// backup). Callers writing to a log directory hold its lock. A write, or a
// dry run, that leaves a damaged .log damaged says so with a problem.
func Partition(dir string, o Options) (*PartitionReport, error) {
	rep, err := partition(dir, o)
	if rep != nil && o.Mode != Check {
		rep.damageIsProblem(o.TruncateCorruptTail)
	}
	return rep, err
}

func partition(dir string, o Options) (*PartitionReport, error) {
	if o.Granularity < 0 || o.Granularity%time.Millisecond != 0 {
		return nil, fmt.Errorf("granularity %v is not a positive whole number of milliseconds", o.Granularity)
	}
	if o.IntervalBytes < 0 {
		return nil, fmt.Errorf("index interval %d is negative", o.IntervalBytes)
	}
	rep := &PartitionReport{Dir: dir}
	c := newCollector(rep, o.ListAll)
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
	// A link is never followed: a check says what it did not check, and a
	// rebuild refuses the partition, whose indexes a broker would take
	// from where the links point.
	if o.Mode != Check {
		if err := p.NoSymlinks(); err != nil {
			return rep, err
		}
	}
	for _, l := range p.Symlinks {
		if o.Mode == Check {
			c.problem("symlink", l, -1, -1, "a symbolic link, never followed inside a log directory: what it points at is not checked", "", "")
		} else {
			c.note(l, layout.SymlinkNote)
		}
	}
	for _, l := range p.Leftovers {
		c.note(l, "leftover of an interrupted cleaning, split or deletion; a broker completes or removes it at load, as reindex does before it writes")
	}
	logStart, err := logseg.LogStartOffset(p)
	if err != nil {
		c.note(dir, fmt.Sprintf("log start offset unknown (%v); taking 0, as a broker does without a checkpoint entry", err))
	}
	r := &run{o: o, c: c, p: p, logStart: logStart, it: &logfmt.RecordIter{MaxRecordBytes: o.MaxRecordBytes}}
	defer func() {
		for _, free := range r.frees {
			free()
		}
	}()
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
	state  *logseg.ProducerState
	origin int64
	next   int64

	// The entries of the segment before, for the next to fill: memory the
	// kernel has faulted in already (a tenth of a check's CPU on a VM
	// where faults are dear). frees frees what entries allocated.
	offsets []index.OffsetEntry
	times   []index.TimeEntry
	frees   []func()
}

// entries returns s emptied, or room for n entries when s has less: memory
// of its own, in huge pages where Linux has them (a 1 GiB segment's entries
// took 2,000 faults of 4 KiB pages), freed when larger tables are needed or
// the run ends.
func entries[T any](r *run, s []T, n int64) []T {
	if int64(cap(s)) >= n {
		return s[:0]
	}
	b, free := hugemem.Slice[T](int(n))
	r.frees = append(r.frees, free)
	return b[:0]
}

// segment processes the i-th segment of the partition: one scan rebuilds
// its indexes in memory, then Check judges the files by them (check.go), or
// Write and DryRun cut a corrupt tail when asked to (truncate.go) and
// replace the files that differ (rebuild.go).
func (r *run) segment(i int) (*SegmentReport, error) {
	s := r.p.Segments[i]
	if r.o.Txn {
		if err := r.stateFor(i); err != nil {
			return nil, err
		}
	}
	sc, err := r.open(s)
	if err != nil {
		return nil, err
	}
	sr := &SegmentReport{Base: s.Base, Log: s.Log, Size: sc.Size(), NextOffset: s.Base}
	res, err := r.scan(sc, s, sr)
	sc.Close()
	if err != nil {
		return sr, err
	}
	defer func() {
		res.close()
		r.offsets, r.times = res.rec.Offsets[:0], res.rec.Times[:0]
	}()
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
	if err := r.truncate(sr, i == len(r.p.Segments)-1); err != nil {
		return sr, err
	}
	return sr, r.write(s, sr, res)
}

// batches is what scan reads a segment with.
type batches interface {
	Next() bool
	Batch() *logfmt.Batch
	Pos() int64
	Size() int64
	Err() error
	End() logfmt.End
	EndDetail() string
	Close() error
}

// headers is a HeaderReader over an open file.
type headers struct {
	*logfmt.HeaderReader
	f *os.File
}

func (h headers) Close() error {
	h.HeaderReader.Close()
	return h.f.Close()
}

// open opens the .log of s for scan. Recovery needs only what the headers
// say, and the records of transaction markers, so the segment is read in
// ranges on the workers, cut where the .index says batches start, unless
// the coarse time index wants every record.
func (r *run) open(s layout.Segment) (batches, error) {
	if r.o.Time && r.o.Granularity > 0 {
		f, err := logfmt.OpenSegment(s.Log, logfmt.ReadAheadWindows)
		if err != nil {
			return nil, err
		}
		f.Job = r.o.Job
		return f, nil
	}
	f, size, err := safefile.OpenSized(s.Log)
	if err != nil {
		return nil, err
	}
	h := logfmt.NewHeaderReader(f, size, s.Log, 0, logseg.IndexPositions(s), r.o.Workers)
	h.Keep, h.Job = (*logfmt.Batch).IsControl, r.o.Job
	return headers{h, f}, nil
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
func (r *run) scan(sc batches, s layout.Segment, sr *SegmentReport) (*rebuilt, error) {
	o := &r.o
	res := &rebuilt{rec: index.NewRecovery(s.Base, o.IntervalBytes)}
	// An entry needs more than IntervalBytes of log and a batch is at least
	// 26 bytes (a magic 0 message): enough room, bounded by presize.
	est := min(sc.Size()/max(o.IntervalBytes+1, logfmt.MinEntrySize)+2, presize)
	if int64(cap(r.offsets)) < est || int64(cap(r.times)) < est {
		// Larger tables are needed: those before are of no more use, and
		// kept, a partition of growing segments would hold them all.
		r.offsets, r.times = nil, nil
		for _, free := range r.frees {
			free()
		}
		r.frees = r.frees[:0]
	}
	res.rec.Offsets, res.rec.Times = entries(r, r.offsets, est), entries(r, r.times, est)
	r.offsets, r.times = nil, nil
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
		sr.NextOffset = last + 1
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
				if m, ok, _ := logseg.ReadTxnMarker(b, r.it); ok && m.Type == logfmt.ControlAbort {
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

// stateFor makes r.state the producer state at the base of the i-th
// segment, as LogLoader.recoverSegment rebuilds it: the latest readable
// snapshot above the log start and at or below the base, then every v2
// batch with a producer id from the snapshot's offset (or the log start)
// up to the base. A state carried over from the previous segment is reused
// when it came from the same snapshot.
func (r *run) stateFor(i int) error {
	base := r.p.Segments[i].Base
	snap, err := logseg.LatestSnapshot(r.p.Snapshots, r.logStart, base)
	if err != nil {
		return err
	}
	for _, err := range snap.Skipped {
		r.c.note(err.File, fmt.Sprintf("unreadable producer snapshot, skipped as Kafka skips it: %v", err))
	}
	origin := snap.Offset
	if r.state != nil && r.origin == origin && r.next == base {
		return nil
	}
	if r.state == nil {
		r.state = logseg.NewProducerState()
	}
	r.state.Load(snap.Entries)
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
	sc.Job, sc.HeaderViews = r.o.Job, (*logfmt.Batch).IsControl
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
