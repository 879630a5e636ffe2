package reindex

import (
	"maps"

	"github.com/logtool/logtool/index"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/snapshot"
)

// ProducerState is the part of Kafka's ProducerStateManager that decides the
// transaction index: which producers have a transaction open, and the offset
// it began at. Replaying a partition's v2 batches through Apply yields the
// aborted transactions LogSegment.recover writes to .txnindex.
type ProducerState struct {
	open map[int64]int64 // producer id → first offset of its open transaction
}

// NewProducerState returns the state of a partition with no producers.
func NewProducerState() *ProducerState {
	return &ProducerState{open: map[int64]int64{}}
}

// Load replaces the state with a producer snapshot's. Only entries with a
// current transaction matter here. Kafka also drops producers whose last
// write is older than the producer id expiration, by the wall clock; an
// offline rebuild keeps them, because expiry never applies to a producer with
// an open transaction and the clock of the rebuild is not the broker's.
func (p *ProducerState) Load(entries []snapshot.Entry) {
	clear(p.open)
	for _, e := range entries {
		if e.CurrentTxnFirstOffset >= 0 {
			p.open[e.ProducerID] = e.CurrentTxnFirstOffset
		}
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
		switch {
		case h.IsTransactional() && !open:
			p.open[pid] = h.BaseOffset()
		case !h.IsTransactional() && open:
			return index.AbortedTxn{}, false, logfmt.Corruptf("", b.Pos,
				"non-transactional batch from producer %d, whose transaction from offset %d is open (Kafka's recovery stops with InvalidTxnStateException)", pid, first)
		}
		return index.AbortedTxn{}, false, nil
	}
	t, ok, err := markerType(b, it)
	if err != nil || !ok {
		// An empty control batch is what the cleaner leaves of a marker whose
		// transaction it removed entirely: nothing to complete.
		return index.AbortedTxn{}, false, err
	}
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

// markerType reads the control type of a control batch's first record, as
// EndTransactionMarker.deserialize does. ok is false for an empty batch.
func markerType(b *logfmt.Batch, it *logfmt.RecordIter) (logfmt.ControlType, bool, error) {
	if err := it.Reset(b); err != nil {
		return 0, false, err
	}
	if !it.Next() {
		return 0, false, it.Err()
	}
	_, t, err := logfmt.ParseControlKey(it.Record().Key)
	if err != nil {
		return 0, false, logfmt.Corruptf("", b.Pos, "control batch: %v", err)
	}
	if !t.IsTxnMarker() {
		return 0, false, logfmt.Corruptf("", b.Pos, "control batch from producer %d holds a %s record, not a transaction marker (Kafka's recovery stops on it)",
			b.Header().ProducerID(), t)
	}
	return t, true, nil
}
