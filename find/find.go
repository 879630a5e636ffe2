// Package find finds an offset or a timestamp in a partition directory the
// way a broker does, and says how it got there.
//
// By offset, as a fetch does (LocalLog.read, LogSegment.translateOffset):
// the segment with the greatest base offset not above the target, the
// greatest .index entry not above the target, then a forward scan from that
// entry's byte position to the first batch whose last offset reaches the
// target. A segment that ends first hands over to the next one, from its
// first byte. The answer is the first record at or after the target: offsets
// can be missing after compaction.
//
// By timestamp, as ListOffsets does (UnifiedLog.fetchOffsetByTimestamp,
// LogSegment.findOffsetByTimestamp): the first segment whose largest
// timestamp (LogSegment.largestTimestamp, as the loader leaves it: see
// logseg) reaches the target, the greatest .timeindex entry not above the
// target, the .index entry for that entry's offset (or the log start
// offset, when larger), then a forward scan to the first batch whose largest
// timestamp reaches the target, and in it the first record, at or after the
// log start offset, whose timestamp does.
//
// Indexes are not trusted blindly (logseg.Segment.OffsetFloor, TimeFloor).
// A missing index, one with entries no broker writes, or an entry that does
// not point at a batch that could hold it, makes the lookup fall back to a
// scan from the segment's first byte, and Result.Fallbacks says so.
package find

import (
	"bytes"
	"cmp"
	"fmt"

	"github.com/logtool/logtool/index"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/codec"
	"github.com/logtool/logtool/logfmt/layout"
	"github.com/logtool/logtool/logfmt/logseg"
)

// Result is the outcome of a lookup.
type Result struct {
	Dir         string
	Target      int64
	ByTimestamp bool

	Found bool
	// Reason says why nothing was found.
	Reason string

	Segment string // the .log holding the answer
	Base    int64  // its base offset
	// IndexEntry is the .index entry the scan started from; nil when it
	// started at the segment's first byte.
	IndexEntry *index.OffsetEntry
	// TimeEntry is the .timeindex entry a timestamp lookup used; nil when
	// none was at or below the target.
	TimeEntry *index.TimeEntry
	// Start is the byte the forward scan started from; Scanned and
	// ScannedBytes count the batches it read, the answer's included.
	Start        int64
	Scanned      int
	ScannedBytes int64
	// Fallbacks tells, in order, where an index could not be used and a scan
	// replaced it.
	Fallbacks []string
	// Damaged counts the fallbacks that are for damage: an index or the
	// log start checkpoint that does not read or disagrees with the log, a
	// link. A missing index is not: a broker recreates it.
	Damaged int

	Batch     Batch // the batch holding the answer
	Offset    int64 // the answer's offset
	Timestamp int64 // the answer's timestamp (-1 for magic 0)
	// Key, Value and Headers are the answer's record, copied out of the
	// reader's buffers; nil is null.
	Key, Value []byte
	Headers    []logfmt.Header
}

// Batch describes the batch holding the answer.
type Batch struct {
	Position      int64
	Size          int
	BaseOffset    int64 // for a legacy wrapper, its first inner offset
	LastOffset    int64
	Records       int
	Magic         int8
	Compression   codec.Type
	TimestampType logfmt.TimestampType
	MaxTimestamp  int64
	// Magic 2 only; zero otherwise.
	LeaderEpoch   int32
	ProducerID    int64
	ProducerEpoch int16
	BaseSequence  int32
	Transactional bool
	Control       bool
}

// finder holds what one lookup shares across segments.
type finder struct {
	res      *Result
	segs     []logseg.Segment
	logStart int64
	it       logfmt.RecordIter
}

