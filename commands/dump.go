package commands

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/logtool/logtool/dump"
	"github.com/logtool/logtool/internal/meter"
	"github.com/logtool/logtool/internal/target"
	"github.com/logtool/logtool/internal/textdec"
)

func dumpCommand() *cli.Command {
	return &cli.Command{
		Name:        "dump",
		Category:    "inspect",
		Usage:       "print any file of a log directory, Kafka DumpLogSegments-compatible (text) or as JSON Lines",
		ArgsUsage:   "PATH...",
		Description: description("dump"),
		Flags: append([]cli.Flag{
			&cli.BoolFlag{Name: "deep-iteration", Usage: "one line per record after each batch line (implied by --print-data-log and every decoder flag)"},
			&cli.BoolFlag{Name: "print-data-log", Usage: "print record keys and values too"},
		}, append(decoderFlags(), []cli.Flag{
			&cli.BoolFlag{Name: "offsets-decoder", Usage: "decode records as __consumer_offsets offset commits and group metadata"},
			&cli.BoolFlag{Name: "transaction-log-decoder", Usage: "decode records as __transaction_state transaction metadata"},
			&cli.BoolFlag{Name: "cluster-metadata-decoder", Usage: "decode records as KRaft __cluster_metadata records"},
			&cli.BoolFlag{Name: "remote-log-metadata-decoder", Usage: "decode records as __remote_log_metadata tiered storage metadata"},
			&cli.BoolFlag{Name: "share-group-state-decoder", Usage: "decode records as __share_group_state share-partition state"},
			&cli.BoolFlag{Name: "skip-record-metadata", Usage: "record lines without their metadata (and control records as empty lines), as Kafka's flag"},
			&cli.BoolFlag{Name: "print-headers", Usage: "end each text record line with its header values, \" headers: [k=v]\", which no Kafka prints; implies --print-data-log"},
			&cli.StringFlag{Name: "kafka-version", Value: dump.DefaultRelease().Version, Usage: "print text lines as kafka-dump-log.sh of Kafka `X.Y` does, one of " + strings.Join(dump.Releases(), ", ")},
			&cli.BoolFlag{Name: "index-sanity-check", Usage: ".index/.timeindex: run only the broker's startup sanity check"},
			&cli.BoolFlag{Name: "verify-index-only", Usage: ".index/.timeindex: check every entry against the log, print only the mismatches"},
			&cli.StringFlag{Name: "max-message-size", Value: "5MiB", Usage: "largest batch an .index entry may point at (bytes, or with K, M)"},
			&cli.StringFlag{Name: "max-bytes", Value: "0", Usage: "read at most this many bytes of each segment (bytes, or with K, M, G; 0: no limit)"},
			&cli.Int64Flag{Name: "from-offset", Value: -1, Usage: "start at the batch holding this offset, found with the offset index (-1: the start)"},
			&cli.Int64Flag{Name: "to-offset", Value: -1, Usage: "stop after the batch holding this offset (-1: the end)"},
			&cli.StringFlag{Name: "from-time", Usage: "start at the first batch whose max timestamp reaches this time (ms or RFC 3339), found with the time index (default: the start)"},
			&cli.BoolFlag{Name: "summary", Usage: "only the summary, in text a table with one row per partition or file, in JSON one summary object each; the default for a whole log directory in text, unless --summary=false or a content flag is given"},
			&cli.StringSliceFlag{Name: "files", Usage: "files to dump, comma-separated, as kafka-dump-log.sh takes them; the same as naming them as PATHs"},
		}...)...),
		Action: runDump,
	}
}

func runDump(c *cli.Context) error {
	g, err := global(c)
	if err != nil {
		return err
	}
	paths, o, err := dumpOptions(c, g)
	if err != nil {
		return err
	}
	set, release, err := targets(g, paths, target.Options{Command: "dump", Takes: target.Files | target.Partitions | target.LogDirs}, target.Read)
	if err != nil {
		return err
	}
	defer release()
	if err := o.Choose(set, givenBool(c, "summary"), contentFlags(c)); err != nil {
		g.Warnf("no cleanup policies in the summary: %s", oneLine(err))
	}
	stderr := g.Stderr
	if bar := dumpProgress(g, set, o.SummaryOnly); bar != nil {
		o.Progress = bar.Add
		stderr = bar.Writer(g.Stderr)
		defer bar.Finish()
	}
	res, err := dump.Run(set, o, g.Stdout, stderr)
	switch {
	case err != nil:
		return err
	case res.Readable == 0 && res.Files > 0:
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf("nothing could be read (%d file(s), %d problem(s))", res.Files, res.Problems)}
	case res.Failed > 0:
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf("%d file(s) or directories could not be read; the rest was dumped", res.Failed)}
	case (o.VerifyIndexOnly || o.IndexSanityCheck) && res.IndexProblems > 0:
		return problemsErr(res.IndexProblems)
	case res.Problems > 0:
		// Damage was dumped around: a script must not take it for all the data.
		return problemsErr(res.Problems)
	}
	return nil
}

// contentFlags tells whether a flag asks for the content of files, which a
// summary table would not show.
func contentFlags(c *cli.Context) bool {
	for _, f := range []string{"deep-iteration", "print-data-log", "key-decoder", "value-decoder", "key-decoder-class", "value-decoder-class", "offsets-decoder",
		"transaction-log-decoder", "cluster-metadata-decoder", "remote-log-metadata-decoder", "share-group-state-decoder", "skip-record-metadata", "print-headers", "index-sanity-check",
		"verify-index-only", "max-bytes", "from-offset", "to-offset", "from-time"} {
		if c.IsSet(f) {
			return true
		}
	}
	return false
}

