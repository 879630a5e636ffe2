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
	"github.com/logtool/logtool/internal/table"
	"github.com/logtool/logtool/internal/target"
	"github.com/logtool/logtool/logfmt/layout"
)

func compactCommand() *cli.Command {
	return &cli.Command{
		Name:      "compact",
		Category:  "repair and convert",
		Usage:     "one-shot offline log compaction with Kafka's cleaner semantics and the max lag as a hard deadline",
		ArgsUsage: "PATH...",
		Description: "Compacts the partitions of a stopped broker's log directory (or single partition directories) the way\n" +
			"Kafka's log cleaner does: same cleanable range (checkpoint, active segment, last stable offset, --min-lag),\n" +
			"same dirty-ratio and max-lag eligibility, same survivors (latest record per key, tombstones until their\n" +
			"delete horizon, aborted transactions removed, each active producer's last batch kept), same segment\n" +
			"grouping, indexes as recovery builds them, and Kafka's .cleaned -> .swap swap, so a crash at any point\n" +
			"leaves the old or the new segments for both a broker and the next run. Unlike Kafka it also cleans an\n" +
			"idle active segment older than --max-lag (keeping the log end offset), runs as many passes as a full\n" +
			"offset map needs, and removes tombstones and markers whose delete horizon passed even when the partition\n" +
			"is not otherwise eligible. The first dirty offset comes from <partition>/cleaner-checkpoint, else the\n" +
			"log directory's cleaner-offset-checkpoint, else the log start; both files are updated.\n\n" +
			"logtool cannot see topic configurations: every partition given is compacted as if cleanup.policy were\n" +
			"compact; choose them with --topic (a regular expression matched against the whole topic name).\n" +
			"__cluster_metadata and -delete/-future/-stray directories are skipped. --dry-run plans and simulates the\n" +
			"first pass without writing: the audit of which partitions are past their max lag.\n\n" +
			"Durations: milliseconds, or Go syntax with days (90s, 36h, 7d). Sizes: bytes, or K, M, G (binary: KiB, MiB, GiB).\n\n" +
			"Examples:\n" +
			"  logtool compact --dry-run --max-lag 7d testdata/kafka-logs\n" +
			"  rm -rf /tmp/kafka-logs && cp -r testdata/kafka-logs /tmp/kafka-logs && \\\n" +
			"    logtool compact --topic 'orders|user-profiles' /tmp/kafka-logs\n" +
			"  logtool --format json compact --max-lag 1h --now 2024-03-01T00:00:00Z /tmp/kafka-logs/payments.txn-0\n" +
			"  logtool compact --min-lag 10m --delete-retention 0 --offset-map-memory 16MiB /tmp/kafka-logs/legacy.events-v0-0",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "max-lag", Value: "unlimited", Usage: "max.compaction.lag.ms: a partition whose oldest dirty record is older is compacted, idle active segment included"},
			&cli.StringFlag{Name: "min-lag", Value: "0", Usage: "min.compaction.lag.ms: segments with a record younger than this are not cleaned"},
			&cli.Float64Flag{Name: "min-cleanable-ratio", Value: 0.5, Usage: "min.cleanable.dirty.ratio: compact when dirty / (clean + dirty) bytes exceeds it"},
			&cli.StringFlag{Name: "delete-retention", Value: "24h", Usage: "delete.retention.ms: how long tombstones and markers outlive the first pass that keeps them"},
			&cli.StringFlag{Name: "now", Usage: "the clock for the whole run, ms or RFC 3339 (default: the wall clock)"},
			&cli.StringFlag{Name: "segment-bytes", Value: "1GiB", Usage: "segment.bytes: cleaned segments are merged up to this size"},
			&cli.StringFlag{Name: "offset-map-memory", Value: "128MiB", Usage: "log.cleaner.dedupe.buffer.size: offset map memory, shared among --workers; 24 bytes per key"},
			&cli.StringFlag{Name: "producer-id-expiration", Value: "24h", Usage: "producer.id.expiration.ms: idle producers older than this lose the protection of their last batch"},
			&cli.StringFlag{Name: "topic", Usage: "only topics whose whole name matches this regular expression (default: every topic)"},
			&cli.BoolFlag{Name: "dry-run", Usage: "plan and simulate the first pass; write nothing"},
		},
		Action: runCompact,
	}
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
	set, release, err := targets(g, c.Args().Slice(), target.Options{Command: "compact", Takes: target.Partitions | target.LogDirs,
		Topic: c.String("topic"), Skip: compactSkip}, writeAccess(o.DryRun))
	if err != nil {
		return err
	}
	defer release()
	var dirs []string
	for _, p := range set.Partitions() {
		dirs = append(dirs, p.Path)
	}

	bar := newProgress(g, "compacting", int64(len(dirs)), false)
	results, errs := compact.Run(dirs, o, g.Workers, func() { bar.Add(1) })
	bar.Finish()

	failed := 0
	for i, err := range errs {
		for _, w := range results[i].Warnings {
			g.Warnf("%s: %s", dirs[i], w)
		}
		if err != nil {
			failed++
			fmt.Fprintf(g.Stderr, "logtool: compact: %s\n", oneLine(err))
		}
	}
	if !g.Quiet || o.DryRun {
		if g.JSON() {
			err = writeCompactJSON(g.Stdout, results)
		} else {
			err = writeCompactText(g.Stdout, results, o.DryRun)
		}
		if err != nil {
			return err
		}
	}
	if failed > 0 {
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf("%d of %d partition(s) failed", failed, len(dirs))}
	}
	return nil
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
	o.MinCleanableRatio = c.Float64("min-cleanable-ratio")
	var err error
	if s := c.String("max-lag"); s != "unlimited" {
		if o.MaxLag, err = durationArg("max-lag", s, 1, noMax); err != nil {
			return o, err
		}
	}
	for _, f := range []struct {
		name string
		dst  *int64
		lo   int64
	}{{"min-lag", &o.MinLag, 0}, {"delete-retention", &o.DeleteRetention, 0}, {"producer-id-expiration", &o.ProducerIDExpiration, 1}} {
		if *f.dst, err = durationArg(f.name, c.String(f.name), f.lo, noMax); err != nil {
			return o, err
		}
	}
	// segment.bytes is an int in Kafka, at least a legacy record's overhead.
	if o.SegmentBytes, err = sizeArg("segment-bytes", c.String("segment-bytes"), 14, math.MaxInt32); err != nil {
		return o, err
	}
	if o.OffsetMapMemory, err = sizeArg("offset-map-memory", c.String("offset-map-memory"), 1, noMax); err != nil {
		return o, err
	}
	if err := o.Check(); err != nil {
		return o, usageErr("%v", err)
	}
	return o, nil
}

