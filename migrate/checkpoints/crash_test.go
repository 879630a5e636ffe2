package checkpoints

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/logtool/logtool/internal/safefile"
)

// TestCheckpointsCrash fails every file-system step of a run in turn, as a
// crash there would (the step and every later one fail), and as an I/O
// error the process survives (only that step fails). Each time, the log
// directory must still hold every entry somewhere a broker or logtool reads
// it, and a re-run with the same options must end with exactly the files of
// an uninterrupted run.
func TestCheckpointsCrash(t *testing.T) {
	mtime := time.Date(2023, 7, 1, 0, 0, 0, 0, time.UTC)
	// The entries every state must keep, by partition.
	orig := map[string]int64{
		"orders-0": 120, "orders-1": 0, "legacy.events-v0-0": 77, "legacy.events-v0-snappy-0": 5, "gone-topic-3": 44, "moving-0": 9,
	}
	newer := maps.Clone(orig)
	newer["orders-0"] = 130
	for _, sc := range []struct {
		name  string
		setup func(t *testing.T) string
		opts  Options
		want  map[string]int64
	}{
		{"forward", func(t *testing.T) string {
			dir := ckBuild(t, ckWith(ckSample, ckTree{safefile.TempName("orders-2/" + ckCP): "x"}))
			if err := os.Chtimes(filepath.Join(dir, ckRoot), mtime, mtime); err != nil {
				t.Fatal(err)
			}
			return dir
		}, Options{CleanTime: CleanTimeFileMtime}, orig},
		{"merging", func(t *testing.T) string {
			// A broker ran after a migration and cleaned orders-0 only.
			dir := ckBuild(t, ckWith(ckSampleMigrated, ckTree{ckRoot: "0\n1\norders 0 130\n"}))
			if err := os.Chtimes(filepath.Join(dir, ckRoot), mtime, mtime); err != nil {
				t.Fatal(err)
			}
			return dir
		}, Options{CleanTime: CleanTimeFileMtime, Overwrite: true}, newer},
		{"reverse", func(t *testing.T) string {
			// Compaction advanced orders-0 after the migration, so the
			// .migrated file is stale.
			dir := ckBuild(t, ckSample)
			ckRun(t, Options{LogDirs: []string{dir}})
			ckWrite(t, dir, ckTree{"orders-0/" + ckCP: ckFile(130, 1000)})
			return dir
		}, Options{Reverse: true}, newer},
	} {
		for _, workers := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s/workers=%d", sc.name, workers), func(t *testing.T) {
				opts := sc.opts
				opts.Workers = workers
				dir := sc.setup(t)
				opts.LogDirs = []string{dir}
				var count safefile.Faults
				restore := safefile.SetFaultHook(count.Hook)
				ckRun(t, opts)
				restore()
				want := ckSnapshot(t, dir)
				steps := count.Steps()
				if steps < 4 {
					t.Fatalf("only %d steps", steps)
				}

				for _, once := range []bool{false, true} {
					for n := int64(1); n <= steps; n++ {
						dir := sc.setup(t)
						opts.LogDirs = []string{dir}
						faults := &safefile.Faults{FailAt: n, Once: once}
						restore := safefile.SetFaultHook(faults.Hook)
						_, err := Migrate(opts)
						restore()
						if !errors.Is(err, safefile.ErrInjected) {
							t.Fatalf("step %d (once=%v): error %v, want the injected fault", n, once, err)
						}
						checkRecoverable(t, dir, sc.want, sc.opts.Reverse)
						crashed := ckSnapshot(t, dir)

						ckRun(t, opts)
						if d := ckDiff(ckSnapshot(t, dir), want); d != "" {
							t.Fatalf("step %d (once=%v): the re-run left\n%s", n, once, d)
						}
						if rep := ckRun(t, opts); rep.LogDirs[0].Changed {
							t.Fatalf("step %d (once=%v): a third run changed something", n, once)
						}

						// Whatever a crash of a plain migration left, going
						// the other way gets back every entry.
						if sc.name == "merging" {
							continue
						}
						other := ckBuild(t, crashed)
						ckRun(t, Options{LogDirs: []string{other}, Reverse: !sc.opts.Reverse})
						if !sc.opts.Reverse {
							if got := ckEntries(t, filepath.Join(other, ckRoot)); !maps.Equal(got, sc.want) {
								t.Fatalf("step %d (once=%v): reverse after the crash: %v, want %v", n, once, got, sc.want)
							}
						}
					}
				}
			})
		}
	}
}

// checkRecoverable checks that dir holds every entry of want where a
// re-run finds it. Forward: in the root file, or, once that is gone, in
// per-partition files and the .migrated file. Reverse: in the per-partition
// files, else the root file, else the .migrated file.
func checkRecoverable(t *testing.T, dir string, want map[string]int64, reverse bool) {
	t.Helper()
	root := filepath.Join(dir, ckRoot)
	got := map[string]int64{}
	fromParts := func() {
		for name := range want {
			b, err := os.ReadFile(filepath.Join(dir, name, ckCP))
			if err == nil {
				var off, ms int64
				if _, err := fmt.Sscanf(string(b), "1\n%d %d\n", &off, &ms); err != nil {
					t.Fatalf("%s: %q", name, b)
				}
				got[name] = off
			}
		}
	}
	_, rootErr := os.Stat(root)
	switch {
	case !reverse && rootErr == nil:
		// In the merging scenario a broker wrote the root file after the
		// .migrated one: its entries win, the others are still in there.
		if _, err := os.Stat(filepath.Join(dir, MigratedFile)); err == nil {
			got = ckEntries(t, filepath.Join(dir, MigratedFile))
		}
		maps.Copy(got, ckEntries(t, root))
	case !reverse:
		got = ckEntries(t, filepath.Join(dir, MigratedFile))
		fromParts()
	default:
		// The sources of a reverse run, in order of precedence.
		if _, err := os.Stat(filepath.Join(dir, MigratedFile)); err == nil {
			got = ckEntries(t, filepath.Join(dir, MigratedFile))
		}
		if rootErr == nil {
			maps.Copy(got, ckEntries(t, root))
		}
		fromParts()
	}
	if !maps.Equal(got, want) {
		t.Fatalf("after the crash the entries are %v, want %v", got, want)
	}
}
