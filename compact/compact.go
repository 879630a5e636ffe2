// Package compact compacts the partitions of a stopped broker's log
// directory with the semantics of Kafka's log cleaner (LogCleaner,
// LogCleanerManager, Cleaner, LogToClean, MemoryRecords.filterTo), and turns
// max.compaction.lag.ms into a hard deadline.
//
// # Choosing what to clean
//
// The first dirty offset comes from the partition's own cleaner-checkpoint
// (logtool's per-partition file, which also records when the last pass ran),
// else from the log directory's cleaner-offset-checkpoint, else it is the
// log start offset; an offset outside [log start, log end] is reset to the log
// start as LogCleanerManager.cleanableOffsets does. The first uncleanable
// offset is the least of the active segment's base offset, the last stable
// offset (the first offset of the earliest open transaction, from the
// producer snapshots and the log after them, bounded by the high watermark in
// replication-offset-checkpoint) and, with a minimum lag, the first segment
// whose largest timestamp is younger than now − min lag; it is then rounded
// down to a segment's base offset. A partition is eligible when its dirty
// ratio, cleanable / (clean + cleanable) bytes, exceeds the minimum, or when
// the first batch of a dirty non-active segment is older than now − max lag
// and there is something to clean.
//
// # Where Kafka's guarantee is soft, this package makes it hard
//
//   - Kafka rolls the active segment only when a new record arrives, so the
//     records of an idle partition can outlive the max lag forever. Here an
//     active segment whose first batch is older than the max lag is treated as
//     rolled and cleaned. Its last batch stays, emptied if nothing in it
//     survives, so the log end offset is kept (KAFKA-17076's rule, applied to
//     the whole log).
//   - When the offset map fills, Kafka cleans up to where it filled and waits
//     for its next round; here further passes run until the cleanable range
//     is clean.
//   - Tombstones and transaction markers whose delete horizon has passed are
//     removed even when the partition is not otherwise eligible.
//   - With a max lag, a tombstone goes once max lag + delete retention have
//     passed since its batch was written, whatever horizon a late first pass
//     gave it (deadline.go): the deadline a cleaner keeping the max lag would
//     have met.
//
// # Cleaning
//
// Each pass is Cleaner.doClean: an offset map of the latest offset of every
// key in the dirty range, then the log from its start up to where the map
// ends, in groups of segments (groupSegmentsBySize), each rewritten into one
// new segment. A record survives when it is past the map, or when it is the
// latest of its key and either has a value or is a tombstone whose delete
// horizon has not passed; keyless records in the map's range go. Aborted
// transactional data goes; markers go once no data of their transaction
// remains and their own horizon has passed; the last batch of every active
// producer stays, emptied if need be. Batches that lose nothing are copied
// byte for byte; others are rebuilt with their codec, base offset, last
// offset delta and producer fields, and a v2 batch that keeps a tombstone or
// an empty transaction's marker gets the KIP-534 delete horizon now + delete
// retention. Legacy (magic 0 and 1) records have no horizon of their own:
// when the partition's cleaner-checkpoint records when the last pass ran,
// their tombstones in the clean section go once that time is a delete
// retention old; otherwise Kafka's rule applies, which compares segment
// modification times. Rebuilt legacy wrappers keep their magic and the
// offsets of their records, holes included, as Kafka 3.x writes them.
//
// New segments get .index and .timeindex files as LogSegment.recover builds
// them and a .txnindex of the aborted transactions whose markers they keep,
// and are installed with Kafka's ".cleaned" → ".swap" → rename protocol
// (internal/segswap), so a crash at any step leaves a directory that both a
// broker and a re-run of logtool turn into the old or the new segments.
// After each pass the partition's cleaner-checkpoint records the new first
// dirty offset and the time of the pass; the log directory's
// cleaner-offset-checkpoint is updated too when it exists.
//
// Memory is the offset map, allocated for the keys the dirty range can
// hold (one an offset) and never past Options.OffsetMapMemory, which
// decides, as Kafka's dedupe buffer does, where the map is full, plus per pass a bitmap of at most 8 MiB (one bit per dirty offset),
// a read window, one batch, the index entries of the segment being written
// (16 bytes per 4 KiB of it) and the partition's aborted transactions:
// segments are streamed, never read whole.
package compact

import (
	"fmt"
	"math"

	"github.com/logtool/logtool/internal/fielderr"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/topicconfig"
)

// Unlimited is the MaxLag that never triggers, Kafka's default
// max.compaction.lag.ms.
const Unlimited = math.MaxInt64

