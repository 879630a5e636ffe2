// Package logseg is Kafka's view of a partition's segments on disk: what a
// broker's loader makes of a segment's files before anything reads them,
// and the LogSegment and index rules every command reads a segment by. Each
// function names the Kafka method it follows (storage/.../log/LogSegment,
// LogLoader, OffsetIndex, TimeIndex, AbstractIndex).
//
// The load rules (LogLoader.loadSegmentFiles and LogSegment.sanityCheck):
//
//   - index files without a .log are no segment: the loader deletes them;
//   - a segment without its .index is recovered (LogSegment.recover), so its
//     indexes and timestamps come from its records;
//   - a corrupt index (CorruptIndexException; trunk checks only the
//     .txnindex) is recovered too;
//   - a missing .timeindex alone is created empty: maxTimestampSoFar is then
//     -1 and largestTimestamp the .log's modification time.
//
// A broker trusts its index files because it trims them when a segment
// rolls or closes and recovers those of a segment it did not close. An
// offline reader checks them instead: an .index entry is used only when it
// points at a valid batch that can hold its offset, and a .timeindex that
// holds entries no broker writes, or the zeros of a preallocated file (an
// active segment the broker never closed, which LogLoader.recoverLog
// recovers), counts as recovered.
package logseg

import (
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"math"
	"os"

	"github.com/logtool/logtool/index"
	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/codec"
	"github.com/logtool/logtool/logfmt/layout"
)

// Load is what LogLoader.loadSegmentFiles does with a segment's files.
type Load int

const (
	// Indexed segments are loaded with their index files as they are.
	Indexed Load = iota
	// TimeIndexCreated segments had no .timeindex: sanityCheck creates it
	// empty (resize(0)).
	TimeIndexCreated
	// Recovered segments get their indexes rebuilt from the records.
	Recovered
)

func (l Load) String() string {
	switch l {
	case TimeIndexCreated:
		return "time index created empty"
	case Recovered:
		return "recovered"
	}
	return "indexed"
}

// Source says where a timestamp came from.
type Source string

const (
	FromTimeIndex Source = "timeindex" // the last .timeindex entry (TimeIndex.lastEntry)
	FromRecords   Source = "records"   // the batches' max timestamps, as recovery reads them
	FromMtime     Source = "mtime"     // the .log's modification time: no timestamp is known
)

// Segment is one segment as a broker holds it once loaded.
type Segment struct {
	layout.Segment
	Size         int64 // bytes of the .log
	LastModified int64 // the .log's modification time in ms (LogSegment.lastModified)
	// OffsetIndexBytes and TimeIndexBytes are the indexes' sizeInBytes as
	// AbstractIndex opens the files: their whole entries; 0 when absent.
	OffsetIndexBytes, TimeIndexBytes int64
	Load                             Load
	Why                              string // why the segment is Recovered
}

// Open stats a segment's files and applies the load rules.
func Open(s layout.Segment) (Segment, error) {
	fi, err := os.Stat(s.Log)
	if err != nil {
		return Segment{}, err
	}
	seg := Segment{Segment: s, Size: fi.Size(), LastModified: fi.ModTime().UnixMilli()}
	var hasIndex, hasTime bool
	if seg.OffsetIndexBytes, hasIndex, err = indexBytes(s.Index, index.OffsetEntrySize); err != nil {
		return Segment{}, err
	}
	if seg.TimeIndexBytes, hasTime, err = indexBytes(s.TimeIndex, index.TimeEntrySize); err != nil {
		return Segment{}, err
	}
	corrupt, err := txnCorrupt(s)
	if err != nil {
		return Segment{}, err
	}
	switch {
	case !hasIndex:
		seg.Load, seg.Why = Recovered, "no offset index"
	case corrupt != "":
		seg.Load, seg.Why = Recovered, corrupt
	case !hasTime:
		seg.Load = TimeIndexCreated
	}
	return seg, nil
}

// OpenPartition opens the segments of a partition listing, leaving out
// index files without a .log.
func OpenPartition(p *layout.Partition) ([]Segment, error) {
	var segs []Segment
	for _, s := range p.Segments {
		if s.Log == "" {
			continue
		}
		seg, err := Open(s)
		if err != nil {
			return nil, err
		}
		segs = append(segs, seg)
	}
	return segs, nil
}

// indexBytes is an index file's size rounded down to whole entries, and
// whether the file is there.
func indexBytes(path string, esize int) (int64, bool, error) {
	if path == "" {
		return 0, false, nil
	}
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	return fi.Size() - fi.Size()%int64(esize), true, nil
}

