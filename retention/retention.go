// Package retention deletes expired segments from Kafka partitions offline,
// with the rules a broker's retention thread applies (UnifiedLog
// deleteOldSegments), and with a segment's age taken from its records'
// timestamps as the timestamp proposal intended.
//
// # The rules
//
// Three rules run in Kafka's order, each on what the one before left:
//
//  1. log start offset (always): a segment goes when the next segment's base
//     offset is at or below the log start offset, which is the larger of the
//     partition's log-start-offset-checkpoint entry and the first segment's
//     base offset.
//  2. retention.bytes (a delete policy, RetentionBytes ≥ 0): when the
//     partition is at least that big, diff = size − retention.bytes, and from
//     the oldest segment on a segment goes while diff − its size ≥ 0, diff
//     shrinking by its size.
//  3. retention.ms (a delete policy, RetentionMs ≥ 0): from the oldest
//     segment on, a segment goes while now − largestTimestamp > retention.ms.
//
// Every rule stops at the first segment it keeps, never deletes a last
// segment that is empty, and never deletes a segment whose offsets reach the
// high watermark (UnifiedLog.deletableSegments): the replication-offset-
// checkpoint entry, clamped to [log start, log end]; without an entry the
// log end offset is assumed, since an offline copy has no replication state.
// When a rule would delete every segment, the log is first rolled: an empty
// segment (.log, .index, .timeindex) is created at the log end offset, as
// UnifiedLog.deleteSegments does, so a partition always keeps a segment.
//
// # Segment age
//
// A segment's largest timestamp is Kafka's LogSegment.largestTimestamp as a
// broker has it once it loaded the segment (logseg): the last .timeindex
// entry, or the records' timestamps for a segment the loader recovers (no
// .index), falling back to the .log file's modification time when no record
// has one (magic 0, or v1 messages written without). One case departs from
// Kafka: a broker creates a missing .timeindex empty and takes the
// modification time; here the records' timestamps count. Modification
// times are what the timestamp proposal replaced: a copy or a replica move
// resets them, and data copied that way would otherwise live another full
// retention period. Each deletion says which source applied.
//
// # On disk
//
// Apart from finishing interrupted work first (segswap.Recover, what a
// loader does too), nothing is changed until every partition of a log
// directory has been planned, so a segment whose batches cannot be read
// stops its partition with the file and byte position and no change. Then,
// per log directory:
//
//  1. each partition that needs one gets its rolled empty segment, every
//     file written through internal/safefile (the .log last);
//  2. log-start-offset-checkpoint gets the new log start offsets and
//     recovery-point-offset-checkpoint any entry below them, each file
//     replaced atomically with the other partitions' entries kept (a file
//     that is absent stays absent: a bare partition directory has no log
//     directory around it to write into);
//  3. per partition, leader-epoch-checkpoint is trimmed as
//     LeaderEpochFileCache.truncateFromStart does, each deleted segment's
//     files and the producer snapshots below the new start (all but the
//     newest at or below it) are renamed to "<name>.deleted", and the
//     .deleted files are removed. The epochs and snapshots are trimmed even
//     when no segment goes, as a broker's loader trims them.
//
// A crash at any step leaves what a broker's loader accepts: it removes
// .deleted files and index files without a .log, and takes the log start
// offset from the checkpoint, so segments below it go at its next retention
// pass. A re-run finishes the job: it first completes interrupted work
// (internal/segswap.Recover), and once step 2 is done the log start rule
// alone deletes what is left, whatever the clock says.
//
// Each partition gets its topic's configuration (Config, from package
// topicconfig): a topic whose cleanup.policy has no delete (compact, or
// empty) gets only the log start rule, as a broker's; a topic with remote
// storage is left alone.
package retention

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/logtool/logtool/internal/parallel"
	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/internal/segswap"
	"github.com/logtool/logtool/logfmt/checkpoint"
	"github.com/logtool/logtool/logfmt/layout"
	"github.com/logtool/logtool/logfmt/logseg"
	"github.com/logtool/logtool/topicconfig"
)

// Kafka's topic defaults (retention.ms, retention.bytes).
const (
	DefaultRetentionMs    = 7 * 24 * 60 * 60 * 1000 // 168 hours
	DefaultRetentionBytes = -1                      // no size limit
)

