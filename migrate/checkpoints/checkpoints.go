// Package checkpoints moves a log directory's cleaner offsets between
// Kafka's per-disk cleaner-offset-checkpoint and logtool's per-partition
// cleaner-checkpoint files, and back (--reverse). Every change is written
// through internal/safefile while the log directory's lock is held, and the
// steps are ordered so that running it again after a crash at any one
// finishes the job.
package checkpoints

import (
	"errors"
	"fmt"

	"github.com/logtool/logtool/internal/refuse"
	"github.com/logtool/logtool/logfmt/layout"
)

// MigratedFile is the name a log directory's
// cleaner-offset-checkpoint is given once its entries live in per-partition
// files. A broker does not read it; it is the way back (--reverse) and the
// home of entries whose partition is not in the log directory.
const MigratedFile = layout.CleanerOffsetCheckpointFile + ".migrated"

// CleanTimeSource says what forward migration records as each partition's
// last clean time. The version-0 root file has no such time, so every
// choice is a guess; see Options.CleanTime.
type CleanTimeSource int

const (
	// CleanTimeUnknown records -1, under which compaction falls back to
	// Kafka's legacy delete horizon (the modification time of the last
	// cleaned segment). It claims nothing, so it is the default.
	CleanTimeUnknown CleanTimeSource = iota
	// CleanTimeFileMtime records the modification time of the log
	// directory's cleaner-offset-checkpoint. It can make tombstones expire
	// too early; see Options.CleanTime.
	CleanTimeFileMtime
	// CleanTimeFixed records Options.CleanTimeMs.
	CleanTimeFixed
)

func (s CleanTimeSource) String() string {
	switch s {
	case CleanTimeUnknown:
		return "unknown"
	case CleanTimeFileMtime:
		return "file-mtime"
	case CleanTimeFixed:
		return "fixed"
	}
	return fmt.Sprintf("CleanTimeSource(%d)", int(s))
}

// Options configures Migrate.
type Options struct {
	// LogDirs are the log directories to convert, each with its own root
	// cleaner-offset-checkpoint (a JBOD broker has several).
	LogDirs []string

	// Reverse rebuilds each version-0 root file from the per-partition
	// files instead, so that a broker that knows only the old format can run
	// on the directory again.
	Reverse bool

	// CleanTime picks the clean time of forward migration.
	//
	// CleanTimeFileMtime is risky. The delete horizon is the clean time
	// minus delete.retention.ms, so a clean time later than the real one
	// moves the horizon forward and drops tombstones a consumer reading from
	// the start may still need: the failure of KAFKA-4545. The root file's
	// modification time is exactly such a late time. The cleaner rewrites
	// the file after a pass over any partition of the log directory, and
	// when a partition is truncated or deleted. For an idle partition on a
	// busy disk, the time can be days after that partition's own last pass.
	// Copying the directory without keeping times can move it to any
	// moment. Use it only when every compacted partition of the directory
	// was cleaned shortly before the file was last written.
	CleanTime   CleanTimeSource
	CleanTimeMs int64 // the time for CleanTimeFixed, in ms since the epoch; at least 0

	// KeepOld leaves the source in place: forward keeps
	// cleaner-offset-checkpoint instead of renaming it, and reverse keeps
	// the per-partition files and the .migrated file.
	KeepOld bool

	// Overwrite lets the source win where the destination already holds a
	// different offset for a partition. Without it such a run writes
	// nothing and fails with ErrConflict.
	Overwrite bool

	// DryRun plans and reports without writing anything.
	DryRun bool

	// Workers is how many per-partition files are written or removed at
	// once; less than 1 means 1.
	Workers int
}

// ErrConflict is wrapped by the error of a run that would replace
// a partition's checkpoint with a different offset without Overwrite.
var ErrConflict = refuse.New("would replace a different checkpoint")

// Action is what a run does, or in a dry run would do, with one
// entry.
type Action string

const (
	// Write: the destination gets the entry; it had none for the partition.
	Write Action = "write"
	// Replace: the destination held another offset; Overwrite was set.
	Replace Action = "replace"
	// Unchanged: the destination already holds this offset.
	Unchanged Action = "unchanged"
	// Absent: forward found no live directory for the partition
	// in this log directory; the entry stays in the root file's new name
	// (or in the root file itself with KeepOld).
	Absent Action = "absent"
	// Duplicate: forward found the partition listed again on a
	// later line of the root file. Kafka reads the entries into a map, so
	// the later line wins and this one is not migrated.
	Duplicate Action = "duplicate"
)

// RootAction is what a run does with the log directory's
// version-0 root file.
type RootAction string

const (
	// RootNone: there was nothing to convert.
	RootNone RootAction = "none"
	// RootRenamed: forward renamed the root file to MigratedFile.
	RootRenamed RootAction = "renamed"
	// RootMerged: forward found a .migrated file from an earlier
	// migration holding partitions the root file lacks, rewrote it with the
	// root file's entries followed by those, and removed the root file.
	RootMerged RootAction = "merged"
	// RootRemoved: forward removed the root file, whose entries
	// the .migrated file already held (a re-run after a crash).
	RootRemoved RootAction = "removed"
	// RootKept: forward with KeepOld left the root file as it was.
	RootKept RootAction = "kept"
	// RootWritten: reverse wrote the root file.
	RootWritten RootAction = "written"
	// RootUnchanged: reverse found the root file already holding
	// the entries it would write.
	RootUnchanged RootAction = "unchanged"
)

