package reindex

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/logtool/logtool/index"
	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/internal/testkit/testutil"
	"github.com/logtool/logtool/logfmt/codec"
	"github.com/logtool/logtool/logfmt/layout"
)

// TestRebuildMatchesIndependentRule rebuilds the indexes of generated
// partitions, every magic and codec, small and large segments and batches,
// and compares them byte for byte with an independent implementation of
// LogSegment.recover's rule. gen writes its indexes with index.Recovery, so
// its files are checked against the rule too, and --check finds the
// rebuilt files identical.
func TestRebuildMatchesIndependentRule(t *testing.T) {
	type variant struct {
		magic    int8
		comp     codec.Type
		segBytes int64
		batch    int
		value    int
	}
	var variants []variant
	for _, magic := range []int8{0, 1, 2} {
		for _, comp := range []codec.Type{codec.None, codec.Gzip, codec.Snappy, codec.LZ4, codec.Zstd} {
			if comp != codec.None && !comp.ValidFor(magic) {
				continue
			}
			for _, seg := range []int64{1500, 20000, 1 << 20} {
				for _, batch := range []int{1, 12} {
					variants = append(variants, variant{magic, comp, seg, batch, 40 + 70*int(magic)})
				}
			}
		}
	}
	for _, v := range variants {
		name := fmt.Sprintf("v%d-%s-seg%d-batch%d", v.magic, v.comp, v.segBytes, v.batch)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := genPartition(t, gen.Options{Records: 700, Keys: 50, ValueBytes: v.value, Magic: v.magic, Compression: v.comp,
				BatchRecords: v.batch, SegmentBytes: v.segBytes, Seed: int64(v.magic)*100 + int64(v.batch), TimeStep: 700 * time.Millisecond})
			checkAgainstIndependent(t, dir, index.DefaultIntervalBytes)
			generated := files(t, dir)
			removeIndexes(t, dir, layout.IndexExt, layout.TimeIndexExt)
			rep := mustPartition(t, dir, all(Write))
			if rep.Counts != [3]int{} {
				t.Errorf("findings on a clean partition:\n%s", findingsText(rep))
			}
			if got := files(t, dir); !equalFiles(got, generated) {
				t.Errorf("rebuilt files differ from gen's: %s", diffNames(got, generated))
			}
			checkAgainstIndependent(t, dir, index.DefaultIntervalBytes)
			strict := all(Check)
			strict.Strict = true
			if rep := mustPartition(t, dir, strict); rep.Counts != [3]int{} {
				t.Errorf("--check --strict on the rebuild:\n%s", findingsText(rep))
			}
		})
	}
}

// TestRebuildIntervals covers other index.interval.bytes values, 0 (every
// batch after the first) included.
func TestRebuildIntervals(t *testing.T) {
	dir := genPartition(t, gen.Options{Magic: 2, Records: 900, Keys: 20, Compression: codec.LZ4, BatchRecords: 7, SegmentBytes: 30000, Seed: 3})
	for _, interval := range []int64{0, 1, 100, 4095, 4096, 4097, 1 << 20} {
		o := all(Write)
		o.IntervalBytes = interval
		mustPartition(t, dir, o)
		checkAgainstIndependent(t, dir, interval)
	}
}

func equalFiles(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !slices.Equal(v, w) {
			return false
		}
	}
	return true
}

func diffNames(got, want map[string][]byte) string {
	var d []string
	for k, v := range got {
		if w, ok := want[k]; !ok {
			d = append(d, "+"+k)
		} else if !slices.Equal(v, w) {
			d = append(d, "~"+k)
		}
	}
	for k := range want {
		if _, ok := got[k]; !ok {
			d = append(d, "-"+k)
		}
	}
	slices.Sort(d)
	return strings.Join(d, " ")
}