func newFinder(dir string, target int64, byTS bool, o Options) (*finder, error) {
	p, err := layout.ReadPartition(dir)
	if err != nil {
		return nil, err
	}
	f := &finder{res: &Result{Dir: dir, Target: target, ByTimestamp: byTS, Offset: -1, Timestamp: -1}}
	f.it.MaxRecordBytes = o.MaxRecordBytes
	for _, n := range p.Unread() {
		f.damaged("%s", n)
	}
	if f.segs, err = logseg.OpenPartition(p); err != nil {
		return nil, err
	}
	if len(f.segs) == 0 {
		f.res.Reason = "the partition has no segments"
		return f, nil
	}
	// The log start offset is at least the first segment's base; a
	// checkpoint entry can put it further (after DeleteRecords).
	f.logStart = f.segs[0].Base
	if ls, err := logseg.LogStartOffset(p); err == nil {
		f.logStart = max(f.logStart, ls)
	} else {
		f.damaged("log-start-offset-checkpoint unreadable (%v); taking the first segment's base offset as the log start", err)
	}
	return f, nil
}

func (f *finder) fallback(format string, args ...any) {
	f.res.Fallbacks = append(f.res.Fallbacks, fmt.Sprintf(format, args...))
}

// damaged is a fallback for damage.
func (f *finder) damaged(format string, args ...any) {
	f.fallback(format, args...)
	f.res.Damaged++
}

// indexFallback is the fallback for why an index was not used: damage
// unless it is missing.
func (f *finder) indexFallback(file, why string) {
	if why == logseg.NoIndex || why == logseg.NoTimeIndex {
		f.fallback("%s: %s; scanning from byte 0", file, why)
		return
	}
	f.damaged("%s: %s; scanning from byte 0", file, why)
}

// Options tune a look-up.
type Options struct {
	// MaxRecordBytes bounds one record read from a compressed batch
	// (logfmt.RecordIter); 0 means the default.
	MaxRecordBytes int
}

// Offset finds the batch and record holding offset target, or the first one
// after it.
func Offset(dir string, target int64, o Options) (*Result, error) {
	f, err := newFinder(dir, target, false, o)
	if err != nil || len(f.segs) == 0 {
		return resultOf(f), err
	}
	if target < f.logStart {
		f.res.Reason = fmt.Sprintf("offset %d is below the log start offset %d: a broker answers OFFSET_OUT_OF_RANGE", target, f.logStart)
		return f.res, nil
	}
	first := 0
	for i, s := range f.segs {
		if s.Base <= target {
			first = i
		}
	}
	end := f.segs[first].Base
	for i := first; i < len(f.segs); i++ {
		s := &f.segs[i]
		start := int64(0)
		if i == first {
			if e, ok := f.offsetEntry(s, target); ok {
				start = int64(e.Position)
				f.res.IndexEntry = &e
			}
		}
		last, found, err := f.scan(s, start, func(b *logfmt.Batch) bool { return b.LastOffset() >= target },
			func(r *logfmt.Record) bool { return r.Offset >= target })
		if err != nil || found {
			return f.res, err
		}
		end = max(end, last+1)
		f.res.IndexEntry = nil
	}
	f.res.Reason = fmt.Sprintf("offset %d is at or past the log end offset %d", target, end)
	return f.res, nil
}

// Timestamp finds the first record whose timestamp is target or later.
func Timestamp(dir string, target int64, o Options) (*Result, error) {
	f, err := newFinder(dir, target, true, o)
	if err != nil || len(f.segs) == 0 {
		return resultOf(f), err
	}
	for i := range f.segs {
		s := &f.segs[i]
		largest, _, err := s.LargestTimestamp()
		if err != nil {
			return f.res, err
		}
		if largest < target {
			continue
		}
		from := s.Base
		te, ok, why := s.TimeFloor(target)
		if why != "" {
			f.indexFallback(s.Log, why)
		}
		if ok {
			from = te.Offset
			f.res.TimeEntry = &te
		}
		start := int64(0)
		if e, ok := f.offsetEntry(s, max(from, f.logStart)); ok {
			start = int64(e.Position)
			f.res.IndexEntry = &e
		}
		batch := func(b *logfmt.Batch) bool { return b.MaxTimestamp() >= target }
		record := func(r *logfmt.Record) bool { return r.Timestamp >= target && r.Offset >= f.logStart }
		_, found, err := f.scan(s, start, batch, record)
		if err != nil || found {
			return f.res, err
		}
		if start > 0 {
			f.damaged("%s: no batch after byte %d reaches timestamp %d although the segment's largest timestamp is %d; the indexes are inconsistent, scanning from byte 0",
				s.Log, start, target, largest)
			f.res.IndexEntry, f.res.TimeEntry = nil, nil
			if _, found, err = f.scan(s, 0, batch, record); err != nil || found {
				return f.res, err
			}
		}
	}
	f.res.Reason = fmt.Sprintf("no record has timestamp %d or later", target)
	return f.res, nil
}

