package target

import (
	"errors"

	"github.com/logtool/logtool/internal/lockfile"
	"github.com/logtool/logtool/internal/safefile"
)

// Access is what a run does to the log directories of its paths.
type Access int

const (
	// Read only reads them: a broker may hold them, and LogDir.Held says
	// who does so that the command can warn that data may change under it.
	Read Access = iota
	// Stable reads them and needs them unchanged while it does (upgrade
	// --output copies them; migrate-checkpoints --dry-run plans what a run
	// would do): a held lock is refused, but none is taken.
	Stable
	// Write writes into them: each lock is taken for the whole run.
	Write
)

// Lock applies the lock policy to every log directory of the set, in the
// order of their real paths, so that two runs never wait on each other in
// opposite orders. The output directory (Options.Output) is written unless a
// is Read; with Write it is created first. When a lock cannot be taken the
// ones taken are released and the error wraps lockfile.ErrLocked (exit 4)
// whatever the paths given looked like: a partition reached through a
// symbolic link is locked through its real log directory, and through the
// one holding the link. release gives every lock back; it must be called
// unless err is not nil.
func (s *Set) Lock(a Access) (_ func() error, err error) {
	var locks []*lockfile.Lock
	release := func() error {
		var errs []error
		for _, l := range locks {
			errs = append(errs, l.Release())
		}
		locks = nil
		return errors.Join(errs...)
	}
	defer func() {
		if err != nil {
			release()
		}
	}()
	for _, d := range s.LogDirs {
		access := a
		if d == s.Output && a != Read {
			access = Write
			if err := safefile.MkdirAllDurable(d.Real, 0o755); err != nil {
				return nil, err
			}
		}
		if access == Write {
			l, err := lockfile.Acquire(d.Real)
			if err != nil {
				return nil, pathLocked(err, d)
			}
			locks = append(locks, l)
			continue
		}
		h, err := lockfile.Held(d.Real)
		if err != nil {
			return nil, err
		}
		if h != nil && access == Stable {
			return nil, &lockfile.LockedError{Dir: d.Path, Holder: *h}
		}
		d.Held = h
	}
	return release, nil
}

// pathLocked names the log directory as the user sees it in a refusal.
func pathLocked(err error, d *LogDir) error {
	var le *lockfile.LockedError
	if errors.As(err, &le) {
		return &lockfile.LockedError{Dir: d.Path, Holder: le.Holder}
	}
	return err
}
