package commands

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/logtool/logtool/compact"
	"github.com/logtool/logtool/dump"
	"github.com/logtool/logtool/grep"
	"github.com/logtool/logtool/internal/human"
	"github.com/logtool/logtool/internal/jsonbytes"
	"github.com/logtool/logtool/internal/table"
	"github.com/logtool/logtool/internal/target"
	"github.com/logtool/logtool/logfmt/layout"
	"github.com/logtool/logtool/topicconfig"
)

func grepCommand() *cli.Command {
	return &cli.Command{
		Name:      "grep",
		Category:  "inspect",
		Usage:     "find every stored version of a key, and audit erasure deadlines (max.compaction.lag.ms)",
		ArgsUsage: "PATH...",
		Description: "Prints one line per stored record that matches: topic, partition, offset, timestamp, status, key and a\n" +
			"preview of the value; then a summary table of matches per partition and status. Matchers of one part of\n" +
			"a record are alternatives (--key a --key-regex b: either), the parts given must all match (--key a\n" +
			"--header h: both); at least one is needed. Regular expressions are Go's (RE2: linear time, never a\n" +
			"hang), unanchored, and read keys and values as UTF-8; binary keys are for --key-hex. Control records\n" +
			"never match. Every message format and codec is read, and records below the log start offset too: they\n" +
			"are still on disk.\n\n" +
			"The status of a match is its partition's, decided by a pass over the keys of the whole log: latest (the\n" +
			"newest version of its key; also every keyless record), superseded (a newer version exists), tombstone\n" +
			"(a null value that is the newest version), deleted (an older version of a key whose newest version is a\n" +
			"tombstone), aborted (its transaction aborted: it supersedes nothing) or ongoing (its transaction has no\n" +
			"marker in the log yet). Versions are records that are committed or outside transactions, as the log\n" +
			"cleaner counts them.\n\n" +
			"--max-lag audits KIP-354's promise, for the max.compaction.lag.ms given (--max-lag 7d) or each topic's\n" +
			"own (--max-lag topic): a superseded or deleted version whose first newer version was written more than\n" +
			"the max lag before --now, or a tombstone written more than the max lag + delete.retention.ms before,\n" +
			"should be gone. Each one still on disk is a problem line (offset, what superseded it, how far past its\n" +
			"deadline, and where the cleaner's plan for the partition stands) and the exit status is 3. Without\n" +
			"matchers it audits every key: per partition, how many old versions and tombstones are past their\n" +
			"deadline, and the oldest. The settings are each topic's, as compact takes them (the log dir's KRaft\n" +
			"metadata, or --topic-config FILE; else Kafka's defaults), the flags over them; a topic that is not\n" +
			"compacted, or has no max lag, has no deadline and is not audited.\n\n" +
			"Exit status: 0 whether or not anything matched, 1 when a partition could not be read, 2 for a bad\n" +
			"flag or path or no matcher, 3 when the audit found versions past their deadline.\n\n" +
			"Examples:\n" +
			"  logtool grep --key key-000007 testdata/kafka-logs/user-profiles-0\n" +
			"  logtool grep --key-regex '^key-00001' --count testdata/kafka-logs\n" +
			"  logtool grep --value-contains refund --header trace-id --from-time 2024-01-01T00:05:00Z testdata/kafka-logs/orders-0\n" +
			"  logtool --format json grep --key-hex 6b65792d303030303037 --value-decoder string testdata/kafka-logs/user-profiles-0\n" +
			"  logtool grep --key key-000033 --max-lag topic --now 2024-01-02T12:00:00Z testdata/kafka-logs/user-profiles-0\n" +
			"  logtool grep --max-lag topic --now 2024-01-02T12:00:00Z testdata/kafka-logs\n" +
			"  logtool grep --max-lag 7d --delete-retention 1d /var/lib/kafka/logs",
		Flags: append([]cli.Flag{
			&cli.GenericFlag{Name: "key", Value: &wholeValues{}, Usage: "records whose key is exactly `K` (repeatable)"},
			&cli.GenericFlag{Name: "key-hex", Value: &wholeValues{}, Usage: "records whose key is exactly these bytes, in `HEX`: 6b6579, 6b:65:79 or 0x6B 65 79 (repeatable)"},
			&cli.GenericFlag{Name: "key-regex", Value: &wholeValues{}, Usage: "records whose key matches the regular expression `RE` (repeatable)"},
			&cli.GenericFlag{Name: "value-contains", Value: &wholeValues{}, Usage: "records whose value contains the bytes of `S` (repeatable)"},
			&cli.GenericFlag{Name: "value-regex", Value: &wholeValues{}, Usage: "records whose value matches the regular expression `RE` (repeatable)"},
			&cli.GenericFlag{Name: "header", Value: &wholeValues{}, Usage: "records with a header `NAME[=VALUE]`: that name, with that value when one is given (repeatable)"},
			&cli.BoolFlag{Name: "count", Usage: "print only the summary: matches per partition and status"},
			&cli.StringFlag{Name: "key-decoder", Usage: "how keys are printed: string, hex, base64 or none (default: string in text, base64 in JSON)"},
			&cli.StringFlag{Name: "value-decoder", Usage: "how values and header values are printed: string, hex, base64 or none (default: string in text, base64 in JSON)"},
			&cli.IntFlag{Name: "width", Value: 80, Usage: "text: cut keys and values after this many characters (0: never)"},
			&cli.StringFlag{Name: "max-lag", Usage: "audit: max.compaction.lag.ms, the deadline of superseded and deleted versions: `DURATION|topic`, for every topic or each topic's own"},
			&cli.StringFlag{Name: "delete-retention", Usage: "audit: delete.retention.ms, added to the max lag for tombstones (default: the topic's configuration, else Kafka's default, 24h)"},
			&cli.StringFlag{Name: "now", Usage: "audit: the clock, ms or RFC 3339 (default: the wall clock)"},
			&cli.StringFlag{Name: "offset-map-memory", Value: "128MiB", Usage: "the key map's memory, shared among --workers; 24 bytes per key"},
		}, append(rangeFlags("the first segment's base offset: records below the log start offset are still on disk"),
			topicConfigFlags("audit: cleanup.policy for every topic of the run (default: the topic's configuration; topics not compacted are not audited)")...)...),
		Action: runGrep,
	}
}

