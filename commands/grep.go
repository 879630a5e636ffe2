package commands

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/logtool/logtool/grep"
	"github.com/logtool/logtool/internal/target"
	"github.com/logtool/logtool/internal/textdec"
	"github.com/logtool/logtool/logfmt/layout"
	"github.com/logtool/logtool/topicconfig"
)

func grepCommand() *cli.Command {
	return &cli.Command{
		Name:        "grep",
		Category:    "inspect",
		Usage:       "find every stored version of a key, and audit erasure deadlines (max.compaction.lag.ms)",
		ArgsUsage:   "PATH...",
		Description: description("grep"),
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
	o, err := grepOptions(c, g)
	if err != nil {
		return err
	}
	cleaner, err := grepCleaner(c, c.IsSet("max-lag"))
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
	rep := &grep.Report{Audit: cleaner != nil, All: o.Match == nil, Count: o.Count, Wide: g.Wide}
	add := grepAdd(g, rep)
	jobs, err := grepJobs(c, g, set, cleaner, rep, add)
	if err != nil {
		return err
	}
	if err := grepRun(g, jobs, o, rep, add); err != nil {
		return err
	}
	switch {
	case rep.Failed > 0:
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf("%d of %d partition(s) could not be searched", rep.Failed, len(set.Partitions()))}
	case rep.Findings > 0:
		return &ExitError{Code: ExitProblems, Err: fmt.Errorf("%d version(s) past their erasure deadline", rep.Findings)}
	}
	return usageOf(rep.Config.SkipErr())
}

// grepAdd takes each partition's result: its warnings and failure go to
// stderr as they come, the rest to rep.
func grepAdd(g Global, rep *grep.Report) func(*grep.Result) {
	return func(r *grep.Result) {
		warnAll(g, r.Warnings())
		if r.Err != nil {
			fmt.Fprintf(g.Stderr, "logtool: grep: %s\n", oneLine(r.Err))
		}
		rep.Add(r)
	}
}

// grepOptions reads the flags of the search, those of an audit aside.
func grepOptions(c *cli.Context, g Global) (grep.Options, error) {
	o := grep.Options{Workers: g.Workers, Count: c.Bool("count"), Format: grep.NewFormat(g.JSON(), c.Int("width"))}
	var err error
	switch spec := grepSpec(c); {
	case !spec.Empty():
		if o.Match, err = grep.NewMatcher(spec); err != nil {
			return o, usageErr("%v", err)
		}
	case !c.IsSet("max-lag"):
		return o, usageErr("no matcher: give --key, --key-hex, --key-regex, --value-contains, --value-regex or --header, or --max-lag alone to audit every key")
	}
	if o.Range, err = rangeOptions(c); err != nil {
		return o, err
	}
	o.Range.MaxRecordBytes = g.MaxRecordBytes
	if o.Match == nil && (o.Range.FromOffset != -1 || o.Range.ToOffset != -1 || c.IsSet("from-time") || c.IsSet("to-time")) {
		return o, usageErr("an audit of every key reads whole logs: give a matcher to search a range")
	}
	if o.Format, err = grepDecoders(c, o.Format); err != nil {
		return o, err
	}
	if o.Format.Width < 0 {
		return o, usageErr("--width: want 0 or more, got %d", o.Format.Width)
	}
	o.KeyMapMemory, err = sizeArg("offset-map-memory", c.String("offset-map-memory"), 1, noMax)
	return o, err
}

// grepRun searches, under a progress bar, and writes the summary.
func grepRun(g Global, jobs []grep.Job, o grep.Options, rep *grep.Report, add func(*grep.Result)) error {
	bar := newProgress(g, "grep", 0, true)
	out := g.Stdout
	if bar != nil {
		o.Progress = func(done, todo int64) {
			bar.More(todo)
			bar.Add(done)
		}
		if isTerminal(g.Stdout) {
			out = bar.Writer(g.Stdout)
		}
	}
	err := grep.Run(out, jobs, o, add)
	bar.Finish()
	if err != nil {
		return err
	}
	return render(g, g.Stdout, rep)
}

// grepDecoders reads the decoders given over f's.
func grepDecoders(c *cli.Context, f grep.Format) (grep.Format, error) {
	for _, d := range []struct {
		flag string
		dst  *textdec.Decoder
	}{{"key-decoder", &f.KeyDecoder}, {"value-decoder", &f.ValueDecoder}} {
		if s := c.String(d.flag); s != "" {
			var err error
			if *d.dst, err = textdec.Parse(s); err != nil {
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
		for _, f := range []string{"now", "delete-retention", "topic-config", "cleanup-policy", "unlisted-topics", "server-properties", "kafka-defaults"} {
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

// grepJobs makes a job of each partition, with in an audit the one grep
// plans for it (Report.PlanAudit). A partition that cannot be listed fails
// alone, through add.
func grepJobs(c *cli.Context, g Global, set *target.Set, run *grepAuditRun, rep *grep.Report, add func(*grep.Result)) ([]grep.Job, error) {
	var rt *topicconfig.Run
	if run != nil {
		var err error
		if rt, err = loadTopics(c, set, run.overrides); err != nil {
			return nil, err
		}
		rep.StartAudit(rt)
	}
	var jobs []grep.Job
	for _, tp := range set.Partitions() {
		job, warnings, err := grep.NewJob(tp.Path, tp.Segments)
		if err != nil {
			add(&grep.Result{Partition: &layout.Partition{Path: tp.Path, Dir: tp.Dir}, Err: err})
			continue
		}
		warnAll(g, warnings)
		if run != nil {
			skip, err := rep.PlanAudit(&job, rt, tp, run.now, g.MaxRecordBytes)
			if err != nil {
				return nil, usageOf(err)
			}
			// A partition found in a log dir has its row saying so.
			if skip != "" && tp.Named {
				g.Warnf("%s: not audited: %s", tp.Path, skip)
			}
		}
		jobs = append(jobs, job)
	}
	return jobs, nil
}
