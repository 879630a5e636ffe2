package compact

import (
	"container/heap"

	"github.com/logtool/logtool/index"
	"github.com/logtool/logtool/logfmt"
)

// txnMeta follows transactions while the cleaner walks the log, as Kafka's
// CleanedTransactionMetadata does: it tells which data batches belong to
// aborted transactions and when a COMMIT or ABORT marker no longer guards
// any data, and it collects the aborted transactions whose markers the
// cleaned segment keeps, for its .txnindex.
type txnMeta struct {
	pending   abortedHeap                // aborted transactions not yet reached, by first offset
	aborted   map[int64]*abortedProgress // producer → aborted transaction being walked
	committed map[int64]bool             // producers with a committed transaction being walked
	index     *[]index.AbortedTxn        // the cleaned segment's transaction index, when writing one
}

type abortedProgress struct {
	txn      index.AbortedTxn
	observed bool // a batch of the transaction was seen in this pass
}

func newTxnMeta() *txnMeta {
	return &txnMeta{aborted: map[int64]*abortedProgress{}, committed: map[int64]bool{}}
}

// add makes aborted transactions known; they take effect once the walk
// reaches their first offset.
func (m *txnMeta) add(txns []index.AbortedTxn) {
	for _, t := range txns {
		heap.Push(&m.pending, t)
	}
}

func (m *txnMeta) consumeUpTo(offset int64) {
	for len(m.pending) > 0 && m.pending[0].FirstOffset <= offset {
		t := heap.Pop(&m.pending).(index.AbortedTxn)
		if m.aborted[t.ProducerID] == nil {
			m.aborted[t.ProducerID] = &abortedProgress{txn: t}
		}
	}
}

// onControlBatch reports whether a control batch can be discarded. t and ok
// are its first record's type, ok false for an empty batch.
func (m *txnMeta) onControlBatch(h logfmt.BatchHeader, t logfmt.ControlType, ok bool) bool {
	m.consumeUpTo(h.LastOffset())
	if !ok {
		return true // an empty control batch was cleaned before
	}
	pid := h.ProducerID()
	switch t {
	case logfmt.ControlAbort:
		p := m.aborted[pid]
		delete(m.aborted, pid)
		// The marker stays while batches of its transaction remain.
		if p != nil && p.observed {
			if m.index != nil {
				*m.index = append(*m.index, p.txn)
			}
			return false
		}
		return true
	case logfmt.ControlCommit:
		traversed := m.committed[pid]
		delete(m.committed, pid)
		return !traversed
	}
	return false
}

// onDataBatch reports whether a data batch belongs to an aborted
// transaction. lastOffset and the producer fields are the batch's; legacy
// batches are never transactional.
func (m *txnMeta) onDataBatch(lastOffset int64, transactional bool, pid int64) bool {
	m.consumeUpTo(lastOffset)
	if !transactional {
		return false
	}
	if p := m.aborted[pid]; p != nil {
		p.observed = true
		return true
	}
	m.committed[pid] = true
	return false
}

// collectAborted returns the aborted transactions that overlap [start, upper):
// marker at or after start and first offset before upper, the selection of
// UnifiedLog.collectAbortedTransactions.
func collectAborted(all []index.AbortedTxn, start, upper int64) []index.AbortedTxn {
	var out []index.AbortedTxn
	for _, t := range all {
		if t.LastOffset >= start && t.FirstOffset < upper {
			out = append(out, t)
		}
	}
	return out
}

type abortedHeap []index.AbortedTxn

func (h abortedHeap) Len() int           { return len(h) }
func (h abortedHeap) Less(i, j int) bool { return h[i].FirstOffset < h[j].FirstOffset }
func (h abortedHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *abortedHeap) Push(x any)        { *h = append(*h, x.(index.AbortedTxn)) }
func (h *abortedHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
