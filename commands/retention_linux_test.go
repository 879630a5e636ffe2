package commands

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// An open file description lock conflicts with the POSIX record lock a
// broker takes even inside one process, so it stands in for a running
// broker without a helper process.
func TestRetentionLocked(t *testing.T) {
	dir := retentionLogDir(t)
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart}); err != nil {
		t.Fatal(err)
	}
	before := treeHash(t, dir)
	code, out, errOut := runRetentionCmd(t, append(retentionArgs, dir)...)
	if code != ExitRefused || out != "" {
		t.Errorf("exit %d, stdout %q, stderr %q; want %d", code, out, errOut, ExitRefused)
	}
	if treeHash(t, dir) != before {
		t.Error("a locked log directory was changed")
	}
	// A dry run reads it, with a warning.
	code, _, errOut = runRetentionCmd(t, append(retentionArgs, "--dry-run", dir)...)
	if code != ExitOK || !strings.Contains(errOut, "is locked by a running broker") {
		t.Errorf("dry run: exit %d, stderr %q", code, errOut)
	}
}
