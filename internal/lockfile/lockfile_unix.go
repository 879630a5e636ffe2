//go:build unix

package lockfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/logtool/logtool/internal/safefile"
	"golang.org/x/sys/unix"
)

// Lock is a held lock on a log directory. It lasts until Release; a Lock
// dropped without Release loses the lock whenever the garbage collector
// closes its file.
type Lock struct {
	key  string // entry in held
	path string
	f    *os.File // the one descriptor of the .lock file; closing it drops the lock
}

// held records the directories this process has locked, by resolved path, so
// that neither a second Acquire nor Held opens their .lock again. mu also
// serialises every open and close of a .lock file in the process.
var (
	mu   sync.Mutex
	held = map[string]bool{}
)

// key names a directory independently of the path that reaches it: by its
// device and inode, as a bind mount or a second mount gives it another real
// path, and the fcntl locks of one process never conflict with each other.
// A directory that cannot be read keeps its absolute path: opening its
// .lock will fail anyway.
func key(logDir string) (string, error) {
	abs, err := filepath.Abs(logDir)
	if err != nil {
		return "", err
	}
	var st unix.Stat_t
	if err := unix.Stat(abs, &st); err == nil {
		return fmt.Sprintf("%d:%d", st.Dev, st.Ino), nil
	}
	return abs, nil
}

// attempts bounds how often Acquire starts again when .lock is replaced
// between its open and its lock.
const attempts = 5

// afterLock, when set by a test, runs between taking the lock and checking
// that the locked file is still the one at the path.
var afterLock func(path string)

// Acquire takes the broker's lock on logDir: an fcntl write lock over the
// whole of logDir/.lock, creating the file if it is absent as a broker would.
// While the Lock is held no broker can start on the directory. If another
// process holds the lock, the error is a *LockedError (wrapping ErrLocked)
// naming the directory and, when the kernel tells, the holder.
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
	for range attempts {
		f, err := openLock(path, os.O_RDWR|os.O_CREATE)
		if err != nil {
			return nil, err
		}
		lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart}
		if err := unix.FcntlFlock(f.Fd(), unix.F_SETLK, &lk); err != nil {
			defer f.Close()
			if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES) {
				return nil, &LockedError{Dir: logDir, Holder: holder(f)}
			}
			return nil, &os.PathError{Op: "fcntl F_SETLK", Path: path, Err: err}
		}
		if afterLock != nil {
			afterLock(path)
		}
		same, err := samePath(f, path)
		if err != nil {
			f.Close()
			return nil, err
		}
		if same {
			held[k] = true
			return &Lock{key: k, path: path, f: f}, nil
		}
		// Replaced (or removed) after our open: we locked an inode nobody
		// else will look at. Closing drops that lock; try the new file.
		f.Close()
	}
	return nil, fmt.Errorf("%s: %s was replaced %d times while it was being locked; giving up", logDir, FileName, attempts)
}

// openLock opens a .lock file without ever blocking. A broker's
// FileChannel.open of a FIFO succeeds (read-write) and so does its fcntl
// lock, so a FIFO is tested like a regular file; but a read-only open of a
// FIFO without O_NONBLOCK would wait for a writer forever. A directory,
// socket or device under the name is refused before it is opened, since
// opening a device may act on it.
func openLock(path string, flag int) (*os.File, error) {
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() && fi.Mode()&fs.ModeNamedPipe == 0 {
		return nil, &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w (%s)", safefile.ErrNotRegular, safefile.FileType(fi.Mode()))}
	}
	f, err := os.OpenFile(path, flag|unix.O_NONBLOCK|unix.O_NOCTTY, 0o644)
	if err != nil {
		return nil, err
	}
	// Swapped for something else between the stat and the open.
	if fi, err := f.Stat(); err != nil || (!fi.Mode().IsRegular() && fi.Mode()&fs.ModeNamedPipe == 0) {
		f.Close()
		if err == nil {
			err = fmt.Errorf("%w (%s)", safefile.ErrNotRegular, safefile.FileType(fi.Mode()))
		}
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return f, nil
}

// samePath tells whether f is still the file at path.
func samePath(f *os.File, path string) (bool, error) {
	var fd, ps unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &fd); err != nil {
		return false, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	err := unix.Stat(path, &ps)
	if errors.Is(err, unix.ENOENT) {
		return false, nil
	}
	if err != nil {
		return false, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	return fd.Dev == ps.Dev && fd.Ino == ps.Ino, nil
}

// holder asks the kernel who holds the lock on f.
func holder(f *os.File) Holder {
	q := unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart}
	if unix.FcntlFlock(f.Fd(), unix.F_GETLK, &q) != nil || q.Type == unix.F_UNLCK || q.Pid <= 0 {
		return Holder{}
	}
	return Holder{PID: int(q.Pid), Logtool: isLogtool(int(q.Pid))}
}

// isLogtool tells whether process pid runs logtool, from its command name or
// executable (Linux's /proc; elsewhere the holder is taken for a broker).
func isLogtool(pid int) bool {
	proc := "/proc/" + strconv.Itoa(pid)
	if b, err := os.ReadFile(proc + "/comm"); err == nil && strings.TrimSpace(string(b)) == "logtool" {
		return true
	}
	exe, err := os.Readlink(proc + "/exe")
	return err == nil && filepath.Base(strings.TrimSuffix(exe, " (deleted)")) == "logtool"
}

// Release gives up the lock and closes the file, which stays in place (see
// the package documentation). Release after the first call does nothing.
func (l *Lock) Release() error {
	mu.Lock()
	defer mu.Unlock()
	if l.f == nil {
		return nil
	}
	var errs []error
	unlock := unix.Flock_t{Type: unix.F_UNLCK, Whence: io.SeekStart}
	if err := unix.FcntlFlock(l.f.Fd(), unix.F_SETLK, &unlock); err != nil {
		errs = append(errs, &os.PathError{Op: "fcntl F_SETLK", Path: l.path, Err: err})
	}
	errs = append(errs, l.f.Close())
	delete(held, l.key)
	l.f = nil
	return errors.Join(errs...)
}

// Holding tells whether this process holds the lock on logDir: a write of
// a file that is the whole log directory's checks it first.
func Holding(logDir string) bool {
	k, err := key(logDir)
	if err != nil {
		return false
	}
	mu.Lock()
	defer mu.Unlock()
	return held[k]
}

// Held returns the process that holds the lock on logDir, or nil when none
// does, without taking it and without creating .lock; read-only commands use
// it to warn that they may see a directory in mid-change. A missing .lock
// means no broker is running there, and a directory locked by this process
// is not held by another.
func Held(logDir string) (*Holder, error) {
	k, err := key(logDir)
	if err != nil {
		return nil, err
	}
	mu.Lock()
	defer mu.Unlock()
	if held[k] {
		return nil, nil
	}
	path := filepath.Join(logDir, FileName)
	f, err := openLock(path, os.O_RDONLY)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart}
	if err := unix.FcntlFlock(f.Fd(), unix.F_GETLK, &lk); err != nil {
		return nil, &os.PathError{Op: "fcntl F_GETLK", Path: path, Err: err}
	}
	if lk.Type == unix.F_UNLCK {
		return nil, nil
	}
	h := Holder{}
	if lk.Pid > 0 {
		h = Holder{PID: int(lk.Pid), Logtool: isLogtool(int(lk.Pid))}
	}
	return &h, nil
}
