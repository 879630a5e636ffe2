package compact

import (
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/logseg"
)

// segment is a segment as the loader left it (logseg).
type segment = logseg.Segment

// segmentScan streams the batches recovery keeps (logseg.Batches), failing
// on what else it would cut off, a torn entry, and on offsets that do not
// increase from batch to batch, which the offset map and the rewrite rely
// on. A zero-filled tail (preallocation) ends the data.
type segmentScan struct {
	*logseg.Batches
	dr   *logfmt.DeepReader // a stream's, for the cleaning pass's jobs
	last int64              // last offset of the previous batch
	err  error
}

func openScan(s *segment, o *Options) (*segmentScan, error) {
	return openWith(s, o, logfmt.PlainWindows)
}

// openStream opens a segment for a pass over all of it, reading ahead so
// that the kernel's copy of the file is off the pass's critical path, and
// decoding its batches on o.BatchWorkers goroutines; skip tells which
// batches' records the pass will not read (logfmt.DeepReader.Skip).
// (Mapping the file instead made no difference here: the pass is bound by
// parsing and the offset map, and then waits on memory for the checksums.)
func openStream(s *segment, o *Options, skip func(*logfmt.Batch) bool) (*segmentScan, error) {
	sc, err := openWith(s, o, logfmt.ReadAheadWindows)
	if err != nil {
		return nil, err
	}
	sc.dr = sc.Decode(o.BatchWorkers)
	sc.dr.MaxRecordBytes, sc.dr.Skip = o.MaxRecordBytes, skip
	return sc, nil
}

func openWith(s *segment, o *Options, src logfmt.WindowSource) (*segmentScan, error) {
	b, err := s.Batches(0, src)
	if err != nil {
		return nil, err
	}
	b.Job = o.Job
	return &segmentScan{Batches: b, last: s.Base - 1}, nil
}

func (s *segmentScan) Next() bool {
	if s.err != nil || !s.Batches.Next() {
		if s.err == nil && s.Batches.Err() == nil && s.End() == logfmt.EndTorn {
			s.err = logfmt.Corruptf(s.File(), s.Pos(), "%s; recover the log before compacting it", s.EndDetail())
		}
		return false
	}
	// A legacy wrapper's first offset needs its payload; its own offset,
	// the last, is checked instead.
	b := s.Batch()
	first := b.LastOffset()
	if b.Magic() >= 2 {
		first = b.Header().BaseOffset()
	}
	if first <= s.last || b.LastOffset() < first {
		s.err = logfmt.Corruptf(s.File(), b.Pos, "offsets %d to %d are not above the previous batch's last offset %d", first, b.LastOffset(), s.last)
		return false
	}
	s.last = b.LastOffset()
	return true
}

func (s *segmentScan) Err() error {
	if s.err != nil {
		return s.err
	}
	return s.Batches.Err()
}
