//go:build unix

package target

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/logtool/logtool/internal/lockfile"
	"github.com/logtool/logtool/internal/testkit/locktest"
)

// TestLockThroughSymlinks: a writer is refused however the path is spelled
// when a broker holds the real log directory of a partition, or the log
// directory holding a link to it; a log directory named whole leaves a
// linked partition out, so the lock of B is neither needed nor created.
func TestLockThroughSymlinks(t *testing.T) {
	for _, locked := range []string{"A", "B"} {
		root := t.TempDir()
		tree(t, root, "B/meta.properties", "B/legacy-0/00000000000000000000.log",
			"A/meta.properties", "A/orders-0/00000000000000000000.log", "A/legacy-0 -> B/legacy-0")
		locktest.Hold(t, filepath.Join(root, locked))
		for _, path := range []string{"A/legacy-0", "A"} {
			s := resolveOK(t, []string{filepath.Join(root, path)}, all)
			release, err := s.Lock(Write)
			if locked == "B" && path == "A" {
				if err != nil {
					t.Errorf("B locked, writing A: %v, want A alone locked", err)
				} else {
					release()
				}
				continue
			}
			if !errors.Is(err, lockfile.ErrLocked) {
				if err == nil {
					release()
				}
				t.Errorf("%s locked, writing %s: %v, want ErrLocked", locked, path, err)
			}
		}
	}
}

// TestLockThroughSymlinkedParent: a log directory reached through a linked
// parent (/data -> /mnt/disk1/data) is checked at its real path, where a
// broker holds its lock: a writer is refused, and a reader sees the holder.
func TestLockThroughSymlinkedParent(t *testing.T) {
	root := t.TempDir()
	tree(t, root, "mnt/disk1/data/kafka/meta.properties", "mnt/disk1/data/kafka/orders-0/00000000000000000000.log",
		"data -> mnt/disk1/data")
	locktest.Hold(t, filepath.Join(root, "mnt", "disk1", "data", "kafka"))
	for _, path := range []string{"data/kafka", "data/kafka/orders-0", "data/kafka/orders-0/00000000000000000000.log",
		"data/kafka/meta.properties", "data/../data/kafka/"} {
		s := resolveOK(t, []string{filepath.Join(root, path)}, all)
		if release, err := s.Lock(Write); !errors.Is(err, lockfile.ErrLocked) {
			if err == nil {
				release()
			}
			t.Errorf("writing %s: %v, want ErrLocked", path, err)
		}
		release, err := s.Lock(Read)
		if err != nil {
			t.Fatal(err)
		}
		release()
		if len(s.LogDirs) != 1 || s.LogDirs[0].Held == nil {
			t.Errorf("reading %s: log dirs %+v, want the real one, held", path, s.LogDirs)
		}
	}
	if _, err := os.Lstat(filepath.Join(root, "data", lockfile.FileName)); err == nil {
		t.Error("a .lock was created outside the log directory")
	}
}

// TestLockAccess: Stable refuses a held log directory without taking or
// creating any lock; Read reports the holder; Write takes every lock and
// gives them back.
func TestLockAccess(t *testing.T) {
	root := t.TempDir()
	tree(t, root, "free/meta.properties", "free/t-0/00000000000000000000.log",
		"busy/meta.properties", "busy/t-1/00000000000000000000.log")
	free, busy := filepath.Join(root, "free"), filepath.Join(root, "busy")
	locktest.Hold(t, busy)
	s := resolveOK(t, []string{free, busy}, all)
	if _, err := s.Lock(Stable); !errors.Is(err, lockfile.ErrLocked) {
		t.Errorf("Stable: %v, want ErrLocked", err)
	}
	if _, err := os.Stat(filepath.Join(free, lockfile.FileName)); err == nil {
		t.Error("Stable created a .lock")
	}
	release, err := s.Lock(Read)
	if err != nil {
		t.Fatal(err)
	}
	release()
	for _, d := range s.LogDirs {
		if (d.Held != nil) != (filepath.Base(d.Real) == "busy") {
			t.Errorf("%s: held by %v", d.Real, d.Held)
		}
	}

	s = resolveOK(t, []string{free}, all)
	release, err = s.Lock(Write)
	if err != nil {
		t.Fatal(err)
	}
	if h, _ := lockfile.Acquire(free); h != nil {
		h.Release()
		t.Error("the lock was taken twice in one process")
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	l, err := lockfile.Acquire(free)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	l.Release()
}

// TestLockOutput: the output directory is created and locked by a writer,
// left alone by a reader, and refused when a broker holds it.
func TestLockOutput(t *testing.T) {
	root := t.TempDir()
	tree(t, root, "src/meta.properties", "src/t-0/00000000000000000000.log")
	out := filepath.Join(root, "out", "logs")
	s := resolveOK(t, []string{filepath.Join(root, "src")}, Options{Command: "upgrade", Takes: Partitions | LogDirs, Output: out})
	release, err := s.Lock(Read)
	if err != nil {
		t.Fatal(err)
	}
	release()
	if _, err := os.Stat(out); err == nil {
		t.Error("a reader created the output directory")
	}
	release, err = s.Lock(Stable)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, lockfile.FileName)); err != nil {
		t.Errorf("the output is not locked: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "src", lockfile.FileName)); err == nil {
		t.Error("a Stable source was locked")
	}
	release()

	locktest.Hold(t, out)
	if _, err := s.Lock(Stable); !errors.Is(err, lockfile.ErrLocked) {
		t.Errorf("a held output: %v", err)
	}
}
