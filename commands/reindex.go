package commands

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/logtool/logtool/index"
	"github.com/logtool/logtool/internal/refuse"
	"github.com/logtool/logtool/internal/target"
	"github.com/logtool/logtool/reindex"
)

func reindexCommand() *cli.Command {
	return &cli.Command{
		Name:        "reindex",
		Category:    "repair and convert",
		Usage:       "rebuild or check .index, .timeindex and .txnindex files as Kafka's segment recovery builds them",
		ArgsUsage:   "PATH...",
		Description: description("reindex"),
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "offset", Usage: "rebuild (or check) .index files; no selector means all three kinds"},
			&cli.BoolFlag{Name: "time", Usage: "rebuild (or check) .timeindex files; no selector means all three kinds"},
			&cli.BoolFlag{Name: "txn", Usage: "rebuild (or check) .txnindex files; no selector means all three kinds"},
			&cli.StringFlag{Name: "interval-bytes", Value: strconv.Itoa(index.DefaultIntervalBytes), Usage: "index.interval.bytes: log bytes between .index entries (bytes, or with K, M: 4KiB)"},
			&cli.StringFlag{Name: "granularity", Value: "0", Usage: "build a coarse time index, one entry per bucket of this width (e.g. 1m); 0 means recovery's time index"},
			&cli.BoolFlag{Name: "check", Usage: "write nothing; compare the existing indexes with the log (exit 3 on problems)"},
			&cli.BoolFlag{Name: "strict", Usage: "with --check: any byte difference from the rebuild is a problem"},
			&cli.BoolFlag{Name: "dry-run", Usage: "write nothing; report what would change"},
			&cli.BoolFlag{Name: "truncate-corrupt-tail", Usage: "cut a .log after its last valid batch, keeping the removed bytes in SEGMENT.log.truncated-POSITION"},
		},
		Action: runReindex,
	}
}

func runReindex(c *cli.Context) error {
	g, err := global(c)
	if err != nil {
		return err
	}
	o, err := reindexOptions(c, g)
	if err != nil {
		return err
	}
	set, release, err := targets(g, c.Args().Slice(), target.Options{Command: "reindex",
		Takes: target.Segments | target.Partitions | target.LogDirs, Skip: reindex.Skip, Writes: o.Mode != reindex.Check}, reindexAccess(o.Mode))
	if err != nil {
		return err
	}
	defer release()
	jobs := set.Partitions()
	if bar := newProgress(g, "reindex", 0, true); bar != nil {
		bar.Set(0, reindex.LogBytes(jobs))
		o.Progress = bar.Add
		defer bar.Finish()
	}
	reports, errs := reindex.Run(jobs, o, g.Workers)
	out := reindex.NewSummary(g.Stdout, o.Mode, g.JSON(), g.Quiet)
	return reindexReport(g, out, reports, errs)
}

// reindexReport writes the reports, each failure on its own error line, and
// maps the outcome to the contract's exit codes.
func reindexReport(g Global, out *reindex.Summary, reports []*reindex.PartitionReport, errs []error) error {
	failed, refused := 0, false
	for i, rep := range reports {
		if errs[i] != nil {
			failed++
			refused = refused || errors.Is(errs[i], refuse.ErrRefused)
			fmt.Fprintf(g.Stderr, "logtool: reindex: %s\n", oneLine(errs[i]))
		}
		if rep != nil {
			if err := out.Add(rep); err != nil {
				return err
			}
		}
	}
	if err := out.Finish(); err != nil {
		return err
	}
	jobs, problems := len(reports), out.Problems()
	switch {
	case refused:
		return &ExitError{Code: ExitRefused, Err: fmt.Errorf("%d of %d partition(s) refused or failed", failed, jobs)}
	case failed > 0:
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf("%d of %d partition(s) failed", failed, jobs)}
	case problems > 0:
		return problemsErr(problems)
	}
	return nil
}

// reindexAccess: a check and a dry run only read.
func reindexAccess(m reindex.Mode) target.Access {
	if m != reindex.Write {
		return target.Read
	}
	return target.Write
}

func reindexOptions(c *cli.Context, g Global) (reindex.Options, error) {
	o := reindex.Options{
		Offset: c.Bool("offset"), Time: c.Bool("time"), Txn: c.Bool("txn"),
		Strict: c.Bool("strict"), TruncateCorruptTail: c.Bool("truncate-corrupt-tail"), MaxRecordBytes: g.MaxRecordBytes,
	}
	var err error
	if o.IntervalBytes, err = sizeArg("interval-bytes", c.String("interval-bytes"), 0, math.MaxInt32); err != nil {
		return o, err
	}
	if s := c.String("granularity"); s != "0" {
		warnBareMillis(c, "granularity", c.String("granularity"))
		ms, err := durationArg("granularity", s, 1, noMax/int64(time.Millisecond))
		if err != nil {
			return o, err
		}
		o.Granularity = time.Duration(ms) * time.Millisecond
	}
	selected := o.Offset || o.Time || o.Txn
	if !selected {
		o.Offset, o.Time, o.Txn = true, true, true
	}
	check, dry := c.Bool("check"), c.Bool("dry-run")
	switch {
	case check && dry:
		return o, usageErr("--check and --dry-run exclude each other (--check writes nothing already)")
	case check && o.TruncateCorruptTail:
		return o, usageErr("--check writes nothing; it cannot be combined with --truncate-corrupt-tail")
	case o.Strict && !check:
		return o, usageErr("--strict applies to --check")
	case o.Granularity > 0 && !o.Time:
		return o, usageErr("--granularity shapes the time index: add --time")
	}
	switch {
	case check:
		o.Mode = reindex.Check
	case dry:
		o.Mode = reindex.DryRun
	}
	if c.NArg() == 0 {
		return o, usageErr("no PATH given")
	}
	return o, nil
}
