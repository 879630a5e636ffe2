package commands

import (
	"slices"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/logtool/logtool/find"
	"github.com/logtool/logtool/internal/target"
)

func findCommand() *cli.Command {
	return &cli.Command{
		Name:        "find",
		Category:    "inspect",
		Usage:       "look up an offset or a timestamp in a partition the way a broker does",
		ArgsUsage:   "(--offset OFFSET | --timestamp TIME) PARTITION_DIR",
		Description: description("find"),
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "offset", Usage: "the offset to find, N >= 0 (give this or --timestamp)"},
			&cli.StringFlag{Name: "timestamp", Usage: "the timestamp to find, milliseconds since the epoch or RFC 3339 (give this or --offset)"},
			&cli.BoolFlag{Name: "print-data-log", Usage: "print the record found: key, value and headers"},
		}, decoderFlags()...),
		Action: runFind,
	}
}

func runFind(c *cli.Context) error {
	g, err := global(c)
	if err != nil {
		return err
	}
	off, ts := c.String("offset"), c.String("timestamp")
	if (off == "") == (ts == "") {
		return usageErr("give exactly one of --offset and --timestamp")
	}
	if c.NArg() != 1 {
		return usageErr("want one PARTITION_DIR, got %d argument(s)", c.NArg())
	}
	var p find.Print
	if p.Key, p.Value, err = decoders(c); err != nil {
		return err
	}
	p.Record = c.Bool("print-data-log") || slices.ContainsFunc(decoderFlags(), func(f cli.Flag) bool { return c.IsSet(f.Names()[0]) })
	set, release, err := targets(g, c.Args().Slice(), target.Options{Command: "find", Takes: target.Partitions}, target.Read)
	if err != nil {
		return err
	}
	defer release()
	res, err := findLookup(set.Partitions()[0].Path, off, ts, find.Options{MaxRecordBytes: g.MaxRecordBytes})
	if err != nil {
		return err
	}
	if g.JSON() {
		err = res.WriteJSON(g.Stdout, p)
	} else {
		err = res.WriteText(g.Stdout, p)
	}
	if err == nil && res.Damaged > 0 {
		// The answer holds, found around the damage its fallbacks name.
		return problemsErr(res.Damaged)
	}
	return err
}

// findLookup looks up --offset off or --timestamp ts, whichever is given.
func findLookup(dir, off, ts string, o find.Options) (*find.Result, error) {
	if off != "" {
		n, err := strconv.ParseInt(off, 10, 64)
		if err != nil || n < 0 {
			return nil, usageErr("--offset: want an offset >= 0, got %q", off)
		}
		return find.Offset(dir, n, o)
	}
	ms, err := timeArg("timestamp", ts, 0)
	if err != nil {
		return nil, err
	}
	return find.Timestamp(dir, ms, o)
}