// grepSpec reads the matcher flags.
func grepSpec(c *cli.Context) grep.Spec {
	v := func(name string) []string { return *c.Generic(name).(*wholeValues) }
	return grep.Spec{Keys: v("key"), KeysHex: v("key-hex"), KeyRegexps: v("key-regex"),
		ValueContains: v("value-contains"), ValueRegexps: v("value-regex"), Headers: v("header")}
}

func runGrep(c *cli.Context) error {
	g, err := global(c)
	if err != nil {
		return err
	}
	o := grep.Options{Workers: g.Workers, Count: c.Bool("count"), Format: grep.Format{JSON: g.JSON(), Width: c.Int("width")}}
	audit := c.IsSet("max-lag")
	switch spec := grepSpec(c); {
	case !spec.Empty():
		if o.Match, err = grep.NewMatcher(spec); err != nil {
			return usageErr("%v", err)
		}
	case !audit:
		return usageErr("no matcher: give --key, --key-hex, --key-regex, --value-contains, --value-regex or --header, or --max-lag alone to audit every key")
	}
	if o.Range, err = rangeOptions(c); err != nil {
		return err
	}
	o.Range.MaxRecordBytes = g.MaxRecordBytes
	if o.Match == nil && (o.Range.FromOffset != -1 || o.Range.ToOffset != -1 || c.IsSet("from-time") || c.IsSet("to-time")) {
		return usageErr("an audit of every key reads whole logs: give a matcher to search a range")
	}
	if o.Format, err = grepFormat(c, o.Format); err != nil {
		return err
	}
	if o.Format.Width < 0 {
		return usageErr("--width: want 0 or more, got %d", o.Format.Width)
	}
	if o.KeyMapMemory, err = sizeArg("offset-map-memory", c.String("offset-map-memory"), 1, noMax); err != nil {
		return err
	}
	cleaner, err := grepCleaner(c, audit)
	if err != nil {
		return err
	}
	if c.NArg() == 0 {
		return usageErr("no PATH given (a segment file, a partition directory or a log directory)")
	}
	set, release, err := readSet(c, g, "grep", "", target.Segments|target.Partitions|target.LogDirs)
	if err != nil {
		return err
	}
	defer release()
	sum := &grepSummary{g: g, audit: audit, all: o.Match == nil, count: o.Count}
	jobs, err := grepJobs(c, g, set, cleaner, sum)
	if err != nil {
		return err
	}
	bar := newProgress(g, "grep", 0, true)
	if bar != nil {
		o.Progress = func(done, todo int64) {
			bar.More(todo)
			bar.Add(done)
		}
	}
	out := g.Stdout
	if bar != nil && isTerminal(g.Stdout) {
		out = &barWriter{w: g.Stdout, bar: bar}
	}
	err = grep.Run(out, jobs, o, sum.add)
	bar.Finish()
	if err != nil {
		return err
	}
	if err := sum.flush(g.Stdout); err != nil {
		return err
	}
	switch {
	case sum.failed > 0:
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf("%d of %d partition(s) could not be searched", sum.failed, len(set.Partitions()))}
	case sum.findings > 0:
		return &ExitError{Code: ExitProblems, Err: fmt.Errorf("%d version(s) past their erasure deadline", sum.findings)}
	}
	return nil
}

