// Package safefile replaces files so that a crash at any moment leaves the old
// or the new content under the final name, never a mix and never nothing.
//
// Every writer in logtool goes through it. The protocol is the one Kafka uses
// for its checkpoint files: write a temporary file in the same directory,
// fsync it, close it, rename it over the target, then fsync the directory so
// the rename itself survives a power loss. The rename is atomic only within
// one file system, which is why the temporary file must share the target's
// directory.
//
// A crash between creating the temporary file and renaming it leaves
// "<name>.logtool.tmp" (TempName) behind. That is harmless: nothing reads
// it, the next write of the same target removes it first, and Kafka's log
// loader only looks at names ending in .log, .index, .timeindex, .txnindex,
// .snapshot, .cleaned, .swap and .deleted, so it ignores a trailing .tmp.
// The name is one no broker and no person writes, so that removing it as a
// leftover never removes someone else's file: a broker's checkpoints go
// through "<name>.tmp", and so may a user's notes.
//
// Nothing here follows a symbolic link for a file it creates, replaces,
// renames, truncates or removes: a link planted under a temporary name, or a
// segment that is a link to another disk, would otherwise make logtool write
// or delete outside the log directory. Such operations fail with an error
// wrapping ErrSymlink instead. Temporary files are created exclusively
// (O_EXCL), so a file that appears under the name in the meantime is never
// written through either. Reading goes through Open, which opens only
// regular files and never blocks on a FIFO or a device named like a Kafka
// file.
//
// Every file-system step calls a fault hook first (SetFaultHook) so that crash
// tests in any package can fail the N-th step.
package safefile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"syscall"
)

// TempSuffix ends every temporary file, logtool's (OwnTempSuffix) and those
// of a broker's checkpoint writes.
const TempSuffix = ".tmp"

// OwnTempSuffix ends the temporary files of logtool's own writes.
const OwnTempSuffix = ".logtool" + TempSuffix

// TempName is the temporary file Create writes path through. It is the one
// definition of logtool's temporary names: only names it gives are removed
// as logtool's leftovers (layout.OwnTemp).
func TempName(path string) string { return path + OwnTempSuffix }

// WriteFile writes data to path atomically: TempName(path) is written,
// fsynced, closed and renamed over path, and then the directory is fsynced.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	f, err := Create(path, perm)
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.Write(data); err != nil {
		return err
	}
	return f.Commit()
}

// File is a replacement of a file under construction. Nothing is visible
// under the target name until Commit. File does no buffering, so callers that
// write small pieces should wrap it in a bufio.Writer.
//
// The usual shape is:
//
//	f, err := safefile.Create(path, 0o644)
//	if err != nil { ... }
//	defer f.Abort()
//	... write ...
//	return f.Commit()
type File struct {
	f     *os.File
	tmp   string
	path  string
	state fileState
	// behind is the fsync SyncBehind started, until it is waited for;
	// syncErr the first fsync of the file that failed, after which no
	// fsync is trusted (see Commit).
	behind  chan error
	syncErr error
}

type fileState int

const (
	stateOpen   fileState = iota // temporary file open for writing
	stateClosed                  // closed but not renamed: Abort must remove it
	stateDone                    // renamed or removed: nothing left to clean up
)

// Create starts replacing path, writing to TempName(path). An existing
// regular file of that name is a leftover of an earlier crash and is removed
// first; anything else under that name (a symbolic link, a directory, a
// FIFO) is refused. So is a path that is a directory, before anything is
// written: no rename can replace it.
func Create(path string, perm fs.FileMode) (*File, error) {
	return CreateAt(path, TempName(path), perm)
}

