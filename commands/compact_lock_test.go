//go:build unix

package commands

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

const compactLockEnv = "LOGTOOL_COMPACT_LOCK_DIR"

// TestCompactLockHelper plays the running broker for TestCompactLocked: a
// second process (fcntl locks never conflict within one) that locks
// <dir>/.lock as the JVM does and holds it until its stdin closes.
func TestCompactLockHelper(t *testing.T) {
	dir := os.Getenv(compactLockEnv)
	if dir == "" {
		t.Skip("helper for TestCompactLocked; runs only as its child process")
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

func TestCompactLocked(t *testing.T) {
	dir := compactSample(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestCompactLockHelper$")
	cmd.Env = append(os.Environ(), compactLockEnv+"="+dir)
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
	defer func() {
		stdin.Close()
		if err := cmd.Wait(); err != nil {
			t.Errorf("lock helper: %v", err)
		}
	}()
	if line, err := bufio.NewReader(stdout).ReadString('\n'); line != "locked\n" {
		t.Fatalf("lock helper: %q, %v", line, err)
	}
	sum := compactDigest(t, dir)
	for _, path := range []string{dir, filepath.Join(dir, "orders-0")} {
		code, out, errOut := compactRun(t, "compact", "--max-lag", "1h", path)
		if code != ExitRefused || out != "" || !strings.Contains(errOut, "log directory is locked by a running broker") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 4", path, code, out, errOut)
		}
	}
	// A dry run only reads: it warns and plans.
	code, out, errOut := compactRun(t, "compact", "--dry-run", "--max-lag", "1h", dir)
	if code != ExitOK || !strings.Contains(errOut, "holds the lock") || !strings.Contains(out, "PARTITION") {
		t.Errorf("dry run: exit %d, stderr %q", code, errOut)
	}
	if compactDigest(t, dir) != sum {
		t.Error("the locked log directory changed")
	}
}