// Config is a topic's configuration as the cleaner uses it (LogConfig): each
// partition is cleaned with its own topic's.
type Config struct {
	// Compact is true when cleanup.policy holds compact: LogCleanerManager
	// cleans no other log. DefaultOptions sets it, for a partition its
	// caller chose to compact.
	Compact bool
	// Policy is cleanup.policy as configured; a partition that is not
	// compacted gives it as the reason.
	Policy             string
	MaxLag             int64   // max.compaction.lag.ms; Unlimited to disable
	MinLag             int64   // min.compaction.lag.ms
	MinCleanableRatio  float64 // min.cleanable.dirty.ratio, compared with >
	DeleteRetention    int64   // delete.retention.ms
	SegmentBytes       int64   // segment.bytes, the size limit of a group
	SegmentIndexBytes  int64   // segment.index.bytes, the index size limit of a group
	IndexIntervalBytes int64   // index.interval.bytes of the rebuilt indexes
}

// TopicConfig is the cleaner's part of a topic's effective configuration.
func TopicConfig(c *topicconfig.Config) Config {
	policy, _ := c.Get(topicconfig.CleanupPolicy)
	return Config{
		Compact: c.Compact, Policy: policy.Value,
		MaxLag: c.MaxCompactionLagMs, MinLag: c.MinCompactionLagMs, MinCleanableRatio: c.MinCleanableDirtyRatio,
		DeleteRetention: c.DeleteRetentionMs, SegmentBytes: int64(c.SegmentBytes),
		SegmentIndexBytes: int64(c.SegmentIndexBytes), IndexIntervalBytes: int64(c.IndexIntervalBytes),
	}
}

// ConfigNames are the topic configs the cleaner uses, in Config's order:
// what a report of its settings lists.
var ConfigNames = []string{
	topicconfig.CleanupPolicy, topicconfig.MaxCompactionLagMs, topicconfig.MinCompactionLagMs,
	topicconfig.MinCleanableDirtyRatio, topicconfig.DeleteRetentionMs, topicconfig.SegmentBytes,
	topicconfig.SegmentIndexBytes, topicconfig.IndexIntervalBytes,
}

// Decisive are the topic configs that decide what the cleaner removes or
// rewrites: a run does not guess them (topicconfig.Resolver.Gaps). The
// segment and index sizes only shape what it writes.
var Decisive = []string{
	topicconfig.CleanupPolicy, topicconfig.MaxCompactionLagMs, topicconfig.MinCompactionLagMs,
	topicconfig.MinCleanableDirtyRatio, topicconfig.DeleteRetentionMs,
}

// Options are the cleaner settings: the run's, and Config, the topic's.
type Options struct {
	Now int64 // the clock for the whole run, ms since the epoch
	Config
	OffsetMapMemory      int64       // bytes of one offset map (log.cleaner.dedupe.buffer.size per thread)
	ProducerIDExpiration int64       // producer.id.expiration.ms: older idle producers' last batches are not protected
	MaxRecordBytes       int         // the largest record read from a compressed batch (logfmt.RecordIter); 0 for the default
	Job                  *logfmt.Job // the partition's job, which its readers hold large entries against
	DryRun               bool        // plan and simulate the first pass, write nothing
	// BatchWorkers decode a partition's batches in its passes
	// (logfmt.DeepReader); Run shares its workers out. Below 2, the pass's
	// own goroutine does.
	BatchWorkers int
	// Progress, when set, is told of the .log bytes a pass will read (todo)
	// as it starts, and of those it has read (done) a segment at a time;
	// workers call it concurrently.
	Progress func(done, todo int64)

	parseAll  bool // read every batch's records, for tests of the shortcut that skips dead ones
	rereadAll bool // rebuild every batch from a second read, for tests of what batches too large to hold take
}

// recordIter is a record iterator for these options.
func (o *Options) recordIter() logfmt.RecordIter {
	return logfmt.RecordIter{MaxRecordBytes: o.MaxRecordBytes}
}

// DefaultOptions are Kafka's defaults, with now as the clock.
func DefaultOptions(now int64) Options {
	return Options{
		Now: now,
		Config: Config{
			Compact: true, Policy: "compact",
			MaxLag:             Unlimited,
			MinCleanableRatio:  0.5,
			DeleteRetention:    86_400_000,
			SegmentBytes:       1 << 30,
			SegmentIndexBytes:  10 << 20,
			IndexIntervalBytes: 4096,
		},
		OffsetMapMemory:      128 << 20,
		ProducerIDExpiration: 86_400_000,
	}
}

