package logfmt

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// scanTrace lists what a Scan over src gives: batches, the damage skipped
// before each, and how it ended. refuse picks the batches the caller
// refuses.
func scanTrace(src ScanSource, size int64, refuse func(*Batch) bool) string {
	var b strings.Builder
	sc := NewScan(src, size)
	for {
		more := sc.Next()
		if d := sc.Skipped(); d != nil {
			fmt.Fprintf(&b, "damage [%d,%d) %v %q resumes=%v\n", d.From, d.To, d.How, d.Detail, d.Resumes(size))
		}
		if !more {
			fmt.Fprintf(&b, "end %v\n", sc.Err())
			return b.String()
		}
		fmt.Fprintf(&b, "batch %d+%d\n", sc.Batch().Pos, sc.Batch().Size())
		if refuse != nil && refuse(sc.Batch()) {
			sc.Refuse()
		}
	}
}

// TestScanDeepReader holds a Scan over a DeepReader of every tuning, whose
// SeekTo drops the batches read ahead, to a Scan over the segment reader:
// damage in the middle is one range after which the batches are read again,
// a torn end is a range that does not resume.
func TestScanDeepReader(t *testing.T) {
	seg := deepSegment(t, 7)
	starts := batchStarts(seg)
	mid := starts[len(starts)/2]
	damaged := func(f func(b []byte)) []byte { b := bytes.Clone(seg); f(b); return b }
	cases := []struct {
		name   string
		seg    []byte
		refuse func(*Batch) bool
		want   []string
	}{
		{"crc", damaged(func(b []byte) { b[mid+19] ^= 0xff }), nil, []string{fmt.Sprintf("damage [%d,%d) none \"checksum mismatch", mid, starts[len(starts)/2+1])}},
		{"length", damaged(func(b []byte) { b[mid+9] ^= 0xff }), nil, []string{fmt.Sprintf("damage [%d,%d) torn last entry", mid, starts[len(starts)/2+1]), "resumes=true"}},
		{"torn", seg[:len(seg)-7], nil, []string{fmt.Sprintf("damage [%d,%d) torn last entry", starts[len(starts)-1], len(seg)-7), "resumes=false"}},
		{"refused", seg, func(b *Batch) bool { return b.Pos == int64(mid) }, []string{fmt.Sprintf("damage [%d,%d) none \"\"", mid, starts[len(starts)/2+1])}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := scanTrace(NewSegmentReader(bytes.NewReader(c.seg), int64(len(c.seg)), "seg"), int64(len(c.seg)), c.refuse)
			for _, s := range c.want {
				if !strings.Contains(want, s) {
					t.Fatalf("no %q in\n%s", s, want)
				}
			}
			if c.name != "torn" && !strings.Contains(want, fmt.Sprintf("batch %d+", starts[len(starts)-1])) {
				t.Fatalf("the last batch is not read:\n%s", want)
			}
			for _, tu := range tunings {
				d := newTuned(NewSegmentReader(bytes.NewReader(c.seg), int64(len(c.seg)), "seg"), tu)
				got := scanTrace(d, int64(len(c.seg)), c.refuse)
				d.Close()
				if got != want {
					t.Fatalf("%+v: differs from the segment reader:\n%s", tu, firstDiff(got, want))
				}
			}
		})
	}
}
