package commands

import (
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/logtool/logtool/export"
	"github.com/logtool/logtool/fetch"
	"github.com/logtool/logtool/internal/meter"
	"github.com/logtool/logtool/internal/target"
	"github.com/logtool/logtool/logfmt/layout"
)

func exportCommand() *cli.Command {
	return &cli.Command{
		Name:        "export",
		Category:    "rescue",
		Usage:       "write every record as JSON Lines, losslessly, as a read_committed consumer sees them",
		ArgsUsage:   "PATH...",
		Description: description("export"),
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write to `FILE` (crash-safely; .zst compresses); - is stdout"},
			&cli.StringFlag{Name: "format", Value: "json", Usage: "one line per record as `json|kcat`: json, every field as above; kcat, kcat -J's objects"},
			&cli.StringFlag{Name: "encoding", Value: "base64", DefaultText: "base64; utf8 with --format kcat", Usage: "keys, values and header values: base64, or utf8 (text when valid UTF-8, else marked base64)"},
		}, readFlags()...),
		Action: runExport,
	}
}

// readFlags select records the way a consumer would; export and replay
// share them.
func readFlags() []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: "isolation", Value: "read_committed", Usage: "read_committed or read_uncommitted, as a consumer's isolation.level"},
	}, rangeFlags("the log start offset")...)
}

// rangeFlags select a range of offsets and the topics to read; grep shares
// them with export and replay. start says where reading starts without
// --from-offset.
func rangeFlags(start string) []cli.Flag {
	return []cli.Flag{
		&cli.Int64Flag{Name: "from-offset", Value: -1, Usage: "first offset (-1: " + start + ")"},
		&cli.Int64Flag{Name: "to-offset", Value: -1, Usage: "last offset, included (-1: the end)"},
		&cli.StringFlag{Name: "from-time", Usage: "start at the first record whose timestamp is this time or later (ms or RFC 3339), as offsetsForTimes finds it"},
		&cli.StringFlag{Name: "to-time", Usage: "stop before the first record whose timestamp is later than this time (ms or RFC 3339)"},
		&cli.StringFlag{Name: "topic", Usage: "only topics whose whole name matches this regular expression"},
	}
}

// fetchOptions reads readFlags.
func fetchOptions(c *cli.Context) (fetch.Options, error) {
	o, err := rangeOptions(c)
	if err != nil {
		return o, err
	}
	if o.Isolation, err = fetch.ParseIsolation(c.String("isolation")); err != nil {
		return o, usageErr("--isolation: %v", err)
	}
	return o, nil
}

// rangeOptions reads rangeFlags.
func rangeOptions(c *cli.Context) (fetch.Options, error) {
	o := fetch.DefaultOptions()
	o.FromOffset, o.ToOffset = c.Int64("from-offset"), c.Int64("to-offset")
	if o.FromOffset < -1 || o.ToOffset < -1 {
		return o, usageErr("--from-offset and --to-offset: want an offset, or -1 for none")
	}
	if o.FromOffset >= 0 && o.ToOffset >= 0 && o.ToOffset < o.FromOffset {
		return o, usageErr("--to-offset %d is below --from-offset %d", o.ToOffset, o.FromOffset)
	}
	for _, f := range []struct {
		name string
		dst  *int64
	}{{"from-time", &o.FromTime}, {"to-time", &o.ToTime}} {
		if s := c.String(f.name); s != "" {
			var err error
			if *f.dst, err = timeArg(f.name, s, 0); err != nil {
				return o, err
			}
		}
	}
	return o, nil
}

// readTargets resolves the paths of a reading command into partitions, and
// checks outFile, the file it writes (target.Options.OutputFile). The KRaft
// metadata log is only read when named.
func readTargets(c *cli.Context, g Global, cmd, outFile string) ([]*layout.Partition, func() error, error) {
	set, release, err := readSet(c, g, cmd, outFile, target.Partitions|target.LogDirs)
	if err != nil {
		return nil, nil, err
	}
	var parts []*layout.Partition
	for _, tp := range set.Partitions() {
		p, err := layout.ReadPartition(tp.Path)
		if err != nil {
			release()
			return nil, nil, err
		}
		for _, n := range p.Unread() {
			g.Warnf("%s", n)
		}
		parts = append(parts, p)
	}
	return parts, release, nil
}

