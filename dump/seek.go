package dump

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/logtool/logtool/index"
	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/layout"
)

// sibling returns the path of the file with extension ext belonging to the
// same segment as it: from the partition listing when there is one, else
// next to it in the same directory. "" when there is none.
func sibling(it *item, ext string) string {
	if it.seg != nil {
		switch ext {
		case layout.LogExt:
			return it.seg.Log
		case layout.IndexExt:
			return it.seg.Index
		case layout.TimeIndexExt:
			return it.seg.TimeIndex
		}
		return ""
	}
	if it.name.Base < 0 || it.name.Leftover != "" {
		return ""
	}
	p := filepath.Join(filepath.Dir(it.path), layout.SegmentName(it.name.Base, ext))
	if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	return p
}

// seekStart finds where to start reading a segment for FromOffset and
// FromTime, as a broker serves a fetch: the greatest index entry not above
// the target, then a forward scan. It returns 0 when there is no index, no
// such entry, or the entry does not point at a valid batch.
func (d *dumper) seekStart(it *item, f *os.File, size int64) int64 {
	if it.name.Kind != layout.Log || it.name.Leftover != "" {
		return 0
	}
	base := it.name.Base
	idx := sibling(it, layout.IndexExt)
	var start int64
	var entry index.OffsetEntry
	if d.o.FromOffset != NoLimit && d.o.FromOffset > base && idx != "" {
		if e, ok := lookupOffset(idx, base, d.o.FromOffset); ok {
			start, entry = int64(e.Position), e
		}
	}
	if d.o.FromTime != NoTime {
		if tix := sibling(it, layout.TimeIndexExt); tix != "" && idx != "" {
			if te, ok := lookupTime(tix, base, d.o.FromTime); ok {
				if e, ok := lookupOffset(idx, base, te.Offset); ok && int64(e.Position) > start {
					start, entry = int64(e.Position), e
				}
			}
		}
	}
	if start == 0 {
		return 0
	}
	// Trust the index only as far as the bytes agree with it.
	sr := logfmt.NewSegmentReader(f, size, it.path)
	sr.SeekTo(start)
	if !sr.Next() || sr.Batch().Validate() != nil ||
		(sr.Batch().Magic() >= 2 && sr.Batch().Header().BaseOffset() > entry.Offset) {
		d.note(start, fmt.Sprintf("index entry for offset %d does not point at a valid batch; reading from the start", entry.Offset))
		return 0
	}
	return start
}

// lookupOffset streams an .index file for the greatest entry not above
// target (OffsetIndex.lookup).
func lookupOffset(path string, base, target int64) (index.OffsetEntry, bool) {
	f, size, err := openSized(path)
	if err != nil {
		return index.OffsetEntry{}, false
	}
	defer f.Close()
	var best index.OffsetEntry
	found := false
	r := index.NewOffsetReader(f, size, base, path)
	for r.Next() && r.Entry().Offset <= target {
		best, found = r.Entry(), true
	}
	return best, found
}

// lookupTime streams a .timeindex file for the greatest entry whose
// timestamp is not above ts (TimeIndex.lookup).
func lookupTime(path string, base, ts int64) (index.TimeEntry, bool) {
	f, size, err := openSized(path)
	if err != nil {
		return index.TimeEntry{}, false
	}
	defer f.Close()
	var best index.TimeEntry
	found := false
	r := index.NewTimeReader(f, size, base, path)
	for r.Next() && r.Entry().Timestamp <= ts {
		best, found = r.Entry(), true
	}
	return best, found
}

// lastIndexedTime is the last valid entry of a segment's time index: the
// largest timestamp of a segment that has been rolled.
func lastIndexedTime(s *layout.Segment) (int64, bool) {
	if s.TimeIndex == "" {
		return 0, false
	}
	f, size, err := openSized(s.TimeIndex)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	r := index.NewTimeReader(f, size, s.Base, s.TimeIndex)
	var ts int64
	found := false
	for r.Next() {
		ts, found = r.Entry().Timestamp, true
	}
	return ts, found
}

func openSized(path string) (*os.File, int64, error) {
	f, err := safefile.Open(path)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, st.Size(), nil
}
