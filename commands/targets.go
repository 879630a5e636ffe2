package commands

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/urfave/cli/v2"

	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/internal/target"
	"github.com/logtool/logtool/logfmt/layout"
)

// targets is the step every command shares: it resolves the paths (real
// paths, duplicates removed, log directory of each partition) and applies
// the lock policy for a run of access a. Notes about what was left out and,
// for a reader, the log directories a broker holds are printed as warnings.
// release must be called when the run ends, unless err is not nil.
func targets(g Global, paths []string, o target.Options, a target.Access) (set *target.Set, release func() error, err error) {
	return checkedTargets(g, paths, o, a, nil)
}

// checkedTargets is targets with a check of the set once it is locked and
// before anything is written: an error from check ends the run there.
func checkedTargets(g Global, paths []string, o target.Options, a target.Access, check func(*target.Set) error) (set *target.Set, release func() error, err error) {
	set, err = target.Resolve(paths, o)
	var ue *target.UsageError
	if errors.As(err, &ue) {
		return nil, nil, optionErr(err, map[string]string{"Topic": "topic"})
	}
	if err != nil {
		return nil, nil, err
	}
	for _, n := range set.Notes {
		g.Warnf("%s", n)
	}
	// Not warnings: the run fails on them, so they are said under --quiet.
	for _, rp := range set.Refused {
		for _, f := range rp.Refusals {
			fmt.Fprintf(g.Stderr, "logtool: %s: %s\n", o.Command, f)
		}
		if o.Writes {
			fmt.Fprintf(g.Stderr, "logtool: %s: %s: left unchanged: a broker cannot load the partition\n", o.Command, rp.Partition.Path)
		}
	}
	if g.unloadable != nil && len(set.Refused) > 0 {
		g.unloadable.n += len(set.Refused)
		g.unloadable.writer = o.Writes
	}
	if release, err = set.Lock(a); err != nil {
		return nil, nil, err
	}
	if check != nil {
		if err := check(set); err != nil {
			release()
			return nil, nil, err
		}
	}
	if a == target.Write {
		// The temporary files a killed run left at the root of a log
		// directory now locked; each partition's are the libraries' to
		// remove, as they recover it.
		for _, d := range set.LogDirs {
			removed, err := safefile.RemoveTemps(d.Path, layout.OwnRootTemp)
			for _, f := range removed {
				g.Warnf("%s: removed, left by an interrupted run", f)
			}
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				release()
				return nil, nil, err
			}
		}
	}
	for _, d := range set.LogDirs {
		if d.Held != nil {
			g.Warnf("%s is locked by %s: what is read may change while it is read", d.Path, d.Held)
		}
	}
	return set, release, nil
}

// writeAccess is the access of a command that writes unless dryRun.
func writeAccess(dryRun bool) target.Access {
	if dryRun {
		return target.Read
	}
	return target.Write
}

// givenBool is the value of a bool flag the user gave, nil when not given.
func givenBool(c *cli.Context, name string) *bool {
	if !c.IsSet(name) {
		return nil
	}
	return new(c.Bool(name))
}

// givenString is givenBool for a string flag.
func givenString(c *cli.Context, name string) *string {
	if !c.IsSet(name) {
		return nil
	}
	return new(c.String(name))
}
