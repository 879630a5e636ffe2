package dump

import (
	"os"
	"path/filepath"

	"github.com/logtool/logtool/logfmt/layout"
	"github.com/logtool/logtool/logfmt/logseg"
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
// such entry, or the entry does not point at a valid batch that can hold it.
func (d *dumper) seekStart(it *item) int64 {
	if it.name.Kind != layout.Log || it.name.Leftover != "" {
		return 0
	}
	s := logseg.Segment{Segment: layout.Segment{Base: it.name.Base, Log: it.path,
		Index: sibling(it, layout.IndexExt), TimeIndex: sibling(it, layout.TimeIndexExt)}}
	if s.Index == "" {
		return 0
	}
	var start int64
	floor := func(target int64) {
		e, ok, why := s.OffsetFloor(target)
		if why != "" {
			d.note(0, why+"; reading from the start")
		}
		if ok {
			start = max(start, int64(e.Position))
		}
	}
	if d.o.FromOffset != NoLimit && d.o.FromOffset > s.Base {
		floor(d.o.FromOffset)
	}
	if d.o.FromTime != NoTime {
		if te, ok, _ := s.TimeFloor(d.o.FromTime); ok {
			floor(te.Offset)
		}
	}
	return start
}
