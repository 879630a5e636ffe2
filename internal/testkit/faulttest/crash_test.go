package faulttest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/internal/testkit/testutil"
	"github.com/logtool/logtool/logfmt/checkpoint"
	"github.com/logtool/logtool/logfmt/codec"
	"github.com/logtool/logtool/logfmt/layout"
)

// crashCase is a writing command and the log directory it runs on.
type crashCase struct {
	name  string
	args  []string // the command line; the log directory is appended
	setup func(t testing.TB) string
	// rule is what the records of a partition may be after a crash: see
	// checkPartition.
	rule crashRule
	// verify are verify's flags for the result. The cleaner keeps .txnindex
	// entries of aborted transactions it emptied, which recovery would not
	// write, so compacted directories are not checked with --strict.
	verify []string
}

// argv is the command line on the log directory dir. One worker keeps the
// order of the steps, and so the kill points, the same from run to run.
func (c crashCase) argv(dir string) []string {
	return slices.Concat([]string{"--workers", "1"}, c.args, []string{dir})
}

// crashRule says which records a partition may hold after a crash.
type crashRule int

const (
	// exactly the old ones or exactly the new ones
	ruleExact crashRule = iota
	// a suffix of the old ones that ends with the new ones: retention
	// deletes segments one by one, as a broker does
	ruleSuffix
	// each record in its old or its new form, none missing or added:
	// upgrade swaps one run of adjacent rewritten segments at a time
	ruleEach
	// the old ones less some that the new ones lack: compact swaps one
	// group of segments at a time
	ruleBetween
)

func crashCases() []crashCase {
	three := func(f format) gen.Options {
		o := matrixOptions(f)
		o.Topics, o.Partitions, o.Records = []string{"events", "orders"}, 2, 200
		return o
	}
	strict, deep := []string{"--deep", "--strict"}, []string{"--deep"}
	// A small offset map holds the fixtures' keys many times over; the
	// default 128 MiB, allocated and cleared by every run, was most of the
	// cost of the compact cases.
	compact := []string{"compact", "--topic", ".*", "--now", compactNow, "--offset-map-memory", "1MiB"}
	return []crashCase{
		{name: "reindex", args: []string{"reindex"}, verify: strict, setup: func(t testing.TB) string {
			dir := fixture(t, three(format{"v2-lz4", 2, codec.LZ4}))
			// Stale indexes: reindex has every file to write.
			ld, err := layout.ReadLogDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range ld.Partitions {
				for _, s := range p.Segments {
					writeFile(t, s.Index, nil)
					writeFile(t, s.TimeIndex, nil)
				}
			}
			return dir
		}},
		{name: "upgrade", args: []string{"upgrade", "--to-magic", "2"}, verify: strict, setup: func(t testing.TB) string {
			return fixture(t, three(format{"v0-gzip", 0, codec.Gzip}))
		}},
		{name: "upgrade-v1", args: []string{"upgrade", "--to-magic", "1", "--compression", "none"}, verify: strict, setup: func(t testing.TB) string {
			return fixture(t, three(format{"v0-snappy", 0, codec.Snappy}))
		}},
		// Segments alternating v0 and v1: only the v0 ones are rewritten,
		// in runs of one segment each (issue 15, item 2).
		{name: "upgrade-mixed", args: []string{"upgrade", "--to-magic", "1", "--timestamp-type", "log-append"}, rule: ruleEach, verify: strict,
			setup: func(t testing.TB) string {
				o := three(format{"v0-gzip", 0, codec.Gzip})
				o.SegmentBytes = 2000 // 5 segments: v0, v1, v0, v1, v0
				return derivedFixture(t, "mixed", o, func(t testing.TB, dir string) {
					mixFormats(t, dir, func(part string) {
						if r := run(t, "upgrade", "--to-magic", "1", part); r.code != 0 {
							t.Fatalf("mixing formats: %v", r)
						}
					})
				})
			}},
		{name: "migrate-checkpoints", args: []string{"migrate-checkpoints", "--clean-time", "1700000000000"}, verify: strict, setup: func(t testing.TB) string {
			dir := fixture(t, three(format{"v2-none", 2, codec.None}))
			writeFile(t, filepath.Join(dir, "cleaner-offset-checkpoint"), checkpoint.AppendOffsets(nil, []checkpoint.OffsetEntry{
				{Topic: "events", Partition: 0, Offset: 40}, {Topic: "events", Partition: 1, Offset: 70},
				{Topic: "orders", Partition: 0, Offset: 12}, {Topic: "gone", Partition: 3, Offset: 9},
			}))
			return dir
		}},
		{name: "compact", args: compact, verify: deep, setup: func(t testing.TB) string {
			return fixture(t, three(format{"v2-zstd", 2, codec.Zstd}))
		}},
		// Groups of two segments (--segment-bytes), several per partition,
		// each swapped on its own.
		{name: "compact-groups", args: append(slices.Clone(compact), "--segment-bytes", "12000"), rule: ruleBetween, verify: deep,
			setup: func(t testing.TB) string {
				o := three(format{"v2-zstd", 2, codec.Zstd})
				o.Topics, o.Records = []string{"events"}, 600
				return fixture(t, o)
			}},
		{name: "compact-v1", args: compact, verify: deep, setup: func(t testing.TB) string {
			return fixture(t, three(format{"v1-lz4", 1, codec.LZ4}))
		}},
		{name: "retention", args: []string{"retention", "--topic", ".*", "--now", compactNow, "--retention-ms", "-1", "--retention-bytes", "6000"}, rule: ruleSuffix, verify: strict,
			setup: func(t testing.TB) string { return fixture(t, three(format{"v2-gzip", 2, codec.Gzip})) }},
	}
}

