package safefile

import (
	"errors"
	"os"
	"sync/atomic"
)

// Step names one file-system operation, as passed to the fault hook.
type Step string

// The steps. A successful replacement performs create, write (once per
// call), sync, rename and syncdir, in that order, with a sync among the
// writes for each fsync SyncBehind starts; remove is Abort's and Remove's.
const (
	StepCreate   Step = "create"   // creating (truncating) a temporary file; path is the temporary file
	StepWrite    Step = "write"    // each Write or WriteAt; path is the temporary file
	StepSync     Step = "sync"     // fsync of a written file; path is the temporary file
	StepRename   Step = "rename"   // a rename; path is the destination
	StepSyncDir  Step = "syncdir"  // fsync of a directory; path is the directory
	StepRemove   Step = "remove"   // a removal; path is the file removed
	StepTruncate Step = "truncate" // an in-place truncation (Truncate); path is the file
)

var hook atomic.Pointer[func(Step, string) error]

// SetFaultHook installs h, which every step calls before touching the file
// system; a non-nil error from h becomes the step's error (as an
// *os.PathError) and the step is not performed. A nil h removes the hook.
// restore puts back the hook that was installed before.
//
// Only tests set a hook. The hook is process-wide, so tests that set one must
// not run in parallel with other tests that write through this package.
func SetFaultHook(h func(step Step, path string) error) (restore func()) {
	var p *func(Step, string) error
	if h != nil {
		p = &h
	}
	old := hook.Swap(p)
	return func() { hook.Store(old) }
}

func fault(step Step, path string) error {
	h := hook.Load()
	if h == nil {
		return nil
	}
	if err := (*h)(step, path); err != nil {
		return &os.PathError{Op: string(step), Path: path, Err: err}
	}
	return nil
}

// ErrInjected is the error Faults makes steps fail with.
var ErrInjected = errors.New("safefile: injected fault")

// Faults is a ready-made hook for crash tests. It counts the steps it sees
// and fails step number FailAt (1-based; 0 never fails).
//
// Without Once it also fails every later step, which is what a process that
// dies at step FailAt looks like on disk: whatever cleanup would have run
// afterwards does not happen either. With Once only that step fails, like an
// I/O error the program survives and cleans up after.
//
// A crash test runs the operation once with a zero Faults to learn the number
// of steps, then once per step with FailAt set, checking its invariants after
// each. That simulates a process crash, not a power loss: completed writes are
// assumed to have reached the disk.
type Faults struct {
	FailAt int64
	Once   bool
	n      atomic.Int64
}

// Hook is the function to pass to SetFaultHook.
func (f *Faults) Hook(step Step, path string) error {
	n := f.n.Add(1)
	if f.FailAt > 0 && (n == f.FailAt || !f.Once && n > f.FailAt) {
		return ErrInjected
	}
	return nil
}

// Steps returns how many steps have called Hook so far.
func (f *Faults) Steps() int64 { return f.n.Load() }
