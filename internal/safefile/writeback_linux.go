package safefile

import "golang.org/x/sys/unix"

// startWriteback asks the kernel to start writing a range of f's dirty
// pages to disk, and returns without waiting for it. Errors are left to
// Commit's fsync: without the wait flags, sync_file_range does not consume
// a write error that fsync would otherwise report.
func startWriteback(f *File, off, n int64) {
	if rc, err := f.f.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) {
			unix.SyncFileRange(int(fd), off, n, unix.SYNC_FILE_RANGE_WRITE)
		})
	}
}
