package safefile

import (
	"errors"
	"io/fs"
	"os"
)

// renameChecked renames after checking that nothing is there, which leaves
// a window in which a directory created at to would be replaced.
func renameChecked(from, to string) error {
	if _, err := os.Lstat(to); err == nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: fs.ErrExist}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return os.Rename(from, to)
}
