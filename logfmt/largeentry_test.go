package logfmt

import (
	"bytes"
	"strings"
	"testing"
)

// largestRead is a ReaderAt that notes the longest read asked of it.
type largestRead struct {
	r       *bytes.Reader
	longest int
}

func (l *largestRead) ReadAt(p []byte, off int64) (int, error) {
	l.longest = max(l.longest, len(p))
	return l.r.ReadAt(p, off)
}

// An entry larger than checkedBeforeHeld has its checksum computed a
// window at a time before it is read whole: one that is sound is given as
// any other, one that is not is refused without a read of its length.
func TestLargeEntryChecksumFirst(t *testing.T) {
	value := bytes.Repeat([]byte("large entry "), (checkedBeforeHeld+1<<20)/12)
	v2, err := AppendBatch(nil, DefaultBatchOptions(0), []Record{{Offset: 0, Timestamp: 1700000000000, Value: value}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		entry []byte
	}{
		{"v2", v2},
		{"v1", AppendLegacyMessage(nil, 1, 0, 0, 1700000000000, nil, value)},
		{"v0", AppendLegacyMessage(nil, 0, 0, 0, -1, nil, value)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sound := &largestRead{r: bytes.NewReader(tc.entry)}
			s := NewSegmentReader(sound, int64(len(tc.entry)), "seg")
			if !s.Next() || !bytes.Equal(s.Batch().Data, tc.entry) || s.Batch().Validate() != nil {
				t.Fatalf("sound entry: %v", s.Err())
			}
			damaged := bytes.Clone(tc.entry)
			damaged[len(damaged)/2] ^= 1
			r := &largestRead{r: bytes.NewReader(damaged)}
			s = NewSegmentReader(r, int64(len(damaged)), "seg")
			if s.Next() {
				t.Fatal("a damaged entry was given")
			}
			ce, ok := AsCorrupt(s.Err())
			if !ok || ce.Pos != 0 || !strings.Contains(ce.Msg, "checksum mismatch") {
				t.Fatalf("error %v; want a checksum mismatch at byte 0", s.Err())
			}
			if r.longest > windowSize {
				t.Fatalf("read %d bytes at once; want at most a window (%d)", r.longest, windowSize)
			}
		})
	}
}
