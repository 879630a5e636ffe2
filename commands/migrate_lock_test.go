//go:build unix

package commands

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/logtool/logtool/internal/testkit/locktest"
)

func TestMigrateLocked(t *testing.T) {
	dir := migrateLogDir(t)
	locktest.Hold(t, dir)

	root := filepath.Join(dir, "cleaner-offset-checkpoint")
	before := readFileOr(t, root, "(missing)")
	for _, args := range [][]string{
		{"migrate-checkpoints", dir},
		{"migrate-checkpoints", "--dry-run", dir},
		{"--format", "json", "migrate-checkpoints", "--reverse", dir},
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
