//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package logfmt

import (
	"os"
	"syscall"
	"testing"
)

// faultSink keeps the test's faulting load from being optimized away.
var faultSink byte

// TestCatchFaultOutsideWindow: a fault on memory other than the mapped
// window is a bug, not the file's doing, and must stay a panic.
func TestCatchFaultOutsideWindow(t *testing.T) {
	sr, _ := mappedAfterFirst(t, windowInputs(t)["clean"])
	// A page that was mapped and is no longer: reading it faults.
	gone, err := syscall.Mmap(-1, 0, os.Getpagesize(), syscall.PROT_READ, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Munmap(gone); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if r := recover(); r == nil {
			t.Fatal("a fault outside the window was not a panic")
		}
	}()
	err = sr.CatchFault(func() { faultSink = gone[0] })
	t.Fatalf("CatchFault returned %v for a fault outside the window", err)
}