// readSet resolves the paths of a reading command, --topic applied, and
// checks outFile unless it is empty; the KRaft metadata log is only read
// when named.
func readSet(c *cli.Context, g Global, cmd, outFile string, takes target.Takes) (*target.Set, func() error, error) {
	return targets(g, c.Args().Slice(), target.Options{Command: cmd, Takes: takes, OutputFile: outFile,
		Topic: c.String("topic"), Skip: func(p *target.Partition) (bool, string) {
			return p.Dir.Topic == layout.MetadataTopic && !p.Named, ""
		}}, target.Read)
}

func runExport(c *cli.Context) error {
	g, err := global(c)
	if err != nil {
		return err
	}
	o, err := exportOptions(c, g)
	if err != nil {
		return err
	}
	path := c.String("output")
	parts, release, err := readTargets(c, g, "export", path)
	if err != nil {
		return err
	}
	defer release()
	toStdout := path == "" || path == "-"
	out, err := export.Create(path, g.Stdout)
	if err != nil {
		return err
	}
	var bar *meter.Bar
	if !toStdout || !isTerminal(g.Stdout) {
		bar = partsBar(g, "export", parts, &o.Fetch)
	}
	var rep export.Report
	err = export.Run(out, parts, o, func(r export.Result) {
		warnAll(g, r.Warnings())
		rep.Rows = append(rep.Rows, r)
	})
	bar.Finish()
	if err != nil {
		out.Abort()
		return err
	}
	if err := out.Commit(); err != nil {
		return err
	}
	return exportSummary(c, g, toStdout, &rep)
}

// exportSummary writes the summary where the lines do not go, a table
// unless --format json is given: json is the records' default, not a
// request for JSON summaries.
func exportSummary(c *cli.Context, g Global, toStdout bool, rep *export.Report) error {
	switch {
	case !toStdout && g.JSON() && formatGiven(c):
		return rep.WriteJSON(g.Stdout)
	case g.Quiet:
		return nil
	case toStdout:
		return rep.WriteText(g.Stderr)
	}
	return rep.WriteText(g.Stdout)
}

func exportOptions(c *cli.Context, g Global) (export.Options, error) {
	o := export.Options{Workers: g.Workers}
	if c.NArg() == 0 {
		return o, usageErr("no PATH given (a partition directory or a log directory)")
	}
	var err error
	if o.Fetch, err = fetchOptions(c); err != nil {
		return o, err
	}
	o.Fetch.MaxRecordBytes = g.MaxRecordBytes
	if o.Format, err = export.ParseFormat(g.Format); err != nil {
		return o, usageErr("--format: %v", err)
	}
	encoding := c.String("encoding")
	if o.Format == export.Kcat && !c.IsSet("encoding") {
		encoding = "utf8" // kcat prints text
	}
	if o.Encoding, err = export.ParseEncoding(encoding); err != nil {
		return o, usageErr("--encoding: %v", err)
	}
	return o, nil
}

// partsBar is a reading command's bar over the segment bytes of parts,
// told of the bytes o reads; nil when none is drawn (see newProgress).
func partsBar(g Global, cmd string, parts []*layout.Partition, o *fetch.Options) *meter.Bar {
	bar := newProgress(g, cmd, 0, true)
	if bar != nil {
		var n int64
		for _, p := range parts {
			n += layout.SegmentBytes(p.Path)
		}
		bar.Set(0, n)
		o.Progress = bar.Add
	}
	return bar
}

// warnAll warns of each of a feature's warnings.
func warnAll(g Global, warnings []string) {
	for _, w := range warnings {
		g.Warnf("%s", w)
	}
}

// formatGiven reports whether --format was given, before or after the
// command name.
func formatGiven(c *cli.Context) bool {
	return slices.ContainsFunc(c.Lineage(), func(ctx *cli.Context) bool { return slices.Contains(ctx.LocalFlagNames(), "format") })
}
