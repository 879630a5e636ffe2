package safefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Stage is a staging directory: a new directory built next to its final
// place, by salvage and upgrade, and installed there by one rename, so that
// the final name either does not exist or holds everything. Its name is one
// only logtool makes, given by the caller; it is removed only by that exact
// name, and only when it holds nothing but files logtool writes there
// (RemoveStage), never by a guess.
type Stage struct {
	Dir       string
	own       func(name string) bool
	installed bool
}

// CreateStage makes a new staging directory in parent, named by pattern
// as os.MkdirTemp names it (a "*" becomes random digits; without one, the
// name is pattern itself), and fsyncs parent. It never takes over a
// directory that exists. own tells the names of the files the stage may
// hold, for Remove.
func CreateStage(parent, pattern string, own func(name string) bool) (*Stage, error) {
	var dir string
	var err error
	if filepath.Base(pattern) != pattern {
		return nil, &fs.PathError{Op: "mkdir", Path: pattern, Err: errors.New("a stage's name names no directory")}
	}
	if strings.Contains(pattern, "*") {
		dir, err = os.MkdirTemp(parent, pattern)
	} else {
		dir = filepath.Join(parent, pattern)
		err = os.Mkdir(dir, 0o755)
	}
	if err != nil {
		return nil, err
	}
	s := &Stage{Dir: dir, own: own}
	// A broker makes partition directories 0755; MkdirTemp makes 0700.
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, errors.Join(err, s.Remove())
	}
	if err := SyncDir(parent); err != nil {
		return nil, errors.Join(err, s.Remove())
	}
	return s, nil
}

// Install makes the stage's entries durable and renames it to final, which
// must not exist: the rename replaces nothing, not even an empty directory
// made there meanwhile (RENAME_NOREPLACE where the system has it; the error
// then wraps fs.ErrExist). The parent of final is fsynced after.
func (s *Stage) Install(final string) error {
	if err := SyncDir(s.Dir); err != nil {
		return err
	}
	if err := fault(StepRename, final); err != nil {
		return err
	}
	if err := renameNoReplace(s.Dir, final); err != nil {
		return err
	}
	s.installed = true
	if err := SyncDir(filepath.Dir(final)); err != nil {
		return err
	}
	if from := filepath.Dir(s.Dir); from != filepath.Dir(final) {
		return SyncDir(from)
	}
	return nil
}

// Remove removes the stage unless it was installed, by RemoveStage: when it
// holds anything logtool does not write there, nothing is removed.
func (s *Stage) Remove() error {
	if s.installed {
		return nil
	}
	return RemoveStage(s.Dir, s.own)
}
