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
// never come to this copy of the log; Partition.Stats says where reading
// stops and why. Under read_uncommitted every record is returned and
// Record.Txn and Record.Control say what a read_committed consumer would
// make of it.
//
// Which transactions aborted and which are still open is learned first, by
// one pass over the batch headers of the whole partition (only control
// batches are decoded), with the producer-state rules of Kafka's recovery
// (logseg.ProducerState): a transaction begins at its producer's
// first transactional batch after a marker, and the producer's next marker
// ends it, whichever segment holds either. A marker's .txnindex entry is
// not needed: the markers themselves decide, so a missing or stale
// .txnindex changes nothing. That pass holds the aborted transactions
// (34 bytes each, as .txnindex does) and one entry per producer with an
// open transaction, and cuts the data into units of about 16 MiB at batch
// boundaries (Options.OnUnit is given each as it is cut); the second pass
// streams the records of the units, which Readers may read on several
// goroutines at once. A caller that reads every batch of the log anyway can
// have its reading stand in for the first pass (Plan).
//
// Ranges (FromOffset, ToOffset, FromTime, ToTime) are found as a broker
// finds them, through the indexes (find), and are contiguous ranges
// of offsets: a time bound becomes the offset ListOffsets answers for it.
package fetch

import (
	"cmp"
	"fmt"
	"iter"
	"math"
	"slices"

	"github.com/logtool/logtool/find"
	"github.com/logtool/logtool/index"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/codec"
	"github.com/logtool/logtool/logfmt/layout"
	"github.com/logtool/logtool/logfmt/logseg"
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
	// second pass has read since its last call, from the reading goroutines.
	Progress func(n int64)
	// UnitBytes is about how much of a segment one unit covers (see
	// Partition); 0 means 16 MiB.
	UnitBytes int64
	// UnitRecords, when set, also ends a unit once it holds this many
	// records (a v2 batch's count; a compressed legacy wrapper's, bounded
	// by its offsets; any other entry counts as one), for a
	// caller whose memory for a unit grows with its records: small
	// records compressed well put millions in 16 MiB.
	UnitRecords int64
	// MaxRecordBytes bounds one record read from a compressed batch
	// (logfmt.RecordIter); 0 means the default.
	MaxRecordBytes int
	// OnUnit, when set, is given each unit of the whole log as the first
	// pass cuts it, in order, on Open's goroutine: a caller that reads
	// every batch can start on a unit while the pass reads on.
	OnUnit func(sp Span)
	// WholeLog starts at the first segment's base offset instead of the
	// log start offset: what DeleteRecords or retention left below the log
	// start offset is still on disk until its segment goes.
	WholeLog bool
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
	// StoppedAtLSO is true when read_committed reading ends at the last
	// stable offset rather than at the end of the log or the range.
	StoppedAtLSO bool
	// Notes tell of segments whose data ends before their file does (a
	// torn last batch, a zero-filled tail): reading goes on with the next
	// segment, as the data holds nothing more.
	Notes []string

	Read
}

// Read counts what Readers did.
type Read struct {
	Records        int64 // returned
	AbortedRecords int64 // left out as aborted (read_committed)
	ControlRecords int64 // left out (read_committed)
	Bytes          int64 // .log bytes read
}

// Add adds the counts of o.
func (r *Read) Add(o Read) {
	r.Records += o.Records
	r.AbortedRecords += o.AbortedRecords
	r.ControlRecords += o.ControlRecords
	r.Bytes += o.Bytes
}

// defaultUnitBytes is how much of a segment a unit covers by default:
// enough that a unit's start costs nothing next to its reading, small
// enough that a large segment is read by several goroutines at once.
const defaultUnitBytes = 16 << 20

// unit is a run of whole batches of one segment: [start, end).
type unit struct {
	seg        int
	start, end int64
}

// Partition is a partition directory opened for reading: its transactions
// resolved, its range found, its data cut into units that Readers read
// independently, in any number at once.
type Partition struct {
	o     Options
	p     *layout.Partition
	segs  []layout.Segment
	stats Stats

	aborted map[int64][]index.AbortedTxn // producer → its aborted transactions, by offset
	ongoing map[int64]int64              // producer → first offset of its open transaction
	from    int64                        // first offset to return
	end     int64                        // offsets at or above it are not returned
	all     []unit                       // the units of the whole log
	units   []unit                       // those of the range
	tail    int                          // index in all of the first unit after the range's
}

