package reindex

import (
	"cmp"
	"maps"
	"slices"

	"github.com/logtool/logtool/index"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/snapshot"
)

// ProducerState is Kafka's ProducerStateManager as a broker's recovery
// rebuilds it: each producer's entry, as a producer snapshot stores it, and
// which producers have a transaction open, with the offset it began at.
// Replaying a partition's v2 batches through Apply yields the aborted
// transactions LogSegment.recover writes to .txnindex, and Snapshot the
// producer snapshot a broker would write at the end.
type ProducerState struct {
	open      map[int64]int64 // producer id → first offset of its open transaction
	producers map[int64]*snapshot.Entry
}

// NewProducerState returns the state of a partition with no producers.
func NewProducerState() *ProducerState {
	return &ProducerState{open: map[int64]int64{}, producers: map[int64]*snapshot.Entry{}}
}

// Load replaces the state with a producer snapshot's. Kafka also drops
// producers whose last write is older than the producer id expiration, by
// the wall clock; an offline rebuild keeps them, because expiry never applies
// to a producer with an open transaction and the clock of the rebuild is not
// the broker's.
func (p *ProducerState) Load(entries []snapshot.Entry) {
	clear(p.open)
	clear(p.producers)
	for _, e := range entries {
		p.producers[e.ProducerID] = &e
		if e.CurrentTxnFirstOffset >= 0 {
			p.open[e.ProducerID] = e.CurrentTxnFirstOffset
		}
	}
}

// Snapshot returns every producer's entry, by producer id: the content of
// the snapshot a broker writes at the offset reached.
func (p *ProducerState) Snapshot() []snapshot.Entry {
	out := make([]snapshot.Entry, 0, len(p.producers))
	for _, e := range p.producers {
		out = append(out, *e)
	}
	slices.SortFunc(out, func(a, b snapshot.Entry) int { return cmp.Compare(a.ProducerID, b.ProducerID) })
	return out
}

// entry is ProducerStateManager's entry for pid, made empty
// (ProducerStateEntry.empty) when the producer is new.
func (p *ProducerState) entry(pid int64) *snapshot.Entry {
	e := p.producers[pid]
	if e == nil {
		e = &snapshot.Entry{ProducerID: pid, Epoch: -1, LastSequence: logfmt.NoSequence, LastOffset: -1, Timestamp: logfmt.NoTimestamp,
			CoordinatorEpoch: -1, CurrentTxnFirstOffset: -1}
		p.producers[pid] = e
	}
	return e
}

// bumpEpoch is ProducerStateEntry.maybeUpdateProducerEpoch: a new epoch
// forgets the batches of the old one.
func bumpEpoch(e *snapshot.Entry, epoch int16) {
	if e.Epoch != epoch {
		e.Epoch, e.LastSequence, e.LastOffset, e.OffsetDelta = epoch, logfmt.NoSequence, -1, 0
	}
}

// Open returns the number of open transactions.
func (p *ProducerState) Open() int { return len(p.open) }

// Ongoing returns, for each producer with an open transaction, the offset
// it began at: what a broker counts as ongoing, and what holds the last
// stable offset back.
func (p *ProducerState) Ongoing() map[int64]int64 { return maps.Clone(p.open) }

