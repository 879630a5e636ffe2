//go:build unix

package migrate

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/logtool/logtool/internal/lockfile"
	"github.com/logtool/logtool/internal/lockfile/locktest"
)

func TestCheckpointsLocked(t *testing.T) {
	parent := t.TempDir()
	ckWrite(t, parent, ckTree{
		"free/" + ckRoot: "0\n1\nt 0 5\n", "free/t-0/": "",
		"busy/" + ckRoot: "0\n1\nt 0 5\n", "busy/t-0/": "",
	})
	free, busy := filepath.Join(parent, "free"), filepath.Join(parent, "busy")
	locktest.Hold(t, busy)
	before := ckSnapshot(t, parent)
	for _, opts := range []CheckpointOptions{
		{LogDirs: []string{free, busy}},
		{LogDirs: []string{busy}, Reverse: true},
		{LogDirs: []string{free, busy}, DryRun: true},
	} {
		_, err := MigrateCheckpoints(opts)
		if !errors.Is(err, lockfile.ErrLocked) {
			t.Errorf("%+v: error %v, want ErrLocked", opts, err)
		}
		// The free log directory was locked and released again, leaving
		// no .lock behind.
		ckCheck(t, parent, before)
	}
}