// CreateAt is Create with a chosen temporary name, for protocols that give the
// temporary file a meaning of its own (a Kafka "<segment>.log.cleaned" becomes
// "<segment>.log.swap"). tmp must be in the same directory as path.
func CreateAt(path, tmp string, perm fs.FileMode) (*File, error) {
	if filepath.Dir(filepath.Clean(tmp)) != filepath.Dir(filepath.Clean(path)) {
		return nil, fmt.Errorf("safefile: temporary file %s is not in the directory of %s", tmp, path)
	}
	if filepath.Clean(tmp) == filepath.Clean(path) {
		return nil, fmt.Errorf("safefile: temporary file and target are both %s", path)
	}
	if fi, err := os.Lstat(path); err == nil && fi.IsDir() {
		return nil, &fs.PathError{Op: "create", Path: path, Err: fmt.Errorf("is a directory, not a file")}
	}
	if err := RemoveLeftover(tmp); err != nil {
		return nil, err
	}
	if err := fault(StepCreate, tmp); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|noFollow, perm)
	if err != nil {
		return nil, symlinkErr(err, tmp)
	}
	return &File{f: f, tmp: tmp, path: path}, nil
}

// Name returns the name of the temporary file being written.
func (f *File) Name() string { return f.tmp }

// Write writes to the temporary file.
func (f *File) Write(p []byte) (int, error) {
	if f.state != stateOpen {
		return 0, f.closedErr("write")
	}
	if err := fault(StepWrite, f.tmp); err != nil {
		return 0, err
	}
	return f.f.Write(p)
}

// WriteAt writes to the temporary file at offset off, for formats whose
// header is known only at the end.
func (f *File) WriteAt(p []byte, off int64) (int, error) {
	if f.state != stateOpen {
		return 0, f.closedErr("write")
	}
	if err := fault(StepWrite, f.tmp); err != nil {
		return 0, err
	}
	return f.f.WriteAt(p, off)
}

// StartWriteback lets the disk write the n bytes at off while the caller
// goes on, so that Commit's fsync, which still makes everything durable,
// has less left to wait for. It is a hint: it changes nothing about what a
// crash leaves, and does nothing where the system has no such call (Linux
// has sync_file_range).
func (f *File) StartWriteback(off, n int64) {
	if f.state == stateOpen {
		startWriteback(f, off, n)
	}
}

// SyncBehind starts an fsync of what was written so far on a goroutine of
// its own, unless one is still running, and returns: the caller writes on.
// Where a disk's cache flush costs in proportion to the data it holds (a
// virtual disk's), Commit's fsync then waits only for what came after the
// last. It changes nothing about what a crash leaves. A failed one fails
// Commit, which does not try again (see Commit).
func (f *File) SyncBehind() {
	if f.state != stateOpen || f.syncErr != nil {
		return
	}
	if f.behind != nil {
		select {
		case f.syncErr = <-f.behind:
			f.behind = nil
			if f.syncErr != nil {
				return
			}
		default:
			return
		}
	}
	if err := fault(StepSync, f.tmp); err != nil {
		f.syncErr = err
		return
	}
	done := make(chan error, 1)
	f.behind = done
	go func() { done <- syncFile(f.f) }()
}

// syncFile is SyncBehind's fsync; tests make it fail.
var syncFile = (*os.File).Sync

// waitBehind waits for the fsync SyncBehind started, if any, and returns
// the error of the first fsync of the file that failed.
func (f *File) waitBehind() error {
	if f.behind != nil {
		f.syncErr = <-f.behind
		f.behind = nil
	}
	return f.syncErr
}

