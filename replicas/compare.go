package replicas

import (
	"cmp"
	"math"
	"slices"
)

// pair is the comparison of two replicas over the offsets both hold.
type pair struct {
	// diverge is the first offset at which they hold different data, -1
	// when they agree.
	diverge int64
	// unverified counts batches cleaned on one side whose records could
	// not be compared, the other side's not being hashed.
	unverified int
}

// compare compares replicas a and b. Batches at the same offsets agree when
// their leader epoch and CRC are the same; where a cleaner rewrote either,
// when the fields the cleaner keeps are the same and so are the records both
// hold, and a record only one holds is one the other's cleaner may drop. A
// batch only one holds, inside the other's range, is divergence unless the
// other's cleaner may have dropped all of it. Nothing in a damaged range of
// either is compared.
func compare(a, b *Partition) pair {
	lo := max(first(a), first(b))
	hi := min(a.LogEndOffset, b.LogEndOffset)
	res := pair{diverge: -1}
	if lo >= hi {
		return res
	}
	var ka, kb keyIndex
	A, B := a.Batches, b.Batches
	i, j := from(A, lo), from(B, lo)
	for i < len(A) || j < len(B) {
		var x, y *Batch
		if i < len(A) && A[i].Base < hi {
			x = &A[i]
		}
		if j < len(B) && B[j].Base < hi {
			y = &B[j]
		}
		switch {
		case x == nil && y == nil:
			return res
		case x != nil && b.unknown(x.Base, x.Last):
			i++
			continue
		case y != nil && a.unknown(y.Base, y.Last):
			j++
			continue
		case x != nil && (y == nil || x.Last < y.Base):
			// Only a holds x.
			if !droppedAll(x, a, b, &ka, &kb, &res) {
				res.diverge = max(x.Base, lo)
				return res
			}
			i++
			continue
		case y != nil && (x == nil || y.Last < x.Base):
			if !droppedAll(y, b, a, &kb, &ka, &res) {
				res.diverge = max(y.Base, lo)
				return res
			}
			j++
			continue
		case x.Base != y.Base || x.Last != y.Last:
			res.diverge = max(min(x.Base, y.Base), lo)
			return res
		}
		if at := sameBatch(x, y, a, b, &ka, &kb, &res); at >= 0 {
			res.diverge = at
			return res
		}
		i++
		j++
	}
	return res
}

// first is the first offset a replica holds.
func first(p *Partition) int64 {
	if len(p.Batches) > 0 {
		return max(p.Batches[0].Base, p.LogStartOffset)
	}
	return p.LogStartOffset
}

