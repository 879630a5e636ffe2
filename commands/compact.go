package commands

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/logtool/logtool/compact"
	"github.com/logtool/logtool/internal/human"
	"github.com/logtool/logtool/internal/jsonbytes"
	"github.com/logtool/logtool/internal/table"
	"github.com/logtool/logtool/internal/target"
	"github.com/logtool/logtool/logfmt/layout"
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
	if c.NArg() == 0 {
		return usageErr("no PATH given")
	}
	o, err := compactOptions(c)
	if err != nil {
		return err
	}
	o.MaxRecordBytes = g.MaxRecordBytes
	overrides, err := topicOverrides(c, compactFlags)
	if err != nil {
		return err
	}
	var jobs []compact.Job
	var configs []*topicconfig.Config
	var report *configReport
	check := func(set *target.Set) (err error) {
		report, err = topicJobs(c, set, overrides, compact.ConfigNames, "compact",
			func(p *target.Partition, cfg *topicconfig.Config, skip string, _ bool) (bool, error) {
				job := compact.Job{Dir: p.Path, Config: compact.TopicConfig(cfg), Skip: skip}
				if err := compactConflict(cfg, job.Config); err != nil {
					return false, err
				}
				jobs, configs = append(jobs, job), append(configs, cfg)
				return skip == "" && job.Config.Compact, nil
			})
		return err
	}
	_, release, err := checkedTargets(g, c.Args().Slice(), target.Options{Command: "compact", Takes: target.Partitions | target.LogDirs,
		Topic: c.String("topic"), Skip: compactSkip, Writes: true}, writeAccess(o.DryRun), check)
	if err != nil {
		return err
	}
	defer release()

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
	if !g.Quiet || o.DryRun {
		if g.JSON() {
			err = writeCompactJSON(g.Stdout, results, configs)
		} else {
			err = writeCompactText(g.Stdout, results, o.DryRun, report)
		}
		if err != nil {
			return err
		}
	}
	if failed > 0 {
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf("%d of %d partition(s) failed", failed, len(jobs))}
	}
	return nil
}

// compactConflict refuses a run whose flags make a topic's minimum lag
// exceed its maximum, as Kafka refuses such a topic configuration.
// Without a flag involved, the partition fails alone.
func compactConflict(cfg *topicconfig.Config, cc compact.Config) error {
	if cc.MinLag <= cc.MaxLag {
		return nil
	}
	minV, _ := cfg.Get(topicconfig.MinCompactionLagMs)
	maxV, _ := cfg.Get(topicconfig.MaxCompactionLagMs)
	if minV.Source != topicconfig.CommandLine && maxV.Source != topicconfig.CommandLine {
		return nil
	}
	return usageErr("topic %s: conflict topic config setting %s (%s, %s) > %s (%s, %s)", cfg.Topic,
		topicconfig.MinCompactionLagMs, minV.Value, minV.Source, topicconfig.MaxCompactionLagMs, maxV.Value, maxV.Source)
}

func compactOptions(c *cli.Context) (compact.Options, error) {
	now := time.Now().UnixMilli()
	if s := c.String("now"); s != "" {
		t, err := timeArg("now", s, 0)
		if err != nil {
			return compact.Options{}, err
		}
		now = t
	}
	o := compact.DefaultOptions(now)
	o.DryRun = c.Bool("dry-run")
	var err error
	warnBareMillis(c, "producer-id-expiration", c.String("producer-id-expiration"))
	if o.ProducerIDExpiration, err = durationArg("producer-id-expiration", c.String("producer-id-expiration"), 1, noMax); err != nil {
		return o, err
	}
	if o.OffsetMapMemory, err = sizeArg("offset-map-memory", c.String("offset-map-memory"), 1, noMax); err != nil {
		return o, err
	}
	return o, optionErr(o.Check(), compactOptionFlags)
}

// compactOptionFlags name the compact.Options fields that flags set and
// no topic config does (a topic config's refusal names the config).
var compactOptionFlags = map[string]string{"OffsetMapMemory": "offset-map-memory", "MaxRecordBytes": "max-record-bytes"}

// compactSkip leaves out what Kafka's cleaner never cleans: the KRaft
// metadata log and renamed (-delete, -future, -stray) directories.
func compactSkip(p *target.Partition) (bool, string) {
	switch {
	case p.Dir.Kind != layout.Normal:
		return true, note(p.Named, "skipped: a "+p.Dir.Kind.String()+" partition directory, which Kafka's cleaner never cleans")
	case p.Dir.Topic == layout.MetadataTopic:
		return true, note(p.Named, "skipped: the KRaft metadata log is not compacted by the log cleaner")
	}
	return false, ""
}

