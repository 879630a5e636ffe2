package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrSymlink is wrapped by the errors of operations refused because a path
// they would write, rename, truncate or remove is a symbolic link.
var ErrSymlink = errors.New("is a symbolic link, which logtool never writes, truncates, renames or deletes through")

// ErrNotRegular is wrapped by the errors of Open and ReadFile for a path that
// is not a regular file (a FIFO, socket, device, directory or symbolic
// link). Kafka loads only regular files; opening a FIFO for reading would
// block; a link leads out of the log directory.
var ErrNotRegular = errors.New("not a regular file")

// NoSymlinks fails with an error wrapping ErrSymlink for the first path that
// is a symbolic link. Absent paths are fine. Writers call it on every file of
// a plan before they change anything, so that a refusal leaves everything
// as it was.
func NoSymlinks(paths ...string) error {
	for _, p := range paths {
		fi, err := os.Lstat(p)
		if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return &fs.PathError{Op: "refuse", Path: p, Err: ErrSymlink}
		}
	}
	return nil
}

// replaceable refuses to replace or move path when it is a symbolic link,
// or anything but a regular file or a directory: a FIFO or device named
// like a Kafka file is not logtool's to remove.
func replaceable(path string) error {
	fi, err := os.Lstat(path)
	switch {
	case err != nil:
		return nil // absent, or the operation itself will say
	case fi.Mode()&fs.ModeSymlink != 0:
		return &fs.PathError{Op: "refuse", Path: path, Err: ErrSymlink}
	case !fi.Mode().IsRegular() && !fi.IsDir():
		return &fs.PathError{Op: "refuse", Path: path, Err: fmt.Errorf("%w (%s)", ErrNotRegular, FileType(fi.Mode()))}
	}
	return nil
}

// RemoveStage removes a staging directory of logtool's own, named by the
// caller exactly, that a crashed run left. Every entry is checked before
// any is removed: each must be a regular file whose name own accepts (the
// files logtool writes in a stage); anything else (a directory, a link, a
// user's file) refuses the whole stage, which is then left as it is. An
// absent stage is no error.
func RemoveStage(stage string, own func(name string) bool) error {
	entries, err := os.ReadDir(stage)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || !own(e.Name()) {
			return fmt.Errorf("%s: holds %s, which logtool does not write there: not removed; move it away", stage, e.Name())
		}
	}
	for _, e := range entries {
		if err := RemoveLeftover(filepath.Join(stage, e.Name())); err != nil {
			return err
		}
	}
	return Remove(stage)
}

// RemoveLeftover removes path when it is a regular file: a temporary file
// of logtool's own that a crash left. It does nothing when path is absent,
// and refuses anything else (a symbolic link planted under the name is not
// followed, nor removed).
func RemoveLeftover(path string) error {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case fi.Mode()&fs.ModeSymlink != 0:
		return &fs.PathError{Op: "refuse", Path: path, Err: ErrSymlink}
	case !fi.Mode().IsRegular():
		return &fs.PathError{Op: "refuse", Path: path, Err: fmt.Errorf("%w (%s)", ErrNotRegular, FileType(fi.Mode()))}
	}
	if err := fault(StepRemove, path); err != nil {
		return err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// Open opens path for reading if it is a regular file. Anything else fails
// with an error wrapping ErrNotRegular without being opened, and the open
// itself does not block should the file be swapped for a FIFO in between.
// A symbolic link is not followed, although Kafka would: every path logtool
// reads is either listed in a log directory, where a link leads outside it,
// or a path the user named, which internal/target resolved to its real path.
// O_NOFOLLOW keeps a link swapped in after the check from redirecting it.
func Open(path string) (*os.File, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, notRegular(path, fi.Mode())
	}
	f, err := os.OpenFile(path, os.O_RDONLY|nonBlock|noFollow, 0)
	if err != nil {
		return nil, notFollowed(err, path)
	}
	if fi, err = f.Stat(); err == nil && !fi.Mode().IsRegular() {
		err = notRegular(path, fi.Mode())
	}
	if err == nil {
		err = blocking(f)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// OpenSized is Open that also returns the file's size, for the readers
// that take an io.ReaderAt and a length.
func OpenSized(path string) (*os.File, int64, error) {
	f, err := Open(path)
	if err != nil {
		return nil, 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, fi.Size(), nil
}

// ReadFile reads a whole regular file, as os.ReadFile does, through Open.
func ReadFile(path string) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// Truncate cuts the regular file path to size in place and fsyncs it; a
// symbolic link is refused. In-place truncation is what Kafka's own recovery
// does (FileRecords.truncateTo), and it is atomic for a crash: the file has
// either length.
func Truncate(path string, size int64) error {
	if err := NoSymlinks(path); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|noFollow|nonBlock, 0)
	if err != nil {
		return symlinkErr(err, path)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return notRegular(path, fi.Mode())
	}
	if err := fault(StepTruncate, path); err != nil {
		return err
	}
	if err := f.Truncate(size); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	return f.Close()
}

// notFollowed turns the error of an O_NOFOLLOW open that met a link into
// Open's error for a link.
func notFollowed(err error, path string) error {
	if errors.Is(symlinkErr(err, path), ErrSymlink) {
		return notRegular(path, fs.ModeSymlink)
	}
	return err
}

func notRegular(path string, m fs.FileMode) error {
	why := "Kafka loads only regular files"
	if m&fs.ModeSymlink != 0 {
		why = "logtool never follows a link inside a log directory"
	}
	return &fs.PathError{Op: "open", Path: path, Err: fmt.Errorf("%w (%s); %s", ErrNotRegular, FileType(m), why)}
}

// FileType names the kind of a file that is not regular, for messages: "a
// FIFO", "a socket", "a directory".
func FileType(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}

// RemoveTemps removes the temporary files in dir that own says are
// logtool's, as RemoveLeftover does (a link or anything else under such a
// name is left alone), and returns their paths.
func RemoveTemps(dir string, own func(name string) bool) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, e := range entries {
		if !e.Type().IsRegular() || !own(e.Name()) {
			continue
		}
		path := filepath.Join(dir, e.Name())
		if err := RemoveLeftover(path); err != nil {
			return removed, err
		}
		removed = append(removed, path)
	}
	return removed, nil
}
