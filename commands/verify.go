package commands

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/logtool/logtool/internal/meter"
	"github.com/logtool/logtool/internal/target"
	"github.com/logtool/logtool/verify"
)

func verifyCommand() *cli.Command {
	return &cli.Command{
		Name:        "verify",
		Category:    "inspect",
		Usage:       "check log directories, partitions or files for damage and disagreement, without changing them",
		ArgsUsage:   "PATH...",
		Description: description("verify"),
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "deep", Usage: "also parse every record of every batch, not only the framing and checksums of batches"},
			&cli.BoolFlag{Name: "strict", Usage: "index files must be byte-identical to what Kafka's recovery builds (as logtool gen and reindex write them), not only serve lookups correctly as a live broker's do"},
			&cli.BoolFlag{Name: "verbose", Usage: "list every finding: the information findings, and the problems past 20 about one file, which are otherwise only counted"},
		},
		Action: runVerify,
	}
}

func runVerify(c *cli.Context) error {
	g, err := global(c)
	if err != nil {
		return err
	}
	if c.NArg() == 0 {
		return usageErr("no PATH given")
	}
	paths := c.Args().Slice()
	set, release, err := targets(g, paths, target.Options{Command: "verify",
		Takes: target.Files | target.Segments | target.Partitions | target.LogDirs}, target.Read)
	if err != nil {
		return err
	}
	defer release()
	plan := verify.NewPlan(set)
	o, bar := verifyOptions(c, g, plan)
	out := verify.NewSummary(g.Stdout, g.JSON(), c.Bool("verbose"))
	err = plan.Run(o, func(rep *verify.Report) error {
		if len(rep.Findings) > 0 {
			bar.Clear()
		}
		if rep.Err != nil {
			fmt.Fprintf(g.Stderr, "logtool: verify: %s\n", oneLine(rep.Err))
		}
		return out.Add(rep)
	})
	bar.Finish()
	if err != nil {
		return err
	}
	if err := out.Finish(paths); err != nil {
		return err
	}
	return verifyExit(out)
}

// verifyOptions reads the flags, with the progress bar of the run, if any.
func verifyOptions(c *cli.Context, g Global, plan *verify.Plan) (verify.Options, *meter.Bar) {
	o := verify.Options{Deep: c.Bool("deep"), StrictIndexes: c.Bool("strict"), Workers: g.Workers, MaxRecordBytes: g.MaxRecordBytes,
		ListAll: c.Bool("verbose")}
	// The total costs a stat of every segment: only for a bar.
	bar := newProgress(g, "verify", 0, true)
	if bar != nil {
		bar.Set(0, plan.LogBytes())
		o.Progress = bar.Add
	}
	return o, bar
}

// verifyExit maps the outcome of a run to the contract's exit codes.
func verifyExit(out *verify.Summary) error {
	switch {
	case out.Failed > 0:
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf("%d of %d unit(s) could not be verified", out.Failed, out.Units)}
	case out.Problems > 0:
		return problemsErr(out.Problems)
	}
	return nil
}
