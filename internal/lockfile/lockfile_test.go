//go:build unix

package lockfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/logtool/logtool/internal/safefile"
	"golang.org/x/sys/unix"
)

// The tests run a second process (this test binary again, entering
// TestHelperProcess) because POSIX locks never conflict within one process.
const (
	envMode = "LOCKFILE_TEST_HELPER"
	envDir  = "LOCKFILE_TEST_DIR"
)

// lockers are the ways the helper process can hold a lock; fcntl is how the
// JVM's FileChannel.tryLock does it.
var lockers = map[string]func(f *os.File) error{
	"fcntl": func(f *os.File) error {
		return unix.FcntlFlock(f.Fd(), unix.F_SETLK, &unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart})
	},
}

// TestHelperProcess is the second process. Modes:
//
//	a key of lockers: take that lock on <dir>/.lock, print "locked", hold it until stdin closes
//	try: attempt the fcntl lock once and print "got" or "busy"
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv(envMode)
	if mode == "" {
		t.Skip("helper for the other tests; runs only as their child process")
	}
	f, err := os.OpenFile(filepath.Join(os.Getenv(envDir), FileName), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	if mode == "try" {
		if lockers["fcntl"](f) == nil {
			fmt.Println("got")
		} else {
			fmt.Println("busy")
		}
		os.Exit(0)
	}
	if err := lockers[mode](f); err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	fmt.Println("locked")
	io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

func helper(t *testing.T, mode, dir string) (*exec.Cmd, io.WriteCloser, *bufio.Reader) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), envMode+"="+mode, envDir+"="+dir)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, stdin, bufio.NewReader(stdout)
}

// holdLock starts a process holding the lock of the given mode on dir and
// returns the function that ends it, and its process id.
func holdLock(t *testing.T, mode, dir string) (stop func(), pid int) {
	t.Helper()
	cmd, stdin, out := helper(t, mode, dir)
	line, err := out.ReadString('\n')
	if line != "locked\n" {
		stdin.Close()
		cmd.Wait()
		t.Fatalf("helper %s: %q, %v", mode, line, err)
	}
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("helper %s: %v", mode, err)
		}
	}
	t.Cleanup(stop)
	return stop, cmd.Process.Pid
}

// tryLock reports whether another process could take the fcntl lock now.
func tryLock(t *testing.T, dir string) bool {
	t.Helper()
	cmd, stdin, out := helper(t, "try", dir)
	stdin.Close()
	line, _ := out.ReadString('\n')
	if err := cmd.Wait(); err != nil {
		t.Fatalf("helper try: %v", err)
	}
	switch line {
	case "got\n":
		return true
	case "busy\n":
		return false
	}
	t.Fatalf("helper try: %q", line)
	return false
}

func lockExists(t *testing.T, dir string) bool {
	t.Helper()
	_, err := os.Stat(filepath.Join(dir, FileName))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return err == nil
}

// TestAcquireCreatesAndKeeps: the lock file is created and, unlike the lock,
// outlives the run: a process that opened it just before an unlink would
// lock a file nobody else can find.
func TestAcquireCreatesAndKeeps(t *testing.T) {
	dir := t.TempDir()
	l, err := Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !lockExists(t, dir) {
		t.Fatalf("Acquire did not create %s", FileName)
	}
	if tryLock(t, dir) {
		t.Fatalf("another process took the lock Acquire holds")
	}
	if h, err := Held(dir); err != nil || h != nil {
		t.Errorf("Held on our own lock = %v, %v; want nil", h, err)
	}
	// Held opened no descriptor of its own that could drop our lock on close.
	if tryLock(t, dir) {
		t.Fatalf("the lock was lost after Held")
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if !lockExists(t, dir) {
		t.Errorf("Release removed the %s it created", FileName)
	}
	if err := l.Release(); err != nil {
		t.Errorf("second Release = %v", err)
	}
	if !tryLock(t, dir) {
		t.Errorf("lock still held after Release")
	}
}

// TestAcquireReplacedFile: when .lock is replaced between Acquire's open
// and its lock (a run or a broker that deleted its own), Acquire holds the
// file at the path in the end, not the orphan.
func TestAcquireReplacedFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	replaced := 0
	afterLock = func(p string) {
		if replaced < 2 {
			replaced++
			os.Remove(p)
			if err := os.WriteFile(p, nil, 0o644); err != nil {
				t.Error(err)
			}
		}
	}
	defer func() { afterLock = nil }()
	l, err := Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if replaced != 2 {
		t.Fatalf("the hook ran %d times", replaced)
	}
	if tryLock(t, dir) {
		t.Errorf("another process could lock the %s at the path: Acquire kept the lock of a replaced file", path)
	}

	// A file replaced at every attempt: Acquire gives up instead of holding
	// a lock that protects nothing.
	l.Release()
	afterLock = func(p string) {
		os.Remove(p)
		os.WriteFile(p, nil, 0o644)
	}
	if l2, err := Acquire(dir); err == nil {
		l2.Release()
		t.Errorf("Acquire succeeded although %s was replaced at every attempt", FileName)
	}
}

