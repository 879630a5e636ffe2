package logseg

import (
	"cmp"
	"maps"
	"math"
	"path/filepath"
	"slices"

	"github.com/logtool/logtool/index"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/snapshot"
)

// ProducerState is Kafka's ProducerStateManager as a broker's recovery
// rebuilds it: each producer's entry, as a producer snapshot stores it, and
// which producers have a transaction open, with the offset it began at.
// Replaying a partition's v2 batches through Apply yields the aborted
// transactions LogSegment.recover writes to .txnindex, Snapshot the
// producer snapshot a broker would write at the end, and Producer what the
// cleaner asks of each producer.
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

// Producer returns the entry of producer pid, nil when it has none.
func (p *ProducerState) Producer(pid int64) *snapshot.Entry { return p.producers[pid] }

// Expire drops the producers a broker's removeExpiredProducers drops at
// now: those with no open transaction whose last write is expiration or
// more milliseconds old.
func (p *ProducerState) Expire(now, expiration int64) {
	for pid, e := range p.producers {
		if e.CurrentTxnFirstOffset < 0 && now-e.Timestamp >= expiration {
			delete(p.producers, pid)
		}
	}
}

// FirstUnstableOffset is the first offset of the earliest open transaction,
// or -1 when none is open.
func (p *ProducerState) FirstUnstableOffset() int64 {
	first := int64(-1)
	for _, f := range p.open {
		if first < 0 || f < first {
			first = f
		}
	}
	return first
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
	m, ok, err := ReadTxnMarker(b, it)
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
	e.CoordinatorEpoch, e.Timestamp, e.CurrentTxnFirstOffset = m.CoordinatorEpoch, m.Timestamp, -1
	t := m.Type
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

// TxnMarker is what a transaction marker's record says.
type TxnMarker struct {
	Type             logfmt.ControlType
	CoordinatorEpoch int32
	Timestamp        int64
}

// ReadTxnMarker reads a control batch's first record as
// EndTransactionMarker.deserialize does. ok is false for an empty batch.
func ReadTxnMarker(b *logfmt.Batch, it *logfmt.RecordIter) (TxnMarker, bool, error) {
	if err := it.Reset(b); err != nil {
		return TxnMarker{}, false, err
	}
	if !it.Next() {
		return TxnMarker{}, false, it.Err()
	}
	r := it.Record()
	_, t, err := logfmt.ParseControlKey(r.Key)
	if err != nil {
		return TxnMarker{}, false, logfmt.Corruptf("", b.Pos, "control batch: %v", err)
	}
	if !t.IsTxnMarker() {
		return TxnMarker{}, false, logfmt.Corruptf("", b.Pos, "control batch from producer %d holds a %s record, not a transaction marker (Kafka's recovery stops on it)",
			b.Header().ProducerID(), t)
	}
	v, err := logfmt.ParseEndTxnMarker(r.Value)
	if err != nil {
		return TxnMarker{}, false, logfmt.Corruptf("", b.Pos, "control batch: %v", err)
	}
	return TxnMarker{Type: t, CoordinatorEpoch: v.CoordinatorEpoch, Timestamp: r.Timestamp}, true, nil
}

// SnapshotChoice is the producer snapshot a broker's loader starts from.
type SnapshotChoice struct {
	// Offset is the snapshot's offset, the first the replay after it
	// applies; the log start when no snapshot is used.
	Offset  int64
	Path    string // "" when none
	Entries []snapshot.Entry
	// Skipped are why the newer snapshots in range do not parse, newest
	// first, each naming its file.
	Skipped []*logfmt.CorruptError
}

// LatestSnapshot picks the snapshot ProducerStateManager loads for the
// state at offset at: the newest above logStart (truncateAndReload drops
// the others) and at or below at that parses. Kafka deletes a snapshot that
// does not parse (CorruptSnapshotException) and tries the next older one;
// logtool makes the same choice but deletes nothing, and returns what it
// skipped for the caller to say so. A snapshot that cannot be read for any
// other reason fails the load, as Kafka's IOException does.
func LatestSnapshot(paths []string, logStart, at int64) (SnapshotChoice, error) {
	type cand struct {
		path string
		off  int64
	}
	var cands []cand
	for _, path := range paths {
		if off, ok := snapshot.OffsetFromName(filepath.Base(path)); ok && off > logStart && off <= at {
			cands = append(cands, cand{path, off})
		}
	}
	slices.SortFunc(cands, func(a, b cand) int { return cmp.Compare(b.off, a.off) })
	c := SnapshotChoice{Offset: logStart}
	for _, s := range cands {
		// Read by its header, then its CRC a window at a time: a large
		// file that is no snapshot is refused without being held.
		entries, err := snapshot.Read(s.path, math.MaxInt64)
		if ce, ok := logfmt.AsCorrupt(err); ok {
			c.Skipped = append(c.Skipped, ce)
			continue
		}
		if err != nil {
			return SnapshotChoice{}, err
		}
		c.Offset, c.Path, c.Entries = s.off, s.path, entries
		break
	}
	return c, nil
}
