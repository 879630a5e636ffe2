package find

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/logtool/logtool/index"
	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/internal/testkit/kafkasamples"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/checkpoint"
	"github.com/logtool/logtool/logfmt/codec"
	"github.com/logtool/logtool/logfmt/layout"
	"github.com/logtool/logtool/reindex"
)

// record is one record of a partition, with where it lives.
type record struct {
	offset, ts int64
	log        string
	pos        int64 // its batch's position
}

// allRecords reads every record of a partition in offset order, without the
// indexes: what a lookup must agree with.
func allRecords(t testing.TB, dir string) []record {
	t.Helper()
	p, err := layout.ReadPartition(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []record
	var it logfmt.RecordIter
	for _, s := range p.Segments {
		if s.Log == "" {
			continue
		}
		seg, err := logfmt.OpenSegment(s.Log)
		if err != nil {
			t.Fatal(err)
		}
		for seg.Next() {
			b := seg.Batch()
			if err := it.Reset(b); err != nil {
				t.Fatal(err)
			}
			for it.Next() {
				out = append(out, record{it.Record().Offset, it.Record().Timestamp, s.Log, b.Pos})
			}
		}
		seg.Close()
	}
	return out
}

func byOffset(recs []record, target int64) (record, bool) {
	for _, r := range recs {
		if r.offset >= target {
			return r, true
		}
	}
	return record{}, false
}

func byTimestamp(recs []record, target int64) (record, bool) {
	for _, r := range recs {
		if r.ts >= target {
			return r, true
		}
	}
	return record{}, false
}

func genPartition(t testing.TB, o gen.Options) string {
	t.Helper()
	o.Out, o.Topics = t.TempDir(), []string{"t"}
	parts, err := gen.Generate(o)
	if err != nil {
		t.Fatal(err)
	}
	return parts[0].Dir
}

// agree runs offset and timestamp lookups over the whole range of a
// partition and compares them with a scan of every record. Lookups may fall
// back to scans only saying wantFallback, and some must when it is set. It
// returns the mean bytes scanned per timestamp lookup that found something.
func agree(t *testing.T, dir string, wantFallback string) float64 {
	t.Helper()
	recs := allRecords(t, dir)
	if len(recs) == 0 {
		t.Fatal("no records")
	}
	fellBack := false
	defer func() {
		if wantFallback != "" && !fellBack {
			t.Errorf("no lookup fell back saying %q", wantFallback)
		}
	}()
	check := func(res *Result, want record, ok bool, what string) {
		t.Helper()
		if res.Found != ok {
			t.Fatalf("%s: found %v (%s), want %v", what, res.Found, res.Reason, ok)
		}
		if ok && (res.Offset != want.offset || res.Timestamp != want.ts || res.Segment != want.log || res.Batch.Position != want.pos) {
			t.Fatalf("%s: offset %d ts %d in %s at %d; want offset %d ts %d in %s at %d",
				what, res.Offset, res.Timestamp, res.Segment, res.Batch.Position, want.offset, want.ts, want.log, want.pos)
		}
		for _, f := range res.Fallbacks {
			if wantFallback == "" || !strings.Contains(f, wantFallback) {
				t.Fatalf("%s: fallback %q, want only ones saying %q", what, f, wantFallback)
			}
			fellBack = true
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	last := recs[len(recs)-1].offset
	for _, target := range append([]int64{0, last, last + 1, last + 100}, sample(rng, last, 60)...) {
		res, err := Offset(dir, target, Options{})
		if err != nil {
			t.Fatal(err)
		}
		want, ok := byOffset(recs, target)
		check(res, want, ok, fmt.Sprintf("offset %d", target))
		if ok && res.IndexEntry != nil && (res.IndexEntry.Offset > target || int64(res.IndexEntry.Position) != res.Start) {
			t.Fatalf("offset %d: entry %+v, scan from %d", target, *res.IndexEntry, res.Start)
		}
	}
	minTS, maxTS := recs[0].ts, recs[0].ts
	for _, r := range recs {
		minTS, maxTS = min(minTS, r.ts), max(maxTS, r.ts)
	}
	var scanned, found int64
	for _, target := range append([]int64{0, minTS, maxTS, maxTS + 1}, sample(rng, maxTS-minTS, 60)...) {
		if target > 3 && target < maxTS-minTS+10 {
			target += minTS
		}
		res, err := Timestamp(dir, target, Options{})
		if err != nil {
			t.Fatal(err)
		}
		want, ok := byTimestamp(recs, target)
		check(res, want, ok, fmt.Sprintf("timestamp %d", target))
		if ok {
			scanned += res.ScannedBytes
			found++
		}
	}
	return float64(scanned) / float64(max(found, 1))
}

func sample(rng *rand.Rand, n int64, k int) []int64 {
	out := make([]int64, k)
	for i := range out {
		out[i] = rng.Int64N(max(n, 1))
	}
	return out
}

func TestLookupsAgreeWithScan(t *testing.T) {
	for _, tc := range []struct {
		magic int8
		comp  codec.Type
	}{{2, codec.LZ4}, {2, codec.None}, {1, codec.Gzip}, {1, codec.None}, {0, codec.Snappy}} {
		t.Run(fmt.Sprintf("v%d-%s", tc.magic, tc.comp), func(t *testing.T) {
			dir := genPartition(t, gen.Options{Magic: tc.magic, Compression: tc.comp, Records: 3000, Keys: 50, BatchRecords: 6,
				SegmentBytes: 50000, TombstoneRatio: 0.1, Seed: 11})
			agree(t, dir, "")
		})
	}
}

// TestLookupFallbacks: missing or wrong indexes give the same answers, by a
// scan that the result owns up to.
func TestLookupFallbacks(t *testing.T) {
	for _, tc := range []struct {
		name     string
		tamper   func(t *testing.T, dir string)
		fallback string
	}{{
		name:     "no .index",
		tamper:   func(t *testing.T, dir string) { removeAll(t, dir, layout.IndexExt) },
		fallback: "no .index",
	}, {
		name:     "no .timeindex",
		tamper:   func(t *testing.T, dir string) { removeAll(t, dir, layout.TimeIndexExt) },
		fallback: "no .timeindex",
	}, {
		name: ".index entries off batch boundaries",
		tamper: func(t *testing.T, dir string) {
			eachFile(t, dir, layout.IndexExt, func(b []byte) []byte {
				for i := 4; i < len(b); i += 8 {
					b[i+3]++
				}
				return b
			})
		},
		fallback: "points at byte",
	}, {
		name: "garbage in the .timeindex",
		tamper: func(t *testing.T, dir string) {
			eachFile(t, dir, layout.TimeIndexExt, func(b []byte) []byte {
				if len(b) >= 24 {
					copy(b[12:], b[:12])
				}
				return b
			})
		},
		fallback: "not above the previous entry",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := genPartition(t, gen.Options{Magic: 2, Compression: codec.Zstd, Records: 2000, Keys: 50, BatchRecords: 6, SegmentBytes: 60000, Seed: 13})
			tc.tamper(t, dir)
			agree(t, dir, tc.fallback)
		})
	}
}

func removeAll(t *testing.T, dir, ext string) {
	t.Helper()
	matches, _ := filepath.Glob(filepath.Join(dir, "*"+ext))
	for _, m := range matches {
		if err := os.Remove(m); err != nil {
			t.Fatal(err)
		}
	}
}

func eachFile(t *testing.T, dir, ext string, f func([]byte) []byte) {
	t.Helper()
	matches, _ := filepath.Glob(filepath.Join(dir, "*"+ext))
	for _, m := range matches {
		b, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(m, f(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLookupCoarseTimeIndex: a coarse time index answers like recovery's,
// scanning further.
func TestLookupCoarseTimeIndex(t *testing.T) {
	dir := genPartition(t, gen.Options{Magic: 2, Compression: codec.LZ4, Records: 4000, Keys: 50, BatchRecords: 6, ValueBytes: 200,
		SegmentBytes: 200000, TimeStep: 200 * time.Millisecond, Seed: 14})
	fine := agree(t, dir, "")
	if _, err := reindex.Partition(dir, reindex.Options{Time: true, Granularity: time.Minute}); err != nil {
		t.Fatal(err)
	}
	coarse := agree(t, dir, "")
	t.Logf("mean bytes scanned per timestamp lookup: %.0f with recovery's time index, %.0f with 1m buckets", fine, coarse)
	if coarse <= fine {
		t.Errorf("the coarse index scans %.0f bytes, recovery's %.0f: not coarse", coarse, fine)
	}
}

// TestLookupNotFound covers the answers that are no record.
func TestLookupNotFound(t *testing.T) {
	dir := genPartition(t, gen.Options{Magic: 2, Records: 500, SegmentBytes: 20000, Seed: 15})
	cp := checkpoint.AppendOffsets(nil, []checkpoint.OffsetEntry{{Topic: "t", Partition: 0, Offset: 100}})
	if err := os.WriteFile(filepath.Join(dir, "..", layout.LogStartOffsetCheckpointFile), cp, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		byTS   bool
		target int64
		reason string
	}{
		{false, 99, "below the log start offset 100"},
		{false, 500, "past the log end offset 500"},
		{true, 1 << 50, "no record has timestamp"},
	} {
		var res *Result
		var err error
		if tc.byTS {
			res, err = Timestamp(dir, tc.target, Options{})
		} else {
			res, err = Offset(dir, tc.target, Options{})
		}
		if err != nil || res.Found || !strings.Contains(res.Reason, tc.reason) {
			t.Errorf("%+v: found %v, reason %q, error %v", tc, res.Found, res.Reason, err)
		}
	}
	// The log start offset bounds timestamp answers too.
	res, err := Timestamp(dir, 0, Options{})
	if err != nil || !res.Found || res.Offset != 100 {
		t.Errorf("timestamp 0: %+v, %v; want offset 100", res, err)
	}
}

// TestLookupCompactedGap: an offset compaction removed is answered with the
// next one.
func TestLookupCompactedGap(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "t-0")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var log []byte
	for _, base := range []int64{0, 10, 20} {
		o := logfmt.DefaultBatchOptions(base)
		var recs []logfmt.Record
		for i := range int64(3) {
			recs = append(recs, logfmt.Record{Offset: base + i, Timestamp: 1000 + base + i, Value: []byte("v")})
		}
		var err error
		if log, err = logfmt.AppendBatch(log, o, recs); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, layout.SegmentName(0, layout.LogExt)), log, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Offset(dir, 5, Options{})
	if err != nil || !res.Found || res.Offset != 10 || res.Batch.BaseOffset != 10 {
		t.Fatalf("offset 5: %+v, %v; want offset 10", res, err)
	}
	if !strings.Contains(strings.Join(res.Fallbacks, ""), "no .index") {
		t.Errorf("fallbacks %q", res.Fallbacks)
	}
}

// TestLookupKafkaSamples: lookups through the indexes of real brokers
// agree with a scan, with no fallback where the indexes exist.
func TestLookupKafkaSamples(t *testing.T) {
	root := kafkasamples.Dir("logdirs", "volodymyrzee_kafka-2.x-zk")
	if _, err := os.Stat(root); err != nil {
		kafkasamples.Skip(t, err)
	}
	for _, p := range []string{"__consumer_offsets-12", "__consumer_offsets-18", "first_topic-2"} {
		t.Run(p, func(t *testing.T) { agree(t, filepath.Join(root, p), "") })
	}
}

// TestLookupUsesIndexes: with good indexes the scan starts at the entry
// below the target and reads little.
func TestLookupUsesIndexes(t *testing.T) {
	dir := genPartition(t, gen.Options{Magic: 2, Records: 3000, ValueBytes: 300, SegmentBytes: 1 << 20, Seed: 16})
	res, err := Offset(dir, 2500, Options{})
	if err != nil || !res.Found {
		t.Fatal(res, err)
	}
	if res.IndexEntry == nil || res.ScannedBytes > 2*index.DefaultIntervalBytes+10000 {
		t.Errorf("entry %v, scanned %d bytes", res.IndexEntry, res.ScannedBytes)
	}
	res, err = Timestamp(dir, res.Timestamp, Options{})
	if err != nil || !res.Found {
		t.Fatal(res, err)
	}
	if res.TimeEntry == nil || res.IndexEntry == nil || res.ScannedBytes > 2*index.DefaultIntervalBytes+10000 {
		t.Errorf("entries %v %v, scanned %d bytes", res.TimeEntry, res.IndexEntry, res.ScannedBytes)
	}
}