// note is a skip note for a partition named on the command line, and
// nothing for one found in a log directory: the user asked for that one.
func note(named bool, s string) string {
	if named {
		return s
	}
	return ""
}

func writeCompactJSON(w io.Writer, results []*compact.Result, configs []*topicconfig.Config) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for i, r := range results {
		obj := struct {
			Type string         `json:"type"`
			File jsonbytes.Text `json:"file"`
			*compact.Result
			Config map[string]topicconfig.Value `json:"config"`
		}{"compaction", jsonbytes.Text(r.Dir), r, configJSON(configs[i], compact.ConfigNames)}
		if err := enc.Encode(obj); err != nil {
			return err
		}
	}
	return nil
}

// writeCompactText prints a row per partition, notes, the totals, and the
// topic configuration the run used. The row's reason is the main one, less
// the max lag, which has its column; the other reasons are notes under the
// table, so that a row stays within 120 columns.
func writeCompactText(w io.Writer, results []*compact.Result, dryRun bool, report *configReport) error {
	t := table.New("PARTITION", "ELIGIBLE", "CLEANABLE OFFSETS", "SIZE", "PAST MAX LAG", "REASON")
	var notes []string
	var eligible, failed, before, after, recBefore, recAfter, tombstones int64
	for _, r := range results {
		if r.Error != "" {
			// The full error line is on stderr; the note names the file
			// relative to the partition.
			failed++
			short := strings.TrimPrefix(r.Error, filepath.Clean(r.Dir)+string(filepath.Separator))
			t.Append(r.Name, "failed", "-", "-", "-", "failed: see below")
			notes = append(notes, r.Name+": failed: "+strings.ReplaceAll(short, "\n", "; "))
			continue
		}
		yes := "no"
		if r.Eligible {
			yes, eligible = "yes", eligible+1
		}
		if r.SegmentsBefore == 0 {
			// Not looked at: not its policy, not in the metadata, or empty.
			t.Append(r.Name, yes, "-", "-", "-", r.Reason)
			continue
		}
		before, after, tombstones = before+r.BytesBefore, after+r.BytesAfter, tombstones+r.TombstonesRemoved
		recBefore, recAfter = recBefore+r.RecordsBefore, recAfter+r.RecordsAfter
		cleanable := "none"
		if r.FirstUncleanableOffset > r.FirstDirtyOffset {
			cleanable = fmt.Sprintf("%d-%d", r.FirstDirtyOffset, r.FirstUncleanableOffset-1)
		}
		size := human.Bytes(r.BytesBefore)
		if r.Passes > 0 {
			size += " -> " + human.Bytes(r.BytesAfter)
		}
		lag := "-"
		if r.MaxLagExceededByMs > 0 {
			lag = human.Duration(r.MaxLagExceededByMs)
		}
		// The max lag has its column; a reason that says more about it
		// (its segments not cleanable yet) stays.
		var why []string
		for _, part := range strings.Split(r.Reason, "; ") {
			if part != "max lag exceeded by "+lag {
				why = append(why, part)
			}
		}
		reason := "max lag"
		if len(why) > 0 {
			reason, why = why[0], why[1:]
		}
		for _, n := range why {
			notes = append(notes, r.Name+": "+n)
		}
		t.Append(r.Name, yes, cleanable, size, lag, reason)
	}
	var b strings.Builder
	t.WriteTo(&b)
	if len(notes) > 0 {
		b.WriteString("\n" + strings.Join(notes, "\n") + "\n")
	}
	verb := "compacted"
	if dryRun {
		verb = "would compact (first pass)"
	}
	failures := ""
	if failed > 0 {
		failures = fmt.Sprintf("; %d failed", failed)
	}
	totals := ""
	if eligible > 0 {
		totals = fmt.Sprintf(": %s -> %s, %d -> %d records, %d tombstone(s) removed", human.Bytes(before), human.Bytes(after), recBefore, recAfter, tombstones)
	}
	fmt.Fprintf(&b, "\n%s %d of %d partition(s)%s%s\n\n", verb, eligible, len(results), totals, failures)
	report.write(&b)
	_, err := io.WriteString(w, b.String())
	return err
}
