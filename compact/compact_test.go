package compact

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/logtool/logtool/index"
	"github.com/logtool/logtool/internal/fielderr"
	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/internal/testkit/testutil"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/checkpoint"
	"github.com/logtool/logtool/logfmt/codec"
	"github.com/logtool/logtool/logfmt/layout"
)

const day = int64(86_400_000)

func mustCompact(t *testing.T, dir string, o Options) *Result {
	t.Helper()
	r, err := Compact(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func writeCleanerCheckpoint(t *testing.T, dir string, offset, cleanTime int64) {
	t.Helper()
	data := checkpoint.AppendCleaner(nil, checkpoint.CleanerCheckpoint{FirstDirtyOffset: offset, LastCleanTimeMs: cleanTime})
	if err := os.WriteFile(filepath.Join(dir, layout.CleanerCheckpointFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "(missing)"
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// digest hashes the names and contents of every file under dir.
func digest(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %d\n", strings.TrimPrefix(path, dir), len(b))
		h.Write(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

func TestIdleActiveSegmentPastMaxLag(t *testing.T) {
	b := newLog(t)
	for i := 0; i < 20; i++ {
		b.plain(rec(i % 4))
	}
	b.plain(keyless(99)) // the last batch survives only as an empty batch... were it v2 with a producer
	b.producerBatch(7, 0, false, keyless(100))
	dir := b.flush()
	leo := int64(22)
	now := t0 + 10*day

	o := testOptions(now)
	o.MinCleanableRatio = 0.5
	r := mustCompact(t, dir, o)
	if r.Eligible || r.Reason != "nothing to clean" {
		t.Fatalf("without a max lag: eligible %v (%s), want nothing to clean", r.Eligible, r.Reason)
	}

	o.MaxLag = day
	o.ProducerIDExpiration = day // producer 7 is long gone
	r = mustCompact(t, dir, o)
	if !r.Eligible || !r.ActiveSegmentRolled || r.FirstUncleanableOffset != leo {
		t.Fatalf("eligible %v rolled %v uncleanable %d (%s); want the idle active segment cleaned up to %d",
			r.Eligible, r.ActiveSegmentRolled, r.FirstUncleanableOffset, r.Reason, leo)
	}
	if want := now - day - (t0 + 1); r.MaxLagExceededByMs != want {
		t.Errorf("max lag exceeded by %d, want %d", r.MaxLagExceededByMs, want)
	}
	v := readView(t, dir)
	eq(t, "keys", v.keys(), ints(0, 1, 2, 3))
	eq(t, "offsets", v.offsets(), offs(16, 17, 18, 19))
	// The log end offset survives: the last batch stays, emptied.
	last := v.batches[len(v.batches)-1]
	if last.last != leo-1 || last.count != 0 {
		t.Errorf("last batch ends at %d with %d records, want an empty batch ending at %d", last.last, last.count, leo-1)
	}
	if got := readFile(t, filepath.Join(dir, layout.CleanerCheckpointFile)); got != fmt.Sprintf("1\n%d %d\n", leo, now) {
		t.Errorf("checkpoint %q", got)
	}
}

func TestMaxLagEligibility(t *testing.T) {
	// A big clean section and a small dirty one: the ratio stays below
	// 0.5, and only the age of the dirty segment makes the log eligible.
	b := newLog(t)
	for i := 0; i < 60; i++ {
		b.plain(rec(i))
	}
	b.roll()
	dirtyBase := b.next
	now := t0 + 3*day
	b.plain(rec(1))
	b.ts = now + day // a producer with a clock far ahead
	b.plain(rec(2)).roll()
	b.ts = now - 1000
	b.plain(rec(3))
	dir := b.flush()
	writeCleanerCheckpoint(t, dir, dirtyBase, t0)
	firstTS := t0 + 61 // the dirty segment's first batch

	o := testOptions(now)
	o.MinCleanableRatio = 0.5
	r := mustCompact(t, dir, o)
	if r.Eligible || r.MaxLagExceededByMs != 0 {
		t.Fatalf("eligible %v (%s), lag %d; want ineligible at ratio %.2f", r.Eligible, r.Reason, r.MaxLagExceededByMs, r.CleanableRatio)
	}

	o.DryRun, o.MaxLag = true, 2*day
	r = mustCompact(t, dir, o)
	if want := now - 2*day - firstTS; !r.Eligible || r.MaxLagExceededByMs != want || !strings.Contains(r.Reason, "max lag exceeded") {
		t.Errorf("eligible %v lag %d (%s); want eligible, %d past the max lag", r.Eligible, r.MaxLagExceededByMs, r.Reason, want)
	}
	if r.ActiveSegmentRolled || r.FirstUncleanableOffset != dirtyBase+2 {
		t.Errorf("rolled %v uncleanable %d: the active segment is younger than the max lag", r.ActiveSegmentRolled, r.FirstUncleanableOffset)
	}

	// Past the max lag, but the future timestamp in the dirty segment keeps
	// it within any min lag (KIP-58): nothing can be done yet.
	o.MinLag = 1
	r = mustCompact(t, dir, o)
	if r.Eligible || r.MaxLagExceededByMs == 0 || !strings.Contains(r.Reason, "not cleanable yet") {
		t.Errorf("eligible %v lag %d (%s); want an audit line past the lag but not cleanable", r.Eligible, r.MaxLagExceededByMs, r.Reason)
	}
}

// minLagLog writes four segments of five records, a day apart, and
// returns their bases; now is a day after the last.
func minLagLog(t *testing.T) (dir string, bases []int64, now int64) {
	b := newLog(t)
	for s := 0; s < 4; s++ {
		bases = append(bases, b.next)
		b.ts = t0 + int64(s)*day
		for i := 0; i < 5; i++ {
			b.plain(rec(i))
		}
		b.roll()
	}
	return b.flush(), bases, t0 + 4*day
}

func TestMinLag(t *testing.T) {
	dir, bases, now := minLagLog(t)
	third := readFile(t, filepath.Join(dir, layout.SegmentName(bases[2], layout.LogExt)))

	o := testOptions(now)
	o.MinLag = 2*day + 1 // segments 2 and 3 hold records younger than that
	r := mustCompact(t, dir, o)
	if r.FirstUncleanableOffset != bases[2] {
		t.Fatalf("first uncleanable %d, want %d (%s)", r.FirstUncleanableOffset, bases[2], r.Reason)
	}
	v := readView(t, dir)
	// Segments 0 and 1 collapse to the second's records; 2 and 3 are untouched.
	eq(t, "keys", v.keys(), ints(0, 1, 2, 3, 4, 0, 1, 2, 3, 4, 0, 1, 2, 3, 4))
	if got := readFile(t, filepath.Join(dir, layout.SegmentName(bases[2], layout.LogExt))); got != third {
		t.Error("a segment within the min lag changed")
	}
}

// A segment without index files is recovered when a broker loads it, so its
// records' timestamps decide the min lag, not the files' modification time.
func TestMinLagWithoutIndexes(t *testing.T) {
	dir, bases, now := minLagLog(t)
	p, err := layout.ReadPartition(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range p.Segments {
		for _, f := range []string{s.Index, s.TimeIndex} {
			if f != "" {
				if err := os.Remove(f); err != nil {
					t.Fatal(err)
				}
			}
		}
		// Copied just now: every file is younger than the min lag.
		if err := os.Chtimes(s.Log, time.UnixMilli(now), time.UnixMilli(now)); err != nil {
			t.Fatal(err)
		}
	}
	o := testOptions(now)
	o.MinLag = 2*day + 1
	o.DryRun = true
	if r := mustCompact(t, dir, o); r.FirstUncleanableOffset != bases[2] {
		t.Errorf("first uncleanable %d, want %d, the first segment with records younger than the min lag (%s)", r.FirstUncleanableOffset, bases[2], r.Reason)
	}
}

func TestLastStableOffsetBoundsCleaning(t *testing.T) {
	b := newLog(t)
	b.plain(rec(1)).plain(rec(1)).roll()
	open := b.next
	b.plain(rec(1)).txn(5, 2).plain(rec(1)).roll() // the transaction never ends
	b.plain(rec(1))
	dir := b.flush()
	o := testOptions(t0 + 1000)
	r := mustCompact(t, dir, o)
	if r.LastStableOffset != open+1 || r.FirstUncleanableOffset != open {
		t.Fatalf("LSO %d, first uncleanable %d; want %d and the base %d of its segment", r.LastStableOffset, r.FirstUncleanableOffset, open+1, open)
	}
	eq(t, "offsets", readView(t, dir).offsets(), offs(1, 2, 3, 4, 5))
}

func TestCleanableBytes(t *testing.T) {
	// LogToCleanWithUncleanableSection: segments 0-1 clean, 2-3 cleanable,
	// 4-5 held back by the min lag, 6 active.
	b := newLog(t)
	var bases []int64
	for s := 0; s < 7; s++ {
		bases = append(bases, b.next)
		if s >= 4 {
			b.ts = t0 + 10*day
		}
		for i := 0; i < 3+s; i++ {
			b.plain(rec(100*s + i))
		}
		b.roll()
	}
	dir := b.flush()
	writeCleanerCheckpoint(t, dir, bases[2], -1)
	size := func(s int) int64 {
		fi, err := os.Stat(filepath.Join(dir, layout.SegmentName(bases[s], layout.LogExt)))
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	o := testOptions(t0 + 10*day + 1000)
	o.MinLag, o.DryRun = day, true
	r := mustCompact(t, dir, o)
	clean, cleanable := size(0)+size(1), size(2)+size(3)
	if r.CleanBytes != clean || r.CleanableBytes != cleanable || r.FirstUncleanableOffset != bases[4] ||
		r.CleanableRatio != float64(cleanable)/float64(clean+cleanable) {
		t.Errorf("clean %d cleanable %d ratio %v uncleanable %d; want %d %d %v %d", r.CleanBytes, r.CleanableBytes, r.CleanableRatio,
			r.FirstUncleanableOffset, clean, cleanable, float64(cleanable)/float64(clean+cleanable), bases[4])
	}
}

func TestCheckpointSources(t *testing.T) {
	build := func(t *testing.T) (string, string) {
		b := newLog(t)
		for i := 0; i < 10; i++ {
			b.plain(rec(i % 2))
		}
		b.roll()
		return b.flush(), filepath.Dir(b.dir)
	}
	root := func(t *testing.T, logDir string, offset int64) {
		data := checkpoint.AppendOffsets(nil, []checkpoint.OffsetEntry{{Topic: "other", Partition: 3, Offset: 7}, {Topic: "test", Partition: 0, Offset: offset}})
		if err := os.WriteFile(filepath.Join(logDir, layout.CleanerOffsetCheckpointFile), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	o := testOptions(t0 + 1000)
	o.DryRun = true

	t.Run("log start", func(t *testing.T) {
		dir, _ := build(t)
		if r := mustCompact(t, dir, o); r.CheckpointSource != SourceLogStart || r.FirstDirtyOffset != 0 {
			t.Errorf("%s %d", r.CheckpointSource, r.FirstDirtyOffset)
		}
	})
	t.Run("root", func(t *testing.T) {
		dir, logDir := build(t)
		root(t, logDir, 4)
		if r := mustCompact(t, dir, o); r.CheckpointSource != SourceRoot || r.FirstDirtyOffset != 4 {
			t.Errorf("%s %d", r.CheckpointSource, r.FirstDirtyOffset)
		}
	})
	t.Run("partition first", func(t *testing.T) {
		dir, logDir := build(t)
		root(t, logDir, 4)
		writeCleanerCheckpoint(t, dir, 6, t0)
		if r := mustCompact(t, dir, o); r.CheckpointSource != SourcePartition || r.FirstDirtyOffset != 6 {
			t.Errorf("%s %d", r.CheckpointSource, r.FirstDirtyOffset)
		}
	})
	t.Run("reset past the end", func(t *testing.T) {
		dir, logDir := build(t)
		root(t, logDir, 4)
		writeCleanerCheckpoint(t, dir, 99, t0)
		o := o
		o.DryRun, o.MinCleanableRatio = false, 1
		r := mustCompact(t, dir, o)
		if r.Eligible || r.FirstDirtyOffset != 0 || len(r.Warnings) == 0 {
			t.Errorf("eligible %v first dirty %d warnings %v", r.Eligible, r.FirstDirtyOffset, r.Warnings)
		}
		// LogCleanerManager writes the reset offset at once, even without cleaning.
		if got := readFile(t, filepath.Join(dir, layout.CleanerCheckpointFile)); got != "1\n0 -1\n" {
			t.Errorf("partition checkpoint %q", got)
		}
		if got := readFile(t, filepath.Join(logDir, layout.CleanerOffsetCheckpointFile)); got != "0\n2\nother 3 7\ntest 0 0\n" {
			t.Errorf("root checkpoint %q", got)
		}
	})
	t.Run("written after cleaning", func(t *testing.T) {
		dir, logDir := build(t)
		root(t, logDir, 0)
		o := o
		o.DryRun = false
		mustCompact(t, dir, o)
		if got, want := readFile(t, filepath.Join(dir, layout.CleanerCheckpointFile)), fmt.Sprintf("1\n10 %d\n", o.Now); got != want {
			t.Errorf("partition checkpoint %q, want %q", got, want)
		}
		if got := readFile(t, filepath.Join(logDir, layout.CleanerOffsetCheckpointFile)); got != "0\n2\nother 3 7\ntest 0 10\n" {
			t.Errorf("root checkpoint %q", got)
		}
	})
	t.Run("no root file made", func(t *testing.T) {
		dir, logDir := build(t)
		o := o
		o.DryRun = false
		mustCompact(t, dir, o)
		if got := readFile(t, filepath.Join(logDir, layout.CleanerOffsetCheckpointFile)); got != "(missing)" {
			t.Errorf("root checkpoint %q, want none", got)
		}
	})
}

// genLogDir writes a log directory with every kind of partition the sample
// has, with timestamps from t0.
func genLogDir(t testing.TB) string {
	dir := t.TempDir()
	start := time.UnixMilli(t0).UTC().UnixMilli()
	for _, o := range []gen.Options{
		{Topics: []string{"orders"}, Magic: 2, Partitions: 2, Records: 3000, Keys: 300, Compression: codec.LZ4, SegmentBytes: 32 << 10, Seed: 1},
		{Topics: []string{"payments.txn"}, Magic: 2, Records: 2000, Keys: 100, TransactionalRatio: 0.4, AbortRatio: 0.3, SegmentBytes: 16 << 10, Seed: 2},
		{Topics: []string{"user-profiles"}, Magic: 2, Records: 2000, Keys: 40, TombstoneRatio: 0.1, Compression: codec.Zstd, SegmentBytes: 16 << 10, Seed: 3},
		{Topics: []string{"clicks-v1"}, Magic: 1, Records: 800, Keys: 50, TombstoneRatio: 0.1, Compression: codec.Gzip, SegmentBytes: 16 << 10, Seed: 4},
		{Topics: []string{"legacy-v0"}, Magic: 0, Records: 600, Keys: 60, TombstoneRatio: 0.1, SegmentBytes: 16 << 10, Seed: 5},
		{Topics: []string{"legacy-v0-snappy"}, Magic: 0, Records: 400, Keys: 60, Compression: codec.Snappy, SegmentBytes: 8 << 10, Seed: 6},
	} {
		o.Out, o.StartTime = dir, start
		if _, err := gen.Generate(o); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func runAll(t *testing.T, dirs []string, o Options) []*Result {
	t.Helper()
	jobs := make([]Job, len(dirs))
	for i, d := range dirs {
		jobs[i] = Job{Dir: d, Config: o.Config}
	}
	results, errs := Run(jobs, o, 3, nil)
	for i, err := range errs {
		if err != nil {
			t.Fatalf("%s: %v", dirs[i], err)
		}
	}
	return results
}

func TestLogDirRoundTrip(t *testing.T) {
	logDir := genLogDir(t)
	dirs := testutil.PartitionDirs(t, logDir)
	before := map[string]view{}
	aborted := map[string][]string{}
	for _, d := range dirs {
		before[d] = readView(t, d)
		aborted[d] = abortedIn(t, d)
	}
	o := DefaultOptions(t0 + 30*day)
	o.MaxLag = day

	// The dry run writes nothing and plans what the run then does.
	sum := digest(t, logDir)
	dry := o
	dry.DryRun = true
	plans := runAll(t, dirs, dry)
	if digest(t, logDir) != sum {
		t.Fatal("the dry run changed the log directory")
	}
	// Plan alone says what the dry run planned.
	for i, d := range dirs {
		pl, err := Plan(d, o)
		if err != nil {
			t.Fatal(err)
		}
		p := plans[i]
		if pl.Eligible != p.Eligible || pl.Reason != p.Reason || pl.FirstDirtyOffset != p.FirstDirtyOffset ||
			pl.FirstUncleanableOffset != p.FirstUncleanableOffset || pl.MaxLagExceededByMs != p.MaxLagExceededByMs ||
			pl.LastStableOffset != p.LastStableOffset || pl.Passes != 0 {
			t.Errorf("%s: Plan says %+v, the dry run %+v", p.Name, *pl, *p)
		}
	}
	results := runAll(t, dirs, o)
	for i, r := range results {
		p := plans[i]
		if p.Eligible != r.Eligible || p.Reason != r.Reason || p.FirstDirtyOffset != r.FirstDirtyOffset ||
			p.FirstUncleanableOffset != r.FirstUncleanableOffset || p.MaxLagExceededByMs != r.MaxLagExceededByMs ||
			p.SegmentsAfter != r.SegmentsAfter || p.BytesAfter != r.BytesAfter || p.RecordsAfter != r.RecordsAfter ||
			p.RecordsBefore != r.RecordsBefore || p.TombstonesRemoved != r.TombstonesRemoved {
			t.Errorf("%s: dry run planned %+v, run did %+v", r.Name, *p, *r)
		}
	}

	for i, d := range dirs {
		r := results[i]
		after := readView(t, d)
		checkCompacted(t, before[d], after, aborted[d], r)
		checkIndexes(t, d)
	}

	// A second run at the same time changes no byte.
	sum = digest(t, logDir)
	for _, r := range runAll(t, dirs, o) {
		if r.Passes != 0 {
			t.Errorf("%s: second run made %d passes (%s)", r.Name, r.Passes, r.Reason)
		}
	}
	if digest(t, logDir) != sum {
		t.Error("a second run at the same time changed the log directory")
	}
}

// checkCompacted checks the survivors of a full clean against the input:
// offsets only ever disappear, every key keeps its latest record, and the
// log end offset stays.
func checkCompacted(t *testing.T, before, after view, aborted []string, r *Result) {
	t.Helper()
	in := map[int64]viewRec{}
	latest := map[string]int64{}
	for _, b := range before.batches {
		isAborted := false
		for _, a := range aborted {
			var pid, first, last, lso int64
			fmt.Sscanf(a, "%d:%d-%d/%d", &pid, &first, &last, &lso)
			isAborted = isAborted || b.txn && b.pid == pid && b.base >= first && b.last <= last
		}
		for _, rc := range b.recs {
			in[rc.offset] = rc
			if !b.control && !isAborted && rc.key != nil && rc.offset < r.FirstUncleanableOffset {
				latest[string(rc.key)] = rc.offset
			}
		}
	}
	seen := map[string]bool{}
	for _, b := range after.batches {
		for _, rc := range b.recs {
			orig, ok := in[rc.offset]
			if !ok || !bytes.Equal(orig.key, rc.key) || !bytes.Equal(orig.value, rc.value) || (orig.value == nil) != (rc.value == nil) {
				t.Errorf("%s: record %d is not the input's", r.Name, rc.offset)
				continue
			}
			if b.control || rc.key == nil || rc.offset >= r.FirstUncleanableOffset {
				continue
			}
			if l := latest[string(rc.key)]; l != rc.offset {
				t.Errorf("%s: key %q survives at %d, its latest is %d", r.Name, rc.key, rc.offset, l)
			}
			seen[string(rc.key)] = true
		}
	}
	if n := len(before.batches); n > 0 && len(after.batches) > 0 {
		if a, b := after.batches[len(after.batches)-1].last, before.batches[n-1].last; a != b {
			t.Errorf("%s: log ends at %d, was %d", r.Name, a, b)
		}
	}
	if r.Eligible && r.Passes == 0 {
		t.Errorf("%s: eligible but no pass ran", r.Name)
	}
}

// checkIndexes checks that every segment's .index and .timeindex are what
// LogSegment.recover builds from its .log.
func checkIndexes(t *testing.T, dir string) {
	t.Helper()
	p, err := layout.ReadPartition(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Leftovers) > 0 {
		t.Errorf("%s: leftovers %v", dir, p.Leftovers)
	}
	for _, s := range p.Segments {
		rb, err := testutil.RebuildSegment(s.Log, s.Base, index.DefaultIntervalBytes, nil)
		if err != nil || rb.Stop != nil {
			t.Fatalf("%s: %v %v", s.Log, err, rb.Stop)
		}
		ib, _ := rb.OffsetIndexBytes()
		tb, _ := rb.TimeIndexBytes()
		if got := readFile(t, s.Index); got != string(ib) {
			t.Errorf("%s: offset index differs from recovery's", s.Index)
		}
		if got := readFile(t, s.TimeIndex); got != string(tb) {
			t.Errorf("%s: time index differs from recovery's", s.TimeIndex)
		}
	}
}

func TestUnchangedBatchesCopied(t *testing.T) {
	b := newLog(t)
	b.codec = codec.Gzip
	b.producerBatch(3, 0, false, rec(1), rec(2)) // survives whole
	b.producerBatch(3, 0, false, rec(3), rec(5)) // loses key 3 below
	b.plain(rec(3), tomb(9))
	b.roll()
	dir := b.flush()
	in := readView(t, dir)
	cleanOnce(t, dir, 0, t0+1000, 0)
	out := readView(t, dir)
	if !bytes.Equal(out.batches[0].data, in.batches[0].data) {
		t.Error("a batch that lost nothing was rewritten")
	}
	b1 := out.batches[1]
	if b1.base != 2 || b1.last != 3 || b1.count != 1 || b1.compression != codec.Gzip || b1.pid != 3 || b1.lastSeq != 3 {
		t.Errorf("rebuilt batch %+v: want base 2, last 3, 1 record, gzip, producer 3, last sequence 3", b1)
	}
	// The batch that keeps a tombstone gets the KIP-534 horizon.
	if b2 := out.batches[2]; b2.horizon != t0+1000+day || b2.baseTimestamp != b2.horizon {
		t.Errorf("tombstone batch horizon %d, want %d", b2.horizon, t0+1000+day)
	}
}

func TestLegacyWrapperHoles(t *testing.T) {
	for _, magic := range []int8{0, 1} {
		t.Run(fmt.Sprint("magic ", magic), func(t *testing.T) {
			b := newLog(t)
			b.magic, b.codec = magic, codec.Gzip
			b.plain(rec(1), rec(2), rec(3), rec(2), rec(4)).roll()
			dir := b.flush()
			cleanOnce(t, dir, 0, t0+1000, 0)
			v := readView(t, dir)
			if len(v.batches) != 1 {
				t.Fatalf("%d batches, want one wrapper", len(v.batches))
			}
			w := v.batches[0]
			if w.magic != magic || w.compression != codec.Gzip || w.last != 4 {
				t.Errorf("wrapper magic %d codec %s offset %d; want %d gzip 4", w.magic, w.compression, w.last, magic)
			}
			var got []int64
			for _, r := range w.recs {
				got = append(got, r.offset)
			}
			eq(t, "offsets", got, offs(0, 2, 3, 4))
		})
	}
}

func TestLegacyTombstoneHorizon(t *testing.T) {
	build := func(t *testing.T) string {
		t.Helper()
		b := newLog(t)
		b.magic = 1
		b.plain(rec(1)).plain(tomb(2)).plain(rec(3)).roll()
		b.plain(rec(4)).roll()
		return b.flush()
	}
	hasTombstone := func(t *testing.T, dir string) bool {
		for _, bt := range readView(t, dir).batches {
			for _, r := range bt.recs {
				if r.value == nil {
					return true
				}
			}
		}
		return false
	}
	t.Run("clean time known", func(t *testing.T) {
		dir := build(t)
		clean := t0 + 10*day
		writeCleanerCheckpoint(t, dir, 4, clean) // everything below 4 is clean since then
		o := testOptions(clean + day - 1)
		o.DeleteRetention = day
		cleanWith(t, dir, 4, o)
		if !hasTombstone(t, dir) {
			t.Fatal("tombstone removed before the retention passed since the last clean")
		}
		o.Now = clean + day
		cleanWith(t, dir, 4, o)
		if hasTombstone(t, dir) {
			t.Error("tombstone kept a retention after the last clean")
		}
	})
	t.Run("clean time unknown", func(t *testing.T) {
		// Kafka's rule: the horizon is the last clean segment's mtime minus
		// the retention, compared with the tombstone segment's mtime.
		for _, tc := range []struct {
			lastClean int64 // mtime of the clean section's last segment
			kept      bool
		}{{t0 + 5*day + 3_600_000, true}, {t0 + 7*day, false}} {
			b := newLog(t)
			b.magic = 1
			b.plain(rec(1)).plain(tomb(2)).plain(rec(3)).roll()
			b.plain(rec(4)).roll()
			b.plain(rec(5)).roll()
			dir := b.flush()
			p, _ := layout.ReadPartition(dir)
			for i, mt := range []int64{t0 + 5*day, tc.lastClean} {
				tm := time.UnixMilli(mt)
				os.Chtimes(p.Segments[i].Log, tm, tm)
			}
			o := testOptions(t0 + 100*day)
			o.DeleteRetention = day
			cleanWith(t, dir, 4, o)
			if hasTombstone(t, dir) != tc.kept {
				t.Errorf("last clean segment modified at %d: tombstone kept %v, want %v", tc.lastClean, !tc.kept, tc.kept)
			}
		}
	})
}

// cleanWith runs one pass with the partition's checkpoint as it is.
func cleanWith(t *testing.T, dir string, firstDirty int64, o Options) {
	t.Helper()
	p, err := loadPartition(dir, &o)
	if err != nil {
		t.Fatal(err)
	}
	m := newTestMap(t, o.OffsetMapMemory)
	ps := &pass{c: &cleaner{o: &o, m: m}, p: p, firstDirty: firstDirty, upper: p.segs[len(p.segs)-1].Base,
		rewritten: map[int64]bool{}, legacy: newLegacyRule(p.segs, firstDirty, p.cp.cleanTime, &o)}
	if err := ps.run(); err != nil {
		t.Fatal(err)
	}
}

func TestExpiredHorizonsRemovedWhenNotEligible(t *testing.T) {
	b := newLog(t)
	for i := 0; i < 10; i++ {
		b.plain(rec(i))
	}
	b.plain(tomb(3)).plain(tomb(4)).roll()
	dir := b.flush()
	now := t0 + 1000
	o := DefaultOptions(now)
	r := mustCompact(t, dir, o)
	if !r.Eligible || r.TombstonesRemoved != 0 {
		t.Fatalf("first run: eligible %v, %d tombstones removed", r.Eligible, r.TombstonesRemoved)
	}
	// Within the retention nothing is due and nothing changes.
	sum := digest(t, dir)
	o.Now = now + day - 1
	if r = mustCompact(t, dir, o); r.Eligible || digest(t, dir) != sum {
		t.Fatalf("within the retention: eligible %v (%s)", r.Eligible, r.Reason)
	}
	o.Now = now + day
	r = mustCompact(t, dir, o)
	if !r.Eligible || r.TombstonesRemoved != 2 || !strings.Contains(r.Reason, "delete horizon") {
		t.Fatalf("after the retention: eligible %v, %d removed (%s)", r.Eligible, r.TombstonesRemoved, r.Reason)
	}
	eq(t, "offsets", readView(t, dir).offsets(), offs(0, 1, 2, 5, 6, 7, 8, 9))
	sum = digest(t, dir)
	if r = mustCompact(t, dir, o); r.Eligible || digest(t, dir) != sum {
		t.Errorf("again: eligible %v (%s)", r.Eligible, r.Reason)
	}
}

func TestMultiPassMatchesOnePass(t *testing.T) {
	logDir := t.TempDir()
	_, err := gen.Generate(gen.Options{Out: logDir, Topics: []string{"t"}, Magic: 2, Records: 5000, Keys: 700, TombstoneRatio: 0.05,
		SegmentBytes: 64 << 10, StartTime: t0, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	small := filepath.Join(logDir, "t-0")
	big := filepath.Join(t.TempDir(), "t-0")
	testutil.CopyTree(t, small, big)

	o := DefaultOptions(t0 + 10*day)
	o.MaxLag = day
	r := mustCompact(t, big, o)
	if r.Passes != 1 {
		t.Fatalf("big map: %d passes", r.Passes)
	}
	o.OffsetMapMemory = 100 * bytesPerEntry // 90 keys a pass
	r = mustCompact(t, small, o)
	if r.Passes < 5 || r.NewDirtyOffset != r.LogEndOffset {
		t.Fatalf("small map: %d passes, ends at %d of %d", r.Passes, r.NewDirtyOffset, r.LogEndOffset)
	}
	got, want := readView(t, small), readView(t, big)
	if !slices.Equal(got.offsets(), want.offsets()) || !slices.Equal(got.allKeys(), want.allKeys()) {
		t.Errorf("multi-pass survivors differ from one pass: %d vs %d records", len(got.offsets()), len(want.offsets()))
	}
	checkIndexes(t, small)
}

func TestCorruptBatch(t *testing.T) {
	b := newLog(t)
	b.plain(rec(1)).plain(rec(2)).plain(rec(1)).roll()
	dir := b.flush()
	in := readView(t, dir)
	path := in.batches[1].file
	data, _ := os.ReadFile(path)
	pos := in.batches[1].pos
	data[pos+logfmt.V2HeaderSize+2] ^= 0xff
	os.WriteFile(path, data, 0o644)
	sum := digest(t, dir)

	_, err := Compact(dir, testOptions(t0+1000))
	ce, ok := logfmt.AsCorrupt(err)
	if !ok || ce.File != path || ce.Pos != pos {
		t.Fatalf("error %v; want a CorruptError at %s byte %d", err, path, pos)
	}
	if digest(t, dir) != sum {
		t.Error("a failed run changed the partition")
	}
}

func TestOptionsCheck(t *testing.T) {
	// A topic's settings are named by Kafka's configs; the run's own, which
	// Kafka has none for, by their field, for a command to name its flag.
	for _, tc := range []struct {
		name  string
		edit  func(*Options)
		field string
	}{
		{"max.compaction.lag.ms", func(o *Options) { o.MaxLag, o.MinLag = 10, 11 }, ""},
		{"min.cleanable.dirty.ratio", func(o *Options) { o.MinCleanableRatio = 1.5 }, ""},
		{"delete.retention.ms", func(o *Options) { o.DeleteRetention = -1 }, ""},
		{"segment.bytes", func(o *Options) { o.SegmentBytes = 1 << 31 }, ""},
		{"OffsetMapMemory", func(o *Options) { o.OffsetMapMemory = bytesPerEntry }, "OffsetMapMemory"},
		{"MaxRecordBytes", func(o *Options) { o.MaxRecordBytes = -1 }, "MaxRecordBytes"},
	} {
		o := DefaultOptions(0)
		tc.edit(&o)
		err := o.Check()
		var fe *fielderr.Error
		if err == nil || !strings.Contains(err.Error(), tc.name) || errors.As(err, &fe) != (tc.field != "") || tc.field != "" && fe.Field != tc.field {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	o := DefaultOptions(0)
	if err := o.Check(); err != nil {
		t.Errorf("defaults: %v", err)
	}
}

// TestDeadBatchesSkipped: dropping a batch without reading its records,
// when the map pass proved none survives, changes no byte and no count.
// Each partition kind of genLogDir is compacted twice (the second time
// after the tombstones' delete horizon) with and without the shortcut.
func TestDeadBatchesSkipped(t *testing.T) {
	short, long := genLogDir(t), genLogDir(t)
	for round, now := range []int64{t0 + 30*day, t0 + 32*day} {
		o := DefaultOptions(now)
		o.MaxLag = day
		o.SegmentBytes = 64 << 10
		all := o
		all.parseAll = true
		got := runAll(t, testutil.PartitionDirs(t, short), o)
		want := runAll(t, testutil.PartitionDirs(t, long), all)
		for i := range got {
			g, w := *got[i], *want[i]
			g.Dir, w.Dir = "", ""
			if !reflect.DeepEqual(g, w) {
				t.Errorf("round %d, %s: result\n%+v\nwant\n%+v", round, g.Name, g, w)
			}
		}
		for _, d := range testutil.PartitionDirs(t, short) {
			g, w := segmentFiles(t, d), segmentFiles(t, filepath.Join(long, filepath.Base(d)))
			if !mapsEqual(g, w) {
				t.Errorf("round %d, %s: files differ from a run that reads every batch", round, filepath.Base(d))
			}
		}
	}

	// The shortcut is taken: most batches of a log with ten updates per key
	// hold no latest record.
	dir := t.TempDir()
	if _, err := gen.Generate(gen.Options{Out: dir, Topics: []string{"t"}, Magic: 2, Records: 5000, Keys: 500,
		TombstoneRatio: 0.1, Compression: codec.LZ4, StartTime: t0, Seed: 9}); err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions(t0 + 30*day)
	p, err := loadPartition(filepath.Join(dir, "t-0"), &o)
	if err != nil {
		t.Fatal(err)
	}
	m := newTestMap(t, o.OffsetMapMemory)
	ps := &pass{c: &cleaner{o: &o, m: m}, p: p, firstDirty: 0, upper: p.leo, rewritten: map[int64]bool{},
		legacy: newLegacyRule(p.segs, 0, -1, &o)}
	if err := ps.run(); err != nil {
		t.Fatal(err)
	}
	if ps.stats.deadBatches < 200 {
		t.Errorf("%d of 500 batches dropped unread, want most", ps.stats.deadBatches)
	}
}

// TestRebuildFromSecondRead: a batch too large to hold its kept records
// is rebuilt from a second read of it, record by record into the
// compressor; that changes no byte and no count. The partitions of
// genLogDir (every magic, codecs, transactions, tombstones) are compacted
// twice, as in TestDeadBatchesSkipped, with every batch rebuilt that way.
func TestRebuildFromSecondRead(t *testing.T) {
	held, reread := genLogDir(t), genLogDir(t)
	for round, now := range []int64{t0 + 30*day, t0 + 32*day} {
		o := DefaultOptions(now)
		o.MaxLag = day
		o.SegmentBytes = 64 << 10
		again := o
		again.rereadAll = true
		got := runAll(t, testutil.PartitionDirs(t, reread), again)
		want := runAll(t, testutil.PartitionDirs(t, held), o)
		rebuilt := false
		for i := range got {
			g, w := *got[i], *want[i]
			g.Dir, w.Dir = "", ""
			if !reflect.DeepEqual(g, w) {
				t.Errorf("round %d, %s: result\n%+v\nwant\n%+v", round, g.Name, g, w)
			}
			rebuilt = rebuilt || g.RecordsAfter < g.RecordsBefore
		}
		if !rebuilt {
			t.Fatalf("round %d: no batch was rebuilt", round)
		}
		for _, d := range testutil.PartitionDirs(t, reread) {
			g, w := segmentFiles(t, d), segmentFiles(t, filepath.Join(held, filepath.Base(d)))
			if !mapsEqual(g, w) {
				t.Errorf("round %d, %s: files differ from a run that holds the records", round, filepath.Base(d))
			}
		}
	}
}

// TestDeadBatchDuplicateOffsets: a batch whose tombstones share an offset
// (possible only in damaged or hand-made data) is read record by record,
// since counting its tombstones by offset would count them once.
func TestDeadBatchDuplicateOffsets(t *testing.T) {
	build := func() string {
		b := newLog(t)
		recs := b.records([]kv{tomb(1), tomb(2), rec(3)})
		recs[1].Offset = recs[0].Offset
		b.batch(logfmt.DefaultBatchOptions(b.next), recs)
		b.plain(rec(1), rec(2), rec(3)).roll().plain(rec(9))
		return b.flush()
	}
	o := testOptions(t0 + 1000)
	all := o
	all.parseAll = true
	short, long := build(), build()
	got, want := mustCompact(t, short, o), mustCompact(t, long, all)
	if got.TombstonesRemoved != 2 || want.TombstonesRemoved != 2 || got.RecordsAfter != want.RecordsAfter {
		t.Fatalf("tombstones removed %d, records after %d; reading every batch: %d, %d",
			got.TombstonesRemoved, got.RecordsAfter, want.TombstonesRemoved, want.RecordsAfter)
	}
}

// TestRunEachTopicItsOwnConfig: Run cleans each partition with its job's
// configuration, leaves a partition whose policy is not compact as it is
// (a leftover of an interrupted swap included: the cleaner never looks at
// such a log), and fails only the job whose configuration Kafka refuses.
func TestRunEachTopicItsOwnConfig(t *testing.T) {
	logDir := genLogDir(t)
	dir := func(name string) string { return filepath.Join(logDir, name) }
	o := DefaultOptions(t0 + 30*day)
	lagged := o.Config
	lagged.MaxLag, lagged.MinCleanableRatio = day, 1
	ratioOnly := o.Config
	ratioOnly.MinCleanableRatio = 1
	deletePolicy := o.Config
	deletePolicy.Compact, deletePolicy.Policy = false, "delete"
	bad := o.Config
	bad.MaxLag, bad.MinLag = day, 2*day
	if err := os.WriteFile(filepath.Join(dir("orders-0"), "00000000000000000000.log.swap"), []byte("left by a broker"), 0o644); err != nil {
		t.Fatal(err)
	}
	untouched := map[string]string{}
	for _, d := range []string{"orders-0", "orders-1", "payments.txn-0"} {
		untouched[d] = digest(t, dir(d))
	}
	jobs := []Job{{Dir: dir("orders-0"), Config: deletePolicy}, {Dir: dir("orders-1"), Config: ratioOnly}, {Dir: dir("user-profiles-0"), Config: lagged}, {Dir: dir("payments.txn-0"), Config: bad}}
	results, errs := Run(jobs, o, 2, nil)
	if r := results[0]; r.Eligible || r.Reason != "cleanup.policy=delete" || r.Name != "orders-0" || errs[0] != nil {
		t.Errorf("delete policy: %+v, %v", *r, errs[0])
	}
	if r := results[1]; r.Eligible || !strings.HasPrefix(r.Reason, "dirty ratio 1.00 <= 1.00") || errs[1] != nil {
		t.Errorf("ratio 1, no max lag: %+v, %v", *r, errs[1])
	}
	if r := results[2]; !r.Eligible || r.MaxLagExceededByMs == 0 || r.Passes == 0 || errs[2] != nil {
		t.Errorf("max lag 1d: %+v, %v", *r, errs[2])
	}
	if errs[3] == nil || !strings.Contains(errs[3].Error(), "min.compaction.lag.ms 172800000 is above max.compaction.lag.ms 86400000") || results[3].Error == "" {
		t.Errorf("min lag above max lag: %v", errs[3])
	}
	for d, sum := range untouched {
		if digest(t, dir(d)) != sum {
			t.Errorf("%s changed", d)
		}
	}
}

// TestTombstoneDeadlineWithMaxLag: with a max lag, a tombstone goes once
// max lag + delete retention have passed since its batch was written, even
// when a late first pass gave it a later delete horizon, and even from a
// partition that is otherwise not eligible; the deadline is exclusive.
func TestTombstoneDeadlineWithMaxLag(t *testing.T) {
	for _, magic := range []int8{2, 1} {
		t.Run(fmt.Sprint("magic ", magic), func(t *testing.T) {
			now1 := t0 + 10*day // the late first pass
			now2 := now1 + 1    // its horizon is a day away
			b := newLog(t)
			b.magic = magic
			b.plain(rec(1)).plain(rec(2)).plain(tomb(3)).plain(rec(4)).roll()
			written := b.ts - 1 // the tombstone's batch
			b.ts = now2 - 10    // a young active segment: no max lag there
			b.plain(rec(5))
			dir := b.flush()
			o := DefaultOptions(now1)
			if r := mustCompact(t, dir, o); !r.Eligible || r.TombstonesRemoved != 0 {
				t.Fatalf("first pass: eligible %v, %d tombstones removed", r.Eligible, r.TombstonesRemoved)
			}
			hasTombstone := func() bool {
				for _, bt := range readView(t, dir).batches {
					for _, r := range bt.recs {
						if r.key != nil && r.value == nil {
							return true
						}
					}
				}
				return false
			}
			sum := digest(t, dir)
			o.Now = now2
			if r := mustCompact(t, dir, o); r.Eligible || digest(t, dir) != sum {
				t.Fatalf("no max lag: eligible %v (%s)", r.Eligible, r.Reason)
			}
			// Due exactly at the deadline is not yet due.
			o.MaxLag = now2 - o.DeleteRetention - written
			if r := mustCompact(t, dir, o); r.Eligible || digest(t, dir) != sum {
				t.Fatalf("at the deadline: eligible %v (%s)", r.Eligible, r.Reason)
			}
			o.MaxLag--
			r := mustCompact(t, dir, o)
			if !r.Eligible || r.TombstonesRemoved != 1 || hasTombstone() {
				t.Fatalf("past the deadline: eligible %v (%s), %d removed, tombstone left %v", r.Eligible, r.Reason, r.TombstonesRemoved, hasTombstone())
			}
			eq(t, "keys", readView(t, dir).keys(), ints(1, 2, 4, 5))
			sum = digest(t, dir)
			if r := mustCompact(t, dir, o); r.Eligible || digest(t, dir) != sum {
				t.Errorf("again: eligible %v (%s)", r.Eligible, r.Reason)
			}
		})
	}
}

// TestLegacyLastRecordKeepsLogEnd: cleaning an idle active segment past the
// max lag keeps the last record of a legacy wrapper whose other records
// survive, so the log end offset stays, and a second run changes nothing.
func TestLegacyLastRecordKeepsLogEnd(t *testing.T) {
	b := newLog(t)
	b.magic, b.codec = 1, codec.Gzip
	b.plain(rec(1)).roll()
	b.plain(rec(2), rec(3), keyless(9))
	dir := b.flush()
	o := DefaultOptions(t0 + 10*day)
	o.MaxLag = day
	if r := mustCompact(t, dir, o); !r.Eligible || !r.ActiveSegmentRolled {
		t.Fatalf("eligible %v, rolled %v (%s)", r.Eligible, r.ActiveSegmentRolled, r.Reason)
	}
	v := readView(t, dir)
	if last := v.batches[len(v.batches)-1]; last.last != 3 {
		t.Fatalf("the log ends at %d, want 3", last.last)
	}
	sum := digest(t, dir)
	if r := mustCompact(t, dir, o); r.Passes != 0 || digest(t, dir) != sum {
		t.Errorf("again: %d passes (%s)", r.Passes, r.Reason)
	}
}

// TestProgressAddsUp: the passes announce the bytes they will read and
// tell them as they go, a MiB at a time within a segment, so that a bar
// over one large partition moves, and what they tell adds up to what they
// announced, in a dry run and a real one.
func TestProgressAddsUp(t *testing.T) {
	dir := t.TempDir()
	if _, err := gen.Generate(gen.Options{Out: dir, Topics: []string{"t"}, Magic: 2, Records: 60_000, Keys: 5000,
		ValueBytes: 100, SegmentBytes: 4 << 20, StartTime: t0, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	part := filepath.Join(dir, "t-0")
	for _, dry := range []bool{true, false} {
		o := DefaultOptions(t0 + 30*day)
		o.MaxLag, o.DryRun = day, dry
		var mu sync.Mutex
		var done, todo int64
		calls := 0
		o.Progress = func(d, n int64) {
			mu.Lock()
			defer mu.Unlock()
			done, todo, calls = done+d, todo+n, calls+1
		}
		results, errs := Run([]Job{{Dir: part, Config: o.Config}}, o, 2, nil)
		if errs[0] != nil || results[0].Passes == 0 {
			t.Fatalf("dry run %v: %v, %d passes", dry, errs[0], results[0].Passes)
		}
		if todo == 0 || done != todo || calls < 8 {
			t.Errorf("dry run %v: told %d of %d bytes in %d calls", dry, done, todo, calls)
		}
	}
}