func TestStaleLockFile(t *testing.T) {
	dir := t.TempDir()
	// A broker that crashed leaves an unlocked .lock behind.
	if err := os.WriteFile(filepath.Join(dir, FileName), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if h, err := Held(dir); err != nil || h != nil {
		t.Errorf("Held on a stale %s = %v, %v; want nil", FileName, h, err)
	}
	l, err := Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if !lockExists(t, dir) {
		t.Errorf("Release deleted a %s it did not create", FileName)
	}
}

func TestLockedByOtherProcess(t *testing.T) {
	dir := t.TempDir()
	stop, pid := holdLock(t, "fcntl", dir)

	_, err := Acquire(dir)
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("Acquire = %v, want ErrLocked", err)
	}
	if msg := err.Error(); !strings.Contains(msg, dir) || !strings.Contains(msg, strconv.Itoa(pid)) || !strings.Contains(msg, "running broker") {
		t.Errorf("error %q does not name the directory, a broker and process %d", msg, pid)
	}
	if !lockExists(t, dir) {
		t.Errorf("a failed Acquire removed the holder's %s", FileName)
	}
	if h, err := Held(dir); err != nil || h == nil || h.PID != pid || h.Logtool {
		t.Errorf("Held = %v, %v; want a broker, process %d", h, err, pid)
	}

	stop()
	if h, err := Held(dir); err != nil || h != nil {
		t.Errorf("Held after the holder exited = %v, %v; want nil", h, err)
	}
	l, err := Acquire(dir)
	if err != nil {
		t.Fatalf("Acquire after the holder exited: %v", err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
}

func TestAcquireTwiceInProcess(t *testing.T) {
	dir := t.TempDir()
	l, err := Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dir, dir + "/.", link} {
		if l2, err := Acquire(d); err == nil {
			l2.Release()
			t.Errorf("second Acquire(%s) in the same process succeeded", d)
		} else if errors.Is(err, ErrLocked) {
			t.Errorf("second Acquire(%s) = %v; this process is not a broker", d, err)
		}
	}
	if tryLock(t, dir) {
		t.Errorf("the refused second Acquire dropped the first lock")
	}
}

func TestMissingDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "gone")
	if h, err := Held(dir); err != nil || h != nil {
		t.Errorf("Held on a missing directory = %v, %v; want nil, nil", h, err)
	}
	if _, err := Acquire(dir); err == nil || errors.Is(err, ErrLocked) {
		t.Errorf("Acquire on a missing directory = %v, want an I/O error", err)
	}
}

// TestNonRegularLockFile: a FIFO named .lock is tested and locked without
// blocking (a read-only open of it would wait for a writer); a directory
// under the name is refused, naming the path.
func TestNonRegularLockFile(t *testing.T) {
	fifoDir := t.TempDir()
	if err := unix.Mkfifo(filepath.Join(fifoDir, FileName), 0o644); err != nil {
		t.Fatal(err)
	}
	sub := t.TempDir()
	if err := os.Mkdir(filepath.Join(sub, FileName), 0o755); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if h, err := Held(fifoDir); h != nil || err != nil {
			t.Errorf("Held with a FIFO .lock = %v, %v; want nil, nil", h, err)
		}
		l, err := Acquire(fifoDir)
		if err != nil {
			t.Errorf("Acquire with a FIFO .lock: %v", err)
		} else {
			l.Release()
		}
		for _, f := range []func(string) error{
			func(d string) error { _, err := Held(d); return err },
			func(d string) error { _, err := Acquire(d); return err },
		} {
			if err := f(sub); !errors.Is(err, safefile.ErrNotRegular) || !strings.Contains(err.Error(), filepath.Join(sub, FileName)) {
				t.Errorf("a directory named .lock: %v, want ErrNotRegular naming it", err)
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("blocked on a FIFO named .lock")
	}
}
