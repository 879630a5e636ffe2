package migrate

import (
	"errors"
	"io/fs"
	"sync"
	"sync/atomic"

	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/logfmt/checkpoint"
)

// apply carries out a plan. The order is what makes a re-run after a crash
// finish the job (see MigrateCheckpoints): forward, every per-partition file
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
	err := checkpointForEach(len(p.writes), workers, func(i int) error {
		w := p.writes[i]
		f, err := safefile.CreateAt(w.path, checkpoint.TempName(w.path), 0o644)
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
	case CheckpointRootRenamed:
		err = safefile.Rename(rep.RootFile, rep.MigratedFile)
	case CheckpointRootMerged:
		if err = p.writeRoot(rep.MigratedFile); err == nil {
			err = safefile.Remove(rep.RootFile)
		}
	case CheckpointRootRemoved:
		err = safefile.Remove(rep.RootFile)
	case CheckpointRootWritten:
		err = p.writeRoot(rep.RootFile)
	}
	if err != nil {
		return err
	}
	if err := checkpointForEach(len(p.removes), workers, func(i int) error { return safefile.Remove(p.removes[i]) }); err != nil {
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

// checkpointForEach calls f(0) ... f(n-1), at most workers at a time, and returns the
// first error. Once a call fails no new call starts, so that a failing disk
// is not hammered with the rest of the batch.
func checkpointForEach(n, workers int, f func(i int) error) error {
	var (
		next   atomic.Int64
		failed atomic.Bool
		once   sync.Once
		first  error
		wg     sync.WaitGroup
	)
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !failed.Load() {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := f(i); err != nil {
					once.Do(func() { first = err })
					failed.Store(true)
				}
			}
		}()
	}
	wg.Wait()
	return first
}
