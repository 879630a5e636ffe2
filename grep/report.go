package grep

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/logtool/logtool/compact"
	"github.com/logtool/logtool/internal/human"
	"github.com/logtool/logtool/internal/jsonbytes"
	"github.com/logtool/logtool/internal/table"
	"github.com/logtool/logtool/internal/target"
	"github.com/logtool/logtool/internal/textdec"
	"github.com/logtool/logtool/logfmt/layout"
	"github.com/logtool/logtool/topicconfig"
)

// Unaudited says why a partition whose topic the cleaner treats as c has no
// erasure deadline to audit, or "" when it has one.
func Unaudited(c compact.Config) string {
	switch {
	case !c.Compact:
		return "cleanup.policy=" + c.Policy + ": no erasure deadline applies"
	case c.MaxLag == compact.Unlimited:
		return "max.compaction.lag.ms is unlimited: no erasure deadline applies"
	}
	return ""
}

// NewJob reads the partition directory at path for a job that searches
// segments (nil: all of them), with what an operator must be told of it:
// the files it cannot read, and the leftover segments it does not search.
func NewJob(path string, segments []int64) (Job, []string, error) {
	p, err := layout.ReadPartition(path)
	if err != nil {
		return Job{}, nil, err
	}
	warnings := p.Unread()
	if n := leftoverLogs(p); n > 0 {
		warnings = append(warnings, fmt.Sprintf("%s: %d leftover segment file(s) (.deleted, .cleaned, .swap) still hold records, which grep does not search: dump them, or let a broker or compact recover the partition first", path, n))
	}
	return Job{Partition: p, Segments: segments}, warnings, nil
}

// leftoverLogs counts the .log files an interrupted swap or deletion left
// in p: still on disk, but no segment of the log.
func leftoverLogs(p *layout.Partition) int {
	n := 0
	for _, f := range p.Leftovers {
		if layout.ParseFileName(filepath.Base(f)).Kind == layout.Log {
			n++
		}
	}
	return n
}

// NewAudit is the audit of a partition of a topic configured as cfg, at
// the clock now, records read up to maxRecordBytes (0: the default).
func NewAudit(now int64, cfg *topicconfig.Config, maxRecordBytes int) *Audit {
	o := compact.DefaultOptions(now)
	o.Config, o.MaxRecordBytes = compact.TopicConfig(cfg), maxRecordBytes
	return &Audit{Cleaner: o}
}

// NewFormat is the format of lines: keys and values as text, but in JSON
// in base64, so that binary data survives, unless a decoder is set after.
func NewFormat(json bool, width int) Format {
	f := Format{JSON: json, Width: width, KeyDecoder: textdec.String, ValueDecoder: textdec.String}
	if json {
		f.KeyDecoder, f.ValueDecoder = textdec.Base64, textdec.Base64
	}
	return f
}

// Warnings are what an operator must be told of a partition's search: the
// segments whose data ends early, and the cleaner's warnings in an audit.
func (r *Result) Warnings() []string {
	ws := slices.Clone(r.Notes)
	if r.Plan != nil {
		for _, w := range r.Plan.Warnings {
			ws = append(ws, r.Partition.Path+": "+w)
		}
	}
	return ws
}

// Report is the summary of a search: a row, or a JSON object, per
// partition searched.
type Report struct {
	Audit bool // an audit ran (--max-lag)
	All   bool // the audit of every key, without matchers
	Count bool // no lines were written before the summary
	Wide  bool // text: the cleanable offsets too
	// In an audit: why a partition is not audited, and the cleaner's topic
	// configs it was audited with (compact.ConfigNames), by path.
	Skips   map[string]string
	Configs map[string]map[string]topicconfig.Value
	// Config, when set, is the topic configuration of the run, written
	// after the text summary.
	Config *topicconfig.Report

	Results  []*Result // those searched
	Failed   int       // partitions that could not be searched
	Findings int64     // versions past their deadline
}

// StartAudit readies s for an audit with the configuration of run rt.
func (s *Report) StartAudit(rt *topicconfig.Run) {
	s.Config, s.Configs, s.Skips = rt.NewReport(compact.ConfigNames), map[string]map[string]topicconfig.Value{}, map[string]string{}
}

// PlanAudit gives job the audit of partition tp at the clock now, or says
// why it has none (skip), and keeps the configuration it used for the
// report: its topic's where known (the command line's over it), else
// Kafka's defaults and the command line. A partition of a log dir without
// a configuration is audited as compact, as the user chose it. A command
// line that makes a topic's minimum lag exceed its maximum is refused (a
// *target.UsageError, from compact.Conflict).
func (s *Report) PlanAudit(job *Job, rt *topicconfig.Run, tp *target.Partition, now int64, maxRecordBytes int) (skip string, err error) {
	r := rt.Catalog.For(tp.LogDir.Path)
	cfg, err := r.Topic(tp.Dir.Topic)
	if err != nil {
		return "", fmt.Errorf("%s: topic %s: %w", tp.Path, tp.Dir.Topic, err)
	}
	if why := s.Config.Missing(r, tp, cfg, "compact", compact.Decisive); why != "" {
		skip = why + ", so it is not audited"
	} else {
		if !r.Known() || tp.Dir.Topic == "" {
			rt.SetPolicy(cfg, "compact")
		}
		cc := compact.TopicConfig(cfg)
		if err := compact.Conflict(cfg, cc); err != nil {
			return "", err
		}
		skip = Unaudited(cc)
	}
	if skip != "" {
		s.Skips[tp.Path] = skip
	} else {
		job.Audit = NewAudit(now, cfg, maxRecordBytes)
	}
	s.Config.Add(tp.LogDir.Path, cfg, skip == "")
	s.Configs[tp.Path] = cfg.Map(compact.ConfigNames)
	return skip, nil
}

