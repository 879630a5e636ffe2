//go:build unix

package faulttest

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/logtool/logtool/internal/lockfile"
	"github.com/logtool/logtool/internal/testkit/locktest"
)

func TestBrokerLock(t *testing.T) {
	o := matrixOptions(format{"v0-gzip", 0, 1})
	o.Topics, o.Partitions = []string{"events"}, 2
	dir := fixture(t, o)
	part := filepath.Join(dir, "events-1")
	// Work for every writer: stale indexes, a root cleaner checkpoint to
	// migrate, and old magic to upgrade; compact and retention have dirty
	// and expired segments.
	writeFile(t, segments(t, part)[0].Index, nil)
	writeFile(t, filepath.Join(dir, "cleaner-offset-checkpoint"), []byte("0\n1\nevents 1 5\n"))
	locktest.Hold(t, dir)
	before := digest(t, dir)

	writers := [][]string{
		{"reindex"},
		{"upgrade", "--to-magic", "2"},
		{"compact", "--topic", ".*", "--now", compactNow, "--max-lag", "1h"},
		{"retention", "--topic", ".*", "--now", "2030-01-01T00:00:00Z", "--retention-ms", "1h"},
	}
	for _, path := range []string{dir, part} {
		for _, w := range writers {
			r := run(t, append(w, path)...)
			if r.code != 4 || !strings.Contains(r.stderr, "locked") {
				t.Errorf("%s %s: %v; want exit 4", w[0], path, r)
			}
		}
	}
	// migrate-checkpoints takes log directories only.
	if r := run(t, "migrate-checkpoints", dir); r.code != 4 || !strings.Contains(r.stderr, "locked") {
		t.Errorf("migrate-checkpoints: %v; want exit 4", r)
	}
	if d := diff(before, digest(t, dir), nil); len(d) > 0 {
		t.Errorf("writers changed %v under a broker's lock", d)
	}

	// events-0 is untouched: reading it must succeed.
	clean := filepath.Join(dir, "events-0")
	for _, args := range [][]string{
		{"dump", dir},
		{"dump", "--deep-iteration", clean},
		{"verify", "--deep", clean},
		{"find", "--offset", "10", clean},
	} {
		r := run(t, args...)
		if r.code != 0 || !strings.Contains(r.stderr, "warning") || !strings.Contains(r.stderr, "locked") {
			t.Errorf("%s: %v; want a warning and exit 0", strings.Join(args, " "), r)
		}
	}
	if d := diff(before, digest(t, dir), nil); len(d) > 0 {
		t.Errorf("read-only commands changed %v", d)
	}
}

// TestBrokerLockThroughSymlink: a partition of a locked log directory B,
// linked into log directory A and named through the link, is refused
// (exit 4) by every writer; so is a partition of a locked A reached through
// a link into B, and A named whole. A named whole while B is locked leaves
// the link out with a warning. Nothing changes in B.
func TestBrokerLockThroughSymlink(t *testing.T) {
	for _, locked := range []string{"B", "A"} {
		o := matrixOptions(format{"v0-gzip", 0, 1})
		a := fixture(t, o)
		o.Topics = []string{"legacy"}
		b := fixture(t, o)
		link := filepath.Join(a, "legacy-0")
		if err := os.Symlink(filepath.Join(b, "legacy-0"), link); err != nil {
			t.Fatal(err)
		}
		writeFile(t, segments(t, link)[0].Index, nil) // work for reindex
		holder := map[string]string{"A": a, "B": b}[locked]
		locktest.Hold(t, holder)
		beforeA, beforeB := digest(t, a), digest(t, b)
		for _, path := range []string{link, a} {
			for _, w := range [][]string{
				{"reindex"},
				{"upgrade", "--to-magic", "2"},
				{"compact", "--topic", ".*", "--now", compactNow, "--max-lag", "1h"},
				{"retention", "--topic", ".*", "--now", "2030-01-01T00:00:00Z", "--retention-ms", "1h"},
			} {
				r := run(t, append(w, path)...)
				if locked == "B" && path == a {
					if r.code != 0 || !strings.Contains(r.stderr, link+": a symbolic link") {
						t.Errorf("B locked: %s %s: %v; want the link left out with a warning", w[0], path, r)
					}
					continue
				}
				if r.code != 4 || !strings.Contains(r.stderr, "locked by a running broker") {
					t.Errorf("%s locked: %s %s: %v; want exit 4", locked, w[0], path, r)
				}
			}
		}
		d := diff(beforeB, digest(t, b), nil)
		if locked == "A" {
			d = append(d, diff(beforeA, digest(t, a), nil)...)
		}
		if len(d) > 0 {
			t.Errorf("%s locked: writers changed %v", locked, d)
		}
	}
}

// TestLockHeldByLogtool: when the holder of the lock is another logtool
// run, the refusal says so rather than blame a broker, and a reader's
// warning too.
func TestLockHeldByLogtool(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the holder's name is set through /proc")
	}
	dir := fixture(t, matrixOptions(format{"v2-none", 2, 0}))
	locktest.HoldLogtool(t, dir)
	r := run(t, "reindex", dir)
	if r.code != 4 || !strings.Contains(r.stderr, "locked by another logtool run (process ") || strings.Contains(r.stderr, "broker") {
		t.Errorf("reindex: %v", r)
	}
	r = run(t, "verify", dir)
	if r.code != 0 || !strings.Contains(r.stderr, "locked by another logtool run") {
		t.Errorf("verify: %v", r)
	}
}

// TestLockFileKept: a writer leaves .lock in place, unlocked: removing it
// would let a process that opened it just before lock a file no broker
// sees.
func TestLockFileKept(t *testing.T) {
	dir := fixture(t, matrixOptions(format{"v2-none", 2, 0}))
	if _, err := os.Stat(filepath.Join(dir, ".lock")); err == nil {
		t.Fatal("the fixture has a .lock")
	}
	if r := run(t, "reindex", dir); r.code != 0 {
		t.Fatal(r)
	}
	if _, err := os.Stat(filepath.Join(dir, ".lock")); err != nil {
		t.Errorf("reindex removed the .lock it created: %v", err)
	}
	if h, err := lockfile.Held(dir); err != nil || h != nil {
		t.Errorf("still held after the run: %v, %v", h, err)
	}
}