// Open resolves the transactions of the whole log, finds where the range
// starts, and cuts what follows into units.
func Open(p *layout.Partition, o Options) (*Partition, error) {
	pt := newPartition(p, o)
	if len(pt.segs) == 0 {
		return pt, nil
	}
	if err := pt.resolveTxns(); err != nil {
		return nil, err
	}
	if err := pt.finish(); err != nil {
		return nil, err
	}
	return pt, nil
}

func newPartition(p *layout.Partition, o Options) *Partition {
	pt := &Partition{o: o, p: p, end: math.MaxInt64}
	pt.stats.LastStableOffset, pt.stats.OngoingProducer = -1, -1
	for _, s := range p.Segments {
		if s.Log != "" {
			pt.segs = append(pt.segs, s)
		}
	}
	return pt
}

// finish follows the first pass: the log start offset, and the range.
func (pt *Partition) finish() error {
	logStart, err := logseg.LogStartOffset(pt.p)
	if err != nil {
		return err
	}
	pt.stats.LogStartOffset = max(logStart, pt.segs[0].Base)
	pt.all = pt.units
	pt.units = slices.Clone(pt.all)
	pt.tail = len(pt.all)
	return pt.bounds()
}

// Stats are the partition's figures; the Read part is left to Readers.
func (pt *Partition) Stats() Stats { return pt.stats }

// Units is the number of units to read.
func (pt *Partition) Units() int { return len(pt.units) }

// Unit returns a reader of unit i alone.
func (pt *Partition) Unit(i int) *Reader { return pt.reader(pt.units[i : i+1]) }

// Reader returns a reader of every unit in turn.
func (pt *Partition) Reader() *Reader { return pt.reader(pt.units) }

func (pt *Partition) reader(units []unit) *Reader {
	r := &Reader{pt: pt, units: units}
	r.it.MaxRecordBytes = pt.o.MaxRecordBytes
	return r
}

// Span is a unit for a caller that reads its batches itself: whole batches
// of one segment, from byte Start to End.
type Span struct {
	Segment    layout.Segment
	Start, End int64
}

// SpanList is a run of units, given out one at a time: a log of many
// small units would otherwise be copied out whole.
type SpanList struct {
	pt *Partition
	us []unit
}

// Len is the number of units.
func (l SpanList) Len() int { return len(l.us) }

// At is unit i.
func (l SpanList) At(i int) Span {
	u := l.us[i]
	return Span{Segment: l.pt.segs[u.seg], Start: u.start, End: u.end}
}

// All yields the units in order.
func (l SpanList) All() iter.Seq[Span] {
	return func(yield func(Span) bool) {
		for i := range l.us {
			if !yield(l.At(i)) {
				return
			}
		}
	}
}

// Spans are the units of the range, in order. Their batches may reach
// below and past the range: Range says which offsets are in it.
func (pt *Partition) Spans() SpanList { return SpanList{pt, pt.units} }

// Tail are the units of the log after the range's, for a caller that reads
// on past the range's end.
func (pt *Partition) Tail() SpanList { return SpanList{pt, pt.all[pt.tail:]} }

// LogSpans are the units of the whole log, whatever the range.
func (pt *Partition) LogSpans() SpanList { return SpanList{pt, pt.all} }

// Range is the offsets the options select: from (included) to end
// (excluded; math.MaxInt64 for none).
func (pt *Partition) Range() (from, end int64) { return pt.from, pt.end }