// Config is a topic's configuration as retention uses it (LogConfig).
type Config struct {
	// Delete is true when cleanup.policy holds delete: then the size and
	// time rules apply; without it only the log start rule does, as in
	// UnifiedLog.deleteOldSegments.
	Delete bool
	// Policy is cleanup.policy as configured, for the reason of a
	// partition only the log start rule applies to.
	Policy         string
	RetentionMs    int64 // retention.ms; -1 keeps segments forever
	RetentionBytes int64 // retention.bytes; -1 sets no limit
	// RemoteStorage is remote.storage.enable: a broker then deletes only
	// local segments remote storage holds, which is not known offline, so
	// such a partition is left alone.
	RemoteStorage bool
}

// TopicConfig is retention's part of a topic's effective configuration.
func TopicConfig(c *topicconfig.Config) Config {
	policy, _ := c.Get(topicconfig.CleanupPolicy)
	return Config{Delete: c.Delete, Policy: policy.Value, RetentionMs: c.RetentionMs, RetentionBytes: c.RetentionBytes,
		RemoteStorage: c.RemoteStorageEnable}
}

// ConfigNames are the topic configs retention uses: what a report of its
// settings lists.
var ConfigNames = []string{topicconfig.CleanupPolicy, topicconfig.RetentionMs, topicconfig.RetentionBytes, topicconfig.RemoteStorageEnable}

// Decisive are the topic configs that decide which segments retention
// deletes: a run does not guess them (topicconfig.Resolver.Gaps).
// remote.storage.enable has no broker-level value to miss.
var Decisive = []string{topicconfig.CleanupPolicy, topicconfig.RetentionMs, topicconfig.RetentionBytes}

// Options configure a run.
type Options struct {
	// Config is the configuration of a partition whose Job has none.
	Config
	NowMs   int64 // the clock of the time rule, ms since the epoch
	DryRun  bool  // plan and report, change nothing
	Workers int   // partitions processed at once; below 1 means 1
	// Done, when not nil, is called once per partition when it is finished,
	// from any goroutine, for progress reports.
	Done func(*Result)
}

// Job is one partition directory, with its topic's configuration.
type Job struct {
	Dir string
	// Config, when not nil, replaces Options.Config for the partition.
	Config *Config
	// Skip, when not "", leaves the partition alone and says why: a reason
	// the caller knows, such as a topic the cluster metadata does not know.
	Skip string
}

// Rule names why a segment was deleted.
type Rule string

const (
	RuleLogStart Rule = "log-start-offset" // entirely below the log start offset
	RuleBytes    Rule = "retention-bytes"  // the partition was over retention.bytes
	RuleTime     Rule = "retention-ms"     // its largest timestamp was older than retention.ms
)

// Timestamp is a segment's largest timestamp and where it came from.
type Timestamp struct {
	Ms     int64
	Source logseg.Source
}

// Deletion is one segment that was (or, in a dry run, would be) deleted.
type Deletion struct {
	Segment layout.Segment
	Bytes   int64 // size of the .log
	Rule    Rule
	// Largest is the timestamp the time rule compared; nil when another
	// rule deleted the segment and its timestamp was never read.
	Largest *Timestamp
}

// Result is what happened to one partition.
type Result struct {
	Dir       string
	Topic     string
	Partition int32 // -1 when the directory name is not "<topic>-<partition>"

	// Recovered lists what segswap.Recover did to finish an interrupted
	// operation before planning; Warnings what was odd but not fatal.
	Recovered []string
	Warnings  []string

	PreviousLogStartOffset int64
	LogStartOffset         int64
	LogEndOffset           int64
	HighWatermark          int64
	// HighWatermarkAssumed is true when replication-offset-checkpoint had no
	// entry for the partition and the log end offset was taken instead.
	HighWatermarkAssumed bool

	Deleted      []Deletion
	BytesDeleted int64
	// Rolled is the .log of the empty segment created at the log end offset
	// because every segment expired; "" when there was none.
	Rolled string
	// SnapshotsDeleted are the producer snapshots below the new log start
	// but the newest at or below it; EpochsTrimmed tells whether
	// leader-epoch-checkpoint lost entries below it. Both happen also when
	// no segment goes, as a broker's loader does them.
	SnapshotsDeleted []string
	EpochsTrimmed    bool

	SegmentsRemaining int
	BytesRemaining    int64
	// OldestRemaining is the largest timestamp of the oldest segment kept,
	// the one the time rule looks at next; nil when no record remains.
	OldestRemaining *Timestamp

	// Skipped is true when the partition was left alone: nothing was read,
	// and the fields below are zero.
	Skipped bool
	// LogStartOnly is true when the topic's cleanup.policy has no delete:
	// only the log start rule applied.
	LogStartOnly bool
	// Reason says which rules applied and why: the topic's policy, or why
	// the partition was skipped.
	Reason string

	// Err is what stopped the partition. A planning error means nothing
	// was changed; an error while deleting leaves a state a re-run or a
	// broker completes.
	Err error
}

