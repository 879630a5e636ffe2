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

// TestOffsetMapGrowsToItsMemory: a map started small for the keys a pass
// expects grows as more come, and is full where a map allocated whole for
// its memory is, with every key still found.
func TestOffsetMapGrowsToItsMemory(t *testing.T) {
	const memory = 5000 * bytesPerEntry // full at 4500 keys
	whole := newTestMap(t, memory)
	small, err := newOffsetMap(memory, 10)
	if err != nil {
		t.Fatal(err)
	}
	defer small.release()
	if len(small.slots) != keyMapSlots {
		t.Fatalf("started with %d slots for 10 keys; want %d", len(small.slots), keyMapSlots)
	}
	it := &mapItem{}
	for i := range 6000 {
		h1, h2 := whole.hash([]byte{byte(i), byte(i >> 8)})
		it.hs = append(it.hs, keyHash{h1: h1, h2: h2, offset: int64(i)})
	}
	it.ends = []batchEnd{{n: len(it.hs), last: 5999}}
	full := (&pass{c: &cleaner{m: whole}}).putItem(it)
	small.seed1, small.seed2 = whole.seed1, whole.seed2
	smallFull := (&pass{c: &cleaner{m: small}}).putItem(it)
	if !full || !smallFull || small.n != whole.n || small.latest != whole.latest || len(small.slots) != len(whole.slots) {
		t.Fatalf("grown map: full %v, %d keys, latest %d, %d slots; whole map: full %v, %d keys, latest %d, %d slots",
			smallFull, small.n, small.latest, len(small.slots), full, whole.n, whole.latest, len(whole.slots))
	}
	for i := range whole.n {
		if got := small.get([]byte{byte(i), byte(i >> 8)}); got != int64(i) {
			t.Fatalf("key %d: offset %d", i, got)
		}
	}
}
