package checkpoints

import (
	"errors"
	"io/fs"

	"github.com/logtool/logtool/internal/parallel"
	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/logfmt/checkpoint"
)

// apply carries out a plan. The order is what makes a re-run after a crash
// finish the job (see Migrate): forward, every per-partition file
// is durable before the root file is renamed or removed; reverse, the root
// file is durable before any per-partition file or the .migrated file is
// removed.
func (p *checkpointPlan) apply(workers int) error {
	rep := p.rep
	for _, t := range rep.TempsRemoved {
		if err := safefile.Remove(t); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	err := parallel.Each(len(p.writes), workers, func(i int) error {
		w := p.writes[i]
		f, err := safefile.Create(w.path, 0o644)
		if err != nil {
			return err
		}
		defer f.Abort()
		if _, err := f.Write(checkpoint.AppendCleaner(nil, w.c)); err != nil {
			return err
		}
		return f.Commit()
	})
	if err != nil {
		return err
	}
	switch rep.Root {
	case RootRenamed:
		err = safefile.Rename(rep.RootFile, rep.MigratedFile)
	case RootMerged:
		if err = p.writeRoot(rep.MigratedFile); err == nil {
			err = safefile.Remove(rep.RootFile)
		}
	case RootRemoved:
		err = safefile.Remove(rep.RootFile)
	case RootWritten:
		err = p.writeRoot(rep.RootFile)
	}
	if err != nil {
		return err
	}
	if err := parallel.Each(len(p.removes), workers, func(i int) error { return safefile.Remove(p.removes[i]) }); err != nil {
		return err
	}
	if rep.RemovedMigrated {
		return safefile.Remove(rep.MigratedFile)
	}
	return nil
}

// writeRoot replaces path with the version-0 file of the plan's root
// entries, streamed into it from the files they come from.
func (p *checkpointPlan) writeRoot(path string) error {
	return checkpoint.WriteOffsetsFile(path, p.rootCount, p.rootEntries)
}