// Check reports settings Kafka would reject, naming them by Kafka's
// configs; the run's own settings, which Kafka has no config for, by their
// field (a *fielderr.Error).
func (o *Options) Check() error {
	if err := o.Config.Check(); err != nil {
		return err
	}
	if o.ProducerIDExpiration < 1 {
		return fmt.Errorf("producer.id.expiration.ms %d: want at least 1 ms", o.ProducerIDExpiration)
	}
	if o.MaxRecordBytes < 0 {
		return fielderr.New("MaxRecordBytes", "want 0 or more, got %d", o.MaxRecordBytes)
	}
	if _, err := mapSlots(o.OffsetMapMemory); err != nil {
		return err
	}
	return nil
}

// Check reports a topic configuration Kafka would reject (LogConfig's
// validators, and its check that the minimum lag is not above the maximum).
func (c *Config) Check() error {
	switch {
	case c.MaxLag < 1:
		return fmt.Errorf("max.compaction.lag.ms %d: want at least 1 ms", c.MaxLag)
	case c.MinLag < 0:
		return fmt.Errorf("min.compaction.lag.ms %d: want 0 or more", c.MinLag)
	case c.MinLag > c.MaxLag:
		return fmt.Errorf("min.compaction.lag.ms %d is above max.compaction.lag.ms %d", c.MinLag, c.MaxLag)
	case math.IsNaN(c.MinCleanableRatio) || c.MinCleanableRatio < 0 || c.MinCleanableRatio > 1:
		return fmt.Errorf("min.cleanable.dirty.ratio %v: want a value in [0, 1]", c.MinCleanableRatio)
	case c.DeleteRetention < 0:
		return fmt.Errorf("delete.retention.ms %d: want 0 or more", c.DeleteRetention)
	case c.SegmentBytes < 14 || c.SegmentBytes > math.MaxInt32:
		return fmt.Errorf("segment.bytes %d: want at least 14 and at most %d", c.SegmentBytes, math.MaxInt32)
	case c.SegmentIndexBytes < 4:
		return fmt.Errorf("segment.index.bytes %d: want at least 4", c.SegmentIndexBytes)
	case c.IndexIntervalBytes < 0:
		return fmt.Errorf("index.interval.bytes %d: want 0 or more", c.IndexIntervalBytes)
	}
	return nil
}

// Result is the report of one partition.
type Result struct {
	Dir       string `json:"-"`
	Name      string `json:"-"` // the partition directory's name
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"` // -1 when the directory's name is not a partition's

	Eligible bool   `json:"eligible"`
	Reason   string `json:"reason"`
	DryRun   bool   `json:"dryRun"`

	FirstDirtyOffset       int64   `json:"firstDirtyOffset"`
	FirstUncleanableOffset int64   `json:"firstUncleanableOffset"`
	CheckpointSource       string  `json:"checkpointSource"` // where FirstDirtyOffset came from
	LogStartOffset         int64   `json:"logStartOffset"`
	LogEndOffset           int64   `json:"logEndOffset"`
	LastStableOffset       int64   `json:"lastStableOffset"`
	CleanBytes             int64   `json:"cleanBytes"`
	CleanableBytes         int64   `json:"cleanableBytes"`
	CleanableRatio         float64 `json:"cleanableRatio"`
	MaxLagExceededByMs     int64   `json:"maxLagExceededByMs"`
	ActiveSegmentRolled    bool    `json:"activeSegmentRolled"` // the idle active segment was cleaned as if rolled

	Passes            int   `json:"passes"`
	NewDirtyOffset    int64 `json:"newFirstDirtyOffset"` // the checkpoint after the run (planned, in a dry run)
	SegmentsBefore    int   `json:"segmentsBefore"`
	SegmentsAfter     int   `json:"segmentsAfter"`
	BytesBefore       int64 `json:"bytesBefore"`
	BytesAfter        int64 `json:"bytesAfter"`
	RecordsBefore     int64 `json:"recordsBefore"` // records of the segments rewritten, before
	RecordsAfter      int64 `json:"recordsAfter"`  // and after
	TombstonesRemoved int64 `json:"tombstonesRemoved"`

	Warnings []string `json:"warnings,omitempty"`

	// Error is why the partition failed, "" when it did not. The other
	// fields are then what was known when it failed: the plan, if it was
	// made (Eligible and Reason are its verdict, not an outcome), and the
	// passes completed before, whose segments are in place. A dry run, or a
	// failure in the first pass, leaves the partition as it was.
	Error string `json:"error,omitempty"`
}