// mixFormats makes every partition's segments alternate v0 and v1
// (upgrade runs logtool upgrade --to-magic 1 on a scratch partition).
func mixFormats(t testing.TB, dir string, upgrade func(part string)) {
	for _, part := range testutil.PartitionDirs(t, dir) {
		testutil.AlternateSegments(t, part, upgrade)
	}
}

// crashSteps picks the kill points to try out of n: the first 2, 4 more
// spread evenly up to the last, and those in also (LOGTOOL_LONG=1: every
// one).
func crashSteps(n int64, also ...int64) []int64 {
	var out []int64
	k := max(1, (n-2)/4)
	if long() {
		k = 1
	}
	for i := int64(1); i <= n; i++ {
		if i <= 2 || (i-2)%k == 0 || i == n || slices.Contains(also, i) {
			out = append(out, i)
		}
	}
	return out
}

// killer is a fault hook that kills the process at its at-th kill point:
// a rename or a removal, the steps that change what a loader finds (a
// temporary file's creation, writes and syncs change nothing it reads).
// That step and every later one fail, as in a process that died there.
// With at 0 it only counts.
type killer struct {
	at   int64
	n    atomic.Int64
	dead atomic.Bool
	// lastSwap is the last kill point that renamed a file to a ".swap"
	// name, and swapEnd the first that followed such renames: killed there,
	// the process leaves a swap that a loader completes, where one swap
	// over segments that are not adjacent loses the segments between them.
	lastSwap, swapEnd atomic.Int64
}

func (k *killer) hook(step safefile.Step, path string) error {
	if k.dead.Load() {
		return safefile.ErrInjected
	}
	if step != safefile.StepRename && step != safefile.StepRemove {
		return nil
	}
	n := k.n.Add(1)
	if strings.HasSuffix(path, layout.SwapSuffix) {
		k.lastSwap.Store(n)
	} else if last := k.lastSwap.Load(); last > 0 && last == n-1 {
		k.swapEnd.CompareAndSwap(0, n)
	}
	if k.at > 0 && n >= k.at {
		k.dead.Store(true)
		return safefile.ErrInjected
	}
	return nil
}