// Commit makes the written content durable and visible under the target
// name: fsync, close, rename, fsync of the directory. When Commit fails before
// the rename, the target is untouched and Abort removes the temporary file.
// When only the final directory fsync fails, the new content is already in
// place but may not survive a power loss.
//
// A failed fsync is never retried, by this Commit or a later one: after an
// fsync error Linux may have dropped the dirty pages and a second fsync
// would report success falsely.
func (f *File) Commit() error {
	if f.state != stateOpen {
		return f.closedErr("commit")
	}
	if err := f.waitBehind(); err != nil {
		return err
	}
	if err := fault(StepSync, f.tmp); err != nil {
		f.syncErr = err
		return err
	}
	if err := f.f.Sync(); err != nil {
		f.syncErr = err
		return err
	}
	f.state = stateClosed
	if err := f.f.Close(); err != nil {
		return err
	}
	if err := replaceable(f.path); err != nil {
		return err
	}
	if err := fault(StepRename, f.path); err != nil {
		return err
	}
	if err := os.Rename(f.tmp, f.path); err != nil {
		return err
	}
	f.state = stateDone
	return SyncDir(filepath.Dir(f.path))
}

// Abort gives up the replacement: the temporary file is closed and removed
// and the target keeps its old content. After Commit, or a second time, it
// does nothing and returns nil, so it is safe to defer.
//
// The removal is not followed by a directory fsync: if a crash undoes it, the
// result is a stale temporary file, which is harmless (see the package doc).
func (f *File) Abort() error {
	if f.state == stateDone {
		return nil
	}
	var closeErr error
	if f.state == stateOpen {
		_ = f.waitBehind() // its error is the caller's no more
		closeErr = f.f.Close()
	}
	f.state = stateDone
	err := fault(StepRemove, f.tmp)
	if err == nil {
		err = os.Remove(f.tmp)
	}
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	return errors.Join(closeErr, err)
}

func (f *File) closedErr(op string) error {
	return &os.PathError{Op: op, Path: f.tmp, Err: os.ErrClosed}
}

// Rename renames oldpath to newpath and fsyncs the directory of each, so the
// rename survives a power loss. Like os.Rename it replaces an existing
// newpath atomically. Neither may be a symbolic link, a FIFO or a device.
func Rename(oldpath, newpath string) error {
	for _, p := range []string{oldpath, newpath} {
		if err := replaceable(p); err != nil {
			return err
		}
	}
	if err := fault(StepRename, newpath); err != nil {
		return err
	}
	if err := os.Rename(oldpath, newpath); err != nil {
		return err
	}
	oldDir, newDir := filepath.Dir(oldpath), filepath.Dir(newpath)
	if err := SyncDir(newDir); err != nil {
		return err
	}
	if oldDir != newDir {
		return SyncDir(oldDir)
	}
	return nil
}

// Remove removes path and fsyncs its directory. A symbolic link is refused
// (removing the link would leave the file it names, which the caller meant
// to delete), and so is a FIFO or a device.
func Remove(path string) error {
	if err := replaceable(path); err != nil {
		return err
	}
	if err := fault(StepRemove, path); err != nil {
		return err
	}
	if err := os.Remove(path); err != nil {
		return err
	}
	return SyncDir(filepath.Dir(path))
}

// MkdirAllDurable makes dir and its missing ancestors, as os.MkdirAll
// does, and fsyncs the parent of each directory it makes, so that once it
// returns a power loss cannot drop them (and an output written into them
// after an exit 0). Directories that exist already are not synced: nothing
// of theirs changed.
func MkdirAllDurable(dir string, perm fs.FileMode) error {
	var missing []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err == nil {
			if !fi.IsDir() {
				return &os.PathError{Op: "mkdir", Path: d, Err: syscall.ENOTDIR}
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) || filepath.Dir(d) == d {
			return err
		}
		missing = append(missing, d)
	}
	for _, d := range slices.Backward(missing) {
		// Another process may make it meanwhile; its parent is synced still.
		if err := os.Mkdir(d, perm); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		if err := SyncDir(filepath.Dir(d)); err != nil {
			return err
		}
	}
	return nil
}

// SyncDir fsyncs a directory, making the creations, renames and removals of
// its entries durable. On Windows, where directories cannot be opened for
// fsync, it does nothing, as Kafka does.
func SyncDir(dir string) error {
	if err := fault(StepSyncDir, dir); err != nil {
		return err
	}
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	return errors.Join(err, d.Close())
}
