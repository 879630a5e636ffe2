//go:build unix

package campaign

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

const lockEnv = "CAMPAIGN_LOCK_DIR"

// TestLockHelper plays the broker for TestBrokerLock: a second process
// (fcntl locks never conflict within one) that locks <dir>/.lock as the
// JVM's FileChannel.tryLock does and holds it until its stdin closes.
func TestLockHelper(t *testing.T) {
	dir := os.Getenv(lockEnv)
	if dir == "" {
		t.Skip("helper for TestBrokerLock; runs only as its child process")
	}
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err == nil {
		err = unix.FcntlFlock(f.Fd(), unix.F_SETLK, &unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart})
	}
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	fmt.Println("locked")
	io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// holdLock starts the helper on dir and waits until it holds the lock.
func holdLock(t *testing.T, dir string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockHelper$")
	cmd.Env = append(os.Environ(), lockEnv+"="+dir)
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
	t.Cleanup(func() {
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("lock helper: %v", err)
		}
	})
	if line, err := bufio.NewReader(stdout).ReadString('\n'); line != "locked\n" {
		t.Fatalf("lock helper: %q, %v", line, err)
	}
}

// TestBrokerLock: while another process holds the log directory's lock,
// every writing command exits 4 and changes nothing, given the log directory
// or a partition directory, even with work to do; read-only commands warn
// and go on.
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
	holdLock(t, dir)
	before := digest(t, dir)

	writers := [][]string{
		{"reindex"},
		{"upgrade", "--to-magic", "2"},
		{"compact", "--now", compactNow, "--max-lag", "1h"},
		{"retention", "--now", "2030-01-01T00:00:00Z", "--retention-ms", "1h"},
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
