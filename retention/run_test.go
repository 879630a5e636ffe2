package retention

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/internal/testkit/kafkasamples"
	"github.com/logtool/logtool/internal/testkit/testutil"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/checkpoint"
	"github.com/logtool/logtool/logfmt/codec"
	"github.com/logtool/logtool/logfmt/layout"
	"github.com/logtool/logtool/logfmt/logseg"
)

var start2024 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()

// generate writes a log directory with gen into a temporary directory.
func generate(t testing.TB, o gen.Options) string {
	t.Helper()
	if o.Out == "" {
		o.Out = t.TempDir()
	}
	if _, err := gen.Generate(o); err != nil {
		t.Fatal(err)
	}
	return o.Out
}

// deletePolicy is the configuration of a topic with cleanup.policy=delete.
func deletePolicy(ms, bytes int64) Config {
	return Config{Delete: true, Policy: "delete", RetentionMs: ms, RetentionBytes: bytes}
}

// jobs are the directories with the run's configuration.
func jobs(dirs []string) []Job {
	js := make([]Job, len(dirs))
	for i, d := range dirs {
		js[i] = Job{Dir: d}
	}
	return js
}

func runAll(t testing.TB, logDir string, o Options) []*Result {
	t.Helper()
	res, err := Run(logDir, jobs(testutil.PartitionDirs(t, logDir)), o)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Err != nil {
			t.Fatalf("%s: %v", r.Dir, r.Err)
		}
	}
	return res
}

// fileState describes every file under a directory, by relative path: its
// content hash and, with meta, its mode and modification time.
func fileState(t testing.TB, dir string, meta bool) map[string]string {
	t.Helper()
	state := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		info, err := d.Info()
		if err != nil {
			return err
		}
		s := ""
		if meta {
			s = fmt.Sprintf("%v %d ", info.Mode(), info.ModTime().UnixNano())
		}
		if !d.IsDir() {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			s += hex.EncodeToString(sum[:])
		}
		state[rel] = s
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return state
}

