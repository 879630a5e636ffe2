package campaign

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/internal/segswap"
	"github.com/logtool/logtool/internal/testutil"
	"github.com/logtool/logtool/logfmt/checkpoint"
	"github.com/logtool/logtool/logfmt/codec"
	"github.com/logtool/logtool/logfmt/layout"
)

// crashCase is a writing command and the log directory it runs on.
type crashCase struct {
	name  string
	args  []string // the command line; the log directory is appended
	setup func(t testing.TB) string
	// suffix: after a crash, the records may be a suffix of the old ones
	// that holds the new ones (retention deletes segments one by one, as
	// a broker does) instead of exactly one of the two.
	suffix bool
	// verify are verify's flags for the result. The cleaner keeps .txnindex
	// entries of aborted transactions it emptied, which recovery would not
	// write, so compacted directories are not checked with --strict.
	verify []string
}

func crashCases() []crashCase {
	three := func(f format) gen.Options {
		o := matrixOptions(f)
		o.Topics, o.Partitions, o.Records = []string{"events", "orders"}, 2, 200
		return o
	}
	strict, deep := []string{"--deep", "--strict"}, []string{"--deep"}
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
		{name: "migrate-checkpoints", args: []string{"migrate-checkpoints", "--clean-time", "1700000000000"}, verify: strict, setup: func(t testing.TB) string {
			dir := fixture(t, three(format{"v2-none", 2, codec.None}))
			writeFile(t, filepath.Join(dir, "cleaner-offset-checkpoint"), checkpoint.AppendOffsets(nil, []checkpoint.OffsetEntry{
				{Topic: "events", Partition: 0, Offset: 40}, {Topic: "events", Partition: 1, Offset: 70},
				{Topic: "orders", Partition: 0, Offset: 12}, {Topic: "gone", Partition: 3, Offset: 9},
			}))
			return dir
		}},
		{name: "compact", args: []string{"compact", "--topic", ".*", "--now", compactNow}, verify: deep, setup: func(t testing.TB) string {
			return fixture(t, three(format{"v2-zstd", 2, codec.Zstd}))
		}},
		{name: "compact-v1", args: []string{"compact", "--topic", ".*", "--now", compactNow}, verify: deep, setup: func(t testing.TB) string {
			return fixture(t, three(format{"v1-lz4", 1, codec.LZ4}))
		}},
		{name: "retention", args: []string{"retention", "--topic", ".*", "--now", compactNow, "--retention-ms", "-1", "--retention-bytes", "6000"}, suffix: true, verify: strict,
			setup: func(t testing.TB) string { return fixture(t, three(format{"v2-gzip", 2, codec.Gzip})) }},
	}
}

// crashSteps picks the fault steps to try out of n: all of the first 4,
// where the first files are created, then 5 more spread evenly up to the
// last (LOGTOOL_LONG=1: every one).
func crashSteps(n int64) []int64 {
	var out []int64
	k := max(1, (n-4)/5)
	if long() {
		k = 1
	}
	for i := int64(1); i <= n; i++ {
		if i <= 4 || (i-4)%k == 0 || i == n {
			out = append(out, i)
		}
	}
	return out
}

