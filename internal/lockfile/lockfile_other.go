//go:build !unix

package lockfile

import (
	"errors"
	"fmt"
	"runtime"
)

// Lock is a held lock on a log directory.
type Lock struct{}

// Acquire fails: on this system logtool cannot see a broker's lock, so it
// refuses to change log directories rather than risk one in use.
func Acquire(logDir string) (*Lock, error) {
	return nil, unsupported(logDir)
}

// Release does nothing.
func (l *Lock) Release() error { return nil }

// Holding is false: Acquire never succeeds here.
func Holding(logDir string) bool { return false }

// Held fails: on this system logtool cannot see a broker's lock.
func Held(logDir string) (*Holder, error) {
	return nil, unsupported(logDir)
}

func unsupported(logDir string) error {
	return fmt.Errorf("%s: cannot check for a running broker on %s: %w", logDir, runtime.GOOS, errors.ErrUnsupported)
}
