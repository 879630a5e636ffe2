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

const migrateLockEnv = "LOGTOOL_MIGRATE_LOCK_DIR"

// TestMigrateLockHelper stands in for a running broker: started by
// TestMigrateLocked as a second process (fcntl locks never conflict within
// one), it takes the lock a JVM takes on <dir>/.lock, prints "locked" and
// holds it until its stdin closes.
func TestMigrateLockHelper(t *testing.T) {
	dir := os.Getenv(migrateLockEnv)
	if dir == "" {
		t.Skip("helper for TestMigrateLocked; runs only as its child process")
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

func TestMigrateLocked(t *testing.T) {
	dir := migrateLogDir(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestMigrateLockHelper$")
	cmd.Env = append(os.Environ(), migrateLockEnv+"="+dir)
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

	root := filepath.Join(dir, "cleaner-offset-checkpoint")
	before := readFileOr(t, root, "(missing)")
	for _, args := range [][]string{
		{"migrate-checkpoints", dir},
		{"migrate-checkpoints", "--dry-run", dir},
		// "--format json" before the command would hide the command's name
		// from the error line (commandPrefix takes "json" for it).
		{"--format=json", "migrate-checkpoints", "--reverse", dir},
	} {
		code, out, errOut := runLogtool(t, args...)
		if code != ExitRefused || out != "" || !strings.HasPrefix(errOut, "logtool: migrate-checkpoints: "+dir+": log directory is locked by a running broker") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 4 naming the lock", args, code, out, errOut)
		}
	}
	if after := readFileOr(t, root, "(missing)"); after != before {
		t.Errorf("root file changed under a broker's lock")
	}
	if got := readFileOr(t, filepath.Join(dir, "orders-0", "cleaner-checkpoint"), "(missing)"); got != "(missing)" {
		t.Errorf("wrote orders-0/cleaner-checkpoint under a broker's lock")
	}
}
