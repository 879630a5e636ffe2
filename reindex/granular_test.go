package reindex

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/logtool/logtool/index"
	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/internal/testkit/indextest"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/codec"
	"github.com/logtool/logtool/logfmt/layout"
)

type rec struct{ offset, ts int64 }

// recordsOf lists every record of a segment with the timestamp Kafka reports
// for it, and the (max timestamp, last offset) of each batch.
func recordsOf(t *testing.T, path string) (recs []rec, batches [][2]int64) {
	t.Helper()
	seg, err := logfmt.OpenSegment(path)
	if err != nil {
		t.Fatal(err)
	}
	defer seg.Close()
	var it logfmt.RecordIter
	for seg.Next() {
		b := seg.Batch()
		if err := it.Reset(b); err != nil {
			t.Fatal(err)
		}
		for it.Next() {
			recs = append(recs, rec{it.Record().Offset, it.Record().Timestamp})
		}
		if it.Err() != nil {
			t.Fatal(it.Err())
		}
		batches = append(batches, [2]int64{b.MaxTimestamp(), b.LastOffset()})
	}
	return recs, batches
}

// coarseRule is the coarse time index computed from the record list: the
// first record entering each new bucket, then recovery's final entry.
func coarseRule(recs []rec, batches [][2]int64, width int64) []index.TimeEntry {
	var out []index.TimeEntry
	bucket := int64(-1)
	for _, r := range recs {
		if r.ts >= 0 && r.ts/width > bucket {
			bucket = r.ts / width
			out = append(out, index.TimeEntry{Timestamp: bucket * width, Offset: r.offset})
		}
	}
	maxTS, at := int64(-1), int64(0)
	for _, b := range batches {
		if b[0] > maxTS {
			maxTS, at = b[0], b[1]
		}
	}
	if maxTS >= 0 && (len(out) == 0 || maxTS > out[len(out)-1].Timestamp) {
		out = append(out, index.TimeEntry{Timestamp: maxTS, Offset: at})
	}
	return out
}

func TestGranularTimeIndex(t *testing.T) {
	for _, tc := range []struct {
		magic int8
		comp  codec.Type
		step  time.Duration
		width time.Duration
	}{
		{2, codec.Zstd, time.Second, time.Minute},
		{2, codec.None, 50 * time.Millisecond, 10 * time.Second},
		{1, codec.Gzip, 3 * time.Second, time.Minute},
		{1, codec.None, time.Second, time.Hour},
		{0, codec.Snappy, time.Second, time.Minute},
	} {
		t.Run(fmt.Sprintf("v%d-%s-%v-%v", tc.magic, tc.comp, tc.step, tc.width), func(t *testing.T) {
			dir := genPartition(t, gen.Options{Magic: tc.magic, Compression: tc.comp, Records: 2000, BatchRecords: 8, SegmentBytes: 40000,
				TimeStep: tc.step, Seed: 6})
			o := Options{Time: true, Granularity: tc.width}
			rep := mustPartition(t, dir, o)
			width := tc.width.Milliseconds()
			got := files(t, dir)
			for _, s := range rep.Segments {
				recs, batches := recordsOf(t, s.Log)
				want := coarseRule(recs, batches, width)
				es, probs := indextest.ParseTimeIndex(got[layout.SegmentName(s.Base, layout.TimeIndexExt)], s.Base, "")
				if len(probs) > 0 || !slices.Equal(es.Entries, want) {
					t.Fatalf("%s: %v\n got %v\nwant %v", s.Log, probs, es.Entries, want)
				}
				if tc.magic == 0 && len(want) != 0 {
					t.Fatalf("magic 0 has timestamps?")
				}
				// The property lookups rely on: nothing before an entry's
				// offset has its timestamp or a later one.
				for _, e := range es.Entries {
					for _, r := range recs {
						if r.offset < e.Offset && r.ts >= e.Timestamp {
							t.Errorf("%s: entry %+v, but offset %d has timestamp %d", s.Log, e, r.offset, r.ts)
						}
					}
				}
			}
			o.Mode = Check
			if rep := mustPartition(t, dir, o); rep.Counts[Problem]+rep.Counts[Difference] != 0 {
				t.Errorf("check with the same granularity:\n%s", findingsText(rep))
			}
			// Judged as a recovery index, a coarse index is valid, only
			// different.
			plain := all(Check)
			if rep := mustPartition(t, dir, plain); rep.Counts[Problem] != 0 {
				t.Errorf("check against recovery:\n%s", findingsText(rep))
			} else if tc.magic > 0 && !strings.Contains(findingsText(rep), "difference") {
				t.Errorf("no difference from recovery reported:\n%s", findingsText(rep))
			}
		})
	}
}

// TestGranularTimeUndecodableRecords: when records cannot be read, the
// batch's bucket starts at its first offset, or at the last record read
// before the payload failed.
func TestGranularTimeUndecodableRecords(t *testing.T) {
	o := logfmt.DefaultBatchOptions(101)
	o.Compression = codec.Gzip
	b, err := logfmt.AppendBatch(nil, o, []logfmt.Record{{Offset: 101, Timestamp: 2500, Value: []byte("x")}, {Offset: 102, Timestamp: 3500}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		at   int // the byte of the gzip payload broken; the test does not check the CRC
		want []index.TimeEntry
	}{
		// Inside the deflate data: no record can be read.
		{10, []index.TimeEntry{{Timestamp: 0, Offset: 100}, {Timestamp: 3000, Offset: 101}, {Timestamp: 3500, Offset: 102}}},
		// In the gzip trailer: the records come before the failure, and
		// the bucket of the largest timestamp starts at the last of them.
		{-3, []index.TimeEntry{{Timestamp: 0, Offset: 100}, {Timestamp: 2000, Offset: 101}, {Timestamp: 3000, Offset: 102}, {Timestamp: 3500, Offset: 102}}},
	} {
		g := NewGranularTime(100, 1000)
		g.Record(100, 500)
		bad := bytes.Clone(b)
		if tc.at < 0 {
			bad[len(bad)+tc.at] ^= 0xff
		} else {
			bad[logfmt.V2HeaderSize+tc.at] ^= 0xff
		}
		batch := logfmt.Batch{Data: bad}
		if err := g.addBatch(&batch, 101, &logfmt.RecordIter{}); err == nil {
			t.Fatal("no error from a broken payload")
		}
		g.Finish()
		if !slices.Equal(g.Times, tc.want) {
			t.Errorf("payload broken at %d: got %v, want %v", tc.at, g.Times, tc.want)
		}
	}
}
