package safefile

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// renameNoReplace renames a directory where nothing exists yet, atomically:
// an empty directory created there meanwhile is not replaced, as rename(2)
// would do.
func renameNoReplace(from, to string) error {
	err := unix.Renameat2(unix.AT_FDCWD, from, unix.AT_FDCWD, to, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		return renameChecked(from, to) // a file system without the flag
	}
	if err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	return nil
}
