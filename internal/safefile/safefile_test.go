package safefile

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

func readOrNil(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func exists(t *testing.T, path string) bool {
	t.Helper()
	_, err := os.Lstat(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return err == nil
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "recovery-point-offset-checkpoint")
	for _, content := range []string{"0\n1\nt 0 5\n", "0\n0\n", ""} {
		if err := WriteFile(path, []byte(content), 0o640); err != nil {
			t.Fatal(err)
		}
		if got := readOrNil(t, path); string(got) != content {
			t.Errorf("content = %q, want %q", got, content)
		}
		if exists(t, TempName(path)) {
			t.Errorf("temporary file survived a successful write")
		}
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm()&^0o640 != 0 {
		t.Errorf("mode = %v, want at most 0640", fi.Mode().Perm())
	}
}

func TestCreateCommit(t *testing.T) {
	path := oldFile(t, "00000000000000000000.index")
	f, err := Create(path, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Abort()
	if want := TempName(path); f.Name() != want {
		t.Errorf("Name() = %q, want %q", f.Name(), want)
	}
	if _, err := f.Write([]byte("xxxx5678")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("1234"), 0); err != nil {
		t.Fatal(err)
	}
	if got := readOrNil(t, path); string(got) != "old" {
		t.Errorf("target changed before Commit: %q", got)
	}
	if !exists(t, f.Name()) {
		t.Errorf("temporary file missing before Commit")
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := readOrNil(t, path); string(got) != "12345678" {
		t.Errorf("content after Commit = %q", got)
	}
	if exists(t, f.Name()) {
		t.Errorf("temporary file survived Commit")
	}
	if err := f.Abort(); err != nil {
		t.Errorf("Abort after Commit = %v, want nil", err)
	}
	if got := readOrNil(t, path); string(got) != "12345678" {
		t.Errorf("Abort after Commit changed the target: %q", got)
	}
	if err := f.Commit(); !errors.Is(err, os.ErrClosed) {
		t.Errorf("second Commit = %v, want ErrClosed", err)
	}
	if _, err := f.Write([]byte("x")); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Write after Commit = %v, want ErrClosed", err)
	}
}

func TestAbort(t *testing.T) {
	path := oldFile(t, "leader-epoch-checkpoint")
	// A stale temporary file from an earlier crash is truncated, not appended to.
	if err := os.WriteFile(TempName(path), []byte("stale stale stale"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Create(path, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("new")); err != nil {
		t.Fatal(err)
	}
	if got := readOrNil(t, f.Name()); string(got) != "new" {
		t.Errorf("temporary file = %q, want %q", got, "new")
	}
	if err := f.Abort(); err != nil {
		t.Fatal(err)
	}
	if got := readOrNil(t, path); string(got) != "old" {
		t.Errorf("target after Abort = %q, want old", got)
	}
	if exists(t, f.Name()) {
		t.Errorf("temporary file survived Abort")
	}
	if err := f.Abort(); err != nil {
		t.Errorf("second Abort = %v", err)
	}
	if err := f.Commit(); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Commit after Abort = %v, want ErrClosed", err)
	}
}

func TestCreateAt(t *testing.T) {
	dir := t.TempDir()
	swap := filepath.Join(dir, "00000000000000000007.log.swap")
	cleaned := filepath.Join(dir, "00000000000000000007.log.cleaned")
	f, err := CreateAt(swap, cleaned, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if f.Name() != cleaned {
		t.Errorf("Name() = %q, want %q", f.Name(), cleaned)
	}
	if _, err := f.Write([]byte("batches")); err != nil {
		t.Fatal(err)
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := readOrNil(t, swap); string(got) != "batches" {
		t.Errorf("swap = %q", got)
	}
	if exists(t, cleaned) {
		t.Errorf(".cleaned survived Commit")
	}

	other := t.TempDir()
	for _, tmp := range []string{filepath.Join(other, "x.tmp"), swap, filepath.Join(dir, ".", filepath.Base(swap))} {
		if _, err := CreateAt(swap, tmp, 0o644); err == nil {
			t.Errorf("CreateAt(%q, %q) succeeded", swap, tmp)
		}
	}
}

func TestRenameRemove(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	src := filepath.Join(a, "cleaner-offset-checkpoint")
	if err := os.WriteFile(src, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	var synced []string
	defer SetFaultHook(func(step Step, path string) error {
		if step == StepSyncDir {
			synced = append(synced, path)
		}
		return nil
	})()

	dst := filepath.Join(a, "cleaner-offset-checkpoint.migrated")
	if err := Rename(src, dst); err != nil {
		t.Fatal(err)
	}
	if exists(t, src) || !exists(t, dst) {
		t.Errorf("rename within a directory did not move the file")
	}
	moved := filepath.Join(b, "moved")
	if err := Rename(dst, moved); err != nil {
		t.Fatal(err)
	}
	if exists(t, dst) || !exists(t, moved) {
		t.Errorf("rename across directories did not move the file")
	}
	if err := Remove(moved); err != nil {
		t.Fatal(err)
	}
	if exists(t, moved) {
		t.Errorf("Remove left the file")
	}
	if err := Remove(moved); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Remove of a missing file = %v, want ErrNotExist", err)
	}
	if want := []string{a, b, a, b}; !slices.Equal(synced, want) {
		t.Errorf("directories synced = %q, want %q", synced, want)
	}
}

// TestSteps pins the exact sequence of steps, since crash tests elsewhere
// count on it.
func TestSteps(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "partition.metadata")
	type call struct {
		step Step
		path string
	}
	var got []call
	restore := SetFaultHook(func(step Step, path string) error {
		got = append(got, call{step, path})
		return nil
	})
	defer restore()
	if err := WriteFile(path, []byte("version: 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := []call{
		{StepCreate, TempName(path)},
		{StepWrite, TempName(path)},
		{StepSync, TempName(path)},
		{StepRename, path},
		{StepSyncDir, dir},
	}
	if !slices.Equal(got, want) {
		t.Errorf("steps = %v\nwant    %v", got, want)
	}
}

// TestFaultAtEveryStep fails each step of a replacement in turn, once as an
// I/O error the program cleans up after and once as a crash (the step and
// everything after it fail, cleanup included), and checks that the target
// holds exactly the old or the new bytes.
//
// After a crash the temporary file survives when the crash falls after its
// creation and before the rename (write, sync, rename); see the package doc
// for why that is harmless. After a mere error it never survives.
func TestFaultAtEveryStep(t *testing.T) {
	oldData, newData := []byte("0\n1\nold 0 1\n"), []byte("0\n1\nnew 0 2\n")
	replace := func(path string) error {
		f, err := Create(path, 0o644)
		if err != nil {
			return err
		}
		defer f.Abort()
		if _, err := f.Write(newData[:4]); err != nil {
			return err
		}
		if _, err := f.Write(newData[4:]); err != nil {
			return err
		}
		return f.Commit()
	}

	var count Faults
	restore := SetFaultHook(count.Hook)
	if err := replace(filepath.Join(t.TempDir(), "f")); err != nil {
		t.Fatal(err)
	}
	restore()
	steps := []Step{StepCreate, StepWrite, StepWrite, StepSync, StepRename, StepSyncDir}
	if count.Steps() != int64(len(steps)) {
		t.Fatalf("replacement took %d steps, want %d", count.Steps(), len(steps))
	}

	for _, hadOld := range []bool{true, false} {
		for _, once := range []bool{true, false} {
			for i, step := range steps {
				dir := t.TempDir()
				path := filepath.Join(dir, "f")
				if hadOld {
					if err := os.WriteFile(path, oldData, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				faults := &Faults{FailAt: int64(i + 1), Once: once}
				restore := SetFaultHook(faults.Hook)
				err := replace(path)
				restore()
				if !errors.Is(err, ErrInjected) {
					t.Fatalf("old=%v once=%v step %d (%s): err = %v, want ErrInjected", hadOld, once, i+1, step, err)
				}

				want := newData
				if step != StepSyncDir {
					want = nil
					if hadOld {
						want = oldData
					}
				}
				if got := readOrNil(t, path); !bytes.Equal(got, want) {
					t.Errorf("old=%v once=%v step %d (%s): target = %q, want %q", hadOld, once, i+1, step, got, want)
				}
				tmpLeft := !once && step != StepCreate && step != StepSyncDir
				if got := exists(t, TempName(path)); got != tmpLeft {
					t.Errorf("old=%v once=%v step %d (%s): temporary file left = %v, want %v", hadOld, once, i+1, step, got, tmpLeft)
				}
				// A later run recovers from whatever the failure left behind.
				if err := replace(path); err != nil {
					t.Fatalf("rerun after step %d (%s): %v", i+1, step, err)
				}
				if got := readOrNil(t, path); !bytes.Equal(got, newData) {
					t.Errorf("rerun after step %d (%s): target = %q", i+1, step, got)
				}
				if exists(t, TempName(path)) {
					t.Errorf("rerun after step %d (%s): temporary file left", i+1, step)
				}
			}
		}
	}
}

func TestFaultRenameRemove(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if err := os.WriteFile(src, []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	restore := SetFaultHook((&Faults{FailAt: 1}).Hook)
	errRename := Rename(src, dst)
	errRemove := Remove(src)
	restore()
	if !errors.Is(errRename, ErrInjected) || !errors.Is(errRemove, ErrInjected) {
		t.Fatalf("Rename = %v, Remove = %v, want ErrInjected", errRename, errRemove)
	}
	if !exists(t, src) || exists(t, dst) {
		t.Errorf("a failed Rename or Remove changed the directory")
	}
	var pe *fs.PathError
	if !errors.As(errRename, &pe) || pe.Op != string(StepRename) || pe.Path != dst {
		t.Errorf("Rename error = %#v, want a PathError naming the step and destination", errRename)
	}

	// The rename is done even when the directory fsync after it fails.
	restore = SetFaultHook((&Faults{FailAt: 2}).Hook)
	err := Rename(src, dst)
	restore()
	if !errors.Is(err, ErrInjected) {
		t.Fatalf("Rename = %v, want ErrInjected", err)
	}
	if exists(t, src) || !exists(t, dst) {
		t.Errorf("rename not done before the directory fsync")
	}
}

func TestSetFaultHookRestore(t *testing.T) {
	dir := t.TempDir()
	errA, errB := errors.New("a"), errors.New("b")
	restoreA := SetFaultHook(func(Step, string) error { return errA })
	restoreB := SetFaultHook(func(Step, string) error { return errB })
	if err := SyncDir(dir); !errors.Is(err, errB) {
		t.Errorf("with hook b: %v", err)
	}
	restoreB()
	if err := SyncDir(dir); !errors.Is(err, errA) {
		t.Errorf("after restoring a: %v", err)
	}
	restoreA()
	if err := SyncDir(dir); err != nil {
		t.Errorf("after restoring none: %v", err)
	}
}

// TestSetFaultHookConcurrent is for the race detector: hooks are swapped while
// other goroutines write.
func TestSetFaultHookConcurrent(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for range 50 {
				var f Faults
				SetFaultHook(f.Hook)()
			}
		}()
		go func() {
			defer wg.Done()
			path := filepath.Join(dir, string(rune('a'+w)))
			for range 20 {
				if err := WriteFile(path, []byte("x"), 0o644); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestCreateLeavesOthersTemps: only logtool's own temporary name is removed
// as a leftover; "<name>.tmp" may be a user's file or a broker's checkpoint
// cut by a crash.
func TestCreateLeavesOthersTemps(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(path+TempSuffix, []byte("notes"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, []byte("export"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := readOrNil(t, path+TempSuffix); string(got) != "notes" {
		t.Errorf("%s after a write of %s = %q, want it untouched", path+TempSuffix, path, got)
	}
}

// TestCreateRefusesDirectory: a directory can never be replaced by the
// rename, so nothing is written for it.
func TestCreateRefusesDirectory(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "orders-0")
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	if f, err := Create(path, 0o644); err == nil {
		f.Abort()
		t.Fatal("Create of a directory succeeded")
	}
	if exists(t, TempName(path)) {
		t.Error("temporary file written for a directory")
	}
}

// TestMkdirAllDurable: every directory made is durable: its parent, up to
// the first that existed, is fsynced after it is made; a directory that
// existed is not.
func TestMkdirAllDurable(t *testing.T) {
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	var synced []string
	restore := SetFaultHook(func(step Step, path string) error {
		if step == StepSyncDir {
			synced = append(synced, path)
		}
		return nil
	})
	err := MkdirAllDurable(filepath.Join(root, "a", "b", "c", "d"), 0o755)
	restore()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(root, "a"), filepath.Join(root, "a", "b"), filepath.Join(root, "a", "b", "c")}
	if !slices.Equal(synced, want) {
		t.Errorf("synced %q, want %q", synced, want)
	}
	if fi, err := os.Stat(filepath.Join(root, "a", "b", "c", "d")); err != nil || !fi.IsDir() {
		t.Errorf("not made: %v", err)
	}

	synced = nil
	restore = SetFaultHook(func(step Step, path string) error {
		synced = append(synced, path)
		return nil
	})
	err = MkdirAllDurable(filepath.Join(root, "a", "b"), 0o755)
	restore()
	if err != nil || synced != nil {
		t.Errorf("existing: %v, synced %q", err, synced)
	}
	file := filepath.Join(root, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{file, filepath.Join(file, "x")} {
		if err := MkdirAllDurable(p, 0o755); err == nil {
			t.Errorf("%s: made under a file", p)
		}
	}
}

// TestSyncBehind writes a file with fsyncs started behind the writes, once
// with them succeeding and once with them failing: a failed one fails
// Commit before its own fsync, which is never tried after a failure, and
// leaves the target as it was.
func TestSyncBehind(t *testing.T) {
	for _, failing := range []bool{false, true} {
		path := oldFile(t, "digest")
		var syncs int
		var mu sync.Mutex
		defer func(s func(*os.File) error) { syncFile = s }(syncFile)
		syncFile = func(f *os.File) error {
			mu.Lock()
			syncs++
			mu.Unlock()
			if failing {
				return errors.New("injected")
			}
			return f.Sync()
		}
		var steps []Step
		defer SetFaultHook(func(step Step, _ string) error {
			steps = append(steps, step)
			return nil
		})()
		f, err := Create(path, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		var want []byte
		for i := range 50 {
			b := bytes.Repeat([]byte{byte(i)}, 1000)
			if _, err := f.Write(b); err != nil {
				t.Fatal(err)
			}
			want = append(want, b...)
			f.SyncBehind()
		}
		err = f.Commit()
		if syncs == 0 {
			t.Fatalf("failing %v: no fsync behind", failing)
		}
		if failing {
			// The fault hook saw the fsync behind, and no other.
			if err == nil || countSteps(steps, StepSync) != 1 || syncs != 1 {
				t.Fatalf("failing: Commit = %v after %d fsyncs behind, steps %v", err, syncs, steps)
			}
			if err := f.Abort(); err != nil {
				t.Fatal(err)
			}
			if got := readOrNil(t, path); string(got) != "old" || exists(t, TempName(path)) {
				t.Fatalf("failing: target %q, temporary file left %v", got, exists(t, TempName(path)))
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if n := countSteps(steps, StepSync); n != syncs+1 {
			t.Fatalf("the fault hook saw %d fsyncs, want %d behind and Commit's", n, syncs)
		}
		if got := readOrNil(t, path); !bytes.Equal(got, want) {
			t.Fatalf("target holds %d bytes, want %d", len(got), len(want))
		}
	}
}

func countSteps(steps []Step, s Step) (n int) {
	for _, st := range steps {
		if st == s {
			n++
		}
	}
	return n
}

// TestFailedSyncNotRetried fails an fsync, once the one SyncBehind starts
// (through the fault hook, as crash tests in other packages fail it) and
// once Commit's own: every later Commit fails too and tries no fsync, and
// the target keeps its old content.
func TestFailedSyncNotRetried(t *testing.T) {
	for _, behind := range []bool{true, false} {
		path := oldFile(t, "target")
		var syncs int
		restore := SetFaultHook(func(step Step, _ string) error {
			if step != StepSync {
				return nil
			}
			if syncs++; syncs == 1 {
				return ErrInjected
			}
			return nil
		})
		f, err := Create(path, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write([]byte("new")); err != nil {
			t.Fatal(err)
		}
		if behind {
			f.SyncBehind()
			f.SyncBehind() // not after a failure
		}
		for i := range 2 {
			if err := f.Commit(); !errors.Is(err, ErrInjected) {
				t.Fatalf("behind %v: Commit %d = %v, want the failed fsync's error", behind, i+1, err)
			}
		}
		restore()
		if syncs != 1 {
			t.Fatalf("behind %v: %d fsyncs tried, want the one that failed", behind, syncs)
		}
		if err := f.Abort(); err != nil {
			t.Fatal(err)
		}
		if got := readOrNil(t, path); string(got) != "old" || exists(t, TempName(path)) {
			t.Fatalf("behind %v: target %q, temporary file left %v", behind, got, exists(t, TempName(path)))
		}
	}
}

// oldFile is a file holding "old", named name, in a directory of its own.
func oldFile(t *testing.T, name string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
