package faulttest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/internal/testkit/testutil"
	"github.com/logtool/logtool/logfmt/layout"
)

// TestCrashLookalikes: every writing command of the crash matrix leaves
// names that look like leftovers (testutil.LookalikeNames), planted in the
// log directory, its parent and every partition directory, byte for byte
// as they were: after a run, after a kill at its first, middle and last
// kill points, and after the re-run.
func TestCrashLookalikes(t *testing.T) {
	plant := func(t *testing.T, c crashCase) (string, testutil.Lookalikes) {
		dir := c.setup(t)
		parts := testutil.PartitionDirs(t, dir)
		return dir, plantLookalikes(t, []string{filepath.Dir(dir), dir}, parts)
	}
	for _, c := range crashCases() {
		t.Run(c.name, func(t *testing.T) {
			dir, planted := plant(t, c)
			var count killer
			restoreHook := safefile.SetFaultHook(count.hook)
			r := run(t, c.argv(dir)...)
			restoreHook()
			if r.code != 0 {
				t.Fatalf("uninterrupted run: %v\n%s", r, r.stdout)
			}
			planted.Check(t)
			if r := run(t, c.argv(dir)...); r.code != 0 {
				t.Errorf("re-run: %v", r)
			}
			planted.Check(t)
			n := count.n.Load()
			for _, at := range slices.Compact([]int64{1, (n + 1) / 2, n}) {
				dir, planted := plant(t, c)
				k := &killer{at: at}
				restoreHook := safefile.SetFaultHook(k.hook)
				r := run(t, c.argv(dir)...)
				restoreHook()
				if r.code == 0 {
					t.Errorf("kill point %d: exit 0 although the step failed", at)
				}
				planted.Check(t)
				if r := run(t, c.argv(dir)...); r.code != 0 {
					t.Errorf("kill point %d: re-run: %v", at, r)
				}
				t.Run(fmt.Sprint("kill point ", at), func(t *testing.T) { planted.Check(t) })
			}
		})
	}
}

// TestGenLookalikes: gen leaves look-alike names in its output directory
// and its parent alone through a run, a kill half-way and a re-run.
func TestGenLookalikes(t *testing.T) {
	args := func(out string) []string {
		return []string{"gen", "--out", out, "--topics", "2", "--partitions", "2", "--records", "100"}
	}
	parent := t.TempDir()
	out := filepath.Join(parent, "logs")
	planted := testutil.PlantLookalikes(t, parent, out)
	var count killer
	restoreHook := safefile.SetFaultHook(count.hook)
	r := run(t, args(out)...)
	restoreHook()
	if r.code != 0 {
		t.Fatalf("gen: %v", r)
	}
	planted.Check(t)
	run(t, args(out)...) // refused over its own partitions; touches nothing
	planted.Check(t)

	parent = t.TempDir()
	out = filepath.Join(parent, "logs")
	planted = testutil.PlantLookalikes(t, parent, out)
	k := &killer{at: (count.n.Load() + 1) / 2}
	restoreHook = safefile.SetFaultHook(k.hook)
	r = run(t, args(out)...)
	restoreHook()
	if r.code == 0 {
		t.Errorf("exit 0 although a step failed")
	}
	planted.Check(t)
	run(t, args(out)...)
	planted.Check(t)
}

// TestTruncateLookalikes: reindex --truncate-corrupt-tail leaves look-alike
// names in the partition, its log directory and their parent alone through
// a run, a kill at each kill point and a re-run.
func TestTruncateLookalikes(t *testing.T) {
	setup := func(t *testing.T) (string, testutil.Lookalikes) {
		dir := fixture(t, matrixOptions(format{"v2-none", 2, 0}))
		part := onlyPartition(t, dir)
		segs := segments(t, part)
		log := segs[len(segs)-1].Log
		b := append(readFile(t, log), make([]byte, 4096)...)
		b[len(b)-100] = 1 // a tail that is not zeros: backed up, then cut
		replaceFile(t, log, b)
		// On the log directory: a partition directory holding directories
		// is ambiguous as a path, and refused (exit 2).
		return dir, plantLookalikes(t, []string{filepath.Dir(dir), dir}, []string{part})
	}
	args := func(dir string) []string { return []string{"reindex", "--truncate-corrupt-tail", dir} }
	dir, planted := setup(t)
	var count killer
	restoreHook := safefile.SetFaultHook(count.hook)
	r := run(t, args(dir)...)
	restoreHook()
	if r.code != 0 {
		t.Fatalf("uninterrupted run: %v", r)
	}
	planted.Check(t)
	if count.n.Load() == 0 {
		t.Fatal("no kill points: nothing was cut")
	}
	for at := int64(1); at <= count.n.Load(); at++ {
		dir, planted := setup(t)
		k := &killer{at: at}
		restoreHook := safefile.SetFaultHook(k.hook)
		r := run(t, args(dir)...)
		restoreHook()
		if r.code == 0 {
			t.Errorf("kill point %d: exit 0 although the step failed", at)
		}
		planted.Check(t)
		if r := run(t, args(dir)...); r.code != 0 {
			t.Errorf("kill point %d: re-run: %v", at, r)
		}
		planted.Check(t)
	}
}

// plantLookalikes plants the look-alike names in dirs, and in the partition
// directories parts those a broker loads past: "notes.cleaned" and
// "notes.swap" in a partition stop a broker's load (layout.BrokerRefusal),
// so every writer leaves such a partition alone whole (TestUnloadableNamed),
// which would test nothing here.
func plantLookalikes(t *testing.T, dirs, parts []string) testutil.Lookalikes {
	t.Helper()
	planted := testutil.PlantLookalikes(t, dirs...)
	for path, l := range testutil.PlantLookalikes(t, parts...) {
		if layout.BrokerRefusalAt(path) != "" {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			continue
		}
		planted[path] = l
	}
	return planted
}