// txnCorrupt runs TransactionIndex.sanityCheck, saying what it found.
func txnCorrupt(s layout.Segment) (string, error) {
	if s.TxnIndex == "" {
		return "", nil
	}
	f, size, err := safefile.OpenSized(s.TxnIndex)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	err = index.SanityCheckTxnIndex(f, size, s.Base, s.TxnIndex)
	if _, ok := logfmt.AsCorrupt(err); ok {
		return err.Error(), nil
	}
	return "", err
}

// Batches streams a segment's batches as LogSegment.recover reads them:
// each must frame (FileLogInputStream), pass its checksum (ensureValid) and
// have a last offset the segment's indexes can hold (ensureOffsetInRange).
// The first that does not stops it with a *logfmt.CorruptError; a torn or
// zero-filled end stops it cleanly, and End tells which.
type Batches struct {
	*logfmt.SegmentFile
	// Trusted skips the checksums, for a caller that has verified them.
	Trusted bool

	dr   *logfmt.DeepReader // over SegmentFile; the reader itself unless Decode
	base int64
	err  error
}

// Batches opens the segment's .log for reading batches from byte pos,
// with windows from src.
func (s *Segment) Batches(pos int64, src logfmt.WindowSource) (*Batches, error) {
	f, err := logfmt.OpenSegment(s.Log, src)
	if err != nil {
		return nil, err
	}
	f.SeekTo(pos)
	return &Batches{SegmentFile: f, dr: logfmt.NewDeepReader(f.SegmentReader, 1), base: s.Base}, nil
}

// headers opens the segment's .log for reading the headers of its batches
// from byte pos: a large v2 batch is a header view, checksummed a window at
// a time (logfmt.SegmentReader.HeaderViews), and never held.
func (s *Segment) headers(pos int64) (*Batches, error) {
	b, err := s.Batches(pos, logfmt.PlainWindows)
	if err != nil {
		return nil, err
	}
	b.HeaderViews = func(*logfmt.Batch) bool { return false }
	return b, nil
}

// Decode has workers goroutines decompress the batches ahead of Next
// (logfmt.DeepReader), and returns the reader for its MaxRecordBytes and
// Skip. It must be called before the first Next.
func (b *Batches) Decode(workers int) *logfmt.DeepReader {
	b.dr = logfmt.NewDeepReader(b.SegmentReader, workers)
	return b.dr
}

func (b *Batches) Next() bool {
	if b.err != nil || !b.dr.Next() {
		return false
	}
	batch := b.Batch()
	if !b.Trusted {
		if err := batch.Validate(); err != nil {
			b.err = logfmt.WithFile(err, b.File(), 0)
			return false
		}
	}
	if d := batch.LastOffset() - b.base; d < 0 || d > math.MaxInt32 {
		b.err = logfmt.Corruptf(b.File(), batch.Pos, "offset %d does not fit a segment based at %d", batch.LastOffset(), b.base)
		return false
	}
	return true
}

// Err is what stopped the batches, nil at a clean, zero-filled or torn end.
func (b *Batches) Err() error {
	if b.err != nil {
		return b.err
	}
	return b.SegmentFile.Err()
}

// Batch is the current batch, valid until the next call to Next.
func (b *Batches) Batch() *logfmt.Batch { return b.dr.Batch() }

// Pos is the position after the current batch.
func (b *Batches) Pos() int64 { return b.dr.Pos() }

// Close stops the workers, if any, and closes the file.
func (b *Batches) Close() error {
	b.dr.Close()
	return b.SegmentFile.Close()
}

// RecordsMaxTimestamp is the maxTimestampSoFar LogSegment.recover finds:
// the greatest batch max timestamp, -1 when no batch has one.
func (s *Segment) RecordsMaxTimestamp() (int64, error) {
	b, err := s.headers(0)
	if err != nil {
		return 0, err
	}
	defer b.Close()
	ts := int64(logfmt.NoTimestamp)
	for b.Next() {
		ts = max(ts, b.Batch().MaxTimestamp())
	}
	return ts, b.Err()
}

