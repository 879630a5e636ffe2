//go:build unix

package commands

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logtool/logtool/internal/testkit/locktest"
)

func TestUpgradeLocked(t *testing.T) {
	dir := upgradeSample(t)
	locktest.Hold(t, dir)
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
	if code != ExitOK || !strings.Contains(errOut, "locked by a running broker (process") || !strings.Contains(report, "would upgrade") {
		t.Errorf("dry run: exit %d, stderr %q", code, errOut)
	}
	if upgradeDigest(t, dir) != before {
		t.Error("the locked log directory changed")
	}
}
