package commands

import (
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/logtool/logtool/internal/target"
	"github.com/logtool/logtool/logfmt/layout"
	"github.com/logtool/logtool/salvage"
)

func salvageCommand() *cli.Command {
	return &cli.Command{
		Name:        "salvage",
		Category:    "rescue",
		Usage:       "copy every sound batch of a damaged partition into a new partition directory a broker loads cleanly",
		ArgsUsage:   "PARTITION_DIR --out DIR",
		Description: description("salvage"),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Usage: "the new partition directory to write; must not exist"},
		},
		Action: runSalvage,
	}
}

// salvageArgs takes --out out of the arguments, where the contract's
// "salvage PARTITION_DIR --out DIR" puts it, after the path.
func salvageArgs(c *cli.Context) (src, out string, err error) {
	out = c.String("out")
	var rest []string
	args := c.Args().Slice()
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--out" || a == "-out":
			if i+1 == len(args) {
				return "", "", usageErr("--out needs a directory")
			}
			out, i = args[i+1], i+1
		case strings.HasPrefix(a, "--out="):
			out = strings.TrimPrefix(a, "--out=")
		default:
			rest = append(rest, a)
		}
	}
	if len(rest) != 1 {
		return "", "", usageErr("want one PARTITION_DIR, got %d path(s)", len(rest))
	}
	if out == "" {
		return "", "", usageErr("--out DIR is required: the new partition directory")
	}
	return rest[0], out, nil
}

func runSalvage(c *cli.Context) error {
	src, out, err := salvageArgs(c)
	if err != nil {
		return err
	}
	g, err := globalArgs(c, []string{src})
	if err != nil {
		return err
	}
	// The source must not change while it is read; the output's parent is
	// locked while written, so no other run takes its stage for a killed run's.
	o := target.Options{Command: "salvage", Takes: target.Partitions, Output: out, OutputPartition: true}
	set, release, err := targets(g, []string{src}, o, target.Stable)
	if err != nil {
		return err
	}
	defer release()
	parts := set.Partitions()
	if len(parts) != 1 {
		return usageErr("%s: want one partition directory", src)
	}
	bar := newProgress(g, "salvage", layout.SegmentBytes(parts[0].Path), true)
	rep, err := salvage.Partition(parts[0].Path, out, salvage.Options{MaxRecordBytes: g.MaxRecordBytes, Progress: bar.Add})
	bar.Finish()
	if err != nil {
		return err
	}
	if !salvage.OutNameLoadable(out, parts[0].Dir) {
		g.Warnf("%s: a broker loads a partition directory only under a name <topic>-<partition>, like %s", out, parts[0].Dir.Name)
	}
	if g.JSON() {
		return rep.WriteJSON(g.Stdout, parts[0].Dir)
	}
	err = rep.WriteText(g.Stdout)
	for _, f := range rep.Skipped {
		g.Warnf("%s: not carried over", f)
	}
	return err
}
