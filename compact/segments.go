package compact

import (
	"errors"
	"io/fs"
	"os"

	"github.com/logtool/logtool/index"
	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/layout"
)

// segment is what the cleaner needs to know of one segment on disk.
type segment struct {
	layout.Segment
	size           int64 // bytes of the .log
	mtime          int64 // the .log's modification time in ms (LogSegment.lastModified)
	offsetIdxBytes int64 // sizes of .index and .timeindex, for groupSegmentsBySize
	timeIdxBytes   int64
}

// loadSegments stats the segments of a partition listing. Index-only
// leftovers without a .log are ignored, as a broker deletes them at load.
func loadSegments(p *layout.Partition) ([]segment, error) {
	var segs []segment
	for _, s := range p.Segments {
		if s.Log == "" {
			continue
		}
		fi, err := os.Stat(s.Log)
		if err != nil {
			return nil, err
		}
		seg := segment{Segment: s, size: fi.Size(), mtime: fi.ModTime().UnixMilli()}
		if seg.offsetIdxBytes, err = indexBytes(s.Index, index.OffsetEntrySize); err != nil {
			return nil, err
		}
		if seg.timeIdxBytes, err = indexBytes(s.TimeIndex, index.TimeEntrySize); err != nil {
			return nil, err
		}
		segs = append(segs, seg)
	}
	return segs, nil
}

// indexBytes is the size of an index file rounded down to whole entries, the
// sizeInBytes Kafka's AbstractIndex reports after loading it; 0 when the file
// is missing, which Kafka would create empty.
func indexBytes(path string, esize int) (int64, error) {
	if path == "" {
		return 0, nil
	}
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return fi.Size() - fi.Size()%int64(esize), nil
}

// segmentScan streams the valid batches of a segment's .log, failing on
// anything a broker's recovery would cut off: a bad checksum, a torn entry or
// an offset that does not fit the segment. A zero-filled tail (preallocation)
// ends the data.
type segmentScan struct {
	seg     *logfmt.SegmentFile
	dr      *logfmt.DeepReader // over seg, with one worker unless a stream
	base    int64
	trusted bool  // skip the checksums, verified earlier in the same pass
	last    int64 // last offset of the previous batch
	err     error
}

func openScan(path string, base int64) (*segmentScan, error) {
	f, err := logfmt.OpenSegment(path)
	if err != nil {
		return nil, err
	}
	return &segmentScan{seg: f, dr: logfmt.NewDeepReader(f.SegmentReader, 1), base: base, last: base - 1}, nil
}

// openStream opens a segment for a pass over all of it, reading ahead so
// that the kernel's copy of the file is off the pass's critical path, and
// decoding its batches on o.BatchWorkers goroutines; skip tells which
// batches' records the pass will not read (logfmt.DeepReader.Skip).
// (Mapping the file instead made no difference here: the pass is bound by
// parsing and the offset map, and then waits on memory for the checksums.)
func openStream(path string, base int64, o *Options, skip func(*logfmt.Batch) bool) (*segmentScan, error) {
	s, err := openScan(path, base)
	if err != nil {
		return nil, err
	}
	s.seg.ReadAhead()
	s.dr = logfmt.NewDeepReader(s.seg.SegmentReader, o.BatchWorkers)
	s.dr.MaxRecordBytes, s.dr.Skip = o.MaxRecordBytes, skip
	return s, nil
}

