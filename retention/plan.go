package retention

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"

	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/logfmt/checkpoint"
	"github.com/logtool/logtool/logfmt/layout"
	"github.com/logtool/logtool/logfmt/logseg"
)

// segment is one segment as the rules see it.
type segment struct {
	logseg.Segment
	largest *Timestamp // read on first use
}

// timestamp returns the segment's largest timestamp, reading it once. It is
// LogSegment.largestTimestamp but for one case: where a broker would have
// created the missing time index empty and taken the modification time, the
// records' timestamps count, the modification time only when none has one.
func (s *segment) timestamp() (Timestamp, error) {
	if s.largest != nil {
		return *s.largest, nil
	}
	ms, src, err := s.LargestTimestamp()
	if err == nil && src == logseg.FromMtime && s.Load == logseg.TimeIndexCreated {
		var rec int64
		if rec, err = s.RecordsMaxTimestamp(); rec >= 0 {
			ms, src = rec, logseg.FromRecords
		}
	}
	if err != nil {
		return Timestamp{}, err
	}
	s.largest = &Timestamp{Ms: ms, Source: src}
	return *s.largest, nil
}

// partitionLog is the partition as UnifiedLog sees it while deleting: the
// remaining segments and its offsets. The rules only remove segments from
// the front.
type partitionLog struct {
	segs          []*segment
	logStart      int64
	logEnd        int64
	highWatermark int64
	deleted       []Deletion
	rolled        *segment
}

// deleteOldSegments is UnifiedLog.deleteOldSegments with one predicate:
// deletableSegments picks segments from the oldest on while the predicate
// holds, stopping at one whose offsets reach the high watermark and never
// taking a last segment that is empty; deleteSegments then rolls first if
// that is all of them, and moves the log start offset to the first segment
// kept.
func (l *partitionLog) deleteOldSegments(rule Rule, deletable func(i int) (bool, error)) error {
	n := 0
	for i, s := range l.segs {
		last := i == len(l.segs)-1
		upper := l.logEnd
		if !last {
			upper = l.segs[i+1].Base
		}
		// Kafka asks the predicate before the emptiness test, but its
		// answer for an empty last segment changes nothing: the walk
		// stops there either way.
		if l.highWatermark < upper || last && s.Size == 0 {
			break
		}
		ok, err := deletable(i)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		n++
	}
	if n == 0 {
		return nil
	}
	if n == len(l.segs) {
		// The last segment is not empty, so its base is below the log end
		// offset and the new segment's name is free.
		l.rolled = &segment{Segment: logseg.Segment{Segment: layout.Segment{Base: l.logEnd}}}
		l.segs = append(l.segs, l.rolled)
	}
	for _, s := range l.segs[:n] {
		l.deleted = append(l.deleted, Deletion{Segment: s.Segment.Segment, Bytes: s.Size, Rule: rule, Largest: s.largest})
	}
	l.segs = l.segs[n:]
	l.logStart = max(l.logStart, l.segs[0].Base)
	return nil
}

// applyRules runs Kafka's three rules in its order.
func (l *partitionLog) applyRules(o Options, r *Result) error {
	err := l.deleteOldSegments(RuleLogStart, func(i int) (bool, error) {
		return i+1 < len(l.segs) && l.segs[i+1].Base <= l.logStart, nil
	})
	if err != nil {
		return err
	}
	if !o.Delete {
		return nil
	}
	if o.RetentionBytes >= 0 {
		var size int64
		for _, s := range l.segs {
			size += s.Size
		}
		if size >= o.RetentionBytes {
			diff := size - o.RetentionBytes
			err := l.deleteOldSegments(RuleBytes, func(i int) (bool, error) {
				if diff-l.segs[i].Size < 0 {
					return false, nil
				}
				diff -= l.segs[i].Size
				return true, nil
			})
			if err != nil {
				return err
			}
		}
	}
	if o.RetentionMs >= 0 {
		return l.deleteOldSegments(RuleTime, func(i int) (bool, error) {
			ts, err := l.segs[i].timestamp()
			// Java's long subtraction wraps like Go's, so far-off
			// timestamps compare as they would in a broker.
			return o.NowMs-ts.Ms > o.RetentionMs, err
		})
	}
	return nil
}

// plan is what a run changes in one partition directory.
type plan struct {
	dir       string
	res       *Result
	named     bool // the directory name gives topic and partition, so the root checkpoints apply
	newStart  int64
	rollBase  int64
	epochPath string
	epochs    []byte   // the new leader-epoch-checkpoint; nil to leave it
	snapshots []string // producer snapshots to delete
}

