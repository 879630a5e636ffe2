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

const upgradeLockEnv = "LOGTOOL_UPGRADE_LOCK_DIR"

// TestUpgradeLockHelper plays the running broker for TestUpgradeLocked: a
// second process (fcntl locks never conflict within one) that locks
// <dir>/.lock as the JVM does and holds it until its stdin closes.
func TestUpgradeLockHelper(t *testing.T) {
	dir := os.Getenv(upgradeLockEnv)
	if dir == "" {
		t.Skip("helper for TestUpgradeLocked; runs only as its child process")
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

// A broker holding the log directory's lock: exit 4 and nothing written,
// in place and with --output (whose copy would race the broker); a dry run
// warns and reports.
func TestUpgradeLocked(t *testing.T) {
	dir := upgradeSample(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestUpgradeLockHelper$")
	cmd.Env = append(os.Environ(), upgradeLockEnv+"="+dir)
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
	before := upgradeDigest(t, dir)
	out := filepath.Join(t.TempDir(), "out")
	for _, args := range [][]string{
		{"upgrade", dir},
		{"upgrade", filepath.Join(dir, "legacy.events-v0-0")},
		{"upgrade", "--output", out, dir},
	} {
		code, out, errOut := upgradeRun(t, args...)
		if code != ExitRefused || out != "" || !strings.Contains(errOut, "log directory is locked by a running broker") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 4", args[1:], code, out, errOut)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("--output wrote while the source was locked")
	}
	code, report, errOut := upgradeRun(t, "upgrade", "--dry-run", dir)
	if code != ExitOK || !strings.Contains(errOut, "holds this log directory's lock") || !strings.Contains(report, "would upgrade") {
		t.Errorf("dry run: exit %d, stderr %q", code, errOut)
	}
	if upgradeDigest(t, dir) != before {
		t.Error("the locked log directory changed")
	}
}
