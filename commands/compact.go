package commands

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/logtool/logtool/compact"
	"github.com/logtool/logtool/internal/target"
	"github.com/logtool/logtool/topicconfig"
)

func compactCommand() *cli.Command {
	return &cli.Command{
		Name:        "compact",
		Category:    "repair and convert",
		Usage:       "one-shot offline log compaction with Kafka's cleaner semantics and the max lag as a hard deadline",
		ArgsUsage:   "PATH...",
		Description: description("compact"),
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "max-lag", Usage: "max.compaction.lag.ms: a partition whose oldest dirty record is older is compacted, idle active segment included (default: the topic's configuration, else Kafka's default, unlimited)"},
			&cli.StringFlag{Name: "min-lag", Usage: "min.compaction.lag.ms: segments with a record younger than this are not cleaned (default: the topic's configuration, else Kafka's default, 0)"},
			&cli.StringFlag{Name: "min-cleanable-ratio", Usage: "min.cleanable.dirty.ratio: compact when dirty / (clean + dirty) bytes exceeds it (default: the topic's configuration, else Kafka's default, 0.5)"},
			&cli.StringFlag{Name: "delete-retention", Usage: "delete.retention.ms: how long tombstones and markers outlive the first pass that keeps them (default: the topic's configuration, else Kafka's default, 24h)"},
			&cli.StringFlag{Name: "segment-bytes", Usage: "segment.bytes: segments are grouped for cleaning up to this size, as Kafka groups them by their size before cleaning (default: the topic's configuration, else Kafka's default, 1GiB)"},
			&cli.StringFlag{Name: "now", Usage: "the clock for the whole run, ms or RFC 3339 (default: the wall clock)"},
			&cli.StringFlag{Name: "offset-map-memory", Value: "128MiB", Usage: "log.cleaner.dedupe.buffer.size: offset map memory, shared among --workers; 24 bytes per key"},
			&cli.StringFlag{Name: "producer-id-expiration", Value: "24h", Usage: "producer.id.expiration.ms: idle producers older than this lose the protection of their last batch"},
			&cli.StringFlag{Name: "topic", Usage: "only topics whose whole name matches this regular expression (default: every topic)"},
			&cli.BoolFlag{Name: "dry-run", Usage: "plan and simulate the first pass; write nothing"},
		}, topicConfigFlags("cleanup.policy for every topic of the run: compact, delete or compact,delete (default: the topic's configuration; without one, the partitions chosen on the command line are compacted)")...),
		Action: runCompact,
	}
}

// compactFlags are compact's flags that set topic configs.
var compactFlags = []flagConfig{
	{"max-lag", topicconfig.MaxCompactionLagMs, or("unlimited", strconv.FormatInt(compact.Unlimited, 10), durationValue(1))},
	{"min-lag", topicconfig.MinCompactionLagMs, durationValue(0)},
	{"min-cleanable-ratio", topicconfig.MinCleanableDirtyRatio, nil},
	{"delete-retention", topicconfig.DeleteRetentionMs, durationValue(0)},
	// segment.bytes is an int in Kafka, at least a legacy record's overhead.
	{"segment-bytes", topicconfig.SegmentBytes, sizeValue(14, math.MaxInt32)},
}

func runCompact(c *cli.Context) error {
	g, err := global(c)
	if err != nil {
		return err
	}
	o, overrides, err := compactOptions(c, g)
	if err != nil {
		return err
	}
	rep := &compact.Report{DryRun: o.DryRun}
	_, release, err := checkedTargets(g, c.Args().Slice(), target.Options{Command: "compact", Takes: target.Partitions | target.LogDirs,
		Topic: c.String("topic"), Skip: compact.Skip, Writes: true}, writeAccess(o.DryRun), func(set *target.Set) (err error) {
		rep.Config, err = topicJobs(c, set, overrides, compact.ConfigNames, "compact", compact.Decisive, "compact", rep.Add)
		return err
	})
	if err != nil {
		return err
	}
	defer release()
	var failed int
	if rep.Results, failed = compactJobs(g, rep.Jobs, o); !g.Quiet || o.DryRun {
		if err := render(g, g.Stdout, rep); err != nil {
			return err
		}
	}
	if failed > 0 {
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf("%d of %d partition(s) failed", failed, len(rep.Jobs))}
	}
	return usageOf(rep.Config.SkipErr())
}

// compactJobs runs the jobs under a progress bar, its warnings and errors
// on stderr, and counts the partitions that failed.
func compactJobs(g Global, jobs []compact.Job, o compact.Options) ([]*compact.Result, int) {
	desc := "compacting"
	if o.DryRun {
		desc = "planning"
	}
	// The bar counts the .log bytes the passes read, which they announce as
	// they plan them: one partition of many GiB moves it too.
	bar := newProgress(g, desc, 0, true)
	if bar != nil {
		o.Progress = func(done, todo int64) {
			bar.More(todo)
			bar.Add(done)
		}
	}
	results, errs := compact.Run(jobs, o, g.Workers, nil)
	bar.Finish()
	failed := 0
	for i, err := range errs {
		for _, w := range results[i].Warnings {
			g.Warnf("%s: %s", jobs[i].Dir, w)
		}
		if err != nil {
			failed++
			fmt.Fprintf(g.Stderr, "logtool: compact: %s\n", oneLine(err))
		}
	}
	return results, failed
}

// compactOptions reads the flags, the topic configs they set apart.
func compactOptions(c *cli.Context, g Global) (o compact.Options, overrides map[string]string, err error) {
	if c.NArg() == 0 {
		return o, nil, usageErr("no PATH given")
	}
	now := time.Now().UnixMilli()
	if s := c.String("now"); s != "" {
		if now, err = timeArg("now", s, 0); err != nil {
			return o, nil, err
		}
	}
	o = compact.DefaultOptions(now)
	o.DryRun = c.Bool("dry-run")
	warnBareMillis(c, "producer-id-expiration", c.String("producer-id-expiration"))
	if o.ProducerIDExpiration, err = durationArg("producer-id-expiration", c.String("producer-id-expiration"), 1, noMax); err != nil {
		return o, nil, err
	}
	if o.OffsetMapMemory, err = sizeArg("offset-map-memory", c.String("offset-map-memory"), 1, noMax); err != nil {
		return o, nil, err
	}
	if err := optionErr(o.Check(), compactOptionFlags); err != nil {
		return o, nil, err
	}
	o.MaxRecordBytes = g.MaxRecordBytes
	overrides, err = topicOverrides(c, compactFlags)
	return o, overrides, err
}

// compactOptionFlags name the compact.Options fields that flags set and
// no topic config does (a topic config's refusal names the config).
var compactOptionFlags = map[string]string{"OffsetMapMemory": "offset-map-memory", "MaxRecordBytes": "max-record-bytes"}