// grepFormat reads the decoders: dump's, with keys and values in base64 in
// JSON unless a decoder is named, so that binary data survives.
func grepFormat(c *cli.Context, f grep.Format) (grep.Format, error) {
	f.KeyDecoder, f.ValueDecoder = dump.DecodeString, dump.DecodeString
	if f.JSON {
		f.KeyDecoder, f.ValueDecoder = dump.DecodeBase64, dump.DecodeBase64
	}
	for _, d := range []struct {
		flag string
		dst  *dump.Decoder
	}{{"key-decoder", &f.KeyDecoder}, {"value-decoder", &f.ValueDecoder}} {
		if s := c.String(d.flag); s != "" {
			var err error
			if *d.dst, err = dump.ParseDecoder(s); err != nil {
				return f, usageErr("--%s: %v", d.flag, err)
			}
		}
	}
	return f, nil
}

// grepAuditRun is what an audit takes from the command line: the clock,
// and the flags that set topic configs.
type grepAuditRun struct {
	now       int64
	overrides map[string]string
}

// grepCleaner reads the audit's flags; nil without --max-lag.
func grepCleaner(c *cli.Context, audit bool) (*grepAuditRun, error) {
	if !audit {
		for _, f := range []string{"now", "delete-retention", "topic-config", "cleanup-policy", "unlisted-topics"} {
			if c.IsSet(f) {
				return nil, usageErr("--%s is for the audit: give --max-lag too", f)
			}
		}
		return nil, nil
	}
	run := &grepAuditRun{now: time.Now().UnixMilli()}
	var err error
	if s := c.String("now"); s != "" {
		if run.now, err = timeArg("now", s, 0); err != nil {
			return nil, err
		}
	}
	flags := []flagConfig{{"delete-retention", topicconfig.DeleteRetentionMs, durationValue(0)}}
	if c.String("max-lag") != "topic" {
		flags = append(flags, flagConfig{"max-lag", topicconfig.MaxCompactionLagMs, durationValue(1)})
	}
	if run.overrides, err = topicOverrides(c, flags); err != nil {
		return nil, err
	}
	return run, nil
}

