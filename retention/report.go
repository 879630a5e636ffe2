package retention

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/logtool/logtool/internal/human"
	"github.com/logtool/logtool/internal/jsonbytes"
	"github.com/logtool/logtool/internal/table"
	"github.com/logtool/logtool/internal/target"
	"github.com/logtool/logtool/logfmt/layout"
	"github.com/logtool/logtool/topicconfig"
)

// Skip leaves out the directories a broker applies no retention to:
// -delete, -future and -stray directories, and the KRaft metadata log,
// whose snapshots bound it.
func Skip(p *target.Partition) (bool, string) {
	switch {
	case p.Dir.Kind != layout.Normal:
		return true, "skipped: a " + p.Dir.Kind.String() + " partition directory, which a broker does not apply retention to"
	case p.Dir.Topic == layout.MetadataTopic:
		return true, p.NamedNote("skipped: the KRaft metadata log is trimmed by its snapshots, not by log retention")
	}
	return false, ""
}

// Report is a run: its jobs, planned from each partition's topic
// configuration (Add), and their results (Run), for its output.
type Report struct {
	DryRun  bool
	NowMs   int64 // the clock ages are measured by
	Results []*Result
	Configs map[string]*topicconfig.Config // by Job.Dir
	Config  *topicconfig.Report
	jobs    map[*target.Partition]Job
}

// Add plans the job of partition p, as a topicconfig.Job: a partition
// whose topic configuration no source gives (explicit) is left alone when
// found in a log dir with an internal topic's name, since Kafka creates
// its internal topics compacted and they are not guessed at. It tells
// whether retention applies cfg.
func (rep *Report) Add(p *target.Partition, cfg *topicconfig.Config, skip string, explicit bool) (bool, error) {
	if explicit && !p.Named && strings.HasPrefix(p.Dir.Topic, "__") {
		skip = "an internal topic, and its configuration is not known: name its partition directory to apply retention to it"
	}
	if rep.jobs == nil {
		rep.jobs, rep.Configs = map[*target.Partition]Job{}, map[string]*topicconfig.Config{}
	}
	rc := TopicConfig(cfg)
	rep.jobs[p], rep.Configs[p.Path] = Job{Dir: p.Path, Config: &rc, Skip: skip}, cfg
	return skip == "" && !rc.RemoteStorage && rc.Delete, nil
}

// Run runs the jobs of each log dir of set (the package's Run), and
// returns the failures, each once: a root checkpoint failure is both Run's
// error and its partitions'.
func (rep *Report) Run(set *target.Set, o Options) []error {
	var failures []error
	for _, grp := range set.Groups() {
		var js []Job
		for _, p := range grp.Partitions {
			js = append(js, rep.jobs[p])
		}
		res, err := Run(grp.LogDir.Path, js, o)
		if err != nil {
			failures = append(failures, err)
		}
		rep.Results = append(rep.Results, res...)
	}
	for _, r := range rep.Results {
		if r.Err != nil && !slices.ContainsFunc(failures, func(e error) bool { return errors.Is(r.Err, e) }) {
			failures = append(failures, r.Err)
		}
	}
	return failures
}

// AllWarnings are the warnings of r for stderr: the interrupted
// operations it finished first, then its Warnings.
func (r *Result) AllWarnings() []string {
	var ws []string
	for _, a := range r.Recovered {
		ws = append(ws, fmt.Sprintf("%s: finished an interrupted operation first: %s", r.Dir, a))
	}
	return append(ws, r.Warnings...)
}

// done are the results that did not fail.
func (rep *Report) done() []*Result {
	var done []*Result
	for _, r := range rep.Results {
		if r.Err == nil {
			done = append(done, r)
		}
	}
	return done
}

// rules names the rules that deleted segments, "none" for none.
func (r *Result) rules() string {
	var names []string
	for _, rule := range r.Rules() {
		names = append(names, string(rule))
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ",")
}

func (r *Result) name() string {
	if r.Topic == "" {
		return filepath.Base(r.Dir)
	}
	return layout.PartitionDirName(r.Topic, r.Partition)
}

type segmentJSON struct {
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

type resultJSON struct {
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

// WriteJSON writes an object per segment deleted, then one per partition.
func (rep *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	ts := func(t *Timestamp) (*int64, *string) {
		if t == nil {
			return nil, nil
		}
		src := string(t.Source)
		return &t.Ms, &src
	}
	for _, r := range rep.done() {
		for _, d := range r.Deleted {
			ms, src := ts(d.Largest)
			err := enc.Encode(segmentJSON{Type: "retention-segment", File: jsonbytes.Text(d.Segment.Log), Topic: r.Topic, Partition: r.Partition,
				BaseOffset: d.Segment.Base, Bytes: d.Bytes, Rule: string(d.Rule), LargestTS: ms, TimestampSource: src, DryRun: rep.DryRun})
			if err != nil {
				return err
			}
		}
		obj := resultJSON{Type: "retention", File: jsonbytes.Text(r.Dir), Topic: r.Topic, Partition: r.Partition, DryRun: rep.DryRun,
			SegmentsDeleted: len(r.Deleted), BytesDeleted: r.BytesDeleted, LogStartOffset: r.LogStartOffset,
			PreviousLogStartOffset: r.PreviousLogStartOffset, LogEndOffset: r.LogEndOffset, HighWatermark: r.HighWatermark,
			HighWatermarkAssumed: r.HighWatermarkAssumed, Rule: r.rules(), SegmentsRemaining: r.SegmentsRemaining,
			BytesRemaining: r.BytesRemaining, SnapshotsDeleted: len(r.SnapshotsDeleted), LeaderEpochsTrimmed: r.EpochsTrimmed,
			Skipped: r.Skipped, Reason: r.Reason, Config: rep.Configs[r.Dir].Map(ConfigNames)}
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

// WriteText prints a table of partitions, one of the segments deleted,
// notes, and the topic configuration the run used.
func (rep *Report) WriteText(w io.Writer) error {
	if rep.DryRun {
		fmt.Fprintln(w, "Dry run: nothing was changed. A run would do this:")
	}
	when := func(t *Timestamp) string {
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
	for _, r := range rep.done() {
		name := r.name()
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
			// The age retention.ms is measured against, from the clock.
			age := "-"
			if d.Largest != nil {
				age = human.Duration(rep.NowMs - d.Largest.Ms)
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
	if _, err := io.WriteString(w, "\n"); err != nil {
		return err
	}
	return rep.Config.WriteText(w)
}
