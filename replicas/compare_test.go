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
