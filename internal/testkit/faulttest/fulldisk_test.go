package faulttest

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/logfmt/codec"
	"github.com/logtool/logtool/logfmt/layout"
)

// fullDisk is a fault hook for a disk that fills up: from the at-th write
// on, every create, write and fsync fails with ENOSPC, while renames and
// removals, which free space or need none, still work. Unlike a kill, the
// command lives on and cleans up after itself.
type fullDisk struct {
	at     int64
	writes atomic.Int64
}

func (d *fullDisk) hook(step safefile.Step, path string) error {
	switch step {
	case safefile.StepCreate, safefile.StepWrite, safefile.StepSync:
		if n := d.writes.Add(1); d.at > 0 && n >= d.at {
			return syscall.ENOSPC
		}
	}
	return nil
}

// fullDiskCase is one writer. setup returns the command line (without
// --workers) and the directory its output or its changes are in.
type fullDiskCase struct {
	name  string
	setup func(t *testing.T) (args []string, out string)
	// left checks what a failed run left in out.
	left func(t *testing.T, out string)
}

// onlyLock holds out to what a writer with an output leaves of a failed
// run: the directory, which it may have made, and its .lock, never
// removed; no partition, stage or root file that would make it look like
// a log directory, whole or not.
func onlyLock(t *testing.T, out string) {
	t.Helper()
	entries, err := os.ReadDir(out)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != layout.LockFile {
			t.Errorf("%s left in the output", e.Name())
		}
	}
}