func diffState(a, b map[string]string) string {
	var out []string
	for k, v := range a {
		if w, ok := b[k]; !ok {
			out = append(out, "only before: "+k)
		} else if v != w {
			out = append(out, "changed: "+k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, "only after: "+k)
		}
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

// segmentMax scans a .log with logfmt alone and returns its greatest batch
// timestamp, -1 when none has one.
func segmentMax(t testing.TB, path string) int64 {
	t.Helper()
	seg, err := logfmt.OpenSegment(path)
	if err != nil {
		t.Fatal(err)
	}
	defer seg.Close()
	m := int64(-1)
	for seg.Next() {
		m = max(m, seg.Batch().MaxTimestamp())
	}
	if seg.Err() != nil {
		t.Fatal(seg.Err())
	}
	return m
}

func readPartition(t testing.TB, dir string) *layout.Partition {
	t.Helper()
	p, err := layout.ReadPartition(dir)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func offsetsFile(t testing.TB, path string) []checkpoint.OffsetEntry {
	t.Helper()
	e, err := checkpoint.ReadOffsetsFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range e {
		e[i].Line = 0
	}
	return e
}

func epochsFile(t testing.TB, path string) []checkpoint.EpochEntry {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	e, err := checkpoint.ReadLeaderEpochs(bytes.NewReader(b), path)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// checkKept checks that a partition holds exactly the segments from the
// one at newStart on, each with all its files, and none below.
func checkKept(t testing.TB, before, after *layout.Partition, newStart int64) {
	t.Helper()
	var want []layout.Segment
	for _, s := range before.Segments {
		if s.Base >= newStart {
			want = append(want, s)
		}
	}
	got := after.Segments
	if len(got) > len(want) && got[len(got)-1].Base == newStart && len(want) == 0 {
		got = got[:len(got)-1] // the rolled segment, checked by the caller
	}
	if !slices.Equal(got, want) {
		t.Errorf("segments after: %v\nwant: %v", got, want)
	}
	if len(after.Leftovers) > 0 {
		t.Errorf("leftover files: %v", after.Leftovers)
	}
}

func TestExpireByRecordTimestamps(t *testing.T) {
	logDir := generate(t, gen.Options{Topics: []string{"orders"}, Magic: 2, Partitions: 2, Records: 3000, Keys: 50,
		SegmentBytes: 16 << 10, Compression: codec.LZ4, TransactionalRatio: 0.3, AbortRatio: 0.5, Seed: 7})
	now := start2024 + 3000*1000
	const retention = 1800 * 1000
	dir := filepath.Join(logDir, "orders-0")
	before := readPartition(t, dir)
	// A copy resets modification times: the records' timestamps must decide.
	for _, s := range before.Segments {
		mt := time.UnixMilli(now)
		if err := os.Chtimes(s.Log, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	maxTS := map[int64]int64{}
	for _, s := range before.Segments {
		maxTS[s.Base] = segmentMax(t, s.Log)
	}
	other := fileState(t, filepath.Join(logDir, "orders-1"), true)
	var wantDeleted []int64
	for _, s := range before.Segments {
		if now-maxTS[s.Base] <= retention {
			break
		}
		wantDeleted = append(wantDeleted, s.Base)
	}
	if len(wantDeleted) < 2 || len(wantDeleted) == len(before.Segments) {
		t.Fatalf("fixture: %d of %d segments expire; want some but not all", len(wantDeleted), len(before.Segments))
	}
	newStart := before.Segments[len(wantDeleted)].Base

	total := sizeOf(t, before)
	res, err := Run(logDir, jobs([]string{dir}), Options{Config: deletePolicy(retention, -1), NowMs: now, Workers: 2})
	if err != nil || res[0].Err != nil {
		t.Fatal(err, res[0].Err)
	}
	r := res[0]
	var got []int64
	for _, d := range r.Deleted {
		got = append(got, d.Segment.Base)
		if d.Rule != RuleTime || d.Largest == nil || d.Largest.Source != logseg.FromTimeIndex || d.Largest.Ms != maxTS[d.Segment.Base] {
			t.Errorf("deletion %+v: want retention-ms from the time index with the segment's max timestamp", d)
		}
	}
	if !slices.Equal(got, wantDeleted) {
		t.Fatalf("deleted %v, want %v", got, wantDeleted)
	}
	if r.LogStartOffset != newStart || r.PreviousLogStartOffset != 0 || r.Rolled != "" || r.HighWatermarkAssumed {
		t.Errorf("result %+v", r)
	}
	if r.OldestRemaining == nil || r.OldestRemaining.Ms != maxTS[newStart] {
		t.Errorf("oldest remaining %+v", r.OldestRemaining)
	}
	after := readPartition(t, dir)
	checkKept(t, before, after, newStart)
	if got := r.BytesDeleted + r.BytesRemaining; got != total {
		t.Errorf("bytes deleted + remaining = %d, want the partition's %d", got, total)
	}

	// The snapshots below the new start went, but the newest at or below it.
	for _, s := range after.Snapshots {
		if off := layout.ParseFileName(filepath.Base(s)).Base; off < newStart {
			t.Errorf("snapshot %s below the new start %d kept", s, newStart)
		}
	}
	if e := offsetsFile(t, filepath.Join(logDir, layout.LogStartOffsetCheckpointFile)); !slices.Equal(e, []checkpoint.OffsetEntry{{Topic: "orders", Partition: 0, Offset: newStart}}) {
		t.Errorf("log-start-offset-checkpoint %v", e)
	}
	if e := epochsFile(t, filepath.Join(dir, layout.LeaderEpochCheckpointFile)); !slices.Equal(e, []checkpoint.EpochEntry{{Epoch: 0, StartOffset: newStart}}) {
		t.Errorf("leader-epoch-checkpoint %v", e)
	}
	// The other partition was not asked for.
	if d := diffState(other, fileState(t, filepath.Join(logDir, "orders-1"), true)); d != "" {
		t.Errorf("orders-1 changed:\n%s", d)
	}

	// Running again at the same time deletes nothing more.
	res = runAll(t, logDir, Options{Config: deletePolicy(retention, -1), NowMs: now})
	if len(res[0].Deleted) != 0 || res[0].LogStartOffset != newStart {
		t.Errorf("second run: %+v", res[0])
	}
}

func sizeOf(t testing.TB, p *layout.Partition) int64 {
	var n int64
	for _, s := range p.Segments {
		st, err := os.Stat(s.Log)
		if err != nil {
			t.Fatal(err)
		}
		n += st.Size()
	}
	return n
}

func TestExpireByMtimeForMagic0(t *testing.T) {
	logDir := generate(t, gen.Options{Topics: []string{"legacy"}, Magic: 0, Records: 600, Keys: 20, SegmentBytes: 8 << 10, Seed: 3})
	dir := filepath.Join(logDir, "legacy-0")
	before := readPartition(t, dir)
	if len(before.Segments) < 5 {
		t.Fatalf("fixture has %d segments", len(before.Segments))
	}
	now := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	old, recent := now.Add(-10*24*time.Hour), now.Add(-time.Hour)
	// Old, old, recent, old, ...: the rule stops at the recent one.
	for i, s := range before.Segments {
		mt := old
		if i == 2 {
			mt = recent
		}
		if err := os.Chtimes(s.Log, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	res := runAll(t, logDir, Options{Config: deletePolicy(DefaultRetentionMs, -1), NowMs: now.UnixMilli()})
	r := res[0]
	if len(r.Deleted) != 2 {
		t.Fatalf("deleted %d segments, want 2", len(r.Deleted))
	}
	for _, d := range r.Deleted {
		if d.Largest == nil || *d.Largest != (Timestamp{Ms: old.UnixMilli(), Source: logseg.FromMtime}) {
			t.Errorf("deletion %+v: want the mtime %d", d, old.UnixMilli())
		}
	}
	if r.OldestRemaining == nil || *r.OldestRemaining != (Timestamp{Ms: recent.UnixMilli(), Source: logseg.FromMtime}) {
		t.Errorf("oldest remaining %+v", r.OldestRemaining)
	}
	checkKept(t, before, readPartition(t, dir), before.Segments[2].Base)
}

func TestExpireBySize(t *testing.T) {
	logDir := generate(t, gen.Options{Topics: []string{"clicks"}, Magic: 1, Compression: codec.Gzip, Records: 2000, Keys: 30,
		SegmentBytes: 10 << 10, Seed: 4})
	dir := filepath.Join(logDir, "clicks-0")
	before := readPartition(t, dir)
	total := sizeOf(t, before)
	limit := total / 2
	// Kafka's arithmetic, done here the obvious way: drop the oldest while
	// what is left stays at or above the limit.
	var want int
	left := total
	for _, s := range before.Segments {
		st, _ := os.Stat(s.Log)
		if left-st.Size() < limit {
			break
		}
		left -= st.Size()
		want++
	}
	res := runAll(t, logDir, Options{Config: deletePolicy(-1, limit), NowMs: start2024})
	r := res[0]
	if len(r.Deleted) != want || want == 0 {
		t.Fatalf("deleted %d segments, want %d", len(r.Deleted), want)
	}
	for _, d := range r.Deleted {
		if d.Rule != RuleBytes || d.Largest != nil {
			t.Errorf("deletion %+v: want retention-bytes with no timestamp read", d)
		}
	}
	if r.BytesRemaining != left || r.BytesRemaining < limit || r.BytesDeleted != total-left {
		t.Errorf("remaining %d deleted %d, want %d and %d", r.BytesRemaining, r.BytesDeleted, left, total-left)
	}
	checkKept(t, before, readPartition(t, dir), before.Segments[want].Base)
}

func TestAllExpiredRolls(t *testing.T) {
	logDir := generate(t, gen.Options{Topics: []string{"orders"}, Magic: 2, Records: 800, Keys: 20, SegmentBytes: 16 << 10,
		TransactionalRatio: 0.4, AbortRatio: 0.5, Seed: 9})
	dir := filepath.Join(logDir, "orders-0")
	before := readPartition(t, dir)
	markers := countMarkers(t, before)
	res := runAll(t, logDir, Options{Config: deletePolicy(DefaultRetentionMs, -1), NowMs: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()})
	r := res[0]
	leo := r.LogEndOffset
	if leo != 800+markers {
		t.Fatalf("log end offset %d", leo)
	}
	if len(r.Deleted) != len(before.Segments) || r.LogStartOffset != leo || r.SegmentsRemaining != 1 || r.BytesRemaining != 0 || r.OldestRemaining != nil {
		t.Fatalf("result %+v", r)
	}
	if want := filepath.Join(dir, layout.SegmentName(leo, layout.LogExt)); r.Rolled != want {
		t.Errorf("rolled %q, want %q", r.Rolled, want)
	}
	after := readPartition(t, dir)
	if len(after.Segments) != 1 || after.Segments[0].Base != leo {
		t.Fatalf("segments after %v", after.Segments)
	}
	s := after.Segments[0]
	for _, path := range []string{s.Log, s.Index, s.TimeIndex} {
		if st, err := os.Stat(path); err != nil || st.Size() != 0 {
			t.Errorf("rolled file %s: %v, want it empty", path, err)
		}
	}
	if s.TxnIndex != "" {
		t.Errorf("rolled segment has %s", s.TxnIndex)
	}
	// gen leaves a snapshot at the log end offset: the newest at or below
	// the new start, kept; all others are below it.
	if want := []string{filepath.Join(dir, layout.SegmentName(leo, layout.SnapshotExt))}; !slices.Equal(after.Snapshots, want) {
		t.Errorf("snapshots %v, want %v", after.Snapshots, want)
	}
	if e := epochsFile(t, filepath.Join(dir, layout.LeaderEpochCheckpointFile)); !slices.Equal(e, []checkpoint.EpochEntry{{Epoch: 0, StartOffset: leo}}) {
		t.Errorf("leader-epoch-checkpoint %v", e)
	}
	// A second run keeps the empty segment: it is last and empty.
	res = runAll(t, logDir, Options{Config: deletePolicy(0, 0), NowMs: time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()})
	if len(res[0].Deleted) != 0 || res[0].Rolled != "" {
		t.Errorf("second run %+v", res[0])
	}
}

func countMarkers(t testing.TB, p *layout.Partition) int64 {
	var n int64
	for _, s := range p.Segments {
		seg, err := logfmt.OpenSegment(s.Log)
		if err != nil {
			t.Fatal(err)
		}
		for seg.Next() {
			if seg.Batch().IsControl() {
				n++
			}
		}
		seg.Close()
	}
	return n
}

// crashFixture is a log directory where one run exercises every kind of
// step: rolls, all three rules, both root checkpoints, a multi-entry leader
// epoch file, transaction indexes and snapshots.
func crashFixture(t testing.TB) (string, Options) {
	// Small, since the crash test runs it once per step.
	logDir := generate(t, gen.Options{Topics: []string{"orders"}, Magic: 2, Partitions: 2, Records: 300, Keys: 20,
		SegmentBytes: 12 << 10, TransactionalRatio: 0.4, AbortRatio: 0.5, Seed: 11})
	generate(t, gen.Options{Out: logDir, Topics: []string{"events"}, Magic: 2, Records: 300, Keys: 20,
		SegmentBytes: 8 << 10, TransactionalRatio: 0.4, AbortRatio: 0.5, Seed: 13})
	generate(t, gen.Options{Out: logDir, Topics: []string{"old"}, Magic: 0, Records: 150, SegmentBytes: 8 << 10, Seed: 12})
	now := start2024 + 400*1000
	// old-0's segments are all older than any record: it rolls.
	for _, s := range readPartition(t, filepath.Join(logDir, "old-0")).Segments {
		mt := time.UnixMilli(start2024 - 30*24*3600*1000)
		if err := os.Chtimes(s.Log, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	// orders-1's log starts in its third segment.
	o1 := readPartition(t, filepath.Join(logDir, "orders-1"))
	ls := []checkpoint.OffsetEntry{{Topic: "orders", Partition: 1, Offset: o1.Segments[2].Base + 3}, {Topic: "gone", Partition: 4, Offset: 99}}
	if err := os.WriteFile(filepath.Join(logDir, layout.LogStartOffsetCheckpointFile), checkpoint.AppendOffsets(nil, ls), 0o644); err != nil {
		t.Fatal(err)
	}
	// events-0's recovery point is behind; its leader changed twice.
	rp := offsetsFile(t, filepath.Join(logDir, layout.RecoveryPointCheckpointFile))
	for i := range rp {
		if rp[i].Topic == "events" && rp[i].Partition == 0 {
			rp[i].Offset = 0
		}
	}
	if err := os.WriteFile(filepath.Join(logDir, layout.RecoveryPointCheckpointFile), checkpoint.AppendOffsets(nil, rp), 0o644); err != nil {
		t.Fatal(err)
	}
	ep := checkpoint.AppendLeaderEpochs(nil, []checkpoint.EpochEntry{{Epoch: 0, StartOffset: 0}, {Epoch: 3, StartOffset: 40}, {Epoch: 5, StartOffset: 450}})
	if err := os.WriteFile(filepath.Join(logDir, "events-0", layout.LeaderEpochCheckpointFile), ep, 0o644); err != nil {
		t.Fatal(err)
	}
	return logDir, Options{Config: deletePolicy(200*1000, 30<<10), NowMs: now, Workers: 1}
}

func TestCrashFixtureCoversEverything(t *testing.T) {
	logDir, o := crashFixture(t)
	res := runAll(t, logDir, o)
	rules := map[Rule]bool{}
	rolled := 0
	for _, r := range res {
		for _, d := range r.Deleted {
			rules[d.Rule] = true
		}
		if r.Rolled != "" {
			rolled++
		}
	}
	if len(rules) != 3 || rolled == 0 {
		t.Errorf("rules %v, %d rolled: the crash fixture should exercise all", rules, rolled)
	}
	rp := offsetsFile(t, filepath.Join(logDir, layout.RecoveryPointCheckpointFile))
	for _, r := range res {
		if r.Topic == "events" && r.Partition == 0 {
			if off, _ := lookup(rp, "events", 0); off != r.LogStartOffset || off == 0 {
				t.Errorf("events-0 recovery point %d, want the new start %d", off, r.LogStartOffset)
			}
			want := []checkpoint.EpochEntry{{Epoch: 3, StartOffset: r.LogStartOffset}, {Epoch: 5, StartOffset: 450}}
			if r.LogStartOffset < 40 || r.LogStartOffset >= 450 {
				t.Fatalf("events-0 starts at %d; the fixture wants it between the epochs", r.LogStartOffset)
			}
			if e := epochsFile(t, filepath.Join(r.Dir, layout.LeaderEpochCheckpointFile)); !slices.Equal(e, want) {
				t.Errorf("events-0 epochs %v, want %v", e, want)
			}
		}
	}
	ls := offsetsFile(t, filepath.Join(logDir, layout.LogStartOffsetCheckpointFile))
	if off, ok := lookup(ls, "gone", 4); !ok || off != 99 || ls[1].Topic != "gone" {
		t.Errorf("another partition's entry was not kept in place: %v", ls)
	}
}

// TestCrashAtEachStep fails every file-system step in turn, as a process
// dying there would, then runs again: the end state must be the one an
// uninterrupted run reaches, and at the crash no segment at or above the
// new log start may have lost a byte.
func TestCrashAtEachStep(t *testing.T) {
	fixture, o := crashFixture(t)
	ref := t.TempDir()
	testutil.CopyTree(t, fixture, ref)
	var faults safefile.Faults
	restore := safefile.SetFaultHook(faults.Hook)
	res := runAll(t, ref, o)
	restore()
	steps := faults.Steps()
	want := fileState(t, ref, false)
	starts := map[string]int64{}
	for _, r := range res {
		starts[filepath.Base(r.Dir)] = r.LogStartOffset
	}
	orig := fileState(t, fixture, false)
	if steps < 20 {
		t.Fatalf("only %d steps", steps)
	}
	for n := int64(1); n <= steps; n++ {
		dir := t.TempDir()
		testutil.CopyTree(t, fixture, dir)
		f := safefile.Faults{FailAt: n}
		restore := safefile.SetFaultHook(f.Hook)
		res, err := Run(dir, jobs(testutil.PartitionDirs(t, dir)), o)
		restore()
		failed := err != nil
		for _, r := range res {
			failed = failed || r.Err != nil
			if r.Err != nil && !errors.Is(r.Err, safefile.ErrInjected) {
				t.Fatalf("step %d: %s: %v", n, r.Dir, r.Err)
			}
		}
		if !failed {
			t.Fatalf("step %d of %d: no error", n, steps)
		}
		// Nothing kept may have changed: every file at or above a partition's
		// new start is as it was.
		crashed := fileState(t, dir, false)
		for path, sum := range orig {
			part, name := filepath.Split(path)
			fn := layout.ParseFileName(name)
			start, ok := starts[filepath.Clean(part)]
			if !ok || fn.Kind < layout.Log || fn.Kind > layout.TxnIndex || fn.Base < start {
				continue
			}
			if crashed[path] != sum {
				t.Fatalf("step %d: %s changed or vanished at the crash", n, path)
			}
		}
		runAll(t, dir, o)
		if d := diffState(want, fileState(t, dir, false)); d != "" {
			t.Fatalf("step %d of %d: after the re-run the tree differs from an uninterrupted run:\n%s", n, steps, d)
		}
	}
}

func TestDryRunWritesNothing(t *testing.T) {
	logDir, o := crashFixture(t)
	// Leftovers of an interrupted run are reported, not cleaned.
	leftover := filepath.Join(logDir, "orders-0", layout.SegmentName(0, layout.TimeIndexExt)+layout.DeletedSuffix)
	if err := os.WriteFile(leftover, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := fileState(t, logDir, true)
	o.DryRun = true
	o.Workers = 3
	var done atomic.Int64
	o.Done = func(*Result) { done.Add(1) }
	dry := runAll(t, logDir, o)
	if d := diffState(before, fileState(t, logDir, true)); d != "" {
		t.Fatalf("a dry run changed the tree:\n%s", d)
	}
	if int(done.Load()) != len(dry) {
		t.Errorf("Done called %d times for %d partitions", done.Load(), len(dry))
	}
	for _, r := range dry {
		if mentioned := strings.Contains(strings.Join(r.Warnings, "\n"), "interrupted operation"); mentioned != (filepath.Base(r.Dir) == "orders-0") {
			t.Errorf("%s warnings %q: want the leftover mentioned for orders-0 only", r.Dir, r.Warnings)
		}
	}
	if err := os.Remove(leftover); err != nil {
		t.Fatal(err)
	}
	o.DryRun, o.Done = false, nil
	real := runAll(t, logDir, o)
	for i := range dry {
		d, r := dry[i], real[i]
		if describe(d) != describe(r) {
			t.Errorf("dry run planned %s\nthe real run did %s", describe(d), describe(r))
		}
	}
}

// describe is what a run decided for a partition, as comparable text.
func describe(r *Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: start %d->%d end %d rolled %q snapshots %v epochs %v;", filepath.Base(r.Dir),
		r.PreviousLogStartOffset, r.LogStartOffset, r.LogEndOffset, r.Rolled, r.SnapshotsDeleted, r.EpochsTrimmed)
	for _, d := range r.Deleted {
		fmt.Fprintf(&b, " %d %s %d", d.Segment.Base, d.Rule, d.Bytes)
		if d.Largest != nil {
			fmt.Fprintf(&b, " %+v", *d.Largest)
		}
	}
	return b.String()
}

func TestUnreadableSegmentStopsItsPartition(t *testing.T) {
	logDir := generate(t, gen.Options{Topics: []string{"a", "b"}, Magic: 2, Records: 400, SegmentBytes: 8 << 10, Seed: 5})
	bad := readPartition(t, filepath.Join(logDir, "a-0")).Segments[1]
	// Without a time index the batches are read, and one is damaged.
	if err := os.Remove(bad.TimeIndex); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(bad.Log)
	if err != nil {
		t.Fatal(err)
	}
	seg := logfmt.NewSegmentReader(bytes.NewReader(b), int64(len(b)), "")
	seg.Next()
	seg.Next()
	pos := seg.Batch().Pos
	b[pos+int64(seg.Batch().Size())-1] ^= 0xff
	if err := os.WriteFile(bad.Log, b, 0o644); err != nil {
		t.Fatal(err)
	}
	beforeA := fileState(t, filepath.Join(logDir, "a-0"), true)
	res, err := Run(logDir, jobs(testutil.PartitionDirs(t, logDir)), Options{Config: deletePolicy(0, -1), NowMs: start2024 + 1e9})
	if err != nil {
		t.Fatal(err)
	}
	ce, ok := logfmt.AsCorrupt(res[0].Err)
	if !ok || ce.File != bad.Log || ce.Pos != pos {
		t.Fatalf("a-0: %v; want a CorruptError in %s at %d", res[0].Err, bad.Log, pos)
	}
	if d := diffState(beforeA, fileState(t, filepath.Join(logDir, "a-0"), true)); d != "" {
		t.Errorf("a-0 changed:\n%s", d)
	}
	if res[1].Err != nil || res[1].Rolled == "" {
		t.Errorf("b-0: %+v; want it rolled", res[1])
	}
	// The log start checkpoint has b-0 only.
	if e := offsetsFile(t, filepath.Join(logDir, layout.LogStartOffsetCheckpointFile)); len(e) != 1 || e[0].Topic != "b" {
		t.Errorf("log-start-offset-checkpoint %v", e)
	}
}

func TestLogStartOffsetBreach(t *testing.T) {
	logDir := generate(t, gen.Options{Topics: []string{"t"}, Magic: 2, Records: 500, SegmentBytes: 8 << 10, Seed: 6})
	dir := filepath.Join(logDir, "t-0")
	before := readPartition(t, dir)
	start := before.Segments[3].Base
	ls := checkpoint.AppendOffsets(nil, []checkpoint.OffsetEntry{{Topic: "t", Partition: 0, Offset: start}})
	if err := os.WriteFile(filepath.Join(logDir, layout.LogStartOffsetCheckpointFile), ls, 0o644); err != nil {
		t.Fatal(err)
	}
	res := runAll(t, logDir, Options{Config: deletePolicy(-1, -1), NowMs: start2024})
	r := res[0]
	if len(r.Deleted) != 3 || r.Rules()[0] != RuleLogStart || len(r.Rules()) != 1 || r.LogStartOffset != start || r.PreviousLogStartOffset != start {
		t.Errorf("result %+v", r)
	}
	checkKept(t, before, readPartition(t, dir), start)
}

func TestHighWatermarkBounds(t *testing.T) {
	logDir := generate(t, gen.Options{Topics: []string{"t"}, Magic: 2, Records: 500, SegmentBytes: 8 << 10, Seed: 6})
	dir := filepath.Join(logDir, "t-0")
	before := readPartition(t, dir)
	hw := before.Segments[2].Base + 1
	rc := checkpoint.AppendOffsets(nil, []checkpoint.OffsetEntry{{Topic: "t", Partition: 0, Offset: hw}})
	if err := os.WriteFile(filepath.Join(logDir, layout.ReplicationOffsetCheckpointFile), rc, 0o644); err != nil {
		t.Fatal(err)
	}
	res := runAll(t, logDir, Options{Config: deletePolicy(0, -1), NowMs: start2024 + 1e9})
	if r := res[0]; len(r.Deleted) != 2 || r.HighWatermark != hw || r.HighWatermarkAssumed {
		t.Errorf("deleted %d up to high watermark %d (assumed %v); want 2 below %d", len(r.Deleted), r.HighWatermark, r.HighWatermarkAssumed, hw)
	}
	// Without the checkpoint the log end offset is assumed.
	if err := os.Remove(filepath.Join(logDir, layout.ReplicationOffsetCheckpointFile)); err != nil {
		t.Fatal(err)
	}
	res = runAll(t, logDir, Options{Config: deletePolicy(0, -1), NowMs: start2024 + 1e9})
	if r := res[0]; !r.HighWatermarkAssumed || r.HighWatermark != r.LogEndOffset || r.Rolled == "" {
		t.Errorf("result %+v", r)
	}
}

// A partition directory with no log directory around it is handled, and no
// checkpoint is created next to it.
func TestBarePartitionDir(t *testing.T) {
	logDir := generate(t, gen.Options{Topics: []string{"t"}, Magic: 2, Records: 300, SegmentBytes: 8 << 10, Seed: 2})
	bare := t.TempDir()
	testutil.CopyTree(t, filepath.Join(logDir, "t-0"), filepath.Join(bare, "t-0"))
	res, err := Run(bare, jobs([]string{filepath.Join(bare, "t-0")}), Options{Config: deletePolicy(0, -1), NowMs: start2024 + 1e9})
	if err != nil || res[0].Err != nil || res[0].Rolled == "" {
		t.Fatalf("%v %+v", err, res[0])
	}
	entries, _ := os.ReadDir(bare)
	if len(entries) != 1 {
		t.Errorf("files next to the partition directory: %v", entries)
	}
}

func TestRealBrokerData(t *testing.T) {
	samples := kafkasamples.Dir("logdirs")
	if _, err := os.Stat(samples); err != nil {
		kafkasamples.Skip(t, err)
	}
	for _, name := range []string{"volodymyrzee_kafka-2.x-zk", "xpxwo100_kafka-0.10.1.0-magic1", "mscaldas2012_cp-5.1.2-lz4", "ldi-poc_kafka-3.7.0-kraft"} {
		t.Run(name, func(t *testing.T) {
			logDir := t.TempDir()
			testutil.CopyTree(t, filepath.Join(samples, name), logDir)
			var dirs []string
			for _, d := range testutil.PartitionDirs(t, logDir) {
				if !strings.HasPrefix(filepath.Base(d), "__") {
					dirs = append(dirs, d)
				}
			}
			res, err := Run(logDir, jobs(dirs), Options{Config: deletePolicy(DefaultRetentionMs, -1), NowMs: time.Date(2040, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli(), Workers: 4})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range res {
				if r.Err != nil {
					t.Errorf("%s: %v", r.Dir, r.Err)
				}
				for _, w := range r.Warnings {
					if strings.Contains(w, "does not match") {
						t.Errorf("%s: a broker's own time index was distrusted: %s", r.Dir, w)
					}
				}
				if r.LogEndOffset > r.LogStartOffset && len(r.Deleted) > 0 && r.Rolled == "" && r.HighWatermark == r.LogEndOffset {
					t.Errorf("%s: everything expired in 2040 but nothing rolled: %+v", r.Dir, r)
				}
				after := readPartition(t, r.Dir)
				if len(after.Segments) == 0 || len(after.Leftovers) > 0 {
					t.Errorf("%s: segments %v, leftovers %v", r.Dir, after.Segments, after.Leftovers)
				}
			}
		})
	}
}

// TestRunEachTopicItsOwnConfig: each partition gets its job's configuration.
// A topic without the delete policy gets only the log start rule, as
// UnifiedLog.deleteOldSegments does; one with remote storage, and one the
// caller skips, are not even read.
func TestRunEachTopicItsOwnConfig(t *testing.T) {
	logDir := generate(t, gen.Options{Topics: []string{"compacted", "deleted", "remote", "stray"}, Magic: 2, Records: 400,
		SegmentBytes: 8 << 10, Seed: 5})
	dir := func(topic string) string { return filepath.Join(logDir, topic+"-0") }
	compacted := readPartition(t, dir("compacted"))
	start := compacted.Segments[2].Base
	ls := checkpoint.AppendOffsets(nil, []checkpoint.OffsetEntry{{Topic: "compacted", Partition: 0, Offset: start}})
	if err := os.WriteFile(filepath.Join(logDir, layout.LogStartOffsetCheckpointFile), ls, 0o644); err != nil {
		t.Fatal(err)
	}
	untouched := map[string]map[string]string{}
	for _, topic := range []string{"remote", "stray"} {
		untouched[topic] = fileState(t, dir(topic), true)
	}
	compact := Config{Policy: "compact", RetentionMs: 0, RetentionBytes: 0}
	remote := deletePolicy(0, -1)
	remote.RemoteStorage = true
	res, err := Run(logDir, []Job{{Dir: dir("compacted"), Config: &compact}, {Dir: dir("deleted")}, {Dir: dir("remote"), Config: &remote},
		{Dir: dir("stray"), Skip: "not in the cluster metadata"}}, Options{Config: deletePolicy(0, -1), NowMs: start2024 + 1e9})
	if err != nil {
		t.Fatal(err)
	}
	if r := res[0]; r.Err != nil || !r.LogStartOnly || r.Reason != "cleanup.policy=compact: only the log start offset rule applies" || len(r.Deleted) != 2 || len(r.Rules()) != 1 || r.Rules()[0] != RuleLogStart || r.Rolled != "" {
		t.Errorf("compact policy: %+v; want only the 2 segments below the log start %d", r, start)
	}
	checkKept(t, compacted, readPartition(t, dir("compacted")), start)
	if r := res[1]; r.Err != nil || r.LogStartOnly || r.Rolled == "" {
		t.Errorf("delete policy: %+v; want every segment expired", r)
	}
	if r := res[2]; r.Err != nil || !r.Skipped || !strings.HasPrefix(r.Reason, "remote.storage.enable=true") || r.Topic != "remote" {
		t.Errorf("remote storage: %+v", r)
	}
	if r := res[3]; r.Err != nil || !r.Skipped || r.Reason != "not in the cluster metadata" || r.Partition != 0 {
		t.Errorf("skipped: %+v", r)
	}
	for topic, before := range untouched {
		if d := diffState(before, fileState(t, dir(topic), true)); d != "" {
			t.Errorf("%s changed:\n%s", topic, d)
		}
	}
	if e := offsetsFile(t, filepath.Join(logDir, layout.LogStartOffsetCheckpointFile)); len(e) != 2 {
		t.Errorf("log-start-offset-checkpoint %v; want compacted and deleted", e)
	}
}
