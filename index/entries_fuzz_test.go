package index

import (
	"bytes"
	"reflect"
	"testing"
)

// checkProblems checks what every parser promises about its problems.
func checkProblems(t *testing.T, probs []Problem, size int64, esize int) {
	t.Helper()
	for _, p := range probs {
		if p.File != "fuzz" || p.Pos < 0 || p.Pos > size || p.Entry != int(p.Pos/int64(esize)) || p.Msg == "" {
			t.Fatalf("bad problem %+v in %d bytes", p, size)
		}
	}
}

// checkLayout checks that a layout accounts for every byte at most once, and
// for all of them when there is no problem.
func checkLayout(t *testing.T, l Layout, entries int, probs []Problem, size int64, esize int) {
	t.Helper()
	if l.ValidBytes != int64(entries*esize) || l.PartialTail != int(size%int64(esize)) ||
		l.ZeroTail < 0 || l.ZeroTail%int64(esize) != 0 || l.ValidBytes+l.ZeroTail+int64(l.PartialTail) > size {
		t.Fatalf("layout %+v for %d entries in %d bytes", l, entries, size)
	}
	if len(probs) == 0 && l.ValidBytes+l.ZeroTail != size {
		t.Fatalf("layout %+v leaves bytes of %d unexplained, without a problem", l, size)
	}
}

func FuzzParseOffsetIndex(f *testing.F) {
	good := offsetBytes(f, 100, OffsetEntry{110, 4100}, OffsetEntry{120, 8200}, OffsetEntry{135, 12345})
	f.Add(good, int64(100))
	f.Add(append(good, make([]byte, 40)...), int64(100))
	f.Add(make([]byte, 64), int64(0))
	f.Add(cat(good[:8], make([]byte, 8), good[16:]), int64(100))
	f.Add(append(good, 1, 2, 3), int64(100))
	f.Fuzz(func(t *testing.T, b []byte, base int64) {
		ix, probs := ParseOffsetIndex(b, base, "fuzz")
		checkProblems(t, probs, int64(len(b)), OffsetEntrySize)
		checkLayout(t, ix.Layout, len(ix.Entries), probs, int64(len(b)), OffsetEntrySize)
		// The valid entries are exactly what the writer makes of them.
		var enc []byte
		for _, e := range ix.Entries {
			var err error
			if enc, err = AppendOffsetEntry(enc, base, e); err != nil {
				t.Fatalf("valid entry %+v does not encode: %v", e, err)
			}
			if got, ok := ix.Lookup(e.Offset); !ok || got != e {
				t.Fatalf("Lookup(%d) = %+v, %v", e.Offset, got, ok)
			}
		}
		if !bytes.Equal(enc, b[:ix.ValidBytes]) {
			t.Fatalf("re-encoded % x, read from % x", enc, b[:ix.ValidBytes])
		}
		if !isZero(b[ix.ValidBytes : ix.ValidBytes+ix.ZeroTail]) {
			t.Fatal("zero tail is not zero")
		}
		rix, rprobs := readOffsets(t, b, base, "fuzz")
		if !reflect.DeepEqual(rix, ix) || !reflect.DeepEqual(rprobs, probs) {
			t.Fatalf("reader %+v %+v, parser %+v %+v", rix, rprobs, ix, probs)
		}
	})
}

func FuzzParseTimeIndex(f *testing.F) {
	good := timeBytes(f, 100, TimeEntry{0, 100}, TimeEntry{1587580883405, 135}, TimeEntry{1587580883406, 135})
	f.Add(good, int64(100))
	f.Add(append(good, make([]byte, 36)...), int64(100))
	f.Add(make([]byte, 48), int64(0))
	f.Add(cat(good[:12], make([]byte, 12), good[24:]), int64(100))
	f.Add(append(good, 1), int64(100))
	f.Fuzz(func(t *testing.T, b []byte, base int64) {
		ix, probs := ParseTimeIndex(b, base, "fuzz")
		checkProblems(t, probs, int64(len(b)), TimeEntrySize)
		checkLayout(t, ix.Layout, len(ix.Entries), probs, int64(len(b)), TimeEntrySize)
		var enc []byte
		for _, e := range ix.Entries {
			var err error
			if enc, err = AppendTimeEntry(enc, base, e); err != nil {
				t.Fatalf("valid entry %+v does not encode: %v", e, err)
			}
			if got, ok := ix.Lookup(e.Timestamp); !ok || got != e {
				t.Fatalf("Lookup(%d) = %+v, %v", e.Timestamp, got, ok)
			}
		}
		if !bytes.Equal(enc, b[:ix.ValidBytes]) {
			t.Fatalf("re-encoded % x, read from % x", enc, b[:ix.ValidBytes])
		}
		if !isZero(b[ix.ValidBytes : ix.ValidBytes+ix.ZeroTail]) {
			t.Fatal("zero tail is not zero")
		}
		rix, rprobs := readTimes(t, b, base, "fuzz")
		if !reflect.DeepEqual(rix, ix) || !reflect.DeepEqual(rprobs, probs) {
			t.Fatalf("reader %+v %+v, parser %+v %+v", rix, rprobs, ix, probs)
		}
	})
}
