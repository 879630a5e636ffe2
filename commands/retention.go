package commands

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/logtool/logtool/internal/target"
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
	o, overrides, err := retentionOptions(c, g)
	if err != nil {
		return err
	}
	rep := &retention.Report{DryRun: o.DryRun, NowMs: o.NowMs}
	set, release, err := checkedTargets(g, c.Args().Slice(), target.Options{Command: "retention", Takes: target.Partitions | target.LogDirs,
		Topic: c.String("topic"), Skip: retention.Skip, Writes: true}, writeAccess(o.DryRun), func(set *target.Set) (err error) {
		rep.Config, err = topicJobs(c, set, overrides, retention.ConfigNames, "delete", retention.Decisive, "", rep.Add)
		return err
	})
	if err != nil {
		return err
	}
	defer release()
	if len(set.Partitions()) == 0 {
		g.Warnf("no partition selected")
		return nil
	}
	failures := retentionJobs(g, set, o, rep)
	if !g.Quiet || o.DryRun { // a dry run's plan is its only output
		if err := render(g, g.Stdout, rep); err != nil {
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
	return usageOf(rep.Config.SkipErr())
}

// retentionOptions reads the flags, the topic configs they set apart.
func retentionOptions(c *cli.Context, g Global) (o retention.Options, overrides map[string]string, err error) {
	o = retention.Options{Workers: g.Workers, DryRun: c.Bool("dry-run")}
	if overrides, err = topicOverrides(c, retentionFlags); err != nil {
		return o, nil, err
	}
	o.NowMs = time.Now().UnixMilli()
	if s := c.String("now"); s != "" {
		if o.NowMs, err = timeArg("now", s, 0); err != nil {
			return o, nil, err
		}
	}
	if c.NArg() == 0 {
		return o, nil, usageErr("no PATH given: name partition directories or log directories")
	}
	return o, overrides, nil
}

// retentionJobs runs the jobs under a progress bar, into rep, with their
// warnings on stderr, and returns the failures.
func retentionJobs(g Global, set *target.Set, o retention.Options, rep *retention.Report) []error {
	bar := newProgress(g, "retention", int64(len(set.Partitions())), false)
	if bar != nil {
		o.Done = func(*retention.Result) { bar.Add(1) }
	}
	failures := rep.Run(set, o)
	bar.Finish()
	for _, r := range rep.Results {
		for _, w := range r.AllWarnings() {
			g.Warnf("%s", w)
		}
	}
	return failures
}