// grepJobs makes a job of each partition, with in an audit the cleaner's
// settings for its topic: its configuration where known (the flags over
// it), else Kafka's defaults and the flags. A partition that cannot be
// listed fails alone, in sum.
func grepJobs(c *cli.Context, g Global, set *target.Set, run *grepAuditRun, sum *grepSummary) ([]grep.Job, error) {
	var rt *runTopics
	if run != nil {
		var err error
		if rt, err = loadTopics(c, set, run.overrides); err != nil {
			return nil, err
		}
		sum.report, sum.configs, sum.skips = newConfigReport(rt, compact.ConfigNames), map[string]*topicconfig.Config{}, map[string]string{}
	}
	var jobs []grep.Job
	for _, tp := range set.Partitions() {
		p, err := layout.ReadPartition(tp.Path)
		if err != nil {
			sum.add(&grep.Result{Partition: &layout.Partition{Path: tp.Path, Dir: tp.Dir}, Err: err})
			continue
		}
		for _, n := range p.Unread() {
			g.Warnf("%s", n)
		}
		if n := leftoverLogs(p); n > 0 {
			g.Warnf("%s: %d leftover segment file(s) (.deleted, .cleaned, .swap) still hold records, which grep does not search: dump them, or let a broker or compact recover the partition first", tp.Path, n)
		}
		job := grep.Job{Partition: p, Segments: tp.Segments}
		if run != nil {
			cfg, skip, err := grepTopic(rt, tp)
			if err != nil {
				return nil, err
			}
			if skip != "" {
				// A partition found in a log dir has its row saying so.
				if tp.Named {
					g.Warnf("%s: not audited: %s", tp.Path, skip)
				}
				sum.skips[tp.Path] = skip
			} else {
				o := compact.DefaultOptions(run.now)
				o.Config, o.MaxRecordBytes = compact.TopicConfig(cfg), g.MaxRecordBytes
				job.Audit = &grep.Audit{Cleaner: o}
			}
			sum.report.add(tp.LogDir.Path, cfg, skip == "")
			sum.configs[tp.Path] = cfg
		}
		jobs = append(jobs, job)
	}
	return jobs, nil
}

// leftoverLogs counts the .log files an interrupted swap or deletion left:
// still on disk, but no segment of the log.
func leftoverLogs(p *layout.Partition) int {
	n := 0
	for _, f := range p.Leftovers {
		if layout.ParseFileName(filepath.Base(f)).Kind == layout.Log {
			n++
		}
	}
	return n
}

// grepTopic is the configuration a partition is audited with, or why it
// is not: its topic's configuration is unknown, its topic is known not to
// be compacted, or (with --max-lag topic) has no max.compaction.lag.ms. A partition of a log dir without a
// configuration is audited as compact, as the user chose it.
func grepTopic(rt *runTopics, tp *target.Partition) (*topicconfig.Config, string, error) {
	r := rt.cat.For(tp.LogDir.Path)
	cfg, err := r.Topic(tp.Dir.Topic)
	if err != nil {
		return nil, "", fmt.Errorf("%s: topic %s: %w", tp.Path, tp.Dir.Topic, err)
	}
	if why := r.Unknown(cfg); why != "" {
		return cfg, why + ", so it is not audited", nil
	}
	if !r.Known() || tp.Dir.Topic == "" {
		rt.setPolicy(cfg, "compact")
	}
	cc := compact.TopicConfig(cfg)
	if err := compactConflict(cfg, cc); err != nil {
		return nil, "", err
	}
	switch {
	case !cc.Compact:
		return cfg, "cleanup.policy=" + cc.Policy + ": no erasure deadline applies", nil
	case cc.MaxLag == compact.Unlimited:
		return cfg, "max.compaction.lag.ms is unlimited: no erasure deadline applies", nil
	}
	return cfg, "", nil
}

// grepSummary collects the partitions' results for the summary.
type grepSummary struct {
	g       Global
	audit   bool // --max-lag
	all     bool // an audit of every key
	count   bool // no lines before the summary
	results []*grep.Result
	failed  int
	// In an audit: the topic configuration the run used, each partition's,
	// and why a partition is not audited, by path.
	report   *configReport
	configs  map[string]*topicconfig.Config
	skips    map[string]string
	findings int64
}

func (s *grepSummary) add(r *grep.Result) {
	for _, n := range r.Notes {
		s.g.Warnf("%s", n)
	}
	if r.Plan != nil {
		for _, w := range r.Plan.Warnings {
			s.g.Warnf("%s: %s", r.Partition.Path, w)
		}
	}
	if r.Err != nil {
		s.failed++
		fmt.Fprintf(s.g.Stderr, "logtool: grep: %s\n", oneLine(r.Err))
		return
	}
	s.findings += r.Findings
	s.results = append(s.results, r)
}