// MaxTimestampSoFar is LogSegment.maxTimestampSoFar once the segment is
// loaded: the timestamp of the .timeindex's last entry, -1 when it has
// none or was created empty; for a recovered segment, or a time index
// counted as recovered (see the package documentation), the records'.
func (s *Segment) MaxTimestampSoFar() (int64, Source, error) {
	switch s.Load {
	case TimeIndexCreated:
		return logfmt.NoTimestamp, FromTimeIndex, nil
	case Indexed:
		e, ok, why, zeros := s.timeFloor(math.MaxInt64)
		if why == "" && !zeros {
			if !ok {
				return logfmt.NoTimestamp, FromTimeIndex, nil
			}
			return e.Timestamp, FromTimeIndex, nil
		}
	}
	ts, err := s.RecordsMaxTimestamp()
	return ts, FromRecords, err
}

// LargestTimestamp is LogSegment.largestTimestamp: MaxTimestampSoFar when
// it is at least 0, else the .log's modification time.
func (s *Segment) LargestTimestamp() (int64, Source, error) {
	ts, src, err := s.MaxTimestampSoFar()
	if err != nil || ts >= 0 {
		return ts, src, err
	}
	return s.LastModified, FromMtime, nil
}

// FirstBatchTimestamp is LogSegment.getFirstBatchTimestamp: the max
// timestamp of the segment's first batch, or math.MaxInt64 when there is
// none or it has no timestamp. The batch must be valid.
func (s *Segment) FirstBatchTimestamp() (int64, error) {
	b, err := s.headers(0)
	if err != nil {
		return 0, err
	}
	defer b.Close()
	if b.Next() {
		if ts := b.Batch().MaxTimestamp(); ts >= 0 {
			return ts, nil
		}
	}
	return math.MaxInt64, b.Err()
}

// NextOffset is LogSegment.readNextOffset: one past the last offset of the
// segment's last batch, its base offset when it has none. It reads from the
// last .index entry (OffsetIndex.lastOffset, then lookup) when that entry
// points at a batch that can hold it, else from byte 0. The batches read
// must be valid (see Batches), and a torn last entry is an error too: where
// such a log ends is for a broker's recovery to settle.
func (s *Segment) NextOffset() (int64, error) {
	e, ok, _ := s.OffsetFloor(math.MaxInt64)
	pos := int64(0)
	if ok {
		pos = int64(e.Position)
	}
	b, err := s.headers(pos)
	if err != nil {
		return 0, err
	}
	defer b.Close()
	next := s.Base
	for b.Next() {
		next = b.Batch().LastOffset() + 1
	}
	if err := b.Err(); err != nil {
		return 0, err
	}
	if b.End() == logfmt.EndTorn {
		return 0, logfmt.Corruptf(s.Log, b.Pos(), "the segment ends in a torn entry (%s); where the log ends is for recovery to settle: a broker's, or a reindex that cuts the corrupt tail", b.EndDetail())
	}
	return next, nil
}

// The why of OffsetFloor and TimeFloor when the segment has no such index,
// which a broker recreates: no damage.
const (
	NoIndex     = "no .index"
	NoTimeIndex = "no .timeindex"
)

// OffsetFloor is OffsetIndex.lookup: the greatest .index entry whose offset
// is at most target, once checked against the log (pointsAtBatch). ok is
// false when a scan has to start at byte 0; why then says what was wrong
// with the index, and is "" when it merely has no such entry.
func (s *Segment) OffsetFloor(target int64) (e index.OffsetEntry, ok bool, why string) {
	if s.Index == "" {
		return e, false, NoIndex
	}
	f, size, err := safefile.OpenSized(s.Index)
	if err != nil {
		return e, false, err.Error()
	}
	defer f.Close()
	r := index.NewOffsetReader(f, size, s.Base, s.Index)
	more := r.Next()
	for ; more && r.Entry().Offset <= target; more = r.Next() {
		e, ok = r.Entry(), true
	}
	if why = untrusted(r.Err(), r.Problems(), r.Layout(), size, !more); why == "" && ok {
		why = s.pointsAtBatch(e)
	}
	if why != "" {
		return index.OffsetEntry{}, false, why
	}
	return e, ok, ""
}

// untrusted says why an index read up to the target cannot be trusted: an
// I/O error, or a problem before its end other than bytes that do not make
// a whole entry (AbstractIndex rounds those away). Problems are only known
// once the reader has passed every entry (done).
func untrusted(err error, problems []index.Problem, l index.Layout, size int64, done bool) string {
	if err != nil {
		return err.Error()
	}
	if done && len(problems) > 0 && problems[0].Pos < size-int64(l.PartialTail) {
		return fmt.Sprintf("entry %d: %s", problems[0].Entry, problems[0].Msg)
	}
	return ""
}

