package compact

import (
	"math/rand/v2"
	"testing"
)

// TestOffsetSet holds the bitmap's add, has and count to a plain set, over
// ranges that start and end on and off word boundaries.
func TestOffsetSet(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const from, to = 1000, 1000 + 300
	s := newOffsetSet(from, to)
	marked := map[int64]bool{}
	for range 120 {
		o := from - 5 + rng.Int64N(to-from+10) // some out of range, ignored
		s.add(o)
		if o >= from && o < to {
			marked[o] = true
		}
	}
	for lo := int64(from); lo < to; lo += 7 {
		for hi := lo; hi < to; hi += 13 {
			want := 0
			for o := lo; o <= hi; o++ {
				if marked[o] {
					want++
				}
				if s.has(o) != marked[o] {
					t.Fatalf("has(%d) = %v", o, s.has(o))
				}
			}
			if got := s.count(lo, hi); got != want {
				t.Fatalf("count(%d, %d) = %d, want %d", lo, hi, got, want)
			}
		}
	}
	for _, r := range [][2]int64{{from - 1, from}, {to - 1, to}, {from + 5, from + 4}} {
		if s.covers(r[0], r[1]) {
			t.Errorf("covers(%d, %d)", r[0], r[1])
		}
	}
	if !s.covers(from, to-1) {
		t.Error("does not cover its range")
	}
	if big := newOffsetSet(0, maxOffsetSetBytes*8+1); big.bits != nil || big.covers(0, 0) {
		t.Error("a range over the bound has a bitmap")
	}
}
