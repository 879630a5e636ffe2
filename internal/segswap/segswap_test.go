package segswap

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/layout"
)

// segmentBytes is a segment holding one batch per offset in offs.
func segmentBytes(t *testing.T, offs []int64, tag string) []byte {
	t.Helper()
	var b []byte
	for _, o := range offs {
		var err error
		b, err = logfmt.AppendBatch(b, logfmt.DefaultBatchOptions(o), []logfmt.Record{{Offset: o, Value: []byte(tag)}})
		if err != nil {
			t.Fatal(err)
		}
	}
	return b
}

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// snapshotDir maps file name to content.
func snapshotDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		m[e.Name()] = string(b)
	}
	return m
}

// setup writes old segments 0 (offsets 0-4, with a txn index), 5 (5-9) and 10
// (10-14, not replaced), and new cleaned segments 0 (offsets 0,2,4,7) and 8 (8,9).
func setup(t *testing.T) (dir string, old []layout.Segment, newBases []int64) {
	dir = t.TempDir()
	name := func(b int64, ext string) string { return filepath.Join(dir, layout.SegmentName(b, ext)) }
	write(t, name(0, ".log"), segmentBytes(t, []int64{0, 1, 2, 3, 4}, "old"))
	write(t, name(0, ".index"), nil)
	write(t, name(0, ".timeindex"), nil)
	write(t, name(0, ".txnindex"), []byte("old-txn"))
	write(t, name(5, ".log"), segmentBytes(t, []int64{5, 6, 7, 8, 9}, "old"))
	write(t, name(5, ".index"), nil)
	write(t, name(5, ".timeindex"), nil)
	write(t, name(10, ".log"), segmentBytes(t, []int64{10, 11, 12, 13, 14}, "keep"))
	write(t, CleanedPath(dir, 0, ".log"), segmentBytes(t, []int64{0, 2, 4, 7}, "new"))
	write(t, CleanedPath(dir, 0, ".index"), []byte("new-index-0"))
	write(t, CleanedPath(dir, 0, ".timeindex"), nil)
	write(t, CleanedPath(dir, 8, ".log"), segmentBytes(t, []int64{8, 9}, "new"))
	write(t, CleanedPath(dir, 8, ".index"), nil)
	write(t, CleanedPath(dir, 8, ".timeindex"), nil)
	part, err := layout.ReadPartition(dir)
	if err != nil {
		t.Fatal(err)
	}
	return dir, part.Segments[:2], []int64{0, 8}
}

func withoutLeftovers(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if !strings.HasSuffix(k, layout.CleanedSuffix) {
			out[k] = v
		}
	}
	return out
}

func TestReplace(t *testing.T) {
	dir, old, bases := setup(t)
	if err := Replace(dir, bases, old); err != nil {
		t.Fatal(err)
	}
	got := snapshotDir(t, dir)
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range got {
			if !yield(k) {
				return
			}
		}
	})
	want := []string{"00000000000000000000.index", "00000000000000000000.log", "00000000000000000000.timeindex",
		"00000000000000000008.index", "00000000000000000008.log", "00000000000000000008.timeindex", "00000000000000000010.log"}
	if fmt.Sprint(names) != fmt.Sprint(want) {
		t.Fatalf("files after Replace: %v", names)
	}
	if got["00000000000000000000.index"] != "new-index-0" {
		t.Fatal("new index not installed")
	}
	if actions, err := Recover(dir); err != nil || len(actions) != 0 {
		t.Fatalf("Recover after a clean Replace: %v %v", actions, err)
	}
}

// A crash at every file-system step of Replace, followed by Recover, leaves
// exactly the old or exactly the new directory.
func TestReplaceCrashAtEveryStep(t *testing.T) {
	ref, old, bases := setup(t)
	before := withoutLeftovers(snapshotDir(t, ref))
	if err := Replace(ref, bases, old); err != nil {
		t.Fatal(err)
	}
	after := snapshotDir(t, ref)
	sawOld, sawNew := false, false
	for n := int64(1); ; n++ {
		dir, old, bases := setup(t)
		f := &safefile.Faults{FailAt: n}
		restore := safefile.SetFaultHook(f.Hook)
		err := Replace(dir, bases, old)
		restore()
		if err == nil {
			if n == 1 {
				t.Fatal("no step failed")
			}
			break
		}
		if !errors.Is(err, safefile.ErrInjected) {
			t.Fatalf("step %d: %v", n, err)
		}
		if _, err := Recover(dir); err != nil {
			t.Fatalf("step %d: recover: %v", n, err)
		}
		got := snapshotDir(t, dir)
		switch {
		case fmt.Sprint(got) == fmt.Sprint(before):
			sawOld = true
		case fmt.Sprint(got) == fmt.Sprint(after):
			sawNew = true
		default:
			t.Fatalf("crash at step %d left neither old nor new files: %v", n, keys(got))
		}
	}
	if !sawOld || !sawNew {
		t.Fatalf("crash points covered old %v new %v", sawOld, sawNew)
	}
}

func keys(m map[string]string) []string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	slices.Sort(k)
	return k
}

// TestSwapThenSweep: Swap leaves the old files as ".deleted", which a
// Sweeper removes, ending where Replace ends, also when one is gone
// already; a failed removal comes out of Wait, and what it left is for
// Recover.
func TestSwapThenSweep(t *testing.T) {
	ref, old, bases := setup(t)
	if err := Replace(ref, bases, old); err != nil {
		t.Fatal(err)
	}
	for _, fail := range []bool{false, true} {
		dir, old, bases := setup(t)
		deleted, err := Swap(dir, bases, old)
		if err != nil {
			t.Fatal(err)
		}
		if len(deleted) != 7 {
			t.Fatalf("Swap left %d files to delete, want the 7 old ones: %v", len(deleted), deleted)
		}
		for _, p := range deleted {
			if _, err := os.Stat(p); err != nil {
				t.Fatal(err)
			}
		}
		var restore func()
		if fail {
			restore = safefile.SetFaultHook((&safefile.Faults{FailAt: 3}).Hook)
		}
		// Recover after a failed later swap may remove some first.
		if err := os.Remove(deleted[1]); err != nil {
			t.Fatal(err)
		}
		sw := NewSweeper()
		sw.Add(deleted[:2])
		sw.Add(deleted[2:])
		err = sw.Wait()
		if fail {
			restore()
			if !errors.Is(err, safefile.ErrInjected) {
				t.Fatalf("Wait after a failed removal: %v", err)
			}
			if _, err := Recover(dir); err != nil {
				t.Fatal(err)
			}
		} else if err != nil {
			t.Fatal(err)
		}
		if got, want := snapshotDir(t, dir), snapshotDir(t, ref); !maps.Equal(got, want) {
			t.Fatalf("fail %v: files %v, want those of Replace %v", fail, slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
		}
	}
}