// TestTxnIndexRebuild deletes the .txnindex files of transactional
// partitions and rebuilds them: with the producer snapshots gen wrote at
// every roll, with none (the state is replayed from the log start), and with
// the snapshots unreadable (Kafka skips them). The result must equal an
// independent replay, and gen's own files byte for byte.
//
// gen misplaces an ABORT marker that rolls a new segment: it indexes it in
// the segment before, and its snapshot at the roll already shows the
// transaction closed. Fixtures where that happens (seeds 1 and 5) are
// compared with the independent replay only; the others must match gen's
// files too.
func TestTxnIndexRebuild(t *testing.T) {
	clean := 0
	t.Cleanup(func() {
		if clean == 0 {
			t.Error("no fixture compared gen's .txnindex files byte for byte")
		}
	})
	for _, tc := range []struct {
		seg  int64
		seed int64
	}{{2000, 1}, {9000, 8}, {9000, 10}, {20000, 2}, {20000, 3}, {60000, 5}, {1 << 20, 1}} {
		dir := genPartition(t, gen.Options{Magic: 2, Records: 1500, Keys: 30, BatchRecords: 5, SegmentBytes: tc.seg, Compression: codec.Zstd,
			TransactionalRatio: 0.6, AbortRatio: 0.5, Seed: tc.seed})
		orig := t.TempDir()
		testutil.CopyTree(t, dir, orig)
		want := independentTxnIndexes(t, dir)
		genOK := true
		for _, base := range segmentBases(t, dir) {
			got := files(t, dir)[layout.SegmentName(base, layout.TxnIndexExt)]
			if !slices.Equal(got, want[base]) {
				genOK = false
				t.Logf("seg%d seed%d: gen's %s differs from the replay (gen's misplaced marker)", tc.seg, tc.seed, layout.SegmentName(base, layout.TxnIndexExt))
			}
		}
		if genOK {
			clean++
		}
		for _, setup := range []string{"snapshots", "no-snapshots", "corrupt-snapshots"} {
			t.Run(fmt.Sprintf("seg%d-seed%d-%s", tc.seg, tc.seed, setup), func(t *testing.T) {
				dir := t.TempDir()
				testutil.CopyTree(t, orig, dir)
				switch setup {
				case "no-snapshots":
					removeIndexes(t, dir, layout.SnapshotExt)
				case "corrupt-snapshots":
					for name := range files(t, dir) {
						if strings.HasSuffix(name, layout.SnapshotExt) {
							if err := os.WriteFile(filepath.Join(dir, name), []byte("not a snapshot"), 0o644); err != nil {
								t.Fatal(err)
							}
						}
					}
				}
				removeIndexes(t, dir, layout.TxnIndexExt)
				rep := mustPartition(t, dir, Options{Txn: true})
				if rep.Counts[Problem] != 0 || rep.Counts[Difference] != 0 {
					t.Errorf("findings:\n%s", findingsText(rep))
				}
				if setup == "corrupt-snapshots" && len(segmentBases(t, dir)) > 1 && !strings.Contains(findingsText(rep), "unreadable producer snapshot") {
					t.Errorf("no note about the unreadable snapshots:\n%s", findingsText(rep))
				}
				if setup == "snapshots" && !genOK {
					return // gen's snapshots disagree with its log
				}
				got := files(t, dir)
				for _, base := range segmentBases(t, dir) {
					name := layout.SegmentName(base, layout.TxnIndexExt)
					if !slices.Equal(got[name], want[base]) {
						t.Errorf("%s: got %x, want %x", name, got[name], want[base])
					}
					if genOK && !slices.Equal(got[name], files(t, orig)[name]) {
						t.Errorf("%s differs from gen's", name)
					}
				}
			})
		}
	}
}