// Add takes a partition's result: a failed one is only counted.
func (s *Report) Add(r *Result) {
	if r.Err != nil {
		s.Failed++
		return
	}
	s.Findings += r.Findings
	s.Results = append(s.Results, r)
}

// WriteText writes the summary table, after a blank line when lines came
// before it, then why partitions were not audited and the topic
// configuration.
func (s *Report) WriteText(w io.Writer) error {
	lines := s.Findings
	for _, r := range s.Results {
		lines += r.Counts.Total()
	}
	if lines > 0 && !s.Count {
		if _, err := fmt.Fprintln(w); err != nil {
			return err
		}
	}
	var b strings.Builder
	if s.All {
		s.auditText(&b)
	} else {
		s.matchText(&b)
	}
	s.skipNotes(&b)
	if s.Config != nil {
		b.WriteString("\n")
		s.Config.WriteText(&b)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (s *Report) matchText(w *strings.Builder) {
	head := []string{"PARTITION", "MATCHES"}
	for st := range Statuses() {
		head = append(head, strings.ToUpper(st.String()))
	}
	if s.Audit {
		head = append(head, "PAST DEADLINE")
	}
	t := table.New(head...)
	var total Counts
	for _, r := range s.Results {
		row := []string{r.Partition.Dir.Name, strconv.FormatInt(r.Counts.Total(), 10)}
		for st, n := range r.Counts.All() {
			total[st] += n
			row = append(row, strconv.FormatInt(n, 10))
		}
		if s.Audit {
			row = append(row, auditCell(r))
		}
		t.Append(row...)
	}
	t.WriteTo(w)
	line := fmt.Sprintf("no match in %d partition(s)", len(s.Results))
	if n := total.Total(); n > 0 {
		line = fmt.Sprintf("%d match(es) in %d partition(s)", n, len(s.Results))
		var parts []string
		for st, n := range total.All() {
			if n > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", n, st))
			}
		}
		line += ": " + strings.Join(parts, ", ")
	}
	if s.Audit {
		line += s.auditLine()
	}
	fmt.Fprintln(w, line)
}

// skipNotes says why the partitions not audited were not: a line per
// reason.
func (s *Report) skipNotes(w *strings.Builder) {
	var reasons []string
	byReason := map[string][]string{}
	for _, r := range s.Results {
		if why, ok := s.Skips[r.Partition.Path]; ok {
			if byReason[why] == nil {
				reasons = append(reasons, why)
			}
			byReason[why] = append(byReason[why], r.Partition.Dir.Name)
		}
	}
	for _, why := range reasons {
		fmt.Fprintf(w, "not audited, %s: %s\n", why, strings.Join(byReason[why], ", "))
	}
}

// auditCell is a partition's findings, or that it was not audited.
func auditCell(r *Result) string {
	if r.Audit == nil {
		return "not audited"
	}
	return strconv.FormatInt(r.Findings, 10)
}

func (s *Report) auditLine() string {
	if s.Findings == 0 {
		return "; nothing past its erasure deadline"
	}
	return fmt.Sprintf("; %d past their erasure deadline", s.Findings)
}

func (s *Report) auditText(w *strings.Builder) {
	t := table.New("PARTITION", "KEYS", "OLD VERSIONS", "PAST DEADLINE", "OLDEST", "TOMBSTONES", "PAST DEADLINE", "CLEANABLE OFFSETS")
	var keys int64
	audited := 0
	for _, r := range s.Results {
		if r.Audit == nil {
			t.Append(r.Partition.Dir.Name, "not audited", "-", "-", "-", "-", "-", "-")
			continue
		}
		keys += int64(r.Keys)
		audited++
		// As compact's table shows the range a pass would clean.
		cleanable := "-"
		if pl := r.Plan; pl != nil && pl.SegmentsBefore > 0 {
			cleanable = "none"
			if pl.FirstUncleanableOffset > pl.FirstDirtyOffset {
				cleanable = fmt.Sprintf("%d-%d", pl.FirstDirtyOffset, pl.FirstUncleanableOffset-1)
			}
		}
		t.Append(r.Partition.Dir.Name, strconv.Itoa(r.Keys), strconv.FormatInt(r.Versions, 10), strconv.FormatInt(r.VersionsPast, 10),
			oldestCell(r.Oldest()), strconv.FormatInt(r.Tombstones, 10), strconv.FormatInt(r.TombstonesPast, 10), cleanable)
	}
	if !s.Wide {
		t.Drop("CLEANABLE OFFSETS")
	}
	t.WriteTo(w)
	not := ""
	if n := len(s.Results) - audited; n > 0 {
		not = fmt.Sprintf(" (%d not audited)", n)
	}
	fmt.Fprintf(w, "audited %d key(s) in %d partition(s)%s%s\n", keys, audited, not, s.auditLine())
}

// oldestCell says where the oldest superseded version is and how it
// stands with its deadline.
func oldestCell(f Finding) string {
	switch {
	case f.Count == 0:
		return "-"
	case f.Deadline == NoDeadline:
		return fmt.Sprintf("%d (no timestamps)", f.Offset)
	case f.Past > 0:
		return fmt.Sprintf("%d (%s past)", f.Offset, human.Duration(f.Past))
	}
	return fmt.Sprintf("%d (due in %s)", f.Offset, human.Duration(-f.Past))
}

// summaryJSON is a partition's summary object.
type summaryJSON struct {
	Type      string           `json:"type"`
	File      jsonbytes.Text   `json:"file"`
	Topic     string           `json:"topic"`
	Partition int32            `json:"partition"`
	Matches   *int64           `json:"matches,omitempty"`
	Statuses  map[string]int64 `json:"statuses,omitempty"`
	Keys      int              `json:"keys"`
	// Audit is an *auditJSON, or {"audited": false, "reason": ...}.
	Audit any `json:"audit,omitempty"`
	// Config is the cleaner's topic configs the audit used, as compact's
	// objects carry them.
	Config map[string]topicconfig.Value `json:"config,omitempty"`
}

// auditJSON is the audit part of a summary object.
type auditJSON struct {
	Audited           bool        `json:"audited"`
	Now               int64       `json:"now"`
	MaxLagMs          int64       `json:"maxLagMs"`
	DeleteRetentionMs int64       `json:"deleteRetentionMs"`
	PastDeadline      int64       `json:"pastDeadline"`
	FirstDirtyOffset  *int64      `json:"firstDirtyOffset,omitempty"`
	FirstUncleanable  *int64      `json:"firstUncleanableOffset,omitempty"`
	OldVersions       *int64      `json:"oldVersions,omitempty"`
	OldVersionsPast   *int64      `json:"oldVersionsPastDeadline,omitempty"`
	Oldest            *oldestJSON `json:"oldest,omitempty"`
	Tombstones        *int64      `json:"tombstones,omitempty"`
	TombstonesPast    *int64      `json:"tombstonesPastDeadline,omitempty"`
}

// oldestJSON is the oldest superseded or deleted version of an audit of
// every key.
type oldestJSON struct {
	Offset         int64  `json:"offset"`
	Status         string `json:"status"`
	SupersededBy   int64  `json:"supersededBy"`
	Deadline       *int64 `json:"deadline"`
	PastDeadlineMs *int64 `json:"pastDeadlineMs"`
}

// WriteJSON writes a summary object per partition searched.
func (s *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, r := range s.Results {
		p := r.Partition
		obj := summaryJSON{Type: "summary", File: jsonbytes.Text(p.Path), Topic: p.Dir.Topic, Partition: p.Dir.Partition, Keys: r.Keys}
		if obj.Topic == "" {
			obj.Topic = p.Dir.Name
		}
		if !s.All {
			n := r.Counts.Total()
			obj.Matches, obj.Statuses = &n, map[string]int64{}
			for st, n := range r.Counts.All() {
				obj.Statuses[st.String()] = n
			}
		}
		if s.Audit {
			obj.Audit, obj.Config = r.auditJSON(s.All, s.Skips[p.Path]), s.Configs[p.Path]
		}
		if err := enc.Encode(obj); err != nil {
			return err
		}
	}
	return nil
}

func (r *Result) auditJSON(all bool, skip string) any {
	if r.Audit == nil {
		return struct {
			Audited bool   `json:"audited"`
			Reason  string `json:"reason"`
		}{false, skip}
	}
	a := &auditJSON{Audited: true}
	c := r.Audit.Cleaner
	a.Now, a.MaxLagMs, a.DeleteRetentionMs, a.PastDeadline = c.Now, c.MaxLag, c.DeleteRetention, r.Findings
	if r.Plan != nil && r.Plan.SegmentsBefore > 0 {
		a.FirstDirtyOffset, a.FirstUncleanable = &r.Plan.FirstDirtyOffset, &r.Plan.FirstUncleanableOffset
	}
	if all {
		a.OldVersions, a.OldVersionsPast, a.Tombstones, a.TombstonesPast = &r.Versions, &r.VersionsPast, &r.Tombstones, &r.TombstonesPast
		if f := r.Oldest(); f.Count > 0 {
			a.Oldest = &oldestJSON{Offset: f.Offset, Status: f.Status.String(), SupersededBy: f.By}
			if f.Deadline != NoDeadline {
				a.Oldest.Deadline, a.Oldest.PastDeadlineMs = &f.Deadline, &f.Past
			}
		}
	}
	return a
}
