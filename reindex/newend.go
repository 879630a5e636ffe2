package reindex

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sync"

	"github.com/logtool/logtool/internal/lockfile"
	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/logfmt/checkpoint"
	"github.com/logtool/logtool/logfmt/layout"
	"github.com/logtool/logtool/logfmt/logseg"
	"github.com/logtool/logtool/logfmt/snapshot"
)

// rootMu serialises the rewrites of root checkpoints: partitions of one log
// directory are worked on at once, and each rewrite copies the whole file.
var rootMu sync.Mutex

// newEnd brings what says the partition goes past end, the log end offset
// its last segment's cut leaves, down to end, as a broker's load does:
// the recovery point becomes min(recovery point, log end)
// (LogLoader.recoverLog), the high watermark is bounded by the log end
// (UnifiedLog.updateHighWatermark), the leader epochs starting at or past
// it are dropped (LeaderEpochFileCache.truncateFromEnd), and the broker
// writes those values back; the producer snapshots past it are removed
// (ProducerStateManager.truncateAndReload). The cleaner offset, in the root
// file or logtool's per-partition one, is lowered as a broker's truncation
// lowers it (LogCleanerManager.maybeTruncateCheckpoint): what lies below the
// new end was cleaned. Until then verify counts each as damage.
//
// It runs after the backup is durable and before the .log is cut, so a run
// killed after it leaves checkpoints that are right for the log's valid
// batches either way, and a rerun finds the tail and cuts it. A high
// watermark or log start offset past end is said: consumers may have read
// the records up to the high watermark, and a log start past the end makes
// a broker delete every segment.
func (r *run) newEnd(end int64) error {
	p, dry := r.p, r.o.Mode == DryRun
	if p.Dir.Topic != "" && p.Dir.Kind == layout.Normal {
		logDir := filepath.Dir(p.Path)
		for _, name := range []string{layout.RecoveryPointCheckpointFile, layout.ReplicationOffsetCheckpointFile, layout.CleanerOffsetCheckpointFile} {
			if err := r.lowerRoot(logDir, name, end, dry); err != nil {
				return err
			}
		}
		// r.logStart is 0 when the file could not be read, which
		// Partition has said already.
		if r.logStart > end {
			r.c.note(filepath.Join(logDir, layout.LogStartOffsetCheckpointFile), fmt.Sprintf(
				"warning: the log start offset %d of %s is past the log end offset %d after the cut: a broker deletes every segment of the partition when it loads it and starts it empty at %d",
				r.logStart, p.Dir.Name, end, r.logStart))
		}
	}
	if err := r.dropEpochs(end, dry); err != nil {
		return err
	}
	if err := r.lowerCleaner(end, dry); err != nil {
		return err
	}
	return r.dropSnapshots(end, dry)
}

// dropSnapshots removes the producer snapshots past end. Only names the
// listing parsed as snapshots are removed.
func (r *run) dropSnapshots(end int64, dry bool) error {
	for _, path := range r.p.Snapshots {
		off, ok := snapshot.OffsetFromName(filepath.Base(path))
		if !ok || off <= end {
			continue
		}
		if dry {
			r.c.note(path, fmt.Sprintf("would remove: a producer snapshot at offset %d, past the log end offset %d after the cut", off, end))
		} else {
			if err := safefile.Remove(path); err != nil {
				return err
			}
			r.c.note(path, fmt.Sprintf("removed: a producer snapshot at offset %d, past the log end offset %d after the cut, as a broker's recovery removes it", off, end))
		}
		r.c.rep.Snapshots = append(r.c.rep.Snapshots, path)
	}
	return nil
}

