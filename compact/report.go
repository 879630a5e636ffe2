package compact

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/logtool/logtool/internal/human"
	"github.com/logtool/logtool/internal/jsonbytes"
	"github.com/logtool/logtool/internal/table"
	"github.com/logtool/logtool/internal/target"
	"github.com/logtool/logtool/logfmt/layout"
	"github.com/logtool/logtool/topicconfig"
)

// Skip leaves out what Kafka's cleaner never cleans: the KRaft metadata
// log and renamed (-delete, -future, -stray) directories.
func Skip(p *target.Partition) (bool, string) {
	switch {
	case p.Dir.Kind != layout.Normal:
		return true, p.NamedNote("skipped: a " + p.Dir.Kind.String() + " partition directory, which Kafka's cleaner never cleans")
	case p.Dir.Topic == layout.MetadataTopic:
		return true, p.NamedNote("skipped: the KRaft metadata log is not compacted by the log cleaner")
	}
	return false, ""
}

// Conflict refuses (a *target.UsageError) a run whose command line makes
// a topic's minimum lag exceed its maximum, as Kafka refuses such a topic
// configuration. Without the command line involved, the partition fails
// alone.
func Conflict(cfg *topicconfig.Config, cc Config) error {
	if cc.MinLag <= cc.MaxLag {
		return nil
	}
	minV, _ := cfg.Get(topicconfig.MinCompactionLagMs)
	maxV, _ := cfg.Get(topicconfig.MaxCompactionLagMs)
	if minV.Source != topicconfig.CommandLine && maxV.Source != topicconfig.CommandLine {
		return nil
	}
	return &target.UsageError{Err: fmt.Errorf("topic %s: conflict topic config setting %s (%s, %s) > %s (%s, %s)", cfg.Topic,
		topicconfig.MinCompactionLagMs, minV.Value, minV.Source, topicconfig.MaxCompactionLagMs, maxV.Value, maxV.Source)}
}

// Report is a run: its jobs, planned from each partition's topic
// configuration (Add), and their results, for its output.
type Report struct {
	DryRun  bool
	Jobs    []Job
	Configs []*topicconfig.Config // each job's topic configuration
	Results []*Result             // each job's
	Config  *topicconfig.Report
}

// Add plans the job of partition p, as a topicconfig.Job, and tells
// whether the cleaner applies cfg; a conflict the command line makes is
// refused (Conflict).
func (rep *Report) Add(p *target.Partition, cfg *topicconfig.Config, skip string, _ bool) (bool, error) {
	job := Job{Dir: p.Path, Config: TopicConfig(cfg), Skip: skip}
	rep.Jobs, rep.Configs = append(rep.Jobs, job), append(rep.Configs, cfg)
	return skip == "" && job.Config.Compact, Conflict(cfg, job.Config)
}

// WriteJSON writes an object per partition, with the configuration it
// used.
func (rep *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for i, r := range rep.Results {
		obj := struct {
			Type string         `json:"type"`
			File jsonbytes.Text `json:"file"`
			*Result
			Config map[string]topicconfig.Value `json:"config"`
		}{"compaction", jsonbytes.Text(r.Dir), r, rep.Configs[i].Map(ConfigNames)}
		if err := enc.Encode(obj); err != nil {
			return err
		}
	}
	return nil
}

// WriteText prints a row per partition, notes, the totals, and the topic
// configuration the run used. The row's reason is the main one, less the
// max lag, which has its column; the other reasons are notes under the
// table, so that a row stays within 120 columns.
func (rep *Report) WriteText(w io.Writer) error {
	t := table.New("PARTITION", "ELIGIBLE", "CLEANABLE OFFSETS", "SIZE", "PAST MAX LAG", "REASON")
	var notes []string
	var eligible, failed, before, after, recBefore, recAfter, tombstones int64
	for _, r := range rep.Results {
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
	if rep.DryRun {
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
	fmt.Fprintf(&b, "\n%s %d of %d partition(s)%s%s\n\n", verb, eligible, len(rep.Results), totals, failures)
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	return rep.Config.WriteText(w)
}
