package retention

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"

	"github.com/logtool/logtool/index"
	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/layout"
)

// view is one file of a segment, or none when r is nil.
type view struct {
	r    io.ReaderAt
	size int64
	name string
}

// openView opens path for reading; an empty or missing path gives an empty
// view, since a segment's index files are optional.
func openView(path string) (view, func(), error) {
	if path == "" {
		return view{}, func() {}, nil
	}
	f, err := safefile.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return view{}, func() {}, nil
	}
	if err != nil {
		return view{}, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return view{}, nil, err
	}
	return view{r: f, size: st.Size(), name: path}, func() { f.Close() }, nil
}

// largestTimestamp is the segment's LogSegment.largestTimestamp: its
// greatest record timestamp, or the .log modification time when no record
// has one. The warning, when not "", says why an index was not used.
func largestTimestamp(s layout.Segment) (Timestamp, string, error) {
	var views [3]view
	for i, path := range []string{s.Log, s.TimeIndex, s.Index} {
		v, closeFn, err := openView(path)
		if err != nil {
			return Timestamp{}, "", err
		}
		defer closeFn()
		views[i] = v
	}
	if views[0].r == nil {
		return Timestamp{}, "", &fs.PathError{Op: "open", Path: s.Log, Err: fs.ErrNotExist}
	}
	ts, warning, err := largestIn(s.Base, views[0], views[1], views[2])
	if err != nil || ts.Ms >= 0 {
		return ts, warning, err
	}
	st, err := os.Stat(s.Log)
	if err != nil {
		return Timestamp{}, warning, err
	}
	return Timestamp{Ms: st.ModTime().UnixMilli(), Source: SourceMtime}, warning, nil
}

// largestIn finds the greatest record timestamp of a segment starting at
// base; Ms is -1 when no batch carries one. It trusts the last time index
// entry only when the batch holding that entry's offset has exactly that
// maximum timestamp, which both a live broker and recovery guarantee, and
// then scans just the batches from that batch's indexed position on, for a
// later one (LogSegment.readLargestTimestamp). Otherwise it scans every
// batch, so a missing, damaged or stale index costs time, not correctness.
func largestIn(base int64, log, timeIndex, offsetIndex view) (Timestamp, string, error) {
	var warning string
	if e, ok, why := lastTimeEntry(timeIndex, base); ok {
		pos := indexPosition(offsetIndex, base, e.Offset)
		sc, err := scanBatches(log, base, pos, e.Offset)
		switch {
		case err == nil && sc.atTarget == e.Timestamp:
			if sc.max > e.Timestamp {
				return Timestamp{Ms: sc.max, Source: SourceRecords}, "", nil
			}
			return Timestamp{Ms: e.Timestamp, Source: SourceTimeIndex}, "", nil
		case err != nil && pos == 0:
			return Timestamp{}, "", err
		}
		warning = fmt.Sprintf("%s: last entry (timestamp %d, offset %d) does not match the batches in %s; read every batch instead",
			timeIndex.name, e.Timestamp, e.Offset, log.name)
	} else if why != "" {
		warning = why + "; read every batch instead"
	}
	sc, err := scanBatches(log, base, 0, math.MaxInt64)
	if err != nil {
		return Timestamp{}, warning, err
	}
	return Timestamp{Ms: sc.max, Source: SourceRecords}, warning, nil
}

// lastTimeEntry streams a .timeindex and returns its last valid entry. A
// file holding bytes Kafka could not have written gives no entry and a
// reason, so the caller reads the batches instead.
func lastTimeEntry(v view, base int64) (index.TimeEntry, bool, string) {
	if v.r == nil {
		return index.TimeEntry{}, false, ""
	}
	r := index.NewTimeReader(v.r, v.size, base, v.name)
	var last index.TimeEntry
	n := 0
	for r.Next() {
		last, n = r.Entry(), n+1
	}
	if err := r.Err(); err != nil {
		return index.TimeEntry{}, false, err.Error()
	}
	if p := r.Problems(); len(p) > 0 {
		return index.TimeEntry{}, false, fmt.Sprintf("%s: %s (at byte %d)", v.name, p[0].Msg, p[0].Pos)
	}
	return last, n > 0, ""
}

// indexPosition is OffsetIndex.lookup: the position of the greatest entry
// whose offset is at most target, or 0. An unreadable index gives 0, which
// is always a correct place to start scanning.
func indexPosition(v view, base, target int64) int64 {
	if v.r == nil {
		return 0
	}
	r := index.NewOffsetReader(v.r, v.size, base, v.name)
	var pos int64
	for r.Next() {
		e := r.Entry()
		if e.Offset > target {
			break
		}
		pos = int64(e.Position)
	}
	return pos
}

// scanned is what scanBatches saw.
type scanned struct {
	batches  int
	max      int64 // greatest batch max timestamp; -1 when none has one
	last     int64 // last offset of the last batch; -1 when there was none
	atTarget int64 // max timestamp of the first batch reaching the target offset; -2 when none did
	end      logfmt.End
	endPos   int64 // where the data ended
	endMsg   string
}

// scanBatches reads the batches of a segment from byte pos to the end,
// checking each one's checksum and that its offsets belong to the segment.
// A torn or zero-filled tail ends the data, as recovery would cut it there.
func scanBatches(v view, base, pos, target int64) (scanned, error) {
	sc := scanned{max: -1, last: -1, atTarget: -2}
	seg := logfmt.NewSegmentReader(v.r, v.size, v.name)
	seg.SeekTo(pos)
	for seg.Next() {
		b := seg.Batch()
		if err := b.Validate(); err != nil {
			return sc, logfmt.WithFile(err, v.name, 0)
		}
		last := b.LastOffset()
		if last < base {
			return sc, logfmt.Corruptf(v.name, b.Pos, "last offset %d is below the segment's base offset %d", last, base)
		}
		ts := b.MaxTimestamp()
		if sc.atTarget == -2 && last >= target {
			sc.atTarget = ts
		}
		sc.max, sc.last = max(sc.max, ts), last
		sc.batches++
	}
	sc.end, sc.endPos, sc.endMsg = seg.End(), seg.Pos(), seg.EndDetail()
	return sc, seg.Err()
}