func (s *grepSummary) flush(w io.Writer) error {
	if s.g.JSON() {
		return s.json(w)
	}
	lines := s.findings
	for _, r := range s.results {
		lines += r.Counts.Total()
	}
	if lines > 0 && !s.count {
		if _, err := fmt.Fprintln(w); err != nil {
			return err
		}
	}
	var b strings.Builder
	if s.all {
		s.auditText(&b)
	} else {
		s.matchText(&b)
	}
	s.skipNotes(&b)
	if s.report != nil {
		b.WriteString("\n")
		s.report.write(&b)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func (s *grepSummary) matchText(w *strings.Builder) {
	head := []string{"PARTITION", "MATCHES"}
	for st := range grep.Statuses() {
		head = append(head, strings.ToUpper(st.String()))
	}
	if s.audit {
		head = append(head, "PAST DEADLINE")
	}
	t := table.New(head...)
	var total grep.Counts
	for _, r := range s.results {
		row := []string{r.Partition.Dir.Name, strconv.FormatInt(r.Counts.Total(), 10)}
		for st, n := range r.Counts.All() {
			total[st] += n
			row = append(row, strconv.FormatInt(n, 10))
		}
		if s.audit {
			row = append(row, auditCell(r))
		}
		t.Append(row...)
	}
	t.WriteTo(w)
	line := fmt.Sprintf("no match in %d partition(s)", len(s.results))
	if n := total.Total(); n > 0 {
		line = fmt.Sprintf("%d match(es) in %d partition(s)", n, len(s.results))
		var parts []string
		for st, n := range total.All() {
			if n > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", n, st))
			}
		}
		line += ": " + strings.Join(parts, ", ")
	}
	if s.audit {
		line += s.auditLine()
	}
	fmt.Fprintln(w, line)
}

// skipNotes says why the partitions not audited were not: a line per
// reason.
func (s *grepSummary) skipNotes(w *strings.Builder) {
	var reasons []string
	byReason := map[string][]string{}
	for _, r := range s.results {
		if why, ok := s.skips[r.Partition.Path]; ok {
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
func auditCell(r *grep.Result) string {
	if r.Audit == nil {
		return "not audited"
	}
	return strconv.FormatInt(r.Findings, 10)
}

func (s *grepSummary) auditLine() string {
	if s.findings == 0 {
		return "; nothing past its erasure deadline"
	}
	return fmt.Sprintf("; %d past their erasure deadline", s.findings)
}

func (s *grepSummary) auditText(w *strings.Builder) {
	t := table.New("PARTITION", "KEYS", "OLD VERSIONS", "PAST DEADLINE", "OLDEST", "TOMBSTONES", "PAST DEADLINE", "CLEANABLE OFFSETS")
	var keys int64
	audited := 0
	for _, r := range s.results {
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
	if !s.g.Wide {
		t.Drop("CLEANABLE OFFSETS")
	}
	t.WriteTo(w)
	not := ""
	if n := len(s.results) - audited; n > 0 {
		not = fmt.Sprintf(" (%d not audited)", n)
	}
	fmt.Fprintf(w, "audited %d key(s) in %d partition(s)%s%s\n", keys, audited, not, s.auditLine())
}

// oldestCell says where the oldest superseded version is and how it
// stands with its deadline.
func oldestCell(f grep.Finding) string {
	switch {
	case f.Count == 0:
		return "-"
	case f.Deadline == grep.NoDeadline:
		return fmt.Sprintf("%d (no timestamps)", f.Offset)
	case f.Past > 0:
		return fmt.Sprintf("%d (%s past)", f.Offset, human.Duration(f.Past))
	}
	return fmt.Sprintf("%d (due in %s)", f.Offset, human.Duration(-f.Past))
}

// grepSummaryJSON is a partition's summary object.
type grepSummaryJSON struct {
	Type      string           `json:"type"`
	File      jsonbytes.Text   `json:"file"`
	Topic     string           `json:"topic"`
	Partition int32            `json:"partition"`
	Matches   *int64           `json:"matches,omitempty"`
	Statuses  map[string]int64 `json:"statuses,omitempty"`
	Keys      int              `json:"keys"`
	// Audit is a *grepAuditJSON, or {"audited": false, "reason": ...}.
	Audit any `json:"audit,omitempty"`
	// Config is the cleaner's topic configs the audit used, as compact's
	// objects carry them.
	Config map[string]topicconfig.Value `json:"config,omitempty"`
}

// grepAuditJSON is the audit part of a summary object.
type grepAuditJSON struct {
	Audited           bool    `json:"audited"`
	Now               int64   `json:"now"`
	MaxLagMs          int64   `json:"maxLagMs"`
	DeleteRetentionMs int64   `json:"deleteRetentionMs"`
	PastDeadline      int64   `json:"pastDeadline"`
	FirstDirtyOffset  *int64  `json:"firstDirtyOffset,omitempty"`
	FirstUncleanable  *int64  `json:"firstUncleanableOffset,omitempty"`
	OldVersions       *int64  `json:"oldVersions,omitempty"`
	OldVersionsPast   *int64  `json:"oldVersionsPastDeadline,omitempty"`
	Oldest            *oldest `json:"oldest,omitempty"`
	Tombstones        *int64  `json:"tombstones,omitempty"`
	TombstonesPast    *int64  `json:"tombstonesPastDeadline,omitempty"`
}

// oldest is the oldest superseded or deleted version of an audit of every
// key.
type oldest struct {
	Offset         int64  `json:"offset"`
	Status         string `json:"status"`
	SupersededBy   int64  `json:"supersededBy"`
	Deadline       *int64 `json:"deadline"`
	PastDeadlineMs *int64 `json:"pastDeadlineMs"`
}

func (s *grepSummary) json(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, r := range s.results {
		p := r.Partition
		obj := grepSummaryJSON{Type: "summary", File: jsonbytes.Text(p.Path), Topic: p.Dir.Topic, Partition: p.Dir.Partition, Keys: r.Keys}
		if obj.Topic == "" {
			obj.Topic = p.Dir.Name
		}
		if !s.all {
			n := r.Counts.Total()
			obj.Matches, obj.Statuses = &n, map[string]int64{}
			for st, n := range r.Counts.All() {
				obj.Statuses[st.String()] = n
			}
		}
		if s.audit {
			obj.Audit, obj.Config = auditJSON(r, s.all, s.skips[p.Path]), configJSON(s.configs[p.Path], compact.ConfigNames)
		}
		if err := enc.Encode(obj); err != nil {
			return err
		}
	}
	return nil
}

func auditJSON(r *grep.Result, all bool, skip string) any {
	if r.Audit == nil {
		return struct {
			Audited bool   `json:"audited"`
			Reason  string `json:"reason"`
		}{false, skip}
	}
	a := &grepAuditJSON{Audited: true}
	c := r.Audit.Cleaner
	a.Now, a.MaxLagMs, a.DeleteRetentionMs, a.PastDeadline = c.Now, c.MaxLag, c.DeleteRetention, r.Findings
	if r.Plan != nil && r.Plan.SegmentsBefore > 0 {
		a.FirstDirtyOffset, a.FirstUncleanable = &r.Plan.FirstDirtyOffset, &r.Plan.FirstUncleanableOffset
	}
	if all {
		a.OldVersions, a.OldVersionsPast, a.Tombstones, a.TombstonesPast = &r.Versions, &r.VersionsPast, &r.Tombstones, &r.TombstonesPast
		if f := r.Oldest(); f.Count > 0 {
			a.Oldest = &oldest{Offset: f.Offset, Status: f.Status.String(), SupersededBy: f.By}
			if f.Deadline != grep.NoDeadline {
				a.Oldest.Deadline, a.Oldest.PastDeadlineMs = &f.Deadline, &f.Past
			}
		}
	}
	return a
}