// noLeftovers holds an in-place writer to what a failed run leaves: no
// temporary file, .cleaned or .swap of its own, and a directory verify
// finds sound, the old or the new.
func noLeftovers(t *testing.T, out string) {
	t.Helper()
	err := filepath.WalkDir(out, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if n := d.Name(); layout.OwnTemp(n) || strings.HasSuffix(n, layout.CleanedSuffix) || strings.HasSuffix(n, layout.SwapSuffix) {
			t.Errorf("%s left behind", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if r := run(t, "verify", out); r.code != 0 {
		t.Errorf("verify after the failed run: %v\n%s", r, r.stdout)
	}
}

// TestFullDisk fills the disk at several points of each writer's run and
// checks that the run exits non-zero, that what it leaves does not look
// like a finished output (onlyLock) or is sound (noLeftovers), and that a
// rerun once there is space again finishes. Before, gen left the
// partitions it had written under their names, the last one cut short,
// and upgrade --output left the partitions before the failed one with the
// root files and the clean-shutdown marker: both a log directory verify
// found clean.
func TestFullDisk(t *testing.T) {
	opts := func(magic int8) gen.Options {
		o := matrixOptions(format{"", magic, codec.None})
		o.Topics, o.Partitions, o.Records = []string{"events", "orders"}, 2, 200
		return o
	}
	// metaBefore is the metadata log of each log dir gen --kraft extends, as
	// it was before the run.
	metaBefore := map[string]map[string]string{}
	cases := []fullDiskCase{
		{name: "gen", left: onlyLock, setup: func(t *testing.T) ([]string, string) {
			out := filepath.Join(t.TempDir(), "gen")
			return []string{"gen", "--out", out, "--topics", "2", "--partitions", "2", "--records", "300"}, out
		}},
		{name: "gen --kraft", left: onlyLock, setup: func(t *testing.T) ([]string, string) {
			out := filepath.Join(t.TempDir(), "gen")
			return []string{"gen", "--kraft", "--out", out, "--topics", "2", "--partitions", "2", "--records", "300"}, out
		}},
		{name: "gen --kraft, again", setup: func(t *testing.T) ([]string, string) {
			out := filepath.Join(t.TempDir(), "gen")
			if r := run(t, "gen", "--kraft", "--out", out, "--topic", "first", "--records", "50"); r.code != 0 {
				t.Fatalf("first gen: %v", r)
			}
			metaBefore[out] = digest(t, filepath.Join(out, "__cluster_metadata-0"))
			return []string{"gen", "--kraft", "--out", out, "--topic", "second", "--partitions", "2", "--records", "300"}, out
		}, left: func(t *testing.T, out string) {
			got := digest(t, filepath.Join(out, "__cluster_metadata-0"))
			if d := diff(metaBefore[out], got, nil); len(d) > 0 {
				t.Errorf("the metadata log changed: %v", d)
			}
			if _, err := os.Lstat(filepath.Join(out, "second-0")); err == nil {
				t.Errorf("second-0 left in the output")
			}
		}},
		{name: "upgrade --output", left: onlyLock, setup: func(t *testing.T) ([]string, string) {
			out := filepath.Join(t.TempDir(), "out")
			return []string{"upgrade", "--to-magic", "2", "--output", out, fixture(t, opts(0))}, out
		}},
		{name: "salvage --out", left: onlyLock, setup: func(t *testing.T) ([]string, string) {
			out := filepath.Join(t.TempDir(), "out")
			return []string{"salvage", filepath.Join(fixture(t, opts(2)), "orders-1"), "--out", filepath.Join(out, "orders-1")}, out
		}},
		{name: "digest --out", left: onlyLock, setup: func(t *testing.T) ([]string, string) {
			out := filepath.Join(t.TempDir(), "out")
			if err := os.Mkdir(out, 0o755); err != nil {
				t.Fatal(err)
			}
			return []string{"digest", "--out", filepath.Join(out, "b1.digest"), fixture(t, opts(2))}, out
		}},
		{name: "upgrade", left: noLeftovers, setup: func(t *testing.T) ([]string, string) {
			dir := fixture(t, opts(0))
			return []string{"upgrade", "--to-magic", "2", dir}, dir
		}},
		{name: "compact", left: noLeftovers, setup: func(t *testing.T) ([]string, string) {
			dir := fixture(t, opts(2))
			return []string{"compact", "--topic", ".*", "--now", compactNow, "--offset-map-memory", "1MiB", dir}, dir
		}},
		{name: "reindex", left: noLeftovers, setup: func(t *testing.T) ([]string, string) {
			dir := fixture(t, opts(2))
			return []string{"reindex", "--interval-bytes", "1024", dir}, dir
		}},
		{name: "migrate-checkpoints", left: noLeftovers, setup: func(t *testing.T) ([]string, string) {
			dir := fixture(t, opts(2))
			writeFile(t, filepath.Join(dir, layout.CleanerOffsetCheckpointFile), []byte("0\n2\nevents 0 5\norders 1 7\n"))
			return []string{"migrate-checkpoints", dir}, dir
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args, _ := c.setup(t)
			var count fullDisk
			restore := safefile.SetFaultHook(count.hook)
			r := run(t, slices.Concat([]string{"--workers", "1"}, args)...)
			restore()
			n := count.writes.Load()
			if r.code != 0 || n == 0 {
				t.Fatalf("run without a full disk: %v, %d writes", r, n)
			}
			for _, at := range slices.Compact([]int64{1, 2, n / 3, n / 2, 2 * n / 3, n - 1, n}) {
				if at < 1 {
					continue
				}
				args, out := c.setup(t)
				argv := slices.Concat([]string{"--workers", "1"}, args)
				restore := safefile.SetFaultHook((&fullDisk{at: at}).hook)
				r := run(t, argv...)
				restore()
				if r.code == 0 {
					t.Errorf("disk full at write %d of %d: exit 0", at, n)
					continue
				}
				if !strings.Contains(r.stderr, "no space left on device") {
					t.Errorf("disk full at write %d of %d: the error does not say so: %v", at, n, r)
				}
				c.left(t, out)
				if r := run(t, argv...); r.code != 0 {
					t.Errorf("disk full at write %d of %d: rerun: %v", at, n, r)
				}
			}
		})
	}
}
