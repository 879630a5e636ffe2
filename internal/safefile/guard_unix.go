//go:build unix

package safefile

import (
	"errors"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

const (
	noFollow = syscall.O_NOFOLLOW
	nonBlock = syscall.O_NONBLOCK
)

// symlinkErr turns the ELOOP of an O_NOFOLLOW open of a symbolic link into
// an error wrapping ErrSymlink.
func symlinkErr(err error, path string) error {
	if errors.Is(err, syscall.ELOOP) {
		return &fs.PathError{Op: "refuse", Path: path, Err: ErrSymlink}
	}
	return err
}

// blocking clears the O_NONBLOCK that Open used, once the file is known to
// be regular (where it has no effect anyway).
func blocking(f *os.File) error {
	fl, err := unix.FcntlInt(f.Fd(), unix.F_GETFL, 0)
	if err == nil {
		_, err = unix.FcntlInt(f.Fd(), unix.F_SETFL, fl&^unix.O_NONBLOCK)
	}
	if err != nil {
		return &fs.PathError{Op: "fcntl", Path: f.Name(), Err: err}
	}
	return nil
}
