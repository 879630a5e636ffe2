//go:build unix

package migrate

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/logtool/logtool/internal/lockfile"
)

const ckLockEnv = "MIGRATE_CHECKPOINTS_LOCK_DIR"

// TestCheckpointsLockHelper is the broker stand-in of TestCheckpointsLocked:
// run as a child process, it takes the fcntl lock a JVM takes on <dir>/.lock,
// says "locked" and holds the lock until its stdin closes. POSIX locks never
// conflict within one process, hence the second process.
func TestCheckpointsLockHelper(t *testing.T) {
	dir := os.Getenv(ckLockEnv)
	if dir == "" {
		t.Skip("helper for TestCheckpointsLocked; runs only as its child process")
	}
	f, err := os.OpenFile(filepath.Join(dir, lockfile.FileName), os.O_RDWR|os.O_CREATE, 0o644)
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

// holdBrokerLock starts a process holding dir's lock until the test ends.
func holdBrokerLock(t *testing.T, dir string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCheckpointsLockHelper$")
	cmd.Env = append(os.Environ(), ckLockEnv+"="+dir)
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

func TestCheckpointsLocked(t *testing.T) {
	parent := t.TempDir()
	ckWrite(t, parent, ckTree{
		"free/" + ckRoot: "0\n1\nt 0 5\n", "free/t-0/": "",
		"busy/" + ckRoot: "0\n1\nt 0 5\n", "busy/t-0/": "",
	})
	free, busy := filepath.Join(parent, "free"), filepath.Join(parent, "busy")
	holdBrokerLock(t, busy)
	before := ckSnapshot(t, parent)
	for _, opts := range []CheckpointOptions{
		{LogDirs: []string{free, busy}},
		{LogDirs: []string{busy}, Reverse: true},
		{LogDirs: []string{free, busy}, DryRun: true},
	} {
		_, err := MigrateCheckpoints(opts)
		if !errors.Is(err, lockfile.ErrLocked) {
			t.Errorf("%+v: error %v, want ErrLocked", opts, err)
		}
		// The free log directory was locked and released again, leaving
		// no .lock behind.
		ckCheck(t, parent, before)
	}
}