// resolveTxns is the first pass: the aborted transactions of the log, the
// ongoing ones at its end, its end offset, and the units.
func (pt *Partition) resolveTxns() error {
	ps := logseg.NewProducerState()
	pt.aborted = map[int64][]index.AbortedTxn{}
	it := logfmt.RecordIter{MaxRecordBytes: pt.o.MaxRecordBytes}
	leo := pt.segs[0].Base
	unitBytes := cmp.Or(pt.o.UnitBytes, defaultUnitBytes)
	unitRecords := pt.o.UnitRecords
	if unitRecords <= 0 {
		unitRecords = math.MaxInt64
	}
	for i, s := range pt.segs {
		leo = max(leo, s.Base)
		u := unit{seg: i}
		seg, err := logfmt.OpenSegment(s.Log)
		if err != nil {
			return err
		}
		// The pass reads headers, and the records of markers only, so
		// that it holds no large entry.
		seg.HeaderViews = (*logfmt.Batch).IsControl
		var records int64
		for seg.Next() {
			b := seg.Batch()
			if b.Pos-u.start >= unitBytes || records >= unitRecords {
				u.end = b.Pos
				pt.cut(u)
				u.start, records = b.Pos, 0
			}
			records += unitCount(b, leo)
			leo = max(leo, b.LastOffset()+1)
			if b.Magic() < 2 {
				continue
			}
			h := b.Header()
			// Only transactional batches and markers change what a
			// consumer sees; idempotent ones are skipped unread.
			if h.ProducerID() < 0 || !h.IsTransactional() && !h.IsControl() && ps.Open() == 0 {
				continue
			}
			it.File = s.Log
			t, ok, err := ps.Apply(b, &it)
			if err != nil {
				seg.Close()
				return logfmt.WithFile(err, s.Log, 0)
			}
			if ok {
				pt.aborted[t.ProducerID] = append(pt.aborted[t.ProducerID], t)
			}
		}
		u.end = seg.Pos()
		err = seg.Err()
		if e := seg.End(); err == nil && e != logfmt.EndClean {
			if pt.tornInside(i, e) {
				err = logfmt.Corruptf(s.Log, u.end, "%s, and later segments follow: the records of that entry are lost, not a write cut short at the log's end", seg.EndDetail())
			} else {
				pt.note(s, e, seg.EndDetail())
			}
		}
		seg.Close()
		if err != nil {
			err = logfmt.RootCause(err, s.Log, u.end)
		}
		if err != nil {
			return err
		}
		pt.cut(u)
	}
	pt.stats.LogEndOffset = leo
	pt.ongoing = ps.Ongoing()
	for pid, first := range pt.ongoing {
		if pt.stats.LastStableOffset < 0 || first < pt.stats.LastStableOffset {
			pt.stats.LastStableOffset, pt.stats.OngoingProducer = first, pid
		}
	}
	return nil
}

// tornInside tells whether segment i ending as e lost records: a write cut
// short can only be at the end of the log (recovery truncates it there),
// so a torn entry with segments after it is damage, not a note.
func (pt *Partition) tornInside(i int, e logfmt.End) bool {
	return e == logfmt.EndTorn && i < len(pt.segs)-1
}

// note tells of a segment whose data ends before its file does.
func (pt *Partition) note(s layout.Segment, e logfmt.End, detail string) {
	pt.stats.Notes = append(pt.stats.Notes, fmt.Sprintf("%s: %s: %s; reading goes on with the next segment", s.Log, e, detail))
}

// cut ends unit u.
func (pt *Partition) cut(u unit) {
	pt.units = append(pt.units, u)
	if pt.o.OnUnit != nil {
		pt.o.OnUnit(Span{Segment: pt.segs[u.seg], Start: u.start, End: u.end})
	}
}

// unitCount is what a batch counts for toward UnitRecords: a v2 batch's
// count, and a compressed legacy wrapper's records, which only its payload
// tells, bounded by the offsets from leo (the end of the batches before it)
// to its own, the last of its records. A damaged count counts as one.
func unitCount(b *logfmt.Batch, leo int64) int64 {
	n := int64(1)
	switch {
	case b.Magic() >= 2:
		n = int64(b.Header().RecordCount())
	case b.Compression() != codec.None:
		n = b.LastOffset() + 1 - leo
	}
	return max(1, n)
}

