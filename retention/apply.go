package retention

import (
	"path/filepath"
	"slices"

	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/logfmt/checkpoint"
	"github.com/logtool/logtool/logfmt/layout"
)

// roll creates the empty segment at the log end offset that takes over when
// every segment is deleted. The .log comes last: until it exists the index
// files are orphans, which a loader deletes and a re-run writes again.
func (p *plan) roll() error {
	for _, ext := range []string{layout.IndexExt, layout.TimeIndexExt, layout.LogExt} {
		if err := safefile.WriteFile(filepath.Join(p.dir, layout.SegmentName(p.rollBase, ext)), nil, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// update writes the new log start offsets into log-start-offset-checkpoint
// and raises recovery-point-offset-checkpoint entries that are below them,
// once for all partitions of the log directory. Both happen before any
// segment is deleted, so that after a crash the log start rule finishes the
// deletion whatever the clock or the limits of the next run.
func (rc *rootCheckpoints) update(plans []*plan) error {
	var named []*plan
	for _, p := range plans {
		if p != nil && p.named && len(p.res.Deleted) > 0 {
			named = append(named, p)
		}
	}
	if rc.hasLogStart {
		entries := slices.Clone(rc.logStart)
		changed := false
		for _, p := range named {
			found := false
			for i := range entries {
				if entries[i].Topic == p.res.Topic && entries[i].Partition == p.res.Partition {
					found = true
					changed = changed || entries[i].Offset != p.newStart
					entries[i].Offset = p.newStart
				}
			}
			if !found {
				entries = append(entries, checkpoint.OffsetEntry{Topic: p.res.Topic, Partition: p.res.Partition, Offset: p.newStart})
				changed = true
			}
		}
		if changed {
			if err := rc.write(layout.LogStartOffsetCheckpointFile, entries); err != nil {
				return err
			}
		}
	}
	if rc.hasRecovery {
		// UnifiedLog raises the recovery point with the log start offset; a
		// missing entry means "recover everything" and stays missing.
		entries := slices.Clone(rc.recovery)
		changed := false
		for _, p := range named {
			for i := range entries {
				if entries[i].Topic == p.res.Topic && entries[i].Partition == p.res.Partition && entries[i].Offset < p.newStart {
					entries[i].Offset, changed = p.newStart, true
				}
			}
		}
		if changed {
			return rc.write(layout.RecoveryPointCheckpointFile, entries)
		}
	}
	return nil
}

// deleteFiles trims the leader epochs and deletes the planned segments and
// snapshots the way UnifiedLog does asynchronously: every file is renamed
// "<name>.deleted" first, then removed. Each segment's .log goes last, so
// that until it does the segment is still listed and a re-run deletes the
// rest of it; a loader meanwhile rebuilds its missing indexes or deletes it
// as below the log start offset already written.
func (p *plan) deleteFiles() error {
	if p.epochs != nil {
		if err := safefile.WriteFile(p.epochPath, p.epochs, 0o644); err != nil {
			return err
		}
	}
	var renamed []string
	rename := func(path string) error {
		if path == "" {
			return nil
		}
		if err := safefile.Rename(path, path+layout.DeletedSuffix); err != nil {
			return err
		}
		renamed = append(renamed, path+layout.DeletedSuffix)
		return nil
	}
	for _, d := range p.res.Deleted {
		for _, path := range []string{d.Segment.Index, d.Segment.TimeIndex, d.Segment.TxnIndex, d.Segment.Log} {
			if err := rename(path); err != nil {
				return err
			}
		}
	}
	for _, path := range p.snapshots {
		if err := rename(path); err != nil {
			return err
		}
	}
	for _, path := range renamed {
		if err := safefile.Remove(path); err != nil {
			return err
		}
	}
	return nil
}
