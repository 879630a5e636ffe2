package commands

import (
	"github.com/urfave/cli/v2"

	"github.com/logtool/logtool/internal/target"
	"github.com/logtool/logtool/replicas"
)

func digestCommand() *cli.Command {
	return &cli.Command{
		Name:        "digest",
		Category:    "inspect",
		Usage:       "write what logtool replicas needs of one broker's log directories, so that only the digest crosses the network",
		ArgsUsage:   "--out FILE LOGDIR...",
		Description: description("digest"),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Usage: "the digest `FILE` to write (required); an existing file is replaced only once the new one is whole"},
			&cli.BoolFlag{Name: "all-records", Usage: "hash the records of every batch, not only of compacted partitions (decompresses every batch)"},
		},
		Action: runDigest,
	}
}

func runDigest(c *cli.Context) error {
	g, err := global(c)
	if err != nil {
		return err
	}
	out := c.String("out")
	if out == "" || out == "-" {
		return usageErr("--out FILE is required")
	}
	if c.NArg() == 0 {
		return usageErr("no LOGDIR given")
	}
	set, release, err := targets(g, c.Args().Slice(), target.Options{Command: "digest", Takes: target.LogDirs, OutputFile: out}, target.Read)
	if err != nil {
		return err
	}
	defer release()
	bar := newProgress(g, "digest", set.SegmentBytes(), true)
	defer bar.Finish()
	rep, err := replicas.Digest(out, set, replicas.Options{MaxRecordBytes: g.MaxRecordBytes, AllRecords: c.Bool("all-records"), Progress: bar.Add, Workers: g.Workers})
	if err != nil {
		return replicasErr(err)
	}
	if g.Quiet && !g.JSON() {
		return nil
	}
	return render(g, g.Stdout, rep)
}