// from is the index of the first batch ending at or after off.
func from(bs []Batch, off int64) int {
	lo, hi := 0, len(bs)
	for lo < hi {
		m := (lo + hi) / 2
		if bs[m].Last < off {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// unknown tells whether offsets from..to touch a damaged range of p.
func (p *Partition) unknown(from, to int64) bool {
	for _, d := range p.Damage {
		if d.From < 0 && d.To < 0 {
			continue
		}
		end := d.To
		if end < 0 {
			end = p.LogEndOffset
		}
		if from <= end && to >= d.From {
			return true
		}
	}
	return false
}

// sameBatch compares two batches at the same offsets: -1 when they agree,
// else the first offset where they differ.
func sameBatch(x, y *Batch, a, b *Partition, ka, kb *keyIndex, res *pair) int64 {
	if x.Epoch != y.Epoch {
		return x.Base
	}
	if x.CRC == y.CRC {
		return -1
	}
	if x.Flags&Cleaned == 0 && y.Flags&Cleaned == 0 || !keptAlike(x, y) {
		return x.Base
	}
	if x.Records == nil || y.Records == nil {
		res.unverified++
		return -1
	}
	rx, ry := x.Records, y.Records
	for len(rx) > 0 || len(ry) > 0 {
		switch {
		case len(ry) == 0 || len(rx) > 0 && rx[0].Offset < ry[0].Offset:
			if !droppable(rx[0], x, a, b, ka, kb) {
				return rx[0].Offset
			}
			rx = rx[1:]
		case len(rx) == 0 || ry[0].Offset < rx[0].Offset:
			if !droppable(ry[0], y, b, a, kb, ka) {
				return ry[0].Offset
			}
			ry = ry[1:]
		default:
			if rx[0].Sum != ry[0].Sum {
				return rx[0].Offset
			}
			rx, ry = rx[1:], ry[1:]
		}
	}
	return -1
}

// keptAlike compares the header fields Kafka's cleaner keeps when it rewrites
// a batch (MemoryRecords.filterTo): the producer, the leader epoch and whether
// it is transactional or control. Offsets are compared by the caller.
func keptAlike(x, y *Batch) bool {
	const kept = Control | Transactional | Legacy
	return x.Epoch == y.Epoch && x.ProducerID == y.ProducerID && x.BaseSequence == y.BaseSequence &&
		x.Flags&kept == y.Flags&kept
}

// droppedAll tells whether batch x, held by a, may have been removed whole by
// b's cleaner.
func droppedAll(x *Batch, a, b *Partition, ka, kb *keyIndex, res *pair) bool {
	if !b.Compacted {
		// No cleaner has been over b: it removed nothing.
		return false
	}
	if !epochFits(x, b) {
		// A log's epochs never go down with its offsets, and a cleaner
		// keeps the epochs of what it keeps: x was never in b's log.
		return false
	}
	if x.Flags&Control != 0 || abortedAt(a, x) {
		// Markers and aborted transactions are what the cleaner removes
		// once their transaction is done.
		return true
	}
	if x.Records == nil {
		res.unverified++
		return true
	}
	for _, r := range x.Records {
		if !droppable(r, x, a, b, ka, kb) {
			return false
		}
	}
	return true
}

// epochFits tells whether batch x, which b does not hold, lies between b's
// neighbouring batches by leader epoch.
func epochFits(x *Batch, b *Partition) bool {
	if x.Epoch < 0 {
		return true
	}
	k := from(b.Batches, x.Base)
	if k > 0 && b.Batches[k-1].Epoch > x.Epoch {
		return false
	}
	return k == len(b.Batches) || b.Batches[k].Epoch < 0 || b.Batches[k].Epoch >= x.Epoch
}

// droppable tells whether record r of batch x, held by a and not by b, is
// one b's cleaner may have dropped: a tombstone (past its retention), a
// record without a key (the cleaner drops those), part of an aborted
// transaction, or a key b held a later version of. That version may be
// gone from b too: a chain of versions that ends in one b holds, or in a
// tombstone b removed once its retention passed. So when b holds no later
// version, the last version a holds below b's log end (a version past it
// was never in b's log) must be a tombstone.
func droppable(r Record, x *Batch, a, b *Partition, ka, kb *keyIndex) bool {
	if !b.Compacted {
		return false
	}
	if r.Tombstone || r.Key == nullKey || x.Flags&Control != 0 || abortedAt(a, x) {
		return true
	}
	if _, ok := kb.last(b, r.Key, r.Offset, math.MaxInt64); ok {
		return true
	}
	v, ok := ka.last(a, r.Key, r.Offset, b.LogEndOffset)
	return ok && v.Tombstone
}

// abortedAt tells whether x is transactional data whose transaction a's log
// aborts: the first marker of its producer after it is an ABORT.
func abortedAt(a *Partition, x *Batch) bool {
	if x.Flags&Transactional == 0 || x.Flags&Control != 0 {
		return false
	}
	for k := from(a.Batches, x.Last+1); k < len(a.Batches); k++ {
		m := &a.Batches[k]
		if m.ProducerID == x.ProducerID && m.Flags&Control != 0 {
			return m.Flags&AbortMarker != 0
		}
	}
	return false
}

// keyIndex is the versions of each key a hashed replica holds, in offset
// order, built when first needed.
type keyIndex struct {
	m map[uint64][]Record
}

// last is the last version of key p holds at an offset after off and before
// limit.
func (k *keyIndex) last(p *Partition, key uint64, off, limit int64) (Record, bool) {
	if k.m == nil {
		k.m = map[uint64][]Record{}
		for i := range p.Batches {
			for _, r := range p.Batches[i].Records {
				k.m[r.Key] = append(k.m[r.Key], r)
			}
		}
	}
	vs := k.m[key]
	i, _ := slices.BinarySearchFunc(vs, limit, func(r Record, o int64) int { return cmp.Compare(r.Offset, o) })
	if i == 0 || vs[i-1].Offset <= off {
		return Record{}, false
	}
	return vs[i-1], true
}
