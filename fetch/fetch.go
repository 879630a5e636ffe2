// Package fetch reads the records of a partition directory the way a
// consumer fetching from a broker sees them: from the log start offset on,
// in offset order, with the transactions of the log resolved.
//
// Under read_committed (Kafka's isolation.level), control records are left
// out, so are the records of aborted transactions, and nothing at or after
// the last stable offset is returned: the first offset of the earliest
// transaction that has no COMMIT or ABORT marker in the log. A broker stops
// a read_committed fetch there (its LSO), so a consumer sees neither that
// transaction nor anything written after it, transactional or not, until
// the coordinator writes its marker. After a broker died, that marker may
// never come to this copy of the log; Reader.Stats says where reading
// stopped and why. Under read_uncommitted every record is returned and
// Record.Txn and Record.Control say what a read_committed consumer would
// make of it.
//
// Which transactions aborted and which are still open is learned first, by
// one pass over the batch headers of the whole partition (only control
// batches are decoded), with the producer-state rules of Kafka's recovery
// (index/reindex.ProducerState): a transaction begins at its producer's
// first transactional batch after a marker, and the producer's next marker
// ends it, whichever segment holds either. A marker's .txnindex entry is
// not needed: the markers themselves decide, so a missing or stale
// .txnindex changes nothing. That pass holds the aborted transactions
// (34 bytes each, as .txnindex does) and one entry per producer with an
// open transaction; the second pass streams the records.
//
// Ranges (FromOffset, ToOffset, FromTime, ToTime) are found as a broker
// finds them, through the indexes (index/lookup), and are contiguous ranges
// of offsets: a time bound becomes the offset ListOffsets answers for it.
package fetch

import (
	"errors"
	"fmt"
	"math"

	"github.com/logtool/logtool/index"
	"github.com/logtool/logtool/index/lookup"
	"github.com/logtool/logtool/index/reindex"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/layout"
)

// Isolation is a consumer's isolation.level.
type Isolation int

const (
	ReadCommitted Isolation = iota
	ReadUncommitted
)

func (i Isolation) String() string {
	if i == ReadUncommitted {
		return "read_uncommitted"
	}
	return "read_committed"
}

// ParseIsolation parses Kafka's names for the isolation levels.
func ParseIsolation(s string) (Isolation, error) {
	switch s {
	case "read_committed":
		return ReadCommitted, nil
	case "read_uncommitted":
		return ReadUncommitted, nil
	}
	return 0, fmt.Errorf("want read_committed or read_uncommitted, got %q", s)
}

// NoOffset and NoTime leave a bound of Options unset.
const (
	NoOffset int64 = -1
	NoTime   int64 = math.MinInt64
)

// Options select what a Reader returns.
type Options struct {
	Isolation Isolation
	// FromOffset and ToOffset bound the offsets returned, both included.
	FromOffset, ToOffset int64
	// FromTime starts at the first record whose timestamp is FromTime or
	// later (ListOffsets); ToTime ends before the first record whose
	// timestamp is later than ToTime. Both in ms since the epoch.
	FromTime, ToTime int64
	// Progress, when set, is called with the number of .log bytes the
	// second pass has read since its last call.
	Progress func(n int64)
}

// DefaultOptions reads everything read_committed.
func DefaultOptions() Options {
	return Options{FromOffset: NoOffset, ToOffset: NoOffset, FromTime: NoTime, ToTime: NoTime}
}

// TxnState is what became of a record's transaction.
type TxnState int8

const (
	NotTransactional TxnState = iota
	Committed
	Aborted
	Ongoing // no marker ends it in the log
)

func (s TxnState) String() string {
	switch s {
	case Committed:
		return "committed"
	case Aborted:
		return "aborted"
	case Ongoing:
		return "ongoing"
	}
	return "none"
}

// Record is a record with the fields of its batch that a consumer sees.
type Record struct {
	*logfmt.Record
	ProducerID    int64
	ProducerEpoch int16
	LeaderEpoch   int32
	Transactional bool
	Txn           TxnState
	// Control is set for control records (read_uncommitted only).
	Control          bool
	ControlType      logfmt.ControlType
	CoordinatorEpoch int32 // of a COMMIT or ABORT marker, else -1
}

