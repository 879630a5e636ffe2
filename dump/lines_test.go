package dump

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/internal/testutil"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/codec"
)

// TestLinesOnWorkers: the record lines rendered on the batch workers
// (lines.go) are the bytes the dumper renders itself, with 1 and 4 workers,
// on every codec, with transactions, headers, offsets that skip inside and
// between batches, damaged payloads and a torn tail.
func TestLinesOnWorkers(t *testing.T) {
	var files []string
	for _, c := range []codec.Type{codec.None, codec.Gzip, codec.Snappy, codec.LZ4, codec.Zstd} {
		dir := generated(t, gen.Options{Topics: []string{"p"}, Records: 3000, Magic: 2, Compression: c, BatchRecords: 12,
			Keys: 40, TombstoneRatio: 0.1, TransactionalRatio: 0.3, AbortRatio: 0.3, SegmentBytes: 64 << 10, Seed: 11})
		logs, err := filepath.Glob(filepath.Join(dir, "p-0", "*.log"))
		if err != nil || len(logs) < 3 {
			t.Fatal(len(logs), err)
		}
		if c != codec.None {
			// A damaged payload in the middle of a segment.
			testutil.FlipByte(t, logs[1], 30<<10)
		}
		files = append(files, logs...)
	}
	files = append(files, skippingSegment(t))
	run := func(workers int, onWorkers bool) string {
		renderOnWorkers = onWorkers
		defer func() { renderOnWorkers = true }()
		o := DefaultOptions()
		o.Deep, o.Workers = true, workers
		var out, errOut bytes.Buffer
		for _, f := range files { // one at a time, each with every worker
			if _, err := Run(resolve(t, f), o, &out, &errOut); err != nil {
				t.Fatal(err)
			}
		}
		return out.String() + "\n--\n" + errOut.String()
	}
	want := run(1, false)
	if !bytes.Contains([]byte(want), []byte("Non-consecutive offsets")) || !bytes.Contains([]byte(want), []byte("checksum mismatch")) {
		t.Fatalf("the data lacks the cases it is for:\n%s", want)
	}
	for _, w := range []int{1, 4} {
		if got := run(w, true); got != want {
			t.Errorf("%d workers: the lines rendered on the workers differ from the dumper's", w)
		}
	}
}

// skippingSegment writes zstd batches whose offsets skip inside a batch and
// between batches, as compaction leaves them, with header keys.
func skippingSegment(t *testing.T) string {
	var seg []byte
	for _, offs := range [][]int64{{0, 1, 2}, {5, 6, 8}, {9, 10}, {20, 21, 22}} {
		var recs []logfmt.Record
		for _, off := range offs {
			recs = append(recs, logfmt.Record{Offset: off, Timestamp: 1000 + off, Key: []byte("k"), Value: []byte("v"),
				Headers: []logfmt.Header{{Key: []byte("h1"), Value: []byte("x")}, {Key: []byte("h2")}}})
		}
		o := logfmt.DefaultBatchOptions(offs[0])
		o.Compression = codec.Zstd
		var err error
		if seg, err = logfmt.AppendBatch(seg, o, recs); err != nil {
			t.Fatal(err)
		}
	}
	return writeFile(t, seg[:len(seg)-5]) // and a torn tail
}
