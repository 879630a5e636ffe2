package compact

import (
	"errors"
	"io/fs"
	"math"
	"path/filepath"

	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/snapshot"
)

// producer is the part of Kafka's ProducerStateEntry the cleaner depends on.
type producer struct {
	epoch          int16
	lastDataOffset int64 // last offset of the producer's last data batch; -1 when unknown
	lastTimestamp  int64
	txnFirstOffset int64 // first offset of the open transaction; -1 when none
}

// producerState is a partition's producer state at its log end offset, as
// a broker's ProducerStateManager holds it after loading: the latest usable
// snapshot, then every batch after it replayed.
type producerState map[int64]*producer

// loadProducers rebuilds the producer state at leo from the snapshots
// (newest first that parses and is not past leo) and the log after it, then
// drops producers that expired by now the way removeExpiredProducers does.
func loadProducers(snapshots []string, segs []segment, leo int64, o *Options) (producerState, error) {
	ps := producerState{}
	from := int64(0)
	if len(segs) > 0 {
		from = segs[0].Base
	}
	for i := len(snapshots) - 1; i >= 0; i-- {
		off, ok := snapshot.OffsetFromName(filepath.Base(snapshots[i]))
		if !ok || off > leo || off < from {
			continue
		}
		entries, err := snapshot.Read(snapshots[i], math.MaxInt64)
		if _, corrupt := logfmt.AsCorrupt(err); corrupt || errors.Is(err, fs.ErrNotExist) {
			// A broker deletes a snapshot it cannot read and tries an older one.
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			ps[e.ProducerID] = &producer{epoch: e.Epoch, lastDataOffset: e.LastOffset, lastTimestamp: e.Timestamp, txnFirstOffset: e.CurrentTxnFirstOffset}
		}
		from = off
		break
	}
	it := o.recordIter()
	for i := range segs {
		s := &segs[i]
		// A segment that ends at or before from holds nothing to replay;
		// reading it anyway would read a whole log whose snapshot is at its end.
		end := leo
		if i+1 < len(segs) {
			end = segs[i+1].Base
		}
		if end <= from {
			continue
		}
		if err := ps.replay(s, from, &it, o); err != nil {
			return nil, err
		}
	}
	for id, p := range ps {
		if p.txnFirstOffset < 0 && o.Now-p.lastTimestamp >= o.ProducerIDExpiration {
			delete(ps, id)
		}
	}
	return ps, nil
}

// replay applies the batches of s at or after offset from, as
// ProducerAppendInfo.append does when a broker loads a log.
func (ps producerState) replay(s *segment, from int64, it *logfmt.RecordIter, o *Options) error {
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
		if b.Magic() < 2 || b.LastOffset() < from {
			continue
		}
		h := b.Header()
		if h.ProducerID() < 0 {
			continue
		}
		if h.IsControl() {
			t, ts, ok, err := controlType(b, it)
			if err != nil {
				return err
			}
			// The producer gets an entry even when the marker, already
			// cleaned, changes nothing (ProducerStateManager.update).
			p := ps.get(h.ProducerID())
			if !ok || !t.IsTxnMarker() {
				continue
			}
			p.bumpEpoch(h.ProducerEpoch())
			p.txnFirstOffset, p.lastTimestamp = -1, ts
			continue
		}
		p := ps.get(h.ProducerID())
		p.bumpEpoch(h.ProducerEpoch())
		p.lastDataOffset, p.lastTimestamp = h.LastOffset(), h.MaxTimestamp()
		if h.IsTransactional() && p.txnFirstOffset < 0 {
			p.txnFirstOffset = h.BaseOffset()
		}
	}
	return sc.Err()
}

func (ps producerState) get(id int64) *producer {
	p := ps[id]
	if p == nil {
		p = &producer{epoch: -1, lastDataOffset: -1, lastTimestamp: -1, txnFirstOffset: -1}
		ps[id] = p
	}
	return p
}

// bumpEpoch is ProducerStateEntry.maybeUpdateProducerEpoch: a new epoch
// forgets the batches of the old one.
func (p *producer) bumpEpoch(epoch int16) {
	if p.epoch != epoch {
		p.epoch, p.lastDataOffset = epoch, -1
	}
}

// firstUnstableOffset is the first offset of the earliest open transaction,
// or -1 when none is open.
func (ps producerState) firstUnstableOffset() int64 {
	first := int64(-1)
	for _, p := range ps {
		if p.txnFirstOffset >= 0 && (first < 0 || p.txnFirstOffset < first) {
			first = p.txnFirstOffset
		}
	}
	return first
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
