package dump

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logtool/logtool/logfmt"
)

// TestNonConsecutiveFromSecondRecord: Kafka's DumpLogSegments (0.11 to 4.2)
// compares each record of a file with the one before it from the second
// record on, so a rolled segment is no gap; a hole inside it is, and only
// with deep iteration.
func TestNonConsecutiveFromSecondRecord(t *testing.T) {
	var seg []byte
	for _, base := range []int64{1458, 1461} { // 1458..1460, then 1461, 1463
		var recs []logfmt.Record
		for _, off := range []int64{base, base + 1, base + 2} {
			if off == 1462 {
				continue
			}
			recs = append(recs, logfmt.Record{Offset: off, Timestamp: 1000 + off, Value: []byte("v")})
		}
		var err error
		if seg, err = logfmt.AppendBatch(seg, logfmt.DefaultBatchOptions(base), recs); err != nil {
			t.Fatal(err)
		}
	}
	path := writeSegment(t, 1458, seg)
	for _, deep := range []bool{true, false} {
		o := DefaultOptions()
		o.Deep = deep
		var out, errOut bytes.Buffer
		if _, err := Run(resolve(t, path), o, &out, &errOut); err != nil {
			t.Fatal(err)
		}
		want := ""
		if deep {
			abs, _ := filepath.Abs(path)
			want = "Non-consecutive offsets in " + abs + "\n  1461 is followed by 1463\n"
		}
		if got := errOut.String(); got != want {
			t.Errorf("deep %v: stderr\n%s\nwant\n%s", deep, got, want)
		}
		if deep && !strings.Contains(out.String(), "| offset: 1458 ") {
			t.Errorf("records not dumped:\n%s", out.String())
		}
	}
}
