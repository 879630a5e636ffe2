package commands

import (
	"bytes"
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

// TestGenRefusesExistingPartition: generating a topic that is already in the
// log directory would write a second log over the first; gen refuses with
// exit 4 before writing, and names the directory.
func TestGenRefusesExistingPartition(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "logs")
	if code, _, errOut := runLogtool(t, "gen", "--out", dir, "--topic", "orders", "--records", "10"); code != ExitOK {
		t.Fatalf("first gen: exit %d %s", code, errOut)
	}
	before, err := os.ReadFile(filepath.Join(dir, "orders-0", "00000000000000000000.log"))
	if err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runLogtool(t, "gen", "--out", dir, "--topic", "new", "--topic", "orders", "--records", "500")
	if code != ExitRefused || !strings.Contains(errOut, filepath.Join(dir, "orders-0")+": partition directory already exists") {
		t.Errorf("second gen: exit %d %q, want 4 naming orders-0", code, errOut)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "orders-0", "00000000000000000000.log")); !bytes.Equal(after, before) {
		t.Error("orders-0 changed")
	}
	if _, err := os.Stat(filepath.Join(dir, "new-0")); err == nil {
		t.Error("new-0 was written before the refusal")
	}
}
