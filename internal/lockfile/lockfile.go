// Package lockfile tells whether a Kafka broker is using a log directory.
//
// A broker locks "<logdir>/.lock" with Java's FileChannel.tryLock, which the
// JVM on Unix implements as a POSIX record lock: fcntl(F_SETLK) with F_WRLCK
// over the whole file. This package takes and tests that same kind of lock.
// flock(2) would be useless here: on Linux, flock and fcntl locks do not see
// each other.
//
// POSIX record locks belong to the process, not to the file descriptor, and
// the kernel drops all of a process's locks on a file as soon as the process
// closes any descriptor for it. So a Lock keeps its one descriptor open until
// Release, and nothing else in logtool may open and close a .lock file while
// a Lock exists: Held, the only other function that opens one, never does so
// for a directory this process holds. For the same reason a second Acquire of
// the same directory within the process fails instead of "succeeding" (POSIX
// would grant it) and later dropping the first lock on Release.
//
// A lock belongs to an inode, not to a name. logtool never unlinks .lock: a
// process that opened the file just before the unlink would lock an inode no
// one else can find, while a broker locks the new file under the name (a
// broker's own FileLock.destroy deletes it on shutdown, and has that race).
// And after taking the lock, Acquire checks that its descriptor is still the
// file at the path, and starts again if the file was replaced meanwhile.
package lockfile

import (
	"fmt"

	"github.com/logtool/logtool/internal/refuse"
)

// FileName is the name of the lock file in a log directory.
const FileName = ".lock"

// ErrLocked is wrapped by the error of Acquire when another process, normally
// a running broker, holds the lock.
var ErrLocked = refuse.New("log directory is locked")

// Holder is the process holding a log directory's lock.
type Holder struct {
	PID int // 0 when the kernel does not tell
	// Logtool is true when the holder is another logtool run rather than
	// a broker.
	Logtool bool
}

// String names the holder for messages: "a running broker (process 1234)".
func (h *Holder) String() string {
	who := "a running broker"
	if h.Logtool {
		who = "another logtool run"
	}
	if h.PID > 0 {
		return fmt.Sprintf("%s (process %d)", who, h.PID)
	}
	return who
}

// LockedError is the error of Acquire for a lock another process holds. It
// wraps ErrLocked.
type LockedError struct {
	Dir    string
	Holder Holder
}

func (e *LockedError) Error() string {
	who := "a running broker"
	if e.Holder.Logtool {
		who = "another logtool run"
	}
	s := fmt.Sprintf("%s: %v by %s", e.Dir, ErrLocked, who)
	if e.Holder.PID > 0 {
		s += fmt.Sprintf(" (process %d holds %s)", e.Holder.PID, FileName)
	}
	return s
}

func (e *LockedError) Unwrap() error { return ErrLocked }