// Apply updates the state with one batch, as ProducerAppendInfo.append does
// for a replicated batch during recovery, and returns the entry .txnindex
// gets when the batch is a marker that aborts a transaction with data.
// Batches without a producer id, and legacy ones, change nothing.
//
// A data batch becomes its producer's last batch (last sequence, last
// offset, offset delta, max timestamp) under its epoch; a marker sets the
// producer's epoch, coordinator epoch and timestamp (its record's) and
// closes the transaction; an empty control batch, what the cleaner leaves
// of a marker, only makes the producer known.
//
// A transaction opens at the base offset of its producer's first
// transactional data batch. A marker closes it; only an ABORT of an open
// transaction is indexed, with the last stable offset Kafka computes at that
// moment: the first offset of the earliest open transaction of any other
// producer, else the marker's offset plus one. A marker with no open
// transaction, and a COMMIT, give nothing.
//
// Two things make Kafka's recovery fail rather than go on, and are returned
// as errors with the state unchanged: a non-transactional data batch from a
// producer with an open transaction, and a control batch whose first record
// is not a transaction marker. it reads the marker's record; its buffers are
// reused.
func (p *ProducerState) Apply(b *logfmt.Batch, it *logfmt.RecordIter) (index.AbortedTxn, bool, error) {
	if b.Magic() < 2 {
		return index.AbortedTxn{}, false, nil
	}
	h := b.Header()
	pid := h.ProducerID()
	if pid < 0 {
		return index.AbortedTxn{}, false, nil
	}
	first, open := p.open[pid]
	if !h.IsControl() {
		if !h.IsTransactional() && open {
			return index.AbortedTxn{}, false, logfmt.Corruptf("", b.Pos,
				"non-transactional batch from producer %d, whose transaction from offset %d is open (Kafka's recovery stops with InvalidTxnStateException)", pid, first)
		}
		e := p.entry(pid)
		bumpEpoch(e, h.ProducerEpoch())
		e.LastSequence, e.LastOffset, e.OffsetDelta, e.Timestamp = h.LastSequence(), h.LastOffset(), h.LastOffsetDelta(), h.MaxTimestamp()
		if h.IsTransactional() && !open {
			p.open[pid], e.CurrentTxnFirstOffset = h.BaseOffset(), h.BaseOffset()
		}
		return index.AbortedTxn{}, false, nil
	}
	m, ok, err := readMarker(b, it)
	if err != nil {
		return index.AbortedTxn{}, false, err
	}
	e := p.entry(pid)
	if !ok {
		// An empty control batch is what the cleaner leaves of a marker whose
		// transaction it removed entirely: nothing to complete.
		return index.AbortedTxn{}, false, nil
	}
	bumpEpoch(e, h.ProducerEpoch())
	e.CoordinatorEpoch, e.Timestamp, e.CurrentTxnFirstOffset = m.coordinatorEpoch, m.timestamp, -1
	t := m.t
	if !open {
		return index.AbortedTxn{}, false, nil
	}
	marker := h.BaseOffset()
	lso := marker + 1
	found := false
	for other, f := range p.open {
		if other != pid && (!found || f < lso) {
			lso, found = f, true
		}
	}
	delete(p.open, pid)
	if t != logfmt.ControlAbort {
		return index.AbortedTxn{}, false, nil
	}
	return index.AbortedTxn{ProducerID: pid, FirstOffset: first, LastOffset: marker, LastStableOffset: lso}, true, nil
}

// txnMarker is what a transaction marker's record says.
type txnMarker struct {
	t                logfmt.ControlType
	coordinatorEpoch int32
	timestamp        int64
}

// readMarker reads a control batch's first record as
// EndTransactionMarker.deserialize does. ok is false for an empty batch.
func readMarker(b *logfmt.Batch, it *logfmt.RecordIter) (txnMarker, bool, error) {
	if err := it.Reset(b); err != nil {
		return txnMarker{}, false, err
	}
	if !it.Next() {
		return txnMarker{}, false, it.Err()
	}
	r := it.Record()
	_, t, err := logfmt.ParseControlKey(r.Key)
	if err != nil {
		return txnMarker{}, false, logfmt.Corruptf("", b.Pos, "control batch: %v", err)
	}
	if !t.IsTxnMarker() {
		return txnMarker{}, false, logfmt.Corruptf("", b.Pos, "control batch from producer %d holds a %s record, not a transaction marker (Kafka's recovery stops on it)",
			b.Header().ProducerID(), t)
	}
	v, err := logfmt.ParseEndTxnMarker(r.Value)
	if err != nil {
		return txnMarker{}, false, logfmt.Corruptf("", b.Pos, "control batch: %v", err)
	}
	return txnMarker{t: t, coordinatorEpoch: v.CoordinatorEpoch, timestamp: r.Timestamp}, true, nil
}
