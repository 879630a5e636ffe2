//go:build unix

package lockfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"
)

// Lock is a held lock on a log directory. It lasts until Release; a Lock
// dropped without Release loses the lock whenever the garbage collector
// closes its file.
type Lock struct {
	key     string // entry in held
	path    string
	f       *os.File // the one descriptor of the .lock file; closing it drops the lock
	created bool
}

// held records the directories this process has locked, by resolved path, so
// that neither a second Acquire nor Held opens their .lock again. mu also
// serialises every open and close of a .lock file in the process.
var (
	mu   sync.Mutex
	held = map[string]bool{}
)

// key names a directory independently of how the caller spelled it. A
// directory that does not resolve keeps its absolute path: opening its
// .lock will fail anyway.
func key(logDir string) (string, error) {
	abs, err := filepath.Abs(logDir)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real, nil
	}
	return abs, nil
}

// Acquire takes the broker's lock on logDir: an fcntl write lock over the
// whole of logDir/.lock, creating the file if it is absent as a broker would.
// While the Lock is held no broker can start on the directory. If another
// process holds the lock, the error wraps ErrLocked and names the directory
// and, when the kernel tells, the holder's process id.
func Acquire(logDir string) (*Lock, error) {
	k, err := key(logDir)
	if err != nil {
		return nil, err
	}
	mu.Lock()
	defer mu.Unlock()
	if held[k] {
		return nil, fmt.Errorf("%s: lock is already held by this process", logDir)
	}
	path := filepath.Join(logDir, FileName)
	f, created, err := openOrCreate(path)
	if err != nil {
		return nil, err
	}
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart}
	if err := unix.FcntlFlock(f.Fd(), unix.F_SETLK, &lk); err != nil {
		var pid int32
		// The file stays in place even if we created it: the process that
		// beat us to the lock has it open.
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES) {
			q := unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart}
			if unix.FcntlFlock(f.Fd(), unix.F_GETLK, &q) == nil && q.Type != unix.F_UNLCK {
				pid = q.Pid
			}
			f.Close()
			if pid > 0 {
				return nil, fmt.Errorf("%s: %w (process %d holds %s)", logDir, ErrLocked, pid, FileName)
			}
			return nil, fmt.Errorf("%s: %w", logDir, ErrLocked)
		}
		f.Close()
		return nil, &os.PathError{Op: "fcntl F_SETLK", Path: path, Err: err}
	}
	held[k] = true
	return &Lock{key: k, path: path, f: f, created: created}, nil
}

func openOrCreate(path string) (f *os.File, created bool, err error) {
	f, err = os.OpenFile(path, os.O_RDWR, 0)
	if !errors.Is(err, fs.ErrNotExist) {
		return f, false, err
	}
	f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		// Another process created it between our two opens.
		f, err = os.OpenFile(path, os.O_RDWR, 0)
		return f, false, err
	}
	return f, err == nil, err
}

// Release gives up the lock and closes the file. A .lock that Acquire
// created is deleted, as a broker deletes its own on shutdown; one that was
// already there stays. Release after the first call does nothing.
func (l *Lock) Release() error {
	mu.Lock()
	defer mu.Unlock()
	if l.f == nil {
		return nil
	}
	var errs []error
	if l.created {
		// Deleted while still locked, so that no other process can lock the
		// file in the moment before it disappears.
		errs = append(errs, os.Remove(l.path))
	}
	unlock := unix.Flock_t{Type: unix.F_UNLCK, Whence: io.SeekStart}
	if err := unix.FcntlFlock(l.f.Fd(), unix.F_SETLK, &unlock); err != nil {
		errs = append(errs, &os.PathError{Op: "fcntl F_SETLK", Path: l.path, Err: err})
	}
	errs = append(errs, l.f.Close())
	delete(held, l.key)
	l.f = nil
	return errors.Join(errs...)
}

// Held reports whether another process holds the lock on logDir, without
// taking it and without creating .lock; read-only commands use it to warn
// that they may see a directory in mid-change. A missing .lock means no
// broker is running there, and a directory locked by this process is not
// held by another.
func Held(logDir string) (bool, error) {
	k, err := key(logDir)
	if err != nil {
		return false, err
	}
	mu.Lock()
	defer mu.Unlock()
	if held[k] {
		return false, nil
	}
	path := filepath.Join(logDir, FileName)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart}
	if err := unix.FcntlFlock(f.Fd(), unix.F_GETLK, &lk); err != nil {
		return false, &os.PathError{Op: "fcntl F_GETLK", Path: path, Err: err}
	}
	return lk.Type != unix.F_UNLCK, nil
}
