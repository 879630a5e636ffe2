package testutil

import (
	"github.com/logtool/logtool/index"
	"github.com/logtool/logtool/logfmt"
)

// Rebuilt is a segment replayed the way LogSegment.recover replays it.
type Rebuilt struct {
	*index.Recovery
	Batches int
	// Stop is the corruption that ended the valid prefix, as recovery would
	// truncate there; nil when the data ended (cleanly, in zeros or torn).
	Stop      error
	End       logfmt.End
	EndDetail string
}

// RebuildSegment replays the .log at path, whose file name says base, and
// returns the offset and time index entries recovery writes for it: the
// expected indexes tests compare writers' output with.
// visit, when not nil, sees every valid batch in order (the transaction index
// rebuild needs them). The returned error is for I/O only; corruption ends
// the valid prefix and is reported in Stop.
func RebuildSegment(path string, base, intervalBytes int64, visit func(*logfmt.Batch) error) (*Rebuilt, error) {
	seg, err := logfmt.OpenSegment(path)
	if err != nil {
		return nil, err
	}
	defer seg.Close()
	r := &Rebuilt{Recovery: index.NewRecovery(base, intervalBytes)}
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
