package commands

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/logtool/logtool/export"
	"github.com/logtool/logtool/fetch"
	"github.com/logtool/logtool/internal/human"
	"github.com/logtool/logtool/internal/jsonbytes"
	"github.com/logtool/logtool/internal/table"
	"github.com/logtool/logtool/internal/target"
	"github.com/logtool/logtool/logfmt/layout"
)

func exportCommand() *cli.Command {
	return &cli.Command{
		Name:      "export",
		Category:  "rescue",
		Usage:     "write every record as JSON Lines, losslessly, as a read_committed consumer sees them",
		ArgsUsage: "PATH...",
		Description: "Writes one JSON object per record: topic, partition, offset, timestamp, timestampType, key, value,\n" +
			"headers, producerId, producerEpoch, sequence, isTransactional, leaderEpoch. Keys, values and header values\n" +
			"are base64 (--encoding utf8: text when valid UTF-8, else {\"base64\": ...}); null stays null.\n\n" +
			"read_committed (the default) leaves out control records and aborted transactions, and stops at the last\n" +
			"stable offset: the first offset of a transaction with no COMMIT or ABORT marker in the log, as a broker\n" +
			"stops a read_committed fetch. --isolation read_uncommitted exports everything, each transactional record\n" +
			"with \"transaction\": committed, aborted or ongoing, and control records with \"control\": {type,\n" +
			"coordinatorEpoch}. Reading starts at the log start offset.\n\n" +
			"--format kcat writes what kcat -J prints of each record: topic, partition, offset, tstype (create or\n" +
			"logappend) and ts when the record has a timestamp, broker (-1), headers as a flat [name, value, ...] list\n" +
			"when it has some, key and payload; text as --encoding utf8 writes it, so bytes that are not UTF-8 are\n" +
			"{\"base64\": ...} where kcat would print an invalid line. The summary is a table, or export objects with\n" +
			"--format json given.\n\n" +
			"-o FILE is written crash-safely (renamed into place when complete); a name ending in .zst is zstd-compressed.\n" +
			"Without -o (or with -o -) the lines go to stdout and the summary to stderr. Partitions are written in the\n" +
			"order given, large ones read by several workers at once. A damaged batch stops the export (exit 1): run\n" +
			"logtool salvage first.\n\n" +
			"Examples:\n" +
			"  logtool export testdata/kafka-logs/payments.txn-0 | head\n" +
			"  logtool export -o orders.jsonl.zst --topic 'orders.*' /var/lib/kafka/logs\n" +
			"  logtool export --encoding utf8 --from-time 2024-01-01T00:05:00Z --to-offset 900 testdata/kafka-logs/orders-0\n" +
			"  logtool export --format kcat testdata/kafka-logs/orders-0 | jq -r .payload\n" +
			"  logtool export --isolation read_uncommitted testdata/kafka-logs/payments.txn-0 | jq 'select(.transaction == \"aborted\")'",
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

// partitionBytes adds up the segment bytes of the partitions, the total of
// a reading command's bar.
// setLogBytes is the size of the .log files of a set's partitions.
func setLogBytes(set *target.Set) int64 {
	var n int64
	for _, p := range set.Partitions() {
		n += segmentBytes(p.Path)
	}
	return n
}

func partitionBytes(parts []*layout.Partition) int64 {
	var n int64
	for _, p := range parts {
		n += segmentBytes(p.Path)
	}
	return n
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
	if c.NArg() == 0 {
		return usageErr("no PATH given (a partition directory or a log directory)")
	}
	o := export.Options{Workers: g.Workers}
	if o.Fetch, err = fetchOptions(c); err != nil {
		return err
	}
	o.Fetch.MaxRecordBytes = g.MaxRecordBytes
	if o.Format, err = export.ParseFormat(g.Format); err != nil {
		return usageErr("--format: %v", err)
	}
	encoding := c.String("encoding")
	if o.Format == export.Kcat && !c.IsSet("encoding") {
		encoding = "utf8" // kcat prints text
	}
	if o.Encoding, err = export.ParseEncoding(encoding); err != nil {
		return usageErr("--encoding: %v", err)
	}
	parts, release, err := readTargets(c, g, "export", c.String("output"))
	if err != nil {
		return err
	}
	defer release()
	path := c.String("output")
	toStdout := path == "" || path == "-"
	out, err := export.Create(path, g.Stdout)
	if err != nil {
		return err
	}
	// The summary goes where the lines do not.
	// The summary is a table unless --format json is given: json is the
	// records' default, not a request for JSON summaries.
	sum := &exportSummary{g: g, w: g.Stdout, json: g.JSON() && formatGiven(c)}
	if toStdout {
		sum.w, sum.json = g.Stderr, false
	}
	var bar *progress
	if !toStdout || !isTerminal(g.Stdout) {
		bar = newProgress(g, "export", 0, true)
	}
	if bar != nil {
		bar.Set(0, partitionBytes(parts))
		o.Fetch.Progress = bar.Add
	}
	err = export.Run(out, parts, o, sum.add)
	bar.Finish()
	if err != nil {
		out.Abort()
		return err
	}
	if err := out.Commit(); err != nil {
		return err
	}
	return sum.flush()
}

// exportSummary reports each partition: a table, or export objects.
type exportSummary struct {
	g    Global
	w    io.Writer
	json bool
	rows []export.Result
}

func (s *exportSummary) add(r export.Result) {
	st := r.Stats
	if st.StoppedAtLSO {
		s.g.Warnf("%s: stopped at the last stable offset %d: the transaction of producer %d from there has no marker in the log, so a read_committed consumer sees nothing at or after it (--isolation read_uncommitted exports it, marked ongoing)",
			r.Partition.Path, st.LastStableOffset, st.OngoingProducer)
	}
	for _, n := range st.Notes {
		s.g.Warnf("%s", n)
	}
	s.rows = append(s.rows, r)
}

func (s *exportSummary) flush() error {
	if s.g.Quiet && !s.json {
		return nil
	}
	if s.json {
		enc := json.NewEncoder(s.w)
		for _, r := range s.rows {
			st := r.Stats
			var lso *int64
			if st.LastStableOffset >= 0 {
				lso = &st.LastStableOffset
			}
			if err := enc.Encode(struct {
				Type string         `json:"type"`
				File jsonbytes.Text `json:"file"`
				partJSON
				Records          int64  `json:"records"`
				AbortedRecords   int64  `json:"abortedRecords"`
				ControlRecords   int64  `json:"controlRecords"`
				Bytes            int64  `json:"bytes"`
				LogStartOffset   int64  `json:"logStartOffset"`
				LogEndOffset     int64  `json:"logEndOffset"`
				LastStableOffset *int64 `json:"lastStableOffset"`
				StoppedAtLSO     bool   `json:"stoppedAtLastStableOffset"`
			}{"export", jsonbytes.Text(r.Partition.Path), partJSON{r.Partition.Dir.Topic, r.Partition.Dir.Partition}, st.Records, st.AbortedRecords, st.ControlRecords, st.Bytes,
				st.LogStartOffset, st.LogEndOffset, lso, st.StoppedAtLSO}); err != nil {
				return err
			}
		}
		return nil
	}
	t := table.New("PARTITION", "RECORDS", "ABORTED", "CONTROL", "LOG READ", "LOG START", "LOG END", "LAST STABLE")
	var recs, bytes int64
	for _, r := range s.rows {
		st := r.Stats
		lso := "-"
		if st.LastStableOffset >= 0 {
			lso = fmt.Sprint(st.LastStableOffset)
		}
		t.Append(r.Partition.Dir.Name, fmt.Sprint(st.Records), fmt.Sprint(st.AbortedRecords), fmt.Sprint(st.ControlRecords),
			human.Bytes(st.Bytes), fmt.Sprint(st.LogStartOffset), fmt.Sprint(st.LogEndOffset), lso)
		recs += st.Records
		bytes += st.Bytes
	}
	if _, err := t.WriteTo(s.w); err != nil {
		return err
	}
	_, err := fmt.Fprintf(s.w, "exported %d record(s) of %d partition(s), %s of log read\n", recs, len(s.rows), human.Bytes(bytes))
	return err
}

// formatGiven reports whether --format was given, before or after the
// command name.
func formatGiven(c *cli.Context) bool {
	return slices.ContainsFunc(c.Lineage(), func(ctx *cli.Context) bool { return slices.Contains(ctx.LocalFlagNames(), "format") })
}