// compactSkip leaves out what Kafka's cleaner never cleans: the KRaft
// metadata log and renamed (-delete, -future, -stray) directories.
func compactSkip(p *target.Partition) (bool, string) {
	switch {
	case p.Dir.Kind != layout.Normal:
		return true, note(p.Named, "skipped: a "+p.Dir.Kind.String()+" partition directory, which Kafka's cleaner never cleans")
	case p.Dir.Topic == "__cluster_metadata":
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

func writeCompactJSON(w io.Writer, results []*compact.Result) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, r := range results {
		obj := struct {
			Type string `json:"type"`
			File string `json:"file"`
			*compact.Result
		}{"compaction", r.Dir, r}
		if err := enc.Encode(obj); err != nil {
			return err
		}
	}
	return nil
}

func writeCompactText(w io.Writer, results []*compact.Result, dryRun bool) error {
	t := table.New("PARTITION", "ELIGIBLE", "DIRTY", "UNCLEANABLE", "SEGMENTS", "SIZE", "RECORDS", "TOMBSTONES REMOVED", "PAST MAX LAG", "REASON")
	var eligible, failed, before, after int64
	for _, r := range results {
		if r.Error != "" {
			// The full error line is on stderr; the row names the file
			// relative to the partition, and the figures are left out.
			failed++
			short := strings.TrimPrefix(r.Error, filepath.Clean(r.Dir)+string(filepath.Separator))
			t.Append(r.Partition, "failed", "-", "-", "-", "-", "-", "-", "-", strings.ReplaceAll(short, "\n", "; "))
			continue
		}
		yes := "no"
		if r.Eligible {
			yes, eligible = "yes", eligible+1
		}
		before, after = before+r.BytesBefore, after+r.BytesAfter
		lag := "-"
		if r.MaxLagExceededByMs > 0 {
			lag = human.Duration(r.MaxLagExceededByMs)
		}
		records := "-"
		if r.Passes > 0 {
			records = strconv.FormatInt(r.RecordsBefore, 10) + " -> " + strconv.FormatInt(r.RecordsAfter, 10)
		}
		t.Append(r.Partition, yes, strconv.FormatInt(r.FirstDirtyOffset, 10), strconv.FormatInt(r.FirstUncleanableOffset, 10),
			fmt.Sprintf("%d -> %d", r.SegmentsBefore, r.SegmentsAfter), human.Bytes(r.BytesBefore)+" -> "+human.Bytes(r.BytesAfter),
			records, strconv.FormatInt(r.TombstonesRemoved, 10), lag, r.Reason)
	}
	if _, err := t.WriteTo(w); err != nil {
		return err
	}
	verb := "compacted"
	if dryRun {
		verb = "would compact (first pass)"
	}
	failures := ""
	if failed > 0 {
		failures = fmt.Sprintf("; %d failed", failed)
	}
	_, err := fmt.Fprintf(w, "%s %d of %d partition(s): %s -> %s%s\n", verb, eligible, len(results), human.Bytes(before), human.Bytes(after), failures)
	return err
}