func (s *segmentScan) Next() bool {
	if s.err != nil || !s.dr.Next() {
		if s.err == nil {
			s.err = s.dr.Err()
			if s.err == nil && s.dr.End() == logfmt.EndTorn {
				s.err = logfmt.Corruptf(s.seg.File(), s.dr.Pos(), "%s; recover the log before compacting it", s.dr.EndDetail())
			}
		}
		return false
	}
	b := s.dr.Batch()
	if !s.trusted {
		if err := b.Validate(); err != nil {
			s.err = logfmt.WithFile(err, s.seg.File(), 0)
			return false
		}
	}
	if d := b.LastOffset() - s.base; d < 0 || d > 1<<31-1 {
		s.err = logfmt.Corruptf(s.seg.File(), b.Pos, "offset %d does not fit a segment based at %d", b.LastOffset(), s.base)
		return false
	}
	// Offsets must increase from batch to batch: the offset map and the
	// rewrite both rely on it. (A legacy wrapper's first offset needs its
	// payload; its own offset, the last, is checked instead.)
	first := b.LastOffset()
	if b.Magic() >= 2 {
		first = b.Header().BaseOffset()
	}
	if first <= s.last || b.LastOffset() < first {
		s.err = logfmt.Corruptf(s.seg.File(), b.Pos, "offsets %d to %d are not above the previous batch's last offset %d", first, b.LastOffset(), s.last)
		return false
	}
	s.last = b.LastOffset()
	return true
}

func (s *segmentScan) Batch() *logfmt.Batch { return s.dr.Batch() }
func (s *segmentScan) Err() error           { return s.err }

func (s *segmentScan) Close() error {
	s.dr.Close()
	return s.seg.Close()
}

// firstBatchTimestamp is LogSegment.getFirstBatchTimestamp: the max timestamp
// of the segment's first batch, or -1 when the segment is empty or the batch
// carries none (magic 0).
func firstBatchTimestamp(s *segment) (int64, error) {
	if s.size == 0 {
		return logfmt.NoTimestamp, nil
	}
	sc, err := openScan(s.Log, s.Base)
	if err != nil {
		return 0, err
	}
	defer sc.Close()
	if sc.Next() {
		return sc.Batch().MaxTimestamp(), nil
	}
	return logfmt.NoTimestamp, sc.Err()
}

// largestTimestamp is LogSegment.largestTimestamp: the segment's maximum
// record timestamp as its time index's last entry records it, or the .log's
// modification time when that is unknown.
func largestTimestamp(s *segment) (int64, error) {
	ts := logfmt.NoTimestamp
	if s.TimeIndex != "" {
		f, err := safefile.Open(s.TimeIndex)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return 0, err
		}
		if err == nil {
			defer f.Close()
			fi, err := f.Stat()
			if err != nil {
				return 0, err
			}
			r := index.NewTimeReader(f, fi.Size(), s.Base, s.TimeIndex)
			for r.Next() {
				ts = r.Entry().Timestamp
			}
			if err := r.Err(); err != nil {
				return 0, err
			}
		}
	}
	if ts < 0 {
		return s.mtime, nil
	}
	return ts, nil
}

// nextOffset is LogSegment.readNextOffset: one past the last offset in the
// segment, or its base offset when it is empty. It starts from the last
// offset-index entry when that entry points at a batch holding its offset,
// and from the start of the file otherwise.
func nextOffset(s *segment) (int64, error) {
	start := indexedStart(s)
	next, err := scanNext(s, start)
	if err != nil && start > 0 {
		return scanNext(s, 0)
	}
	return next, err
}

func scanNext(s *segment, pos int64) (int64, error) {
	sc, err := openScan(s.Log, s.Base)
	if err != nil {
		return 0, err
	}
	defer sc.Close()
	sc.seg.SeekTo(pos)
	next := s.Base
	for sc.Next() {
		next = sc.Batch().LastOffset() + 1
	}
	return next, sc.Err()
}

// indexedStart is the position of the last valid offset-index entry, 0 when
// there is none.
func indexedStart(s *segment) int64 {
	if s.Index == "" || s.offsetIdxBytes == 0 {
		return 0
	}
	f, err := safefile.Open(s.Index)
	if err != nil {
		return 0
	}
	defer f.Close()
	r := index.NewOffsetReader(f, s.offsetIdxBytes, s.Base, s.Index)
	var pos int64
	for r.Next() {
		pos = int64(r.Entry().Position)
	}
	if pos >= s.size {
		return 0
	}
	return pos
}
