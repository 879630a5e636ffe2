package index

import (
	"fmt"

	"github.com/logtool/logtool/logfmt"
)

// Rebuilt is a segment replayed the way LogSegment.recover replays it.
type Rebuilt struct {
	*Recovery
	Batches int
	// Stop is the corruption that ended the valid prefix, as recovery would
	// truncate there; nil when the data ended (cleanly, in zeros or torn).
	Stop      error
	End       logfmt.End
	EndDetail string
}

// RebuildSegment replays the .log at path, whose file name says base, and
// returns the offset and time index entries recovery writes for it.
// visit, when not nil, sees every valid batch in order (the transaction index
// rebuild needs them). The returned error is for I/O only; corruption ends
// the valid prefix and is reported in Stop.
func RebuildSegment(path string, base, intervalBytes int64, visit func(*logfmt.Batch) error) (*Rebuilt, error) {
	seg, err := logfmt.OpenSegment(path)
	if err != nil {
		return nil, err
	}
	defer seg.Close()
	r := &Rebuilt{Recovery: NewRecovery(base, intervalBytes)}
	for seg.Next() {
		b := seg.Batch()
		if err := b.Validate(); err != nil {
			r.Stop = logfmt.WithFile(err, path, 0)
			break
		}
		last := b.LastOffset()
		if d := last - base; d < 0 || d > 1<<31-1 {
			// LogSegment.recover's ensureOffsetInRange: the segment must be split.
			r.Stop = logfmt.Corruptf(path, b.Pos, "offset %d does not fit a segment based at %d", last, base)
			break
		}
		r.Add(last, b.MaxTimestamp(), b.Size())
		r.Batches++
		if visit != nil {
			if err := visit(b); err != nil {
				return nil, err
			}
		}
	}
	if err := seg.Err(); err != nil {
		if _, ok := logfmt.AsCorrupt(err); !ok {
			return nil, err
		}
		r.Stop = err
	}
	r.End, r.EndDetail = seg.End(), seg.EndDetail()
	r.Finish()
	return r, nil
}

// OffsetIndexBytes encodes the offset entries as a trimmed .index file.
func (r *Recovery) OffsetIndexBytes() ([]byte, error) {
	b := make([]byte, 0, len(r.Offsets)*OffsetEntrySize)
	var err error
	for _, e := range r.Offsets {
		if b, err = AppendOffsetEntry(b, r.Base, e); err != nil {
			return nil, fmt.Errorf("offset index entry %+v: %w", e, err)
		}
	}
	return b, nil
}

// TimeIndexBytes encodes the time entries as a trimmed .timeindex file.
func (r *Recovery) TimeIndexBytes() ([]byte, error) {
	b := make([]byte, 0, len(r.Times)*TimeEntrySize)
	var err error
	for _, e := range r.Times {
		if b, err = AppendTimeEntry(b, r.Base, e); err != nil {
			return nil, fmt.Errorf("time index entry %+v: %w", e, err)
		}
	}
	return b, nil
}