// newPlan reads a partition directory and decides what to delete, filling
// in r. It changes nothing.
func newPlan(dir string, roots *rootCheckpoints, o Options, r *Result) (*plan, error) {
	part, err := layout.ReadPartition(dir)
	if err != nil {
		return nil, err
	}
	r.Topic, r.Partition = part.Dir.Topic, part.Dir.Partition
	// A broker follows the links: deleting around them would act on half
	// the partition, and what they point at is not logtool's to delete.
	if err := part.NoSymlinks(); err != nil {
		return nil, err
	}
	named := part.Dir.Topic != ""
	if !named {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s: not named <topic>-<partition>; the log directory's checkpoints are neither read nor updated for it", dir))
	}
	if n := len(part.Leftovers); n > 0 && o.DryRun {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s: %d file(s) left by an interrupted operation; a real run completes it first, which may change what is deleted", dir, n))
	}
	loaded, err := logseg.OpenPartition(part)
	if err != nil {
		return nil, err
	}
	segs := make([]*segment, len(loaded))
	for i := range loaded {
		segs[i] = &segment{Segment: loaded[i]}
	}
	if len(segs) == 0 {
		r.Warnings = append(r.Warnings, dir+": no segments")
		return nil, nil
	}
	// A last segment that ends in a torn batch fails here: its log end
	// offset, and so the base of a rolled segment, is for a broker's
	// recovery to settle, and retention must not delete around the tear.
	logEnd, err := segs[len(segs)-1].NextOffset()
	if err != nil {
		return nil, err
	}
	l := &partitionLog{segs: segs, logStart: segs[0].Base, logEnd: logEnd, highWatermark: logEnd}
	r.HighWatermarkAssumed = true
	if named {
		if off, ok := lookup(roots.logStart, part.Dir.Topic, part.Dir.Partition); ok && off > l.logStart {
			l.logStart = off
		}
		if hw, ok := lookup(roots.replication, part.Dir.Topic, part.Dir.Partition); ok {
			// UnifiedLog.updateHighWatermark bounds it below by the log
			// start offset first, then above by the log end offset.
			switch {
			case hw < l.logStart:
				hw = l.logStart
			case hw >= logEnd:
				hw = logEnd
			}
			l.highWatermark, r.HighWatermarkAssumed = hw, false
		}
	}
	r.PreviousLogStartOffset, r.LogEndOffset, r.HighWatermark = l.logStart, logEnd, l.highWatermark
	if err := l.applyRules(o, r); err != nil {
		return nil, err
	}
	r.Deleted, r.LogStartOffset, r.SegmentsRemaining = l.deleted, l.logStart, len(l.segs)
	for _, d := range l.deleted {
		r.BytesDeleted += d.Bytes
	}
	for _, s := range l.segs {
		r.BytesRemaining += s.Size
	}
	p := &plan{dir: dir, res: r, named: named, newStart: l.logStart}
	if l.rolled != nil {
		p.rollBase = l.rolled.Base
		r.Rolled = filepath.Join(dir, layout.SegmentName(p.rollBase, layout.LogExt))
	}
	if first := l.segs[0]; first.Size > 0 || len(l.segs) > 1 {
		// Only a report: a segment that cannot be read here will stop the
		// time rule of a later run, not this one.
		ts, err := first.timestamp()
		if err != nil {
			r.Warnings = append(r.Warnings, fmt.Sprintf("oldest remaining timestamp: %v", err))
		} else {
			r.OldestRemaining = &ts
		}
	}
	// Snapshots and epochs below the log start are cleaned up even when no
	// segment goes now, as a loader would: a run cut short after deleting
	// the segments leaves only this to do.
	p.snapshots = snapshotsBelow(part.Snapshots, p.newStart)
	p.epochPath = filepath.Join(dir, layout.LeaderEpochCheckpointFile)
	if p.epochs, err = trimEpochFile(p.epochPath, p.newStart); err != nil {
		return nil, err
	}
	r.SnapshotsDeleted, r.EpochsTrimmed = p.snapshots, p.epochs != nil
	// Refused now rather than half way through the deletions: a file that
	// is a link is never deleted, nor rewritten through.
	files := slices.Clone(p.snapshots)
	if p.epochs != nil {
		files = append(files, p.epochPath)
	}
	for _, d := range r.Deleted {
		files = append(files, d.Segment.Log, d.Segment.Index, d.Segment.TimeIndex, d.Segment.TxnIndex)
	}
	if err := safefile.NoSymlinks(files...); err != nil {
		return nil, err
	}
	return p, nil
}

// changes reports whether the plan changes anything on disk.
func (p *plan) changes() bool {
	return p != nil && (len(p.res.Deleted) > 0 || len(p.snapshots) > 0 || p.epochs != nil)
}

// snapshotsBelow picks the producer snapshots (paths sorted by offset) that
// go when the log starts at start: all below it but the newest at or below
// it, which is where a loader would begin rebuilding producer state.
func snapshotsBelow(snapshots []string, start int64) []string {
	keep := -1
	for i, path := range snapshots {
		if layout.ParseFileName(filepath.Base(path)).Base <= start {
			keep = i
		}
	}
	var del []string
	for i, path := range snapshots {
		if i != keep && layout.ParseFileName(filepath.Base(path)).Base < start {
			del = append(del, path)
		}
	}
	return del
}

// trimEpochFile returns the leader-epoch-checkpoint Kafka would write after
// truncating from start, or nil when it would not write one (no file, or no
// entry at or below start) or would write the same bytes.
func trimEpochFile(path string, start int64) ([]byte, error) {
	old, err := safefile.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	lines, err := checkpoint.ReadLeaderEpochs(bytes.NewReader(old), path)
	if err != nil {
		return nil, err
	}
	epochs, err := loadEpochs(lines, path)
	if err != nil {
		return nil, err
	}
	trimmed, removed := truncateFromStart(epochs, start)
	if !removed {
		return nil, nil
	}
	b := checkpoint.AppendLeaderEpochs(nil, trimmed)
	if bytes.Equal(b, old) {
		return nil, nil
	}
	return b, nil
}
