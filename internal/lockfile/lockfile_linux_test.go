package lockfile

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// On Linux flock(2) and fcntl locks are independent; on BSDs they are not, so
// this test is Linux's alone.
func init() {
	lockers["flock"] = func(f *os.File) error { return unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) }
}

// TestFlockIgnored checks the point of using fcntl: a broker's lock is never
// a flock, and on Linux a flock is invisible to fcntl, so a flock held
// elsewhere must not count.
func TestFlockIgnored(t *testing.T) {
	dir := t.TempDir()
	holdLock(t, "flock", dir)
	if h, err := Held(dir); err != nil || h {
		t.Errorf("Held with a foreign flock = %v, %v; want false", h, err)
	}
	l, err := Acquire(dir)
	if err != nil {
		t.Fatalf("Acquire with a foreign flock: %v", err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
}
