package commands

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/logtool/logtool/internal/refuse"
	"github.com/logtool/logtool/internal/target"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/codec"
	"github.com/logtool/logtool/migrate/upgrade"
)

func upgradeCommand() *cli.Command {
	return &cli.Command{
		Name:        "upgrade",
		Category:    "repair and convert",
		Usage:       "rewrite old message sets (magic 0, 1) to a newer magic with every offset, key and value kept",
		ArgsUsage:   "PATH...",
		Description: description("upgrade"),
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "to-magic", Value: 1, Usage: "message format to reach: 1 or 2"},
			&cli.StringFlag{Name: "timestamp-type", Value: "create", Usage: "what v0 messages get: create (timestamp -1, CreateTime) or log-append (--append-time, LogAppendTime)"},
			&cli.StringFlag{Name: "append-time", Value: "file-mtime", Usage: "the LogAppendTime: ms, RFC 3339, or file-mtime (each segment's .log modification time)"},
			&cli.StringFlag{Name: "compression", Value: "keep", Usage: "codec of rewritten sets: keep, none, gzip, snappy, lz4 or zstd"},
			&cli.StringFlag{Name: "output", Usage: "write each converted partition to DIR, under its own directory name, and leave the source alone (default: convert in place)"},
			&cli.BoolFlag{Name: "dry-run", Usage: "convert in memory and report segments, messages and sizes; write nothing"},
		},
		Action: runUpgrade,
	}
}

func runUpgrade(c *cli.Context) error {
	g, err := global(c)
	if err != nil {
		return err
	}
	opts, err := upgradeOptions(c, g)
	if err != nil {
		return err
	}
	set, release, err := targets(g, c.Args().Slice(), target.Options{Command: "upgrade", Takes: target.Partitions | target.LogDirs,
		Output: opts.Output, Writes: true}, upgradeAccess(opts))
	if err != nil {
		return err
	}
	defer release()
	opts.Targets = set
	if set.Output != nil {
		opts.Output = set.Output.Path
	}
	if bar := newProgress(g, "upgrading", 0, true); bar != nil {
		opts.Progress = bar.Set
		defer bar.Finish()
	}
	rep, err := upgrade.Run(opts)
	if rep == nil {
		return err
	}
	err = upgradeErr(g, rep, err)
	if g.Quiet && !opts.DryRun { // a dry run's report is its only output
		return err
	}
	if g.JSON() {
		return errors.Join(err, rep.WriteJSON(g.Stdout, oneLine))
	}
	return errors.Join(err, rep.WriteText(g.Stdout, opts.Output))
}

// upgradeAccess is what a run needs of its targets: in place the log
// directories are written; with --output the sources must not change while
// they are copied, and the output is written.
func upgradeAccess(o upgrade.Options) target.Access {
	if o.Output != "" && !o.DryRun {
		return target.Stable
	}
	return writeAccess(o.DryRun)
}

// upgradeErr warns of what the run recovered or left alone, and gives each
// failed partition its own error line, as Run prints them; the run's error
// then only says how many failed, with exit 4 when one was refused.
func upgradeErr(g Global, rep *upgrade.Report, err error) error {
	for _, w := range rep.Warnings() {
		g.Warnf("%s", w)
	}
	failed := rep.Failed()
	if failed == 0 {
		return err
	}
	code, perrs := ExitFailure, map[error]bool{}
	for _, p := range rep.Partitions {
		if p.Err == nil {
			continue
		}
		perrs[p.Err] = true
		fmt.Fprintf(g.Stderr, "logtool: upgrade: %s\n", oneLine(p.Err))
		if errors.Is(p.Err, refuse.ErrRefused) {
			code = ExitRefused
		}
	}
	rest := []error{&ExitError{Code: code, Err: fmt.Errorf("%d of %d partition(s) failed", failed, len(rep.Partitions))}}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			if !perrs[e] {
				rest = append(rest, e)
			}
		}
	}
	return errors.Join(rest...)
}

// upgradeOptions reads and checks the command's flags.
func upgradeOptions(c *cli.Context, g Global) (upgrade.Options, error) {
	o := upgrade.Options{Output: c.String("output"), DryRun: c.Bool("dry-run"), Workers: g.Workers, MaxRecordBytes: g.MaxRecordBytes}
	if c.NArg() == 0 {
		return o, usageErr("no PATH given")
	}
	switch m := c.Int("to-magic"); m {
	case 1, 2:
		o.ToMagic = int8(m)
	default:
		return o, usageErr("--to-magic: want 1 or 2, got %d", m)
	}
	switch s := c.String("timestamp-type"); s {
	case "create":
		o.TimestampType = logfmt.CreateTime
	case "log-append":
		o.TimestampType = logfmt.LogAppendTime
	default:
		return o, usageErr("--timestamp-type: want create or log-append, got %q", s)
	}
	if s := c.String("append-time"); s != "file-mtime" {
		if o.TimestampType != logfmt.LogAppendTime {
			return o, usageErr("--append-time applies only with --timestamp-type log-append")
		}
		ms, err := timeArg("append-time", s, 1)
		if err != nil {
			return o, err
		}
		o.AppendTime = ms
	}
	if s := c.String("compression"); s != "keep" {
		t, err := codec.Parse(s)
		if err != nil {
			return o, usageErr("--compression: want keep, none, gzip, snappy, lz4 or zstd, got %q", s)
		}
		if !t.ValidFor(o.ToMagic) {
			return o, usageErr("--compression %s needs --to-magic 2", s)
		}
		o.Compression = &t
	}
	return o, nil
}
