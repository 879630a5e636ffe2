package compact

import (
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/logseg"
)

// loadProducers is a partition's producer state at its log end offset, as
// a broker's ProducerStateManager holds it after loading: the snapshot
// logseg.LatestSnapshot picks, then every batch after it replayed, less the
// producers that expired by now (removeExpiredProducers). skipped are the
// snapshots passed over because they do not parse.
func loadProducers(snapshots []string, segs []segment, logStart, leo int64, o *Options) (ps *logseg.ProducerState, skipped []*logfmt.CorruptError, err error) {
	snap, err := logseg.LatestSnapshot(snapshots, logStart, leo)
	if err != nil {
		return nil, nil, err
	}
	ps = logseg.NewProducerState()
	ps.Load(snap.Entries)
	it := o.recordIter()
	for i := range segs {
		// A segment that ends at or before the snapshot holds nothing to
		// replay; reading it anyway would read a whole log whose snapshot
		// is at its end.
		end := leo
		if i+1 < len(segs) {
			end = segs[i+1].Base
		}
		if end <= snap.Offset {
			continue
		}
		if err := replay(ps, &segs[i], snap.Offset, &it, o); err != nil {
			return nil, nil, err
		}
	}
	ps.Expire(o.Now, o.ProducerIDExpiration)
	return ps, snap.Skipped, nil
}

// replay applies the batches of s at or after offset from. A batch Kafka's
// loader stops on stops the cleaning of the partition too.
func replay(ps *logseg.ProducerState, s *segment, from int64, it *logfmt.RecordIter, o *Options) error {
	sc, err := openScan(s, o)
	if err != nil {
		return err
	}
	defer sc.Close()
	// Headers, and the records of markers only: a large entry is a view.
	sc.HeaderViews = (*logfmt.Batch).IsControl
	it.File = s.Log
	for sc.Next() {
		b := sc.Batch()
		if b.LastOffset() < from {
			continue
		}
		if _, _, err := ps.Apply(b, it); err != nil {
			return logfmt.WithFile(err, s.Log, 0)
		}
	}
	return sc.Err()
}

// controlType reads the type of a control batch's first record, which is all
// Kafka looks at. ok is false for an empty batch (its records were cleaned).
func controlType(b *logfmt.Batch, it *logfmt.RecordIter) (t logfmt.ControlType, ts int64, ok bool, err error) {
	if err := it.Reset(b); err != nil {
		return 0, 0, false, err
	}
	if !it.Next() {
		return 0, 0, false, it.Err()
	}
	r := it.Record()
	_, t, err = logfmt.ParseControlKey(r.Key)
	if err != nil {
		return 0, 0, false, logfmt.Corruptf(it.File, b.Pos, "control batch: %v", err)
	}
	return t, r.Timestamp, true, nil
}
