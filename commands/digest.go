package commands

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/logtool/logtool/internal/jsonbytes"
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
			&cli.StringFlag{Name: "out", Usage: "the digest file to write (required); an existing file is replaced only once the new one is whole"},
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
	bar := newProgress(g, "digest", setLogBytes(set), true)
	defer bar.Finish()
	srcs, err := replicas.OpenLogDirs(set, replicas.Options{MaxRecordBytes: g.MaxRecordBytes, AllRecords: c.Bool("all-records"), Progress: bar.Add})
	if err != nil {
		return replicasErr(err)
	}
	if len(srcs) != 1 {
		var names []string
		for _, s := range srcs {
			names = append(names, s.Broker().Name)
		}
		return usageErr("a digest is of one broker; the paths hold brokers %s: digest each on its own", strings.Join(names, ", "))
	}
	n, err := replicas.WriteDigest(out, srcs[0])
	if err != nil {
		return err
	}
	switch {
	case g.JSON():
		return json.NewEncoder(g.Stdout).Encode(struct {
			Type       string         `json:"type"`
			File       jsonbytes.Text `json:"file"`
			Broker     string         `json:"broker"`
			Partitions int            `json:"partitions"`
		}{"digest", jsonbytes.Text(out), srcs[0].Broker().Name, n})
	case !g.Quiet:
		_, err = fmt.Fprintf(g.Stdout, "%s: broker %s, %d partition(s)\n", out, srcs[0].Broker().Name, n)
	}
	return err
}
