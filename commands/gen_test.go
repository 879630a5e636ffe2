package commands

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logtool/logtool/internal/lockfile/locktest"
)

// gen adds topics to an existing log directory, so it must refuse one a
// broker is running on, and leave no .lock of its own behind otherwise.
func TestGenRefusesLockedLogDir(t *testing.T) {
	dir := t.TempDir()
	locktest.Hold(t, dir)
	code, _, errOut := runLogtool(t, "gen", "--out", dir, "--records", "10")
	if code != ExitRefused || !strings.Contains(errOut, "locked by a running broker") {
		t.Fatalf("exit %d, stderr %q; want 4", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "meta.properties")); err == nil {
		t.Error("gen wrote into a locked log directory")
	}
}

func TestGenLeavesNoLock(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "logs")
	if code, _, errOut := runLogtool(t, "gen", "--out", dir, "--records", "10"); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, ".lock")); err == nil {
		t.Error("gen left a .lock behind")
	}
}
