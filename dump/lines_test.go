package dump

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"path/filepath"
	"testing"

	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/internal/testkit/testutil"
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
		// A damaged batch in the middle of a segment: uncompressed ones
		// go to the workers too.
		testutil.FlipByte(t, logs[1], 30<<10)
		files = append(files, logs...)
	}
	files = append(files, skippingSegment(t, codec.Zstd), skippingSegment(t, codec.None))
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

// skippingSegment writes batches whose offsets skip inside a batch and
// between batches, as compaction leaves them, with header keys.
func skippingSegment(t *testing.T, c codec.Type) string {
	var seg []byte
	for _, offs := range [][]int64{{0, 1, 2}, {5, 6, 8}, {9, 10}, {20, 21, 22}} {
		var recs []logfmt.Record
		for _, off := range offs {
			recs = append(recs, logfmt.Record{Offset: off, Timestamp: 1000 + off, Key: []byte("k"), Value: []byte("v"),
				Headers: []logfmt.Header{{Key: []byte("h1"), Value: []byte("x")}, {Key: []byte("h2")}}})
		}
		o := logfmt.DefaultBatchOptions(offs[0])
		o.Compression = c
		var err error
		if seg, err = logfmt.AppendBatch(seg, o, recs); err != nil {
			t.Fatal(err)
		}
	}
	return writeFile(t, seg[:len(seg)-5]) // and a torn tail
}

// TestDeepWorkersBigWindowZstd: a deep dump is the same bytes with 1 and 4
// workers when a zstd batch's frame states its content size (300 KiB) and
// a window (128 MiB) over what the streaming decoder accepts. With one
// worker the RecordIter reads the payload into its 256 KiB window, where it
// does not fit whole, so it streams and the batch is reported as not
// decompressible; with four a worker reads it into a run's arena, grown by
// the batch before it, where it fits and is decoded whole, window unchecked,
// and its records are dumped.
func TestDeepWorkersBigWindowZstd(t *testing.T) {
	recs := func(base int64, n int) []logfmt.Record {
		var rs []logfmt.Record
		for i := range n {
			rs = append(rs, logfmt.Record{Offset: base + int64(i), Timestamp: 1000, Key: []byte("k"), Value: bytes.Repeat([]byte{'v'}, 1000)})
		}
		return rs
	}
	o := logfmt.DefaultBatchOptions(0)
	o.Compression = codec.Zstd
	seg, err := logfmt.AppendBatch(nil, o, recs(0, 100))
	if err != nil {
		t.Fatal(err)
	}
	// The next 300 records, as a zstd frame of raw blocks that states its
	// content size and a 128 MiB window.
	plain, err := logfmt.AppendBatch(nil, logfmt.DefaultBatchOptions(100), recs(100, 300))
	if err != nil {
		t.Fatal(err)
	}
	area := plain[logfmt.V2HeaderSize:]
	n := len(area)
	f := []byte{0x28, 0xb5, 0x2f, 0xfd, 2 << 6, (27 - 10) << 3, byte(n), byte(n >> 8), byte(n >> 16), byte(n >> 24)}
	for len(area) > 0 {
		k := min(len(area), 100<<10)
		h := uint32(k) << 3
		if k == len(area) {
			h |= 1
		}
		f = append(f, byte(h), byte(h>>8), byte(h>>16))
		f = append(f, area[:k]...)
		area = area[k:]
	}
	b := append(bytes.Clone(plain[:logfmt.V2HeaderSize]), f...)
	b[22] |= byte(codec.Zstd)
	binary.BigEndian.PutUint32(b[8:], uint32(len(b)-12))
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	file := writeFile(t, append(seg, b...))
	run := func(workers int) string {
		o := DefaultOptions()
		o.Deep, o.Workers = true, workers
		var out, errOut bytes.Buffer
		if _, err := Run(resolve(t, file), o, &out, &errOut); err != nil {
			t.Fatal(err)
		}
		return out.String() + "\n--\n" + errOut.String()
	}
	if one, four := run(1), run(4); one != four {
		t.Errorf("1 and 4 workers differ:\n1: %d bytes, ends %q\n4: %d bytes, ends %q", len(one), one[max(0, len(one)-200):], len(four), four[max(0, len(four)-200):])
	}
}

// TestLinesJobBound: a job leaves to the dumper a batch whose text would
// pass linesMax, before rendering the record that would pass it, so that a
// record with huge header keys (invalid UTF-8, each byte a 3-byte U+FFFD)
// never sits in a worker's buffer or a run.
func TestLinesJobBound(t *testing.T) {
	batch := func(recs []logfmt.Record) *logfmt.Batch {
		data, err := logfmt.AppendBatch(nil, logfmt.DefaultBatchOptions(recs[0].Offset), recs)
		if err != nil {
			t.Fatal(err)
		}
		return &logfmt.Batch{Data: data}
	}
	rec := func(off int64, key []byte) logfmt.Record {
		return logfmt.Record{Offset: off, Timestamp: 1000, Value: []byte("v"), Headers: []logfmt.Header{{Key: key}}}
	}
	small := []logfmt.Record{rec(0, []byte("h")), rec(1, []byte("h"))}
	bigKey := bytes.Repeat([]byte{0xff}, linesMax/3)
	many := make([]logfmt.Record, 0, 2000)
	for i := range cap(many) {
		many = append(many, rec(int64(i), []byte("header")))
	}
	for _, direct := range []bool{false, true} {
		j := &linesJob{lineConfig: lineConfig{file: "f", maxRecord: 1 << 20, direct: direct}}
		if out := j.Run(batch(small), nil); len(out) <= linesHead {
			t.Fatalf("direct %v: the plain batch was not rendered", direct)
		}
		for name, recs := range map[string][]logfmt.Record{
			"a huge key": {rec(0, []byte("h")), rec(1, bigKey)},
			"many lines": many,
		} {
			out := j.Run(batch(recs), []byte("run"))
			if string(out) != "run" {
				t.Errorf("direct %v, %s: the job rendered %d bytes", direct, name, len(out)-3)
			}
		}
	}
}