// TestCrashInjection kills each writing command at its renames and
// removals in turn (safefile's fault hook), then checks what a broker
// serves after loading the directory with Kafka's rules (internal/testkit/kafkaloader,
// independent of logtool's own recovery), as the directory is and as after a
// broker crash that recovers every segment; then runs the command again
// without faults and checks the result against a run that was never
// interrupted.
func TestCrashInjection(t *testing.T) {
	for _, c := range crashCases() {
		t.Run(c.name, func(t *testing.T) {
			if strings.HasSuffix(c.name, "-v1") && !long() {
				t.Skip("a second format for the same code path; LOGTOOL_LONG=1 runs it")
			}
			// The run that is never interrupted, counting its kill points.
			dir := c.setup(t)
			old := logical(t, dir)
			if b := brokerLogical(t, dir, true); !slices.Equal(b, old) {
				t.Fatalf("the fixture does not load as it reads: %s", firstDiff(b, old))
			}
			var count killer
			restoreHook := safefile.SetFaultHook(count.hook)
			r := run(t, c.argv(dir)...)
			restoreHook()
			if r.code != 0 {
				t.Fatalf("uninterrupted run: %v\n%s", r, r.stdout)
			}
			want := logical(t, dir)
			wantFiles := digest(t, dir)
			// reindex and migrate-checkpoints change no record, nor does an
			// upgrade with CreateTime (v0 and v1 both read timestamp -1).
			unchanged := c.name == "reindex" || c.name == "migrate-checkpoints" || c.name == "upgrade" || c.name == "upgrade-v1"
			if !unchanged && slices.Equal(old, want) {
				t.Fatalf("the uninterrupted run changed no record; the case tests nothing")
			}
			points := crashSteps(count.n.Load(), count.swapEnd.Load())
			t.Logf("%d kill points, %d tried", count.n.Load(), len(points))
			for _, n := range points {
				dir := c.setup(t)
				k := &killer{at: n}
				restoreHook := safefile.SetFaultHook(k.hook)
				r := run(t, c.argv(dir)...)
				restoreHook()
				if r.code == 0 {
					t.Errorf("kill point %d: exit 0 although the step failed\n%s", n, r.stdout)
				}
				for _, unflushed := range []bool{false, true} {
					when := fmt.Sprintf("kill point %d, as a broker loads it (unflushed %v)", n, unflushed)
					checkRecords(t, when, brokerLogical(t, dir, unflushed), old, want, c.rule)
				}

				if r := run(t, c.argv(dir)...); r.code != 0 {
					t.Errorf("kill point %d: re-run: %v", n, r)
					continue
				}
				checkRecords(t, fmt.Sprintf("kill point %d, after the re-run", n), logical(t, dir), want, want, ruleExact)
				if r := run(t, append(append([]string{"verify"}, c.verify...), dir)...); r.code != 0 {
					t.Errorf("kill point %d: verify after the re-run: %v\n%s", n, r, clip(r.stdout, 1500))
				}
				if left := leftovers(t, dir); len(left) > 0 {
					t.Errorf("kill point %d: left after the re-run: %v", n, left)
				}
				if c.name == "reindex" || c.name == "migrate-checkpoints" {
					// Deterministic outputs: the files must be the
					// uninterrupted run's, byte for byte.
					if d := diff(wantFiles, digest(t, dir), func(s string) bool { return !strings.HasSuffix(s, safefile.TempSuffix) }); len(d) > 0 {
						t.Errorf("kill point %d: after the re-run the files differ from an uninterrupted run: %v", n, d)
					}
				}
			}
		})
	}
}

// checkRecords wants the records of each partition in got to be what rule
// allows between old and new. Partitions are independent: a crash may leave
// one done and the next not.
func checkRecords(t *testing.T, when string, got, old, new []string, rule crashRule) {
	t.Helper()
	g, o, w := byPartition(got), byPartition(old), byPartition(new)
	for p := range g {
		_, inOld := o[p]
		if _, inNew := w[p]; !inOld && !inNew {
			t.Errorf("%s: a partition %s appeared", when, p)
		}
	}
	parts := map[string]bool{}
	for p := range o {
		parts[p] = true
	}
	for p := range w {
		parts[p] = true // a partition the command creates had no records before
	}
	for p := range parts {
		checkPartition(t, when+", "+p, g[p], o[p], w[p], rule)
	}
}

func byPartition(lines []string) map[string][]string {
	out := map[string][]string{}
	for _, l := range lines {
		p, _, _ := strings.Cut(l, " ")
		out[p] = append(out[p], l)
	}
	return out
}

func checkPartition(t *testing.T, when string, got, old, new []string, rule crashRule) {
	t.Helper()
	if slices.Equal(got, old) || slices.Equal(got, new) {
		return
	}
	switch rule {
	case ruleSuffix:
		if len(got) >= len(new) && len(got) <= len(old) && slices.Equal(got, old[len(old)-len(got):]) && slices.Equal(got[len(got)-len(new):], new) {
			return
		}
	case ruleEach:
		each := len(got) == len(old) && len(old) == len(new)
		for i := 0; each && i < len(got); i++ {
			each = got[i] == old[i] || got[i] == new[i]
		}
		if each {
			return
		}
	case ruleBetween:
		if isSubsequence(new, got) && isSubsequence(got, old) {
			return
		}
	}
	t.Errorf("%s: %d records, neither the old %d nor the new %d; first difference: %s", when, len(got), len(old), len(new), firstDiff(got, new))
}

// isSubsequence reports whether a is b with some elements left out.
func isSubsequence(a, b []string) bool {
	i := 0
	for _, x := range b {
		if i < len(a) && a[i] == x {
			i++
		}
	}
	return i == len(a)
}

func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("%q vs %q", a[i], b[i])
		}
	}
	return "one is a prefix of the other"
}

// leftovers lists the files Kafka's loader would have to clean up or
// complete: .cleaned, .swap and .deleted.
func leftovers(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			for _, suf := range []string{layout.CleanedSuffix, layout.SwapSuffix, layout.DeletedSuffix} {
				if strings.HasSuffix(d.Name(), suf) {
					out = append(out, path)
				}
			}
		}
		return nil
	})
	return out
}