// Rules returns the rules that deleted segments, in the order they ran.
func (r *Result) Rules() []Rule {
	var rules []Rule
	for _, d := range r.Deleted {
		if len(rules) == 0 || rules[len(rules)-1] != d.Rule {
			rules = append(rules, d.Rule)
		}
	}
	return rules
}

// writableCheck is dirWritable; a test replaces it, since the permission
// bits that would make a directory unwritable do not stop root, which CI
// runs as.
var writableCheck = dirWritable

// Run applies retention to partition directories of the log directory
// logDir (whose root holds the offset checkpoints), each with its topic's
// configuration. It returns one Result per job, in the given order. The error is for what stops the whole
// log directory: an unreadable root checkpoint, a directory it would change
// that is not writable (checked before any change), or a failure to write a
// root checkpoint, after which no segment of it is deleted.
//
// The caller must hold the log directory's lock unless o.DryRun is set.
func Run(logDir string, jobs []Job, o Options) ([]*Result, error) {
	dirs := make([]string, len(jobs))
	for i, j := range jobs {
		dirs[i] = j.Dir
	}
	roots, err := readRoots(logDir, dirs)
	if err != nil {
		return nil, err
	}
	if !o.DryRun {
		if err := checkWritable(logDir, jobs, writableCheck); err != nil {
			return nil, err
		}
	}
	results := make([]*Result, len(dirs))
	plans := make([]*plan, len(dirs))
	parallel.Each(len(dirs), o.Workers, func(i int) error {
		results[i], plans[i] = prepare(jobs[i], roots, o)
		if o.DryRun && o.Done != nil {
			o.Done(results[i])
		}
		return nil
	})
	if o.DryRun {
		return results, nil
	}
	if err := roots.update(plans); err != nil {
		for i, p := range plans {
			if p != nil && results[i].Err == nil {
				results[i].Err = fmt.Errorf("%s: not deleted: %w", dirs[i], err)
			}
			if o.Done != nil {
				o.Done(results[i])
			}
		}
		return results, err
	}
	parallel.Each(len(dirs), o.Workers, func(i int) error {
		if plans[i] != nil && results[i].Err == nil {
			results[i].Err = plans[i].deleteFiles()
		}
		if o.Done != nil {
			o.Done(results[i])
		}
		return nil
	})
	return results, nil
}

// prepare plans one partition and, unless this is a dry run, completes
// interrupted work first and rolls the log when it has to. It returns the
// plan only when there is something left to change on disk.
func prepare(j Job, roots *rootCheckpoints, o Options) (*Result, *plan) {
	dir := j.Dir
	r := &Result{Dir: dir, Partition: -1}
	if pd, err := layout.ParsePartitionDir(filepath.Base(filepath.Clean(dir))); err == nil {
		r.Topic, r.Partition = pd.Topic, pd.Partition
	}
	if j.Config != nil {
		o.Config = *j.Config
	}
	switch {
	case j.Skip != "":
		r.Skipped, r.Reason = true, j.Skip
		return r, nil
	case o.RemoteStorage:
		r.Skipped, r.Reason = true, "remote.storage.enable=true: a broker deletes only the segments remote storage holds, which is not known offline"
		return r, nil
	}
	r.LogStartOnly = !o.Delete
	if o.Policy != "" || r.LogStartOnly {
		r.Reason = "cleanup.policy=" + o.Policy
	}
	if r.LogStartOnly {
		r.Reason += ": only the log start offset rule applies"
	}
	if !o.DryRun {
		// Plan on the partition a loader would see: finish or roll back
		// what an interrupted run, of logtool or a broker, left.
		removed, err := safefile.RemoveTemps(dir, layout.OwnTemp)
		for _, f := range removed {
			r.Recovered = append(r.Recovered, "removed "+filepath.Base(f))
		}
		if err != nil {
			r.Err = err
			return r, nil
		}
		actions, err := segswap.Recover(dir)
		r.Recovered = append(r.Recovered, actions...)
		if err != nil {
			r.Err = err
			return r, nil
		}
	}
	p, err := newPlan(dir, roots, o, r)
	if err != nil {
		r.Err = err
		return r, nil
	}
	if o.DryRun || !p.changes() {
		return r, nil
	}
	if r.Rolled != "" {
		if err := p.roll(); err != nil {
			r.Err = err
			return r, nil
		}
	}
	return r, p
}

