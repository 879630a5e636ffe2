//go:build unix

package commands

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/logtool/logtool/internal/testkit/locktest"
)

func TestCompactLocked(t *testing.T) {
	dir := compactSample(t)
	locktest.Hold(t, dir)
	sum := compactDigest(t, dir)
	for _, path := range []string{dir, filepath.Join(dir, "orders-0")} {
		code, out, errOut := compactRun(t, "compact", "--max-lag", "1h", path)
		if code != ExitRefused || out != "" || !strings.Contains(errOut, "log directory is locked by a running broker") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 4", path, code, out, errOut)
		}
	}
	// A dry run only reads: it warns and plans.
	code, out, errOut := compactRun(t, "compact", "--dry-run", "--max-lag", "1h", dir)
	if code != ExitOK || !strings.Contains(errOut, "is locked by a running broker") || !strings.Contains(out, "PARTITION") {
		t.Errorf("dry run: exit %d, stderr %q", code, errOut)
	}
	if compactDigest(t, dir) != sum {
		t.Error("the locked log directory changed")
	}
}