// Stats describe a read.
type Stats struct {
	LogStartOffset int64
	LogEndOffset   int64 // the next offset after the last batch of the log
	// LastStableOffset is the first offset of the earliest ongoing
	// transaction, or -1 when every transaction has its marker.
	LastStableOffset int64
	// OngoingProducer is the producer of that transaction.
	OngoingProducer int64
	// StoppedAtLSO is true when read_committed reading ended at the last
	// stable offset rather than at the end of the log or the range.
	StoppedAtLSO bool

	Records        int64 // returned
	AbortedRecords int64 // left out as aborted (read_committed)
	ControlRecords int64 // left out (read_committed)
	Bytes          int64 // .log bytes read by the second pass
	// Notes tell of segments whose data ends before their file does (a
	// torn last batch, a zero-filled tail): reading went on with the next
	// segment, as the data holds nothing more.
	Notes []string
}

// Reader streams the records of one partition directory.
type Reader struct {
	o    Options
	p    *layout.Partition
	segs []layout.Segment

	aborted map[int64][]index.AbortedTxn // producer → its aborted transactions, by offset
	ongoing map[int64]int64              // producer → first offset of its open transaction
	from    int64                        // first offset to return
	end     int64                        // offsets at or above it are not returned
	stats   Stats

	si       int // segment being read
	startPos int64
	seg      *logfmt.SegmentFile
	reported int64
	batch    *logfmt.Batch
	bh       batchInfo
	it       logfmt.RecordIter
	inBatch  bool
	rec      Record
	done     bool
	err      error
}

// batchInfo is what the records of the current batch share.
type batchInfo struct {
	pid         int64
	epoch       int16
	leaderEpoch int32
	txnal       bool
	control     bool
	txn         TxnState
}

// Open prepares reading the partition: it resolves the transactions of the
// whole log and finds where the range starts.
func Open(p *layout.Partition, o Options) (*Reader, error) {
	r := &Reader{o: o, p: p, from: 0, end: math.MaxInt64}
	r.stats.LastStableOffset, r.stats.OngoingProducer = -1, -1
	for _, s := range p.Segments {
		if s.Log != "" {
			r.segs = append(r.segs, s)
		}
	}
	if len(r.segs) == 0 {
		r.done = true
		return r, nil
	}
	if err := r.resolveTxns(); err != nil {
		return nil, err
	}
	logStart, err := reindex.LogStartOffset(p)
	if err != nil {
		return nil, err
	}
	r.stats.LogStartOffset = max(logStart, r.segs[0].Base)
	if err := r.bounds(); err != nil {
		return nil, err
	}
	return r, nil
}

