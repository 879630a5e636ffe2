package commands

import (
	"errors"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/logtool/logtool/internal/meter"
	"github.com/logtool/logtool/internal/target"
	"github.com/logtool/logtool/replicas"
)

func replicasCommand() *cli.Command {
	return &cli.Command{
		Name:        "replicas",
		Category:    "inspect",
		Usage:       "compare a partition's replicas across brokers, and say what Kafka's truncation would make each lose",
		ArgsUsage:   "PATH...",
		Description: description("replicas"),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "leader", Usage: "the broker (node id) that leads next, whose log the others truncate to; default: per partition, the replica with the highest leader epoch"},
			&cli.BoolFlag{Name: "all-records", Usage: "hash the records of every batch read from a log directory, not only of compacted replicas, so that a batch cleaned on one broker is checked record by record against one that never cleaned (decompresses every batch)"},
		},
		Action: runReplicas,
	}
}

func runReplicas(c *cli.Context) error {
	g, err := global(c)
	if err != nil {
		return err
	}
	if c.NArg() == 0 {
		return usageErr("no PATH given")
	}
	bar := newProgress(g, "replicas", 0, true)
	o := replicas.Options{MaxRecordBytes: g.MaxRecordBytes, AllRecords: c.Bool("all-records"), Progress: bar.Add, Workers: g.Workers}
	srcs, release, err := replicaSources(g, c.Args().Slice(), o, bar)
	defer release()
	if err != nil {
		return err
	}
	out := g.Stdout
	if bar != nil && isTerminal(g.Stdout) {
		out = bar.Writer(g.Stdout)
	}
	sum, err := replicas.Run(srcs, replicas.RunOptions{Leader: c.String("leader")}, func(v *replicas.Verdict) error { return render(g, out, v) })
	bar.Finish()
	if err != nil {
		return replicasErr(err)
	}
	if !g.JSON() {
		if err := sum.WriteText(g.Stdout); err != nil {
			return err
		}
	}
	if sum.Failed() {
		return &ExitError{Code: ExitProblems, Err: fmt.Errorf("%d partition(s) diverge (%d below a high watermark), %d with different topic IDs, %d damaged",
			sum.Diverge, sum.BelowHighWatermark, sum.TopicIDs, sum.Damaged)}
	}
	return nil
}

// replicaSources opens each path as one broker's: a digest file, or log
// directories read under the lock policy of a reader.
func replicaSources(g Global, paths []string, o replicas.Options, bar *meter.Bar) ([]replicas.Source, func(), error) {
	var srcs []replicas.Source
	var releases []func() error
	release := func() {
		for _, s := range srcs {
			s.Close()
		}
		for _, r := range releases {
			r()
		}
	}
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			s, err := replicas.OpenDigest(p)
			if err != nil {
				return nil, release, replicasErr(err)
			}
			srcs = append(srcs, s)
			continue
		}
		set, rel, err := targets(g, []string{p}, target.Options{Command: "replicas", Takes: target.LogDirs}, target.Read)
		if err != nil {
			return nil, release, err
		}
		releases = append(releases, rel)
		bar.More(set.SegmentBytes())
		s, err := replicas.OpenLogDirs(set, o)
		if err != nil {
			return nil, release, replicasErr(err)
		}
		srcs = append(srcs, s...)
	}
	return srcs, release, nil
}

// replicasErr makes input that cannot be compared a usage error (exit 2).
func replicasErr(err error) error {
	if _, ok := errors.AsType[*replicas.InputError](err); ok {
		return &ExitError{Code: ExitUsage, Err: err}
	}
	return usageOf(err)
}
