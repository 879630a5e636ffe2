//go:build linux

package commands

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logtool/logtool/internal/testkit/locktest"
)

// TestOutputLocked: a run writing an output another logtool run is writing
// is refused (exit 4, the holder named) and touches nothing of it. For
// salvage the first run is caught half-way, its stage next to the output:
// a second run that did not lock would remove that stage as a killed run's
// and write the output itself.
func TestOutputLocked(t *testing.T) {
	src := outputLogDir(t)
	part := filepath.Join(src, "orders-0")

	rescued := t.TempDir()
	stage := filepath.Join(rescued, "orders-0.salvage123-delete")
	if err := os.Mkdir(stage, 0o755); err != nil {
		t.Fatal(err)
	}
	half := filepath.Join(stage, "00000000000000000000.log")
	if err := os.WriteFile(half, []byte("the first run's bytes"), 0o644); err != nil {
		t.Fatal(err)
	}
	upgraded, generated := t.TempDir(), t.TempDir()
	for _, c := range []struct {
		held string
		args []string
	}{
		{rescued, []string{"salvage", part, "--out", filepath.Join(rescued, "orders-0")}},
		{upgraded, []string{"upgrade", "--to-magic", "2", "--output", upgraded, src}},
		{generated, []string{"gen", "--out", generated, "--records", "10"}},
	} {
		locktest.HoldLogtool(t, c.held)
		code, _, errOut := runLogtool(t, c.args...)
		if code != ExitRefused || !strings.Contains(errOut, c.held+": log directory is locked by another logtool run (process ") {
			t.Errorf("%v: exit %d, stderr %q; want exit 4 naming the holder", c.args, code, errOut)
		}
		entries, err := os.ReadDir(c.held)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Name() != ".lock" && e.Name() != filepath.Base(stage) {
				t.Errorf("%v wrote %s", c.args, e.Name())
			}
		}
	}
	if b, err := os.ReadFile(half); err != nil || string(b) != "the first run's bytes" {
		t.Errorf("the first salvage's stage: %q, %v", b, err)
	}
}