func resultOf(f *finder) *Result {
	if f == nil {
		return nil
	}
	return f.res
}

// offsetEntry returns the greatest .index entry not above target that
// points at a batch that can hold it. ok is false when the scan has to start
// at byte 0, with a fallback recorded when that is because of the index.
func (f *finder) offsetEntry(s *logseg.Segment, target int64) (index.OffsetEntry, bool) {
	e, ok, why := s.OffsetFloor(target)
	if why != "" {
		f.indexFallback(cmp.Or(s.Index, s.Log), why)
	}
	return e, ok
}

// scan reads the segment forward from start to the first batch for which
// batch holds and that has a record for which record holds, and makes them
// the answer. It returns the last offset of the batches read.
func (f *finder) scan(s *logseg.Segment, start int64, batch func(*logfmt.Batch) bool, record func(*logfmt.Record) bool) (int64, bool, error) {
	seg, err := logfmt.OpenSegment(s.Log)
	if err != nil {
		return 0, false, err
	}
	defer seg.Close()
	seg.SeekTo(start)
	res := f.res
	res.Start, res.Scanned, res.ScannedBytes = start, 0, 0
	last := s.Base - 1
	for seg.Next() {
		b := seg.Batch()
		res.Scanned++
		res.ScannedBytes += int64(b.Size())
		last = max(last, b.LastOffset())
		if !batch(b) {
			continue
		}
		// The answer is read from this batch: a checksum that fails means
		// its offsets and timestamps are not what was written.
		if err := b.Validate(); err != nil {
			return last, false, logfmt.WithFile(err, s.Log, 0)
		}
		if err := f.it.Reset(b); err != nil {
			return last, false, logfmt.WithFile(err, s.Log, 0)
		}
		for f.it.Next() {
			r := f.it.Record()
			if record(r) {
				res.Found, res.Segment, res.Base = true, s.Log, s.Base
				res.Offset, res.Timestamp = r.Offset, r.Timestamp
				res.Key, res.Value = bytes.Clone(r.Key), bytes.Clone(r.Value)
				for _, h := range r.Headers {
					res.Headers = append(res.Headers, logfmt.Header{Key: bytes.Clone(h.Key), Value: bytes.Clone(h.Value)})
				}
				res.Batch = describe(b, &f.it)
				return last, true, nil
			}
		}
		if err := f.it.Err(); err != nil {
			return last, false, logfmt.WithFile(err, s.Log, 0)
		}
	}
	if err := seg.Err(); err != nil {
		return last, false, err
	}
	return last, false, nil
}

func describe(b *logfmt.Batch, it *logfmt.RecordIter) Batch {
	d := Batch{
		Position: b.Pos, Size: b.Size(), BaseOffset: it.BaseOffset(), LastOffset: b.LastOffset(), Records: it.Count(),
		Magic: b.Magic(), Compression: b.Compression(), TimestampType: b.TimestampType(), MaxTimestamp: b.MaxTimestamp(),
	}
	if b.Magic() >= 2 {
		h := b.Header()
		d.LeaderEpoch, d.ProducerID, d.ProducerEpoch, d.BaseSequence = h.PartitionLeaderEpoch(), h.ProducerID(), h.ProducerEpoch(), h.BaseSequence()
		d.Transactional, d.Control = h.IsTransactional(), h.IsControl()
	}
	return d
}
