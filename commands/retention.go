package commands

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/logtool/logtool/internal/human"
	"github.com/logtool/logtool/internal/jsonbytes"
	"github.com/logtool/logtool/internal/table"
	"github.com/logtool/logtool/internal/target"
	"github.com/logtool/logtool/logfmt/layout"
	"github.com/logtool/logtool/retention"
	"github.com/logtool/logtool/topicconfig"
)

func retentionCommand() *cli.Command {
	return &cli.Command{
		Name:        "retention",
		Category:    "repair and convert",
		Usage:       "delete expired segments by record timestamps, with Kafka's retention rules",
		ArgsUsage:   "PATH...",
		Description: description("retention"),
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "retention-ms", Usage: "retention.ms: a duration (7d, 168h, 90m) or milliseconds; -1 keeps segments forever (default: the topic's configuration, else Kafka's default, 168h)"},
			&cli.StringFlag{Name: "retention-bytes", Usage: "retention.bytes per partition: bytes, or with K, M, G, T (binary: 50GiB); -1 sets no limit (default: the topic's configuration, else Kafka's default, -1)"},
			&cli.StringFlag{Name: "now", Usage: "the time retention is measured from, ms since the epoch or RFC 3339 (default: the wall clock)"},
			&cli.StringFlag{Name: "topic", Usage: "only topics whose whole name matches this regular expression (default: every topic)"},
			&cli.BoolFlag{Name: "dry-run", Usage: "report what would be deleted and change nothing"},
		}, topicConfigFlags("cleanup.policy for every topic of the run: delete, compact or compact,delete (default: the topic's configuration, else Kafka's default, delete)")...),
		Action: runRetention,
	}
}

// retentionFlags are retention's flags that set topic configs.
var retentionFlags = []flagConfig{
	// -1 is no limit, as in Kafka's configs.
	{"retention-ms", topicconfig.RetentionMs, or("-1", "-1", durationValue(0))},
	{"retention-bytes", topicconfig.RetentionBytes, or("-1", "-1", sizeValue(0, noMax))},
}

func runRetention(c *cli.Context) error {
	g, err := global(c)
	if err != nil {
		return err
	}
	o := retention.Options{Workers: g.Workers, DryRun: c.Bool("dry-run")}
	overrides, err := topicOverrides(c, retentionFlags)
	if err != nil {
		return err
	}
	o.NowMs = time.Now().UnixMilli()
	if s := c.String("now"); s != "" {
		if o.NowMs, err = timeArg("now", s, 0); err != nil {
			return err
		}
	}
	if c.NArg() == 0 {
		return usageErr("no PATH given: name partition directories or log directories")
	}
	jobs := map[*target.Partition]retention.Job{}
	configs := map[string]*topicconfig.Config{}
	var report *configReport
	check := func(set *target.Set) (err error) {
		report, err = topicJobs(c, set, overrides, retention.ConfigNames, "",
			func(p *target.Partition, cfg *topicconfig.Config, skip string, explicit bool) (bool, error) {
				if explicit && !p.Named && strings.HasPrefix(p.Dir.Topic, "__") {
					// Kafka creates its internal topics compacted; without
					// their configuration they are not guessed at.
					skip = "an internal topic, and its configuration is not known: name its partition directory to apply retention to it"
				}
				rc := retention.TopicConfig(cfg)
				jobs[p] = retention.Job{Dir: p.Path, Config: &rc, Skip: skip}
				configs[p.Path] = cfg
				return skip == "" && !rc.RemoteStorage && rc.Delete, nil
			})
		return err
	}
	set, release, err := checkedTargets(g, c.Args().Slice(), target.Options{Command: "retention", Takes: target.Partitions | target.LogDirs,
		Topic: c.String("topic"), Skip: retentionSkip, Writes: true}, writeAccess(o.DryRun), check)
	if err != nil {
		return err
	}
	defer release()
	groups := set.Groups()

	total := len(set.Partitions())
	if total == 0 {
		g.Warnf("no partition selected")
		return nil
	}
	bar := newProgress(g, "retention", int64(total), false)
	if bar != nil {
		o.Done = func(*retention.Result) { bar.Add(1) }
	}
	var results []*retention.Result
	var failures []error
	for _, grp := range groups {
		var js []retention.Job
		for _, p := range grp.Partitions {
			js = append(js, jobs[p])
		}
		res, err := retention.Run(grp.LogDir.Path, js, o)
		if err != nil {
			failures = append(failures, err)
		}
		results = append(results, res...)
	}
	bar.Finish()
	var done []*retention.Result
	for _, r := range results {
		for _, a := range r.Recovered {
			g.Warnf("%s: finished an interrupted operation first: %s", r.Dir, a)
		}
		for _, w := range r.Warnings {
			g.Warnf("%s", w)
		}
		if r.Err != nil {
			// A root checkpoint failure is already in failures once.
			if !slices.ContainsFunc(failures, func(e error) bool { return errors.Is(r.Err, e) }) {
				failures = append(failures, r.Err)
			}
			continue
		}
		done = append(done, r)
	}
	if !g.Quiet || o.DryRun { // a dry run's plan is its only output
		if g.JSON() {
			err = writeRetentionJSON(g.Stdout, done, o.DryRun, configs)
		} else {
			err = writeRetentionText(g.Stdout, done, o.DryRun, o.NowMs, report)
		}
		if err != nil {
			return err
		}
	}
	// One line per failure, the last one printed by Run as the command's error.
	for _, f := range failures[:max(0, len(failures)-1)] {
		fmt.Fprintf(g.Stderr, "logtool: retention: %s\n", oneLine(f))
	}
	if len(failures) > 0 {
		return failures[len(failures)-1]
	}
	return nil
}