// rootCheckpoints are the log directory's offset checkpoints retention reads
// or writes. A checkpoint may list millions of partitions, so only the
// entries of the partitions being worked on are held, in the file's order
// and with their lines; the rest are streamed from the old file to the new
// one when a file is rewritten.
type rootCheckpoints struct {
	dir         string
	logStart    []checkpoint.OffsetEntry
	recovery    []checkpoint.OffsetEntry
	replication []checkpoint.OffsetEntry
	hasLogStart bool
	hasRecovery bool
	counts      map[string]int // all the entries of each file read
}

// readRoots reads the root checkpoints of logDir, keeping the entries of
// the partitions of dirs.
func readRoots(logDir string, dirs []string) (*rootCheckpoints, error) {
	rc := &rootCheckpoints{dir: logDir, counts: map[string]int{}}
	type key struct {
		topic     string
		partition int32
	}
	wanted := make(map[key]bool, len(dirs))
	for _, dir := range dirs {
		// The name newPlan looks the partition up by.
		if abs, err := filepath.Abs(dir); err == nil {
			dir = abs
		}
		if pd, err := layout.ParsePartitionDir(filepath.Base(dir)); err == nil {
			wanted[key{pd.Topic, pd.Partition}] = true
		}
	}
	var err error
	read := func(name string, entries *[]checkpoint.OffsetEntry) (found bool) {
		if err != nil {
			return false
		}
		n := 0
		rerr := checkpoint.ScanOffsetsFile(filepath.Join(logDir, name), func(e checkpoint.OffsetEntry) error {
			n++
			if wanted[key{e.Topic, e.Partition}] {
				*entries = append(*entries, e)
			}
			return nil
		})
		switch {
		case errors.Is(rerr, fs.ErrNotExist):
			return false
		case rerr != nil:
			*entries = nil
			err = rerr
			return false
		}
		rc.counts[name] = n
		return true
	}
	rc.hasLogStart = read(layout.LogStartOffsetCheckpointFile, &rc.logStart)
	rc.hasRecovery = read(layout.RecoveryPointCheckpointFile, &rc.recovery)
	read(layout.ReplicationOffsetCheckpointFile, &rc.replication)
	return rc, err
}

// write replaces the checkpoint name. entries are the ones read from it,
// in their order, with offsets changed, followed by new entries (Line 0).
// The other entries are copied from the old file, which is read again: once
// the new file is durable, it replaces the old one atomically.
func (rc *rootCheckpoints) write(name string, entries []checkpoint.OffsetEntry) error {
	path := filepath.Join(rc.dir, name)
	n := rc.counts[name]
	for _, e := range entries {
		if e.Line == 0 {
			n++
		}
	}
	return checkpoint.WriteOffsetsFile(path, n, func(write func(checkpoint.OffsetEntry) error) error {
		err := checkpoint.ScanOffsetsFile(path, func(e checkpoint.OffsetEntry) error {
			if len(entries) > 0 && entries[0].Line == e.Line {
				if entries[0].Topic != e.Topic || entries[0].Partition != e.Partition {
					return fmt.Errorf("%s: changed since it was read: line %d", path, e.Line)
				}
				e, entries = entries[0], entries[1:]
			}
			return write(e)
		})
		for _, e := range entries {
			if err == nil && e.Line != 0 {
				err = fmt.Errorf("%s: changed since it was read: line %d is gone", path, e.Line)
			}
			if err == nil {
				err = write(e)
			}
		}
		return err
	})
}

// lookup returns the offset of the last entry for the partition, as Kafka's
// map-building reader keeps the last of duplicate lines.
func lookup(entries []checkpoint.OffsetEntry, topic string, partition int32) (int64, bool) {
	off, ok := int64(0), false
	for _, e := range entries {
		if e.Topic == topic && e.Partition == partition {
			off, ok = e.Offset, true
		}
	}
	return off, ok
}
