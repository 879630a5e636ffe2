package extsort

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"testing"
)

func sortAll(t *testing.T, memory int, recs [][]byte) [][]byte {
	t.Helper()
	s := New(memory)
	for _, r := range recs {
		if err := s.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	it, err := s.Sort()
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for it.Next() {
		out = append(out, bytes.Clone(it.Record()))
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSort: records of many lengths, duplicates and empty ones among them,
// sorted in memory, in a few runs, and in more runs than are merged at
// once; no temporary file is left.
func TestSort(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	rng := rand.New(rand.NewPCG(1, 2))
	var recs [][]byte
	for i := range 20000 {
		r := fmt.Appendf(nil, "%x", rng.IntN(3000))
		if i%7 == 0 {
			r = r[:rng.IntN(len(r)+1)]
		}
		if i%1000 == 0 {
			r = bytes.Repeat(r, 500)
		}
		recs = append(recs, r)
	}
	want := slices.Clone(recs)
	slices.SortFunc(want, bytes.Compare)
	for _, memory := range []int{1 << 30, 64 << 10, 1 << 10} {
		got := sortAll(t, memory, recs)
		if !slices.EqualFunc(got, want, bytes.Equal) {
			t.Fatalf("memory %d: %d records out of order or lost (want %d)", memory, len(got), len(want))
		}
	}
	if left, _ := os.ReadDir(os.Getenv("TMPDIR")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
	if got := sortAll(t, 100, nil); len(got) != 0 {
		t.Errorf("nothing sorted gave %d records", len(got))
	}
}

// TestSortMemory: a million records go through a sorter of 1 MiB with
// a few MiB allocated in all, not the 20 MiB they take.
func TestSortMemory(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	s := New(1 << 20)
	var rec []byte
	for i := range 1_000_000 {
		rec = append(strconv.AppendInt(append(rec[:0], "topic-"...), int64((i*7919)%1_000_003), 10), 0)
		rec = strconv.AppendInt(rec, int64(i), 10)
		if err := s.Add(rec); err != nil {
			t.Fatal(err)
		}
	}
	it, err := s.Sort()
	if err != nil {
		t.Fatal(err)
	}
	var prev []byte
	n := 0
	for ; it.Next(); n++ {
		if bytes.Compare(prev, it.Record()) > 0 {
			t.Fatalf("record %d out of order", n)
		}
		prev = append(prev[:0], it.Record()...)
	}
	if err := it.Close(); err != nil || n != 1_000_000 {
		t.Fatalf("%d records, %v", n, err)
	}
	runtime.ReadMemStats(&after)
	if a := after.TotalAlloc - before.TotalAlloc; a > 12<<20 {
		t.Errorf("allocated %d MiB", a>>20)
	}
}