// pointsAtBatch checks an .index entry against the log: a valid batch must
// start at its position, and that batch's first offset must not be above
// the entry's offset (the live path indexes the last offset of an append,
// whose first batch starts there). It returns why not, or "".
func (s *Segment) pointsAtBatch(e index.OffsetEntry) string {
	seg, err := logfmt.OpenSegment(s.Log)
	if err != nil {
		return err.Error()
	}
	defer seg.Close()
	seg.SeekTo(int64(e.Position))
	if !seg.Next() {
		if err := seg.Err(); err != nil {
			return fmt.Sprintf("the entry for offset %d points at byte %d, where no batch frames: %v", e.Offset, e.Position, err)
		}
		return fmt.Sprintf("the entry for offset %d points at byte %d, past the data", e.Offset, e.Position)
	}
	b := seg.Batch()
	if err := b.Validate(); err != nil {
		return fmt.Sprintf("the entry for offset %d points at byte %d, where no valid batch starts: %v", e.Offset, e.Position, err)
	}
	if first := firstOffset(b); first > e.Offset {
		return fmt.Sprintf("the entry for offset %d points at byte %d, where the batch starts at offset %d", e.Offset, e.Position, first)
	}
	return ""
}

// firstOffset is a batch's first offset. A legacy wrapper's is only known
// by decompressing it; when that fails its own offset stands in.
func firstOffset(b *logfmt.Batch) int64 {
	if b.Magic() >= 2 {
		return b.Header().BaseOffset()
	}
	var it logfmt.RecordIter
	if b.Compression() == codec.None || it.Reset(b) != nil {
		return b.EntryOffset()
	}
	return it.BaseOffset()
}

// TimeFloor is TimeIndex.lookup: the greatest .timeindex entry whose
// timestamp is at most target; TimeFloor(math.MaxInt64) is
// TimeIndex.lastEntry. ok is false when there is none; why then says so
// when that is because the index is absent or cannot be trusted.
func (s *Segment) TimeFloor(target int64) (e index.TimeEntry, ok bool, why string) {
	e, ok, why, _ = s.timeFloor(target)
	return e, ok, why
}

// timeFloor is TimeFloor, also telling whether the entries read end in the
// zeros of a preallocated file.
func (s *Segment) timeFloor(target int64) (e index.TimeEntry, ok bool, why string, zeros bool) {
	if s.TimeIndex == "" {
		return e, false, NoTimeIndex, false
	}
	f, size, err := safefile.OpenSized(s.TimeIndex)
	if err != nil {
		return e, false, err.Error(), false
	}
	defer f.Close()
	r := index.NewTimeReader(f, size, s.Base, s.TimeIndex)
	more := r.Next()
	for ; more && r.Entry().Timestamp <= target; more = r.Next() {
		e, ok = r.Entry(), true
	}
	if why = untrusted(r.Err(), r.Problems(), r.Layout(), size, !more); why != "" {
		return index.TimeEntry{}, false, s.TimeIndex + ": " + why, false
	}
	return e, ok, "", r.Layout().ZeroTail > 0
}

// IndexPositions yields the positions of the segment's .index entries, as
// far as they rise: where batches start, if the index is right. They are
// hints for reading a segment in ranges (logfmt.HeaderReader), which checks
// them.
func IndexPositions(s layout.Segment) iter.Seq[int64] {
	return func(yield func(int64) bool) {
		for e := range IndexEntries(s) {
			if !yield(int64(e.Position)) {
				return
			}
		}
	}
}

// IndexEntries yields the segment's .index entries as far as their
// positions rise, as hints that their readers check; an index that cannot
// be read yields nothing. The entries are read without OffsetReader's
// checks, which scan a preallocated tail of zeros (up to
// segment.index.bytes) to tell it from damage.
func IndexEntries(s layout.Segment) iter.Seq[index.OffsetEntry] {
	return func(yield func(index.OffsetEntry) bool) {
		if s.Index == "" {
			return
		}
		f, err := safefile.Open(s.Index)
		if err != nil {
			return
		}
		defer f.Close()
		buf := make([]byte, 64<<10)
		last := int32(-1)
		for off := int64(0); ; off += int64(len(buf)) {
			n, err := f.ReadAt(buf, off)
			for e := range index.Entries(buf[:n-n%index.OffsetEntrySize], s.Base) {
				if e.Position <= last || !yield(e) {
					return
				}
				last = e.Position
			}
			if err != nil || n < len(buf) {
				return
			}
		}
	}
}