// TestSelectors rebuilds only the kinds asked for.
func TestSelectors(t *testing.T) {
	dir := genPartition(t, gen.Options{Magic: 2, Records: 800, BatchRecords: 4, SegmentBytes: 20000, TransactionalRatio: 0.5, AbortRatio: 0.5, Seed: 9})
	mustPartition(t, dir, all(Write))
	want := files(t, dir)
	for _, tc := range []struct {
		o    Options
		kept []string
	}{
		{Options{Offset: true}, []string{layout.TimeIndexExt, layout.TxnIndexExt}},
		{Options{Time: true}, []string{layout.IndexExt, layout.TxnIndexExt}},
		{Options{Txn: true}, []string{layout.IndexExt, layout.TimeIndexExt}},
	} {
		removeIndexes(t, dir, layout.IndexExt, layout.TimeIndexExt, layout.TxnIndexExt)
		tc.o.IntervalBytes = index.DefaultIntervalBytes
		mustPartition(t, dir, tc.o)
		for name, b := range files(t, dir) {
			ext := filepath.Ext(name)
			switch {
			case slices.Contains(tc.kept, ext):
				t.Errorf("%+v wrote %s", tc.o, name)
			case !slices.Equal(b, want[name]):
				t.Errorf("%+v: %s differs", tc.o, name)
			}
		}
	}
}

// TestDryRun reports what would change and writes nothing.
func TestDryRun(t *testing.T) {
	dir := genPartition(t, gen.Options{Magic: 2, Records: 600, SegmentBytes: 20000, Seed: 5})
	bases := segmentBases(t, dir)
	stale := filepath.Join(dir, layout.SegmentName(bases[0], layout.IndexExt))
	if err := os.WriteFile(stale, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	removeIndexes(t, dir, layout.TimeIndexExt)
	before := files(t, dir)
	rep := mustPartition(t, dir, all(DryRun))
	if got := files(t, dir); !equalFiles(got, before) {
		t.Fatalf("dry run wrote: %s", diffNames(got, before))
	}
	for _, s := range rep.Segments {
		for _, f := range s.Files {
			want := Unchanged
			switch {
			case f.Kind == TimeIndex:
				want = WouldWrite
			case f.Kind == TxnIndex:
				want = NotNeeded
			case f.Path == stale:
				want = WouldWrite
			}
			if f.Action != want {
				t.Errorf("%s: action %v, want %v", f.Path, f.Action, want)
			}
			if f.Kind == TimeIndex && f.Before != -1 {
				t.Errorf("%s: before %d, want -1 (absent)", f.Path, f.Before)
			}
		}
	}
}

// TestSegmentsFilter processes only the segments named, yet gives the
// same .txnindex as a full run because the producer state is rebuilt from
// the segments before.
func TestSegmentsFilter(t *testing.T) {
	dir := genPartition(t, gen.Options{Magic: 2, Records: 1500, BatchRecords: 5, SegmentBytes: 5000, TransactionalRatio: 0.7, AbortRatio: 0.6, Seed: 12})
	removeIndexes(t, dir, layout.SnapshotExt)
	want := files(t, dir)
	bases := segmentBases(t, dir)
	if len(bases) < 4 {
		t.Fatalf("want several segments, got %d", len(bases))
	}
	last := int64(-1)
	for _, b := range bases[1:] {
		if want[layout.SegmentName(b, layout.TxnIndexExt)] != nil {
			last = b
		}
	}
	if last < 0 {
		t.Fatal("no later segment has a .txnindex")
	}
	removeIndexes(t, dir, layout.TxnIndexExt, layout.IndexExt, layout.TimeIndexExt)
	o := all(Write)
	o.Segments = []int64{last}
	rep := mustPartition(t, dir, o)
	if len(rep.Segments) != 1 || rep.Segments[0].Base != last {
		t.Fatalf("segments processed: %+v", rep.Segments)
	}
	got := files(t, dir)
	stem := layout.SegmentName(last, "")
	for _, ext := range []string{layout.IndexExt, layout.TimeIndexExt, layout.TxnIndexExt} {
		if !slices.Equal(got[stem+ext], want[stem+ext]) {
			t.Errorf("%s%s differs from a full run", stem, ext)
		}
	}
	if _, ok := got[layout.SegmentName(bases[0], layout.IndexExt)]; ok {
		t.Error("a segment that was not asked for was written")
	}
}