// bounds turns the options into the first offset to return, the units to
// read, and the offset to stop before.
func (pt *Partition) bounds() error {
	o := pt.o
	pt.from = pt.stats.LogStartOffset
	if o.WholeLog {
		pt.from = pt.segs[0].Base
	}
	if o.FromOffset != NoOffset {
		pt.from = max(pt.from, o.FromOffset)
	}
	if o.FromTime != NoTime {
		res, err := find.Timestamp(pt.p.Path, o.FromTime, find.Options{MaxRecordBytes: o.MaxRecordBytes})
		if err != nil {
			return err
		}
		if !res.Found {
			pt.units = nil
			return nil
		}
		pt.from = max(pt.from, res.Offset)
	}
	if o.ToOffset != NoOffset {
		pt.end = min(pt.end, o.ToOffset+1)
	}
	if o.ToTime != NoTime && o.ToTime < math.MaxInt64 {
		res, err := find.Timestamp(pt.p.Path, o.ToTime+1, find.Options{MaxRecordBytes: o.MaxRecordBytes})
		if err != nil {
			return err
		}
		if res.Found {
			pt.end = min(pt.end, res.Offset)
		}
	}
	if lso := pt.stats.LastStableOffset; pt.o.Isolation == ReadCommitted && lso >= 0 && lso < pt.end {
		pt.end, pt.stats.StoppedAtLSO = lso, true
	}
	if pt.from >= pt.end {
		pt.units = nil
		return nil
	}
	// Units after the end are not read.
	for i, u := range pt.units {
		if pt.segs[u.seg].Base >= pt.end && i > 0 {
			pt.units, pt.tail = pt.units[:i], i
			break
		}
	}
	if pt.from == pt.segs[0].Base {
		return nil
	}
	res, err := find.Offset(pt.p.Path, pt.from, find.Options{MaxRecordBytes: pt.o.MaxRecordBytes})
	if err != nil {
		return err
	}
	if !res.Found {
		pt.units = nil
		return nil
	}
	for i, u := range pt.units {
		if pt.segs[u.seg].Log == res.Segment && res.Batch.Position < u.end {
			pt.units = pt.units[i:]
			pt.units[0].start = max(u.start, res.Batch.Position)
			return nil
		}
	}
	return nil
}

// Reader streams the records of some units of a partition.
type Reader struct {
	// Job, when set before the first Next, is the command's job that the
	// reader holds large entries against (logfmt.Job).
	Job *logfmt.Job

	pt    *Partition
	units []unit
	read  Read

	seg      *logfmt.SegmentFile
	segEnd   int64
	reported int64
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

// Read counts what the reader did; complete once Next returned false.
func (r *Reader) Read() Read { return r.read }

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
	pt := r.pt
	for !r.done {
		if r.inBatch {
			if r.it.Next() {
				rec := r.it.Record()
				switch {
				case rec.Offset < pt.from:
					continue
				case rec.Offset >= pt.end:
					r.stop()
					return false
				}
				r.fill(rec)
				r.read.Records++
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
	pt := r.pt
	for {
		if r.seg == nil {
			if len(r.units) == 0 {
				r.stop()
				return
			}
			u := r.units[0]
			r.units = r.units[1:]
			seg, err := logfmt.OpenSegment(pt.segs[u.seg].Log, logfmt.ReadAheadWindows)
			if err != nil {
				r.fail(err)
				return
			}
			seg.SeekTo(u.start)
			seg.Job = r.Job
			r.seg, r.reported, r.segEnd = seg, u.start, u.end
		}
		if r.seg.Pos() >= r.segEnd || !r.seg.Next() {
			if err := r.seg.Err(); err != nil {
				r.fail(err)
				return
			}
			r.Close()
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
		if b.LastOffset() < pt.from {
			continue
		}
		if b.Magic() >= 2 && b.Header().BaseOffset() >= pt.end {
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
		r.inBatch = true
		return
	}
}

// report passes the bytes read since the last report to Progress.
func (r *Reader) report() {
	n := r.seg.Pos() - r.reported
	r.reported = r.seg.Pos()
	r.read.Bytes += n
	if r.pt.o.Progress != nil && n > 0 {
		r.pt.o.Progress(n)
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
	committed := r.pt.o.Isolation == ReadCommitted
	switch {
	case r.bh.control && committed:
		r.read.ControlRecords += int64(h.RecordCount())
		return false
	case r.bh.control || !r.bh.txnal:
		return true
	}
	r.bh.txn = r.pt.TxnState(h.ProducerID(), h.BaseOffset())
	if r.bh.txn == Aborted && committed {
		r.read.AbortedRecords += int64(h.RecordCount())
		return false
	}
	return true
}

// TxnState resolves the transaction of a transactional batch of producer
// pid at offset base: the producer's first marker after it decides.
func (pt *Partition) TxnState(pid, base int64) TxnState {
	q := pt.aborted[pid]
	i, _ := slices.BinarySearchFunc(q, base, func(t index.AbortedTxn, o int64) int { return cmp.Compare(t.LastOffset, o) })
	if i < len(q) && q[i].FirstOffset <= base {
		return Aborted
	}
	if first, ok := pt.ongoing[pid]; ok && base >= first {
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