// lowerRoot brings the partition's entry in the root checkpoint name down to
// end. The file is the whole log directory's, so it is rewritten only under
// the directory's lock.
func (r *run) lowerRoot(logDir, name string, end int64, dry bool) error {
	path := filepath.Join(logDir, name)
	old, ok, err := logseg.RootOffset(r.p, name)
	if err != nil || !ok || old <= end {
		return err
	}
	what, verb, as := "recovery point", "would lower", "load"
	if name == layout.CleanerOffsetCheckpointFile {
		what, as = "cleaner offset", "truncation"
	}
	if name == layout.ReplicationOffsetCheckpointFile {
		what = "high watermark"
		gone := "the cut removes them"
		if dry {
			gone = "the cut would remove them"
		}
		r.c.note(path, fmt.Sprintf("warning: the records at offsets %d to %d of %s were below its high watermark %d, so consumers may have read them; %s",
			end, old-1, r.p.Dir.Name, old, gone))
	}
	if !dry {
		if !lockfile.Holding(logDir) {
			return fmt.Errorf("%s: not rewritten: the log directory's lock is not held by this run", path)
		}
		rootMu.Lock()
		_, err := checkpoint.LowerOffsetsFile(path, r.p.Dir.Topic, r.p.Dir.Partition, end)
		rootMu.Unlock()
		if err != nil {
			return err
		}
		verb = "lowered"
	}
	r.c.note(path, fmt.Sprintf("%s the %s of %s from %d to the log end offset %d after the cut, as a broker's %s does", verb, what, r.p.Dir.Name, old, end, as))
	r.c.rep.Checkpoints = append(r.c.rep.Checkpoints, path)
	return nil
}

// dropEpochs removes the entries of leader-epoch-checkpoint that start at
// or past end.
func (r *run) dropEpochs(end int64, dry bool) error {
	path := filepath.Join(r.p.Path, layout.LeaderEpochCheckpointFile)
	old, err := safefile.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	entries, err := checkpoint.ReadLeaderEpochs(bytes.NewReader(old), path)
	if err != nil {
		// A broker fails on it, cut or not: it is not reindex's to repair.
		r.c.note(path, fmt.Sprintf("not read (%s): its leader epochs past the log end offset %d after the cut are left", message(err), end))
		return nil
	}
	kept := entries
	for len(kept) > 0 && kept[len(kept)-1].StartOffset >= end {
		kept = kept[:len(kept)-1]
	}
	if len(kept) == len(entries) {
		return nil
	}
	verb := "would remove"
	if !dry {
		if err := safefile.WriteFile(path, checkpoint.AppendLeaderEpochs(nil, kept), 0o644); err != nil {
			return err
		}
		verb = "removed"
	}
	r.c.note(path, fmt.Sprintf("%s the %d leader epoch(s) starting at or past the log end offset %d after the cut, as a broker's load does", verb, len(entries)-len(kept), end))
	r.c.rep.Checkpoints = append(r.c.rep.Checkpoints, path)
	return nil
}

// lowerCleaner lowers the first dirty offset of logtool's per-partition
// cleaner-checkpoint to end, keeping its clean time.
func (r *run) lowerCleaner(end int64, dry bool) error {
	path := filepath.Join(r.p.Path, layout.CleanerCheckpointFile)
	b, err := safefile.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	cc, err := checkpoint.ReadCleaner(bytes.NewReader(b), path)
	if err != nil {
		r.c.note(path, fmt.Sprintf("not read (%s): its first dirty offset is left, whatever the log end offset %d after the cut", message(err), end))
		return nil
	}
	if cc.FirstDirtyOffset <= end {
		return nil
	}
	old, verb := cc.FirstDirtyOffset, "would lower"
	if !dry {
		cc.FirstDirtyOffset = end
		if err := safefile.WriteFile(path, checkpoint.AppendCleaner(nil, cc), 0o644); err != nil {
			return err
		}
		verb = "lowered"
	}
	r.c.note(path, fmt.Sprintf("%s the first dirty offset from %d to the log end offset %d after the cut, as a broker's truncation does", verb, old, end))
	r.c.rep.Checkpoints = append(r.c.rep.Checkpoints, path)
	return nil
}