// resolveTxns is the first pass: the aborted transactions of the log, the
// ongoing ones at its end, and its end offset.
func (r *Reader) resolveTxns() error {
	ps := reindex.NewProducerState()
	r.aborted = map[int64][]index.AbortedTxn{}
	var it logfmt.RecordIter
	leo := r.segs[0].Base
	for _, s := range r.segs {
		leo = max(leo, s.Base)
		err := eachBatch(s.Log, func(b *logfmt.Batch) error {
			leo = max(leo, b.LastOffset()+1)
			if b.Magic() < 2 {
				return nil
			}
			h := b.Header()
			// Only transactional batches and markers change what a
			// consumer sees; idempotent ones are skipped unread.
			if h.ProducerID() < 0 || !h.IsTransactional() && !h.IsControl() && ps.Open() == 0 {
				return nil
			}
			it.File = s.Log
			t, ok, err := ps.Apply(b, &it)
			if err != nil {
				return logfmt.WithFile(err, s.Log, 0)
			}
			if ok {
				r.aborted[t.ProducerID] = append(r.aborted[t.ProducerID], t)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	r.stats.LogEndOffset = leo
	r.ongoing = ps.Ongoing()
	for pid, first := range r.ongoing {
		if r.stats.LastStableOffset < 0 || first < r.stats.LastStableOffset {
			r.stats.LastStableOffset, r.stats.OngoingProducer = first, pid
		}
	}
	return nil
}

// eachBatch calls fn with every batch of a segment, up to where its data
// ends; the pass reads headers only, so checksums are left to the second.
func eachBatch(path string, fn func(*logfmt.Batch) error) error {
	seg, err := logfmt.OpenSegment(path)
	if err != nil {
		return err
	}
	defer seg.Close()
	seg.MapWindows()
	var ferr error
	err = seg.CatchFault(func() {
		for seg.Next() {
			if ferr = fn(seg.Batch()); ferr != nil {
				return
			}
		}
	})
	return errors.Join(err, ferr, seg.Err())
}

// bounds turns the options into the first offset to return, the segment
// and byte to start at, and the offset to stop before.
func (r *Reader) bounds() error {
	o := r.o
	r.from = r.stats.LogStartOffset
	if o.FromOffset != NoOffset {
		r.from = max(r.from, o.FromOffset)
	}
	if o.FromTime != NoTime {
		res, err := lookup.Timestamp(r.p.Path, o.FromTime)
		if err != nil {
			return err
		}
		if !res.Found {
			r.done = true
			return nil
		}
		r.from = max(r.from, res.Offset)
	}
	if o.ToOffset != NoOffset {
		r.end = min(r.end, o.ToOffset+1)
	}
	if o.ToTime != NoTime && o.ToTime < math.MaxInt64 {
		res, err := lookup.Timestamp(r.p.Path, o.ToTime+1)
		if err != nil {
			return err
		}
		if res.Found {
			r.end = min(r.end, res.Offset)
		}
	}
	if r.from >= r.end {
		r.done = true
		return nil
	}
	if r.from == r.segs[0].Base {
		return nil
	}
	res, err := lookup.Offset(r.p.Path, r.from)
	if err != nil {
		return err
	}
	if !res.Found {
		r.done = true
		return nil
	}
	for i, s := range r.segs {
		if s.Log == res.Segment {
			r.si, r.startPos = i, res.Batch.Position
		}
	}
	return nil
}

// Stats describe what was read so far; complete once Next returned false.
func (r *Reader) Stats() Stats { return r.stats }

// Record is the current record, valid until the next call to Next.
func (r *Reader) Record() *Record { return &r.rec }

// Err is what stopped reading early: I/O, or corruption as a
// *logfmt.CorruptError naming the file and byte.
func (r *Reader) Err() error { return r.err }

// Close releases the open segment.
func (r *Reader) Close() error {
	if r.seg == nil {
		return nil
	}
	r.report()
	err := r.seg.Close()
	r.seg = nil
	return err
}

// Next advances to the next record to return.
func (r *Reader) Next() bool {
	for !r.done {
		if r.inBatch {
			if r.it.Next() {
				rec := r.it.Record()
				switch {
				case rec.Offset < r.from:
					continue
				case rec.Offset >= r.end:
					r.stop()
					return false
				case r.o.Isolation == ReadCommitted && r.stats.LastStableOffset >= 0 && rec.Offset >= r.stats.LastStableOffset:
					r.stats.StoppedAtLSO = true
					r.stop()
					return false
				}
				r.fill(rec)
				r.stats.Records++
				return true
			}
			if err := r.it.Err(); err != nil {
				r.fail(logfmt.WithFile(err, r.seg.File(), 0))
				return false
			}
			r.inBatch = false
		}
		r.nextBatch()
	}
	return false
}

func (r *Reader) stop() {
	r.done = true
	r.Close()
}

func (r *Reader) fail(err error) {
	r.err = err
	r.stop()
}

// nextBatch moves to the next batch whose records may be returned.
func (r *Reader) nextBatch() {
	for {
		if r.seg == nil {
			if r.si >= len(r.segs) {
				r.stop()
				return
			}
			seg, err := logfmt.OpenSegment(r.segs[r.si].Log)
			if err != nil {
				r.fail(err)
				return
			}
			seg.ReadAhead()
			seg.SeekTo(r.startPos)
			r.seg, r.reported, r.startPos = seg, r.startPos, 0
		}
		if !r.seg.Next() {
			if err := r.seg.Err(); err != nil {
				r.fail(err)
				return
			}
			if e := r.seg.End(); e != logfmt.EndClean {
				r.stats.Notes = append(r.stats.Notes, fmt.Sprintf("%s: %s: %s; the next segment follows", r.seg.File(), e, r.seg.EndDetail()))
			}
			r.Close()
			r.si++
			continue
		}
		b := r.seg.Batch()
		if r.seg.Pos()-r.reported >= 1<<20 {
			r.report()
		}
		if err := b.Validate(); err != nil {
			r.fail(logfmt.WithFile(err, r.seg.File(), 0))
			return
		}
		if b.LastOffset() < r.from {
			continue
		}
		if b.Magic() >= 2 && b.Header().BaseOffset() >= r.end {
			r.stop()
			return
		}
		if !r.admit(b) {
			continue
		}
		r.it.File = r.seg.File()
		if err := r.it.Reset(b); err != nil {
			r.fail(err)
			return
		}
		r.batch, r.inBatch = b, true
		return
	}
}

// report passes the bytes read since the last report to Progress.
func (r *Reader) report() {
	n := r.seg.Pos() - r.reported
	r.reported = r.seg.Pos()
	r.stats.Bytes += n
	if r.o.Progress != nil && n > 0 {
		r.o.Progress(n)
	}
}

// admit decides what becomes of a batch's records: false when none is
// returned.
func (r *Reader) admit(b *logfmt.Batch) bool {
	r.bh = batchInfo{pid: logfmt.NoProducerID, epoch: -1, leaderEpoch: logfmt.NoLeaderEpoch}
	if b.Magic() < 2 {
		return true
	}
	h := b.Header()
	r.bh = batchInfo{pid: h.ProducerID(), epoch: h.ProducerEpoch(), leaderEpoch: h.PartitionLeaderEpoch(),
		txnal: h.IsTransactional(), control: h.IsControl()}
	committed := r.o.Isolation == ReadCommitted
	if r.bh.control {
		if committed {
			r.stats.ControlRecords += int64(h.RecordCount())
			return false
		}
		return true
	}
	if !r.bh.txnal {
		return true
	}
	r.bh.txn = r.txnState(h.ProducerID(), h.BaseOffset())
	switch {
	case r.bh.txn == Aborted && committed:
		r.stats.AbortedRecords += int64(h.RecordCount())
		return false
	case r.bh.txn == Ongoing && committed:
		// At or past the last stable offset: Next stops at its first record.
		return true
	}
	return true
}

// txnState resolves the transaction of a transactional batch of producer
// pid at offset base. Batches come in offset order, so each producer's
// aborted transactions are dropped once passed.
func (r *Reader) txnState(pid, base int64) TxnState {
	q := r.aborted[pid]
	for len(q) > 0 && q[0].LastOffset < base {
		q = q[1:]
	}
	r.aborted[pid] = q
	if len(q) > 0 && q[0].FirstOffset <= base {
		return Aborted
	}
	if first, ok := r.ongoing[pid]; ok && base >= first {
		return Ongoing
	}
	return Committed
}

func (r *Reader) fill(rec *logfmt.Record) {
	bh := &r.bh
	r.rec = Record{Record: rec, ProducerID: bh.pid, ProducerEpoch: bh.epoch, LeaderEpoch: bh.leaderEpoch,
		Transactional: bh.txnal, Txn: bh.txn, CoordinatorEpoch: -1}
	if bh.control {
		r.rec.Control = true
		if _, t, err := logfmt.ParseControlKey(rec.Key); err == nil {
			r.rec.ControlType = t
			if t.IsTxnMarker() {
				if m, err := logfmt.ParseEndTxnMarker(rec.Value); err == nil {
					r.rec.CoordinatorEpoch = m.CoordinatorEpoch
				}
			}
		}
	}
}