// decoderFlags are the flags that choose how keys and values are printed,
// for the commands that print records (dump, find).
func decoderFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "key-decoder", Value: "string", Usage: "how keys are printed: string (UTF-8), hex, base64 or none; implies --print-data-log"},
		&cli.StringFlag{Name: "value-decoder", Value: "string", Usage: "how values and header values are printed: string, hex, base64 or none; implies --print-data-log"},
		&cli.StringFlag{Name: "key-decoder-class", Usage: "Kafka's name for --key-decoder: StringDecoder is string, DefaultDecoder hex (kafka.serializer or org.apache.kafka.tools.api)"},
		&cli.StringFlag{Name: "value-decoder-class", Usage: "Kafka's name for --value-decoder, as --key-decoder-class"},
	}
}

// decoders reads decoderFlags.
func decoders(c *cli.Context) (key, value textdec.Decoder, err error) {
	for _, f := range []struct {
		name string
		dst  *textdec.Decoder
	}{{"key", &key}, {"value", &value}} {
		flag, class := f.name+"-decoder", f.name+"-decoder-class"
		switch {
		case c.IsSet(flag) && c.IsSet(class):
			return key, value, usageErr("--%s and --%s name the same thing: give one", flag, class)
		case c.IsSet(class):
			if *f.dst, err = textdec.OfClass(c.String(class)); err != nil {
				return key, value, usageErr("--%s: %v", class, err)
			}
		default:
			if *f.dst, err = textdec.Parse(c.String(flag)); err != nil {
				return key, value, usageErr("--%s: %v", flag, err)
			}
		}
	}
	return key, value, nil
}

// dumpOptions reads the paths and the flags.
func dumpOptions(c *cli.Context, g Global) ([]string, dump.Options, error) {
	o := dump.DefaultOptions()
	// kafka-dump-log.sh's --files names the same paths.
	paths := append(slices.Clone(c.StringSlice("files")), c.Args().Slice()...)
	if len(paths) == 0 {
		return nil, o, usageErr("no PATH given (a file, a partition directory or a log directory)")
	}
	o.JSON, o.Workers, o.Quiet, o.MaxRecordBytes, o.Wide = g.JSON(), g.Workers, g.Quiet, g.MaxRecordBytes, g.Wide
	var err error
	if o.KeyDecoder, o.ValueDecoder, err = decoders(c); err != nil {
		return paths, o, err
	}
	o.Payload = dump.PayloadOf(c.Bool("offsets-decoder"), c.Bool("transaction-log-decoder"), c.Bool("cluster-metadata-decoder"),
		c.Bool("remote-log-metadata-decoder"), c.Bool("share-group-state-decoder"))
	// As in Kafka, naming any decoder prints the data, which needs the records.
	o.PrintData = c.Bool("print-data-log") || c.Bool("print-headers") || o.Payload != dump.PayloadPlain || c.IsSet("key-decoder") || c.IsSet("value-decoder") ||
		c.IsSet("key-decoder-class") || c.IsSet("value-decoder-class")
	o.Deep = c.Bool("deep-iteration") || o.PrintData
	o.SkipRecordMetadata = c.Bool("skip-record-metadata")
	o.PrintHeaders = c.Bool("print-headers")
	if o.Release, err = dump.ParseRelease(c.String("kafka-version")); err != nil {
		return paths, o, usageErr("--kafka-version: %v", err)
	}
	o.IndexSanityCheck, o.VerifyIndexOnly = c.Bool("index-sanity-check"), c.Bool("verify-index-only")
	size, err := sizeArg("max-message-size", c.String("max-message-size"), 1, math.MaxInt32)
	if err != nil {
		return paths, o, err
	}
	o.MaxMessageSize = int(size)
	if o.MaxBytes, err = sizeArg("max-bytes", c.String("max-bytes"), 0, noMax); err != nil {
		return paths, o, err
	}
	if o.MaxBytes == 0 {
		o.MaxBytes = dump.NoLimit
	}
	for _, f := range []struct {
		name string
		dst  *int64
	}{{"from-offset", &o.FromOffset}, {"to-offset", &o.ToOffset}} {
		if v := c.Int64(f.name); v < -1 {
			return paths, o, usageErr("--%s: want an offset (or -1 for none), got %d", f.name, v)
		} else if v >= 0 {
			*f.dst = v
		}
	}
	if o.FromOffset != dump.NoLimit && o.ToOffset != dump.NoLimit && o.ToOffset < o.FromOffset {
		return paths, o, usageErr("--to-offset %d is below --from-offset %d", o.ToOffset, o.FromOffset)
	}
	if s := c.String("from-time"); s != "" {
		if o.FromTime, err = timeArg("from-time", s, math.MinInt64); err != nil {
			return paths, o, err
		}
	}
	if o.IndexSanityCheck && o.VerifyIndexOnly {
		return paths, o, usageErr("--index-sanity-check and --verify-index-only exclude each other")
	}
	return paths, o, nil
}

// dumpProgress returns the progress bar over the segment bytes of the
// targets, or nil when none should be drawn: see newProgress, and not while
// dump lines go to the same terminal.
func dumpProgress(g Global, set *target.Set, summaryOnly bool) *meter.Bar {
	if isTerminal(g.Stdout) && !summaryOnly {
		return nil
	}
	bar := newProgress(g, "dump", 0, true)
	if bar != nil { // the total costs a read of every directory
		bar.Set(0, set.SegmentBytes())
	}
	return bar
}
