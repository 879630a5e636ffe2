package lockfile

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// On Linux flock(2) and fcntl locks are independent; on BSDs they are not, so
// this test is Linux's alone.
func init() {
	lockers["flock"] = func(f *os.File) error { return unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) }
	// A holder that calls itself logtool, as another run of it does.
	lockers["logtool"] = func(f *os.File) error {
		if err := os.WriteFile("/proc/self/comm", []byte("logtool"), 0); err != nil {
			return err
		}
		return lockers["fcntl"](f)
	}
}

// TestHeldByLogtool: a lock held by another logtool run is named as such,
// not as a broker.
func TestHeldByLogtool(t *testing.T) {
	dir := t.TempDir()
	_, pid := holdLock(t, "logtool", dir)
	_, err := Acquire(dir)
	var le *LockedError
	if !errors.As(err, &le) || !errors.Is(err, ErrLocked) || !le.Holder.Logtool || le.Holder.PID != pid {
		t.Fatalf("Acquire = %v, want a LockedError naming logtool process %d", err, pid)
	}
	if msg := err.Error(); !strings.Contains(msg, "another logtool run") || strings.Contains(msg, "broker") {
		t.Errorf("error %q", msg)
	}
	if h, err := Held(dir); err != nil || h == nil || !h.Logtool || h.String() != fmt.Sprintf("another logtool run (process %d)", pid) {
		t.Errorf("Held = %v, %v", h, err)
	}
}

// TestFlockIgnored checks the point of using fcntl: a broker's lock is never
// a flock, and on Linux a flock is invisible to fcntl, so a flock held
// elsewhere must not count.
func TestFlockIgnored(t *testing.T) {
	dir := t.TempDir()
	holdLock(t, "flock", dir)
	if h, err := Held(dir); err != nil || h != nil {
		t.Errorf("Held with a foreign flock = %v, %v; want nil", h, err)
	}
	l, err := Acquire(dir)
	if err != nil {
		t.Fatalf("Acquire with a foreign flock: %v", err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
}
