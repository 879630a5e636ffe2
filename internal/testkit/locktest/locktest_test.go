//go:build unix

package locktest

import (
	"errors"
	"testing"

	"github.com/logtool/logtool/internal/lockfile"
)

func TestHold(t *testing.T) {
	dir := t.TempDir()
	Hold(t, dir)
	if held, err := lockfile.Held(dir); err != nil || held == nil {
		t.Fatalf("Held = %v, %v; want a holder", held, err)
	}
	if _, err := lockfile.Acquire(dir); !errors.Is(err, lockfile.ErrLocked) {
		t.Fatalf("Acquire = %v; want ErrLocked", err)
	}
}