// retentionSkip leaves out the directories a broker applies no retention
// to: -delete, -future and -stray directories, and the KRaft metadata log,
// whose snapshots bound it.
func retentionSkip(p *target.Partition) (bool, string) {
	switch {
	case p.Dir.Kind != layout.Normal:
		return true, "skipped: a " + p.Dir.Kind.String() + " partition directory, which a broker does not apply retention to"
	case p.Dir.Topic == layout.MetadataTopic:
		return true, note(p.Named, "skipped: the KRaft metadata log is trimmed by its snapshots, not by log retention")
	}
	return false, ""
}

// retentionRules names the rules that deleted segments, "none" for none.
func retentionRules(r *retention.Result) string {
	var names []string
	for _, rule := range r.Rules() {
		names = append(names, string(rule))
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ",")
}

func retentionPartitionName(r *retention.Result) string {
	if r.Topic == "" {
		return filepath.Base(r.Dir)
	}
	return layout.PartitionDirName(r.Topic, r.Partition)
}

type retentionSegmentJSON struct {
	Type            string         `json:"type"`
	File            jsonbytes.Text `json:"file"`
	Topic           string         `json:"topic"`
	Partition       int32          `json:"partition"`
	BaseOffset      int64          `json:"baseOffset"`
	Bytes           int64          `json:"bytes"`
	Rule            string         `json:"rule"`
	LargestTS       *int64         `json:"largestTimestamp"`
	TimestampSource *string        `json:"timestampSource"`
	DryRun          bool           `json:"dryRun"`
}

type retentionJSON struct {
	Type                   string         `json:"type"`
	File                   jsonbytes.Text `json:"file"`
	Topic                  string         `json:"topic"`
	Partition              int32          `json:"partition"`
	DryRun                 bool           `json:"dryRun"`
	SegmentsDeleted        int            `json:"segmentsDeleted"`
	BytesDeleted           int64          `json:"bytesDeleted"`
	LogStartOffset         int64          `json:"logStartOffset"`
	PreviousLogStartOffset int64          `json:"previousLogStartOffset"`
	LogEndOffset           int64          `json:"logEndOffset"`
	HighWatermark          int64          `json:"highWatermark"`
	HighWatermarkAssumed   bool           `json:"highWatermarkAssumed"`
	Rule                   string         `json:"rule"`
	Skipped                bool           `json:"skipped"`
	Reason                 string         `json:"reason"`
	Rolled                 *string        `json:"rolledSegment"`
	SegmentsRemaining      int            `json:"segmentsRemaining"`
	BytesRemaining         int64          `json:"bytesRemaining"`
	OldestRemaining        *int64         `json:"oldestRemainingTimestamp"`
	OldestRemainingSource  *string        `json:"oldestRemainingTimestampSource"`
	SnapshotsDeleted       int            `json:"snapshotsDeleted"`
	LeaderEpochsTrimmed    bool           `json:"leaderEpochsTrimmed"`

	Config map[string]topicconfig.Value `json:"config"`
}