// TestCrashInjection makes every file-system step of each writing command
// fail in turn, with every later step (a process that dies there), then
// checks what a broker would load, runs the command again without faults and
// checks the result against a run that was never interrupted.
func TestCrashInjection(t *testing.T) {
	for _, c := range crashCases() {
		t.Run(c.name, func(t *testing.T) {
			if strings.HasSuffix(c.name, "-v1") && !long() {
				t.Skip("a second format for the same code path; LOGTOOL_LONG=1 runs it")
			}
			// The run that is never interrupted, counting its steps.
			dir := c.setup(t)
			old := logical(t, dir)
			var count safefile.Faults
			restoreHook := safefile.SetFaultHook(count.Hook)
			r := run(t, append(c.args, dir)...)
			restoreHook()
			if r.code != 0 {
				t.Fatalf("uninterrupted run: %v\n%s", r, r.stdout)
			}
			want := logical(t, dir)
			wantFiles := digest(t, dir)
			if c.name != "reindex" && c.name != "migrate-checkpoints" && slices.Equal(old, want) && !strings.HasPrefix(c.name, "upgrade") {
				t.Fatalf("the uninterrupted run changed no record; the case tests nothing")
			}
			steps := crashSteps(count.Steps())
			t.Logf("%d steps, %d tried", count.Steps(), len(steps))
			for _, n := range steps {
				dir := c.setup(t)
				faults := &safefile.Faults{FailAt: n}
				restoreHook := safefile.SetFaultHook(faults.Hook)
				r := run(t, append(c.args, dir)...)
				restoreHook()
				if r.code == 0 {
					t.Errorf("step %d: exit 0 although the step failed\n%s", n, r.stdout)
				}
				// What a broker's log loader makes of the directory.
				broker := filepath.Join(t.TempDir(), "broker")
				testutil.CopyTree(t, dir, broker)
				for _, p := range partitions(t, broker) {
					if _, err := segswap.Recover(p); err != nil {
						t.Fatalf("step %d: %s: loader: %v", n, p, err)
					}
				}
				checkRecords(t, fmt.Sprintf("step %d, as a broker loads it", n), logical(t, broker), old, want, c.suffix)

				if r := run(t, append(c.args, dir)...); r.code != 0 {
					t.Errorf("step %d: re-run: %v", n, r)
					continue
				}
				checkRecords(t, fmt.Sprintf("step %d, after the re-run", n), logical(t, dir), want, want, false)
				if r := run(t, append(append([]string{"verify"}, c.verify...), dir)...); r.code != 0 {
					t.Errorf("step %d: verify after the re-run: %v\n%s", n, r, clip(r.stdout, 1500))
				}
				if left := leftovers(t, dir); len(left) > 0 {
					t.Errorf("step %d: left after the re-run: %v", n, left)
				}
				if c.name == "reindex" || c.name == "migrate-checkpoints" {
					// Deterministic outputs: the files must be the
					// uninterrupted run's, byte for byte.
					if d := diff(wantFiles, digest(t, dir), func(s string) bool { return !strings.HasSuffix(s, safefile.TempSuffix) }); len(d) > 0 {
						t.Errorf("step %d: after the re-run the files differ from an uninterrupted run: %v", n, d)
					}
				}
			}
		})
	}
}

func partitions(t testing.TB, dir string) []string {
	t.Helper()
	ld, err := layout.ReadLogDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range ld.Partitions {
		out = append(out, p.Path)
	}
	return out
}

// checkRecords wants the records of each partition in got to equal those
// in old or in new, or with suffix a suffix of old that ends with new.
// Partitions are independent: a crash may leave one done and the next not.
func checkRecords(t *testing.T, when string, got, old, new []string, suffix bool) {
	t.Helper()
	g, o, w := byPartition(got), byPartition(old), byPartition(new)
	for p := range o {
		checkPartition(t, when+", "+p, g[p], o[p], w[p], suffix)
	}
	for p := range g {
		if _, ok := o[p]; !ok {
			t.Errorf("%s: a partition %s appeared", when, p)
		}
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

func checkPartition(t *testing.T, when string, got, old, new []string, suffix bool) {
	t.Helper()
	switch {
	case slices.Equal(got, old), slices.Equal(got, new):
		return
	case suffix && len(got) >= len(new) && len(got) <= len(old) && slices.Equal(got, old[len(old)-len(got):]) && slices.Equal(got[len(got)-len(new):], new):
		return
	}
	t.Errorf("%s: %d records, neither the old %d nor the new %d; first difference: %s", when, len(got), len(old), len(new), firstDiff(got, new))
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