// Report is what Migrate did, or would do.
type Report struct {
	Reverse bool
	DryRun  bool
	LogDirs []*LogDir // in the order of Options.LogDirs
}

// LogDir is the report for one log directory.
type LogDir struct {
	Path         string
	RootFile     string // Path/cleaner-offset-checkpoint
	MigratedFile string // Path/cleaner-offset-checkpoint.migrated
	// HadRoot and HadMigrated tell whether RootFile and MigratedFile
	// existed when the run began.
	HadRoot, HadMigrated bool
	Root                 RootAction
	// RemovedMigrated: reverse removed MigratedFile once the root file held
	// all its entries.
	RemovedMigrated bool
	// Entries are sorted by topic and partition. They list every entry of a
	// partition directory of the log directory, but only the first 1000 of
	// the others: entries of partitions that are not here, and, forward,
	// lines a later line of the same partition overrides. A damaged root
	// file may hold millions of them.
	Entries []Entry
	// Unlisted counts the entries left out of Entries. The run does with
	// them what it does with the listed ones of their kind: forward leaves
	// them where they are, reverse writes them to the root file.
	Unlisted int
	Skipped  []SkippedDir // renamed partition directories, never touched
	// TempsRemoved are temporary files an interrupted run left behind.
	TempsRemoved []string
	// Changed tells whether anything was (or would be) written, renamed or
	// removed. A completed migration run again reports false.
	Changed bool
}

// Entry is one partition's cleaner checkpoint on its way.
type Entry struct {
	Topic     string
	Partition int32
	Offset    int64 // first dirty offset
	// CleanTimeMs is the clean time in the per-partition file: the one
	// written, the one already there when unchanged, and in reverse the one
	// that the version-0 format cannot keep. -1 when unknown.
	CleanTimeMs int64
	Action      Action
	From        string // file the entry is taken from
	File        string // file that holds the entry after the run
	Line        int    // line of From when From is a root file, else 0
	// PreviousOffset is the offset File held before, with Replace.
	PreviousOffset int64
	// Removed: reverse removed the per-partition file From after the root
	// file holding its entry was durable.
	Removed bool
	Note    string // why, for entries that are not simply moved
}

// SkippedDir is a partition directory that Kafka renamed while
// deleting or moving the partition. Migration never writes into it.
type SkippedDir struct {
	Path string
	Kind layout.DirKind
}

// Migrate moves the cleaner checkpoints of each log directory
// between Kafka's one-file-per-disk format and logtool's per-partition
// cleaner-checkpoint files.
//
// Forward, each entry of <logdir>/cleaner-offset-checkpoint goes to
// <partition dir>/cleaner-checkpoint with the clean time of opts.CleanTime.
// Only when all those files are durable is the root file renamed
// cleaner-offset-checkpoint.migrated, which is therefore the commit point:
// a re-run after a crash before it finds the root file again and writes
// what is missing (the files it already wrote hold the same offsets), and
// a re-run after it finds nothing to do. If a .migrated file already exists
// (a broker ran on the old format after an earlier migration and made a new
// root file), the root file wins, the .migrated file keeps any partitions
// only it has, and the root file is removed once that merged file is
// durable.
//
// Reverse writes the root file from the per-partition files, then, unless
// KeepOld, removes them and the .migrated file. An entry comes from the
// partition's file when there is one, else from an existing root file,
// else from the .migrated file. So a re-run after a crash finds the entries
// of files already removed in the root file it wrote first.
//
// Both directions leave partition directories without an entry alone and
// never touch -delete, -future or -stray directories. Before writing, every
// log directory is read in full: a malformed file, an invalid topic name or
// a conflict stops the run with nothing written anywhere. Malformed files
// give a *logfmt.CorruptError.
//
// The log directories must be distinct real paths (target.Resolve gives
// them), and the caller holds their locks (target.Set.Lock), unless DryRun.
func Migrate(opts Options) (rep *Report, err error) {
	if err := checkOptions(opts); err != nil {
		return nil, err
	}
	plans := make([]*checkpointPlan, len(opts.LogDirs))
	for i, dir := range opts.LogDirs {
		if plans[i], err = planCheckpoints(dir, opts); err != nil {
			return nil, err
		}
	}
	rep = &Report{Reverse: opts.Reverse, DryRun: opts.DryRun}
	for _, p := range plans {
		if !opts.DryRun {
			if err := p.apply(max(opts.Workers, 1)); err != nil {
				return nil, err
			}
		}
		rep.LogDirs = append(rep.LogDirs, p.rep)
	}
	return rep, nil
}

func checkOptions(opts Options) error {
	if len(opts.LogDirs) == 0 {
		return errors.New("no log directory given")
	}
	if opts.CleanTime < CleanTimeUnknown || opts.CleanTime > CleanTimeFixed {
		return fmt.Errorf("unknown clean time source %v", opts.CleanTime)
	}
	if opts.CleanTime == CleanTimeFixed && opts.CleanTimeMs < 0 {
		return fmt.Errorf("clean time %d ms is before 1970", opts.CleanTimeMs)
	}
	return nil
}