func writeRetentionJSON(w io.Writer, results []*retention.Result, dryRun bool, configs map[string]*topicconfig.Config) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	ts := func(t *retention.Timestamp) (*int64, *string) {
		if t == nil {
			return nil, nil
		}
		src := string(t.Source)
		return &t.Ms, &src
	}
	for _, r := range results {
		for _, d := range r.Deleted {
			ms, src := ts(d.Largest)
			err := enc.Encode(retentionSegmentJSON{Type: "retention-segment", File: jsonbytes.Text(d.Segment.Log), Topic: r.Topic, Partition: r.Partition,
				BaseOffset: d.Segment.Base, Bytes: d.Bytes, Rule: string(d.Rule), LargestTS: ms, TimestampSource: src, DryRun: dryRun})
			if err != nil {
				return err
			}
		}
		obj := retentionJSON{Type: "retention", File: jsonbytes.Text(r.Dir), Topic: r.Topic, Partition: r.Partition, DryRun: dryRun,
			SegmentsDeleted: len(r.Deleted), BytesDeleted: r.BytesDeleted, LogStartOffset: r.LogStartOffset,
			PreviousLogStartOffset: r.PreviousLogStartOffset, LogEndOffset: r.LogEndOffset, HighWatermark: r.HighWatermark,
			HighWatermarkAssumed: r.HighWatermarkAssumed, Rule: retentionRules(r), SegmentsRemaining: r.SegmentsRemaining,
			BytesRemaining: r.BytesRemaining, SnapshotsDeleted: len(r.SnapshotsDeleted), LeaderEpochsTrimmed: r.EpochsTrimmed,
			Skipped: r.Skipped, Reason: r.Reason, Config: configJSON(configs[r.Dir], retention.ConfigNames)}
		if r.Rolled != "" {
			// A path is in file only: the segment is named by its file name.
			name := filepath.Base(r.Rolled)
			obj.Rolled = &name
		}
		obj.OldestRemaining, obj.OldestRemainingSource = ts(r.OldestRemaining)
		if err := enc.Encode(obj); err != nil {
			return err
		}
	}
	return nil
}

func writeRetentionText(w io.Writer, results []*retention.Result, dryRun bool, nowMs int64, report *configReport) error {
	if dryRun {
		fmt.Fprintln(w, "Dry run: nothing was changed. A run would do this:")
	}
	when := func(t *retention.Timestamp) string {
		if t == nil {
			return "-"
		}
		return human.Time(t.Ms) + " (" + string(t.Source) + ")"
	}
	// Within 120 columns: a segment is named by its partition and base
	// offset, as Kafka's log names it ("LogSegment(baseOffset=...)"), and
	// the rules are those of its segments.
	parts := table.New("PARTITION", "DELETED", "FREED", "KEPT", "LOG START", "OLDEST REMAINING")
	segs := table.New("PARTITION", "BASE OFFSET", "SIZE", "RULE", "LARGEST TIMESTAMP", "AGE")
	var notes []string
	for _, r := range results {
		name := retentionPartitionName(r)
		if r.Skipped {
			parts.Append(name, "skipped", "-", "-", "-", "-")
			notes = append(notes, fmt.Sprintf("%s: skipped: %s", name, r.Reason))
			continue
		}
		if r.LogStartOnly {
			notes = append(notes, fmt.Sprintf("%s: %s", name, r.Reason))
		}
		start := fmt.Sprint(r.LogStartOffset)
		if r.LogStartOffset != r.PreviousLogStartOffset {
			start = fmt.Sprintf("%d -> %d", r.PreviousLogStartOffset, r.LogStartOffset)
		}
		parts.Append(name, fmt.Sprint(len(r.Deleted)), human.Bytes(r.BytesDeleted),
			fmt.Sprintf("%d (%s)", r.SegmentsRemaining, human.Bytes(r.BytesRemaining)), start, when(r.OldestRemaining))
		for _, d := range r.Deleted {
			// The age --retention-ms is measured against, from --now.
			age := "-"
			if d.Largest != nil {
				age = human.Duration(nowMs - d.Largest.Ms)
			}
			segs.Append(name, fmt.Sprint(d.Segment.Base), human.Bytes(d.Bytes), string(d.Rule), when(d.Largest), age)
		}
		if r.Rolled != "" {
			notes = append(notes, fmt.Sprintf("%s: every segment expired: rolled an empty segment at the log end offset %d", name, r.LogEndOffset))
		}
		if r.HighWatermark < r.LogEndOffset {
			notes = append(notes, fmt.Sprintf("%s: nothing at or above the high watermark %d is deleted", name, r.HighWatermark))
		}
		var below []string
		if n := len(r.SnapshotsDeleted); n > 0 {
			below = append(below, fmt.Sprintf("%d producer snapshot(s) deleted", n))
		}
		if r.EpochsTrimmed {
			below = append(below, "leader-epoch-checkpoint trimmed")
		}
		if len(below) > 0 {
			notes = append(notes, fmt.Sprintf("%s: below the log start: %s", name, strings.Join(below, ", ")))
		}
	}
	if _, err := parts.WriteTo(w); err != nil {
		return err
	}
	if segs.Len() > 0 {
		fmt.Fprintln(w)
		if _, err := segs.WriteTo(w); err != nil {
			return err
		}
	}
	if len(notes) > 0 {
		fmt.Fprintln(w)
	}
	for _, n := range notes {
		fmt.Fprintln(w, n)
	}
	var b strings.Builder
	b.WriteString("\n")
	report.write(&b)
	_, err := io.WriteString(w, b.String())
	return err
}
