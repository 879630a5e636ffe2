package replicas

import "testing"

// TestLaterVersionPastTheOtherEnd: b (a compacted follower that has
// fetched up to offset 3) lacks key k's only version it could hold (offset
// 1); the later version of k is at offset 3 on a, which b never held, so
// b's cleaner cannot have dropped offset 1: b lost k's data. If a is lost
// and b leads, key k has no value at all. compare must say b diverges at 1.
func TestLaterVersionPastTheOtherEnd(t *testing.T) {
	const kw, kk, kx = 101, 202, 303
	rec := func(off int64, key uint64, sum uint64) Batch {
		return Batch{Base: off, Last: off, Count: 1, CRC: uint32(sum), ProducerID: -1, BaseSequence: -1,
			Records: []Record{{Offset: off, Key: key, Sum: sum}}}
	}
	a := &Partition{LogEndOffset: 4, Hashed: true, Batches: []Batch{
		rec(0, kw, 1), rec(1, kk, 2), rec(2, kx, 3), rec(3, kk, 4)}}
	b := &Partition{LogEndOffset: 3, Hashed: true, Compacted: true, Batches: []Batch{
		rec(0, kw, 1), rec(2, kx, 3)}}
	b.Batches[1].Flags = Cleaned
	if p := compare(a, b); p.diverge != 1 {
		t.Errorf("b lacks offset 1 (key k) and never held a later k: diverge = %d, want 1", p.diverge)
	}
	if p := compare(b, a); p.diverge != 1 {
		t.Errorf("(b, a): diverge = %d, want 1", p.diverge)
	}
}

// TestMissingSegmentIsNotCompaction: a follower that lost a middle segment
// holds a gap, as a cleaned log does, but its records are no cleaner's to
// drop: their keys have no version after them that it held, and their
// versions the leader holds after them are gone from it too. The replicas
// part at the segment's first offset (the rule that a later version on the
// leader's side excuses a record put it after the versions in the lost
// segment).
func TestMissingSegmentIsNotCompaction(t *testing.T) {
	const kk = 7
	rec := func(off int64, key, sum uint64) Batch {
		return Batch{Base: off, Last: off, Count: 1, CRC: uint32(sum), ProducerID: -1, BaseSequence: -1,
			Records: []Record{{Offset: off, Key: key, Sum: sum}}}
	}
	// a holds k at 1 and 2; b lost both (offsets 1 and 2), and its log
	// goes on past them.
	a := &Partition{LogEndOffset: 4, Hashed: true, Batches: []Batch{rec(0, 5, 1), rec(1, kk, 2), rec(2, kk, 3), rec(3, 6, 4)}}
	b := &Partition{LogEndOffset: 4, Hashed: true, Compacted: true, Batches: []Batch{rec(0, 5, 1), rec(3, 6, 4)}}
	if p := compare(a, b); p.diverge != 1 {
		t.Errorf("diverge = %d, want 1", p.diverge)
	}
	// Had the last version been a tombstone, b's cleaner could have
	// dropped both.
	a.Batches[2].Records[0].Tombstone = true
	if p := compare(a, b); p.diverge != -1 {
		t.Errorf("a chain ending in a tombstone: diverge = %d, want -1", p.diverge)
	}
}
