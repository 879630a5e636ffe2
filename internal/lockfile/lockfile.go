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
package lockfile

import "errors"

// FileName is the name of the lock file in a log directory.
const FileName = ".lock"

// ErrLocked is wrapped by the error of Acquire when another process, normally
// a running broker, holds the lock.
var ErrLocked = errors.New("log directory is locked by a running broker")
