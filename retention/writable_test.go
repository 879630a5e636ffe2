package retention

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logtool/logtool/internal/testkit/testutil"
)

// TestUnwritableDirChangesNothing: when one partition dir cannot be
// written, the run fails before its first change: no root checkpoint
// moved, no log rolled, no segment deleted anywhere. Permission bits do not
// stop root, so the check access(2) makes is replaced by one that refuses
// old-0, the partition that would roll.
func TestUnwritableDirChangesNothing(t *testing.T) {
	logDir, o := crashFixture(t)
	before := fileState(t, logDir, true)
	old := writableCheck
	t.Cleanup(func() { writableCheck = old })
	writableCheck = func(dir string) error {
		if filepath.Base(dir) == "old-0" {
			return fs.ErrPermission
		}
		return nil
	}
	res, err := Run(logDir, jobs(testutil.PartitionDirs(t, logDir)), o)
	if !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), "old-0: nothing changed") || res != nil {
		t.Errorf("err %v, results %v", err, res)
	}
	if d := diffState(before, fileState(t, logDir, true)); d != "" {
		t.Fatalf("a run that failed changed the tree:\n%s", d)
	}
}

// TestDirWritable: the default check passes a writable directory and
// names one that does not exist.
func TestDirWritable(t *testing.T) {
	dir := t.TempDir()
	if err := dirWritable(dir); err != nil {
		t.Error(err)
	}
	missing := filepath.Join(dir, "missing")
	if err := dirWritable(missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing dir: %v", err)
	}
}
