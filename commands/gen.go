package commands

import (
	"errors"
	"math"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/internal/target"
	"github.com/logtool/logtool/logfmt/codec"
)

func genCommand() *cli.Command {
	return &cli.Command{
		Name:        "gen",
		Category:    "tools",
		Usage:       "write a realistic synthetic log directory (deterministic for a seed)",
		ArgsUsage:   "--out DIR",
		Description: description("gen"),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Usage: "log directory to write (required; created if missing)"},
			&cli.IntFlag{Name: "topics", Value: 1, Usage: "number of topics (default names: orders, user-events, payments.v1, ...)"},
			&cli.StringSliceFlag{Name: "topic", Usage: "a topic `NAME`; overrides --topics"},
			&cli.IntFlag{Name: "partitions", Value: 1, Usage: "partitions per topic"},
			&cli.IntFlag{Name: "records", Value: 1000, Usage: "data records per partition"},
			&cli.IntFlag{Name: "keys", Value: 100, Usage: "distinct keys (0: keyless records)"},
			&cli.StringFlag{Name: "value-bytes", Value: "100", Usage: "size of each value (bytes, or with K, M: 1KiB)"},
			&cli.IntFlag{Name: "magic", Value: 2, Usage: "message format: 0, 1 or 2"},
			&cli.StringFlag{Name: "compression", Value: "none", Usage: "none|gzip|snappy|lz4|zstd (zstd needs magic 2)"},
			&cli.IntFlag{Name: "batch-records", Value: 10, Usage: "most records per batch"},
			&cli.StringFlag{Name: "segment-bytes", Value: "1GiB", Usage: "segment.bytes: roll segments at this size (bytes, or with K, M, G: 64MiB)"},
			&cli.Float64Flag{Name: "tombstone-ratio", Value: 0, Usage: "share of keyed records written as tombstones"},
			&cli.Float64Flag{Name: "transactional-ratio", Value: 0, Usage: "share of batches written in transactions (magic 2)"},
			&cli.Float64Flag{Name: "abort-ratio", Value: 0, Usage: "share of transactions that abort"},
			&cli.StringFlag{Name: "start-time", Value: "2024-01-01T00:00:00Z", Usage: "timestamp of the first record (ms or RFC 3339)"},
			&cli.StringFlag{Name: "time-step", Value: "1s", Usage: "time between records (ms, or 250ms, 1s, 1m)"},
			&cli.Int64Flag{Name: "seed", Value: 1, Usage: "random seed; the same seed writes the same bytes"},
			&cli.BoolFlag{Name: "kraft", Usage: "write a KRaft node's log dir, with a __cluster_metadata-0 that creates the topics"},
			&cli.GenericFlag{Name: "config", Value: &wholeValues{}, Usage: "with --kraft: a dynamic topic config, TOPIC:NAME=VALUE (repeatable)"},
			&cli.GenericFlag{Name: "broker-config", Value: &wholeValues{}, Usage: "with --kraft: a cluster-wide dynamic broker config, NAME=VALUE (repeatable)"},
		},
		Action: runGen,
	}
}

func runGen(c *cli.Context) error {
	g, err := global(c)
	if err != nil {
		return err
	}
	o, err := genOptions(c)
	if err != nil {
		return err
	}
	// gen adds topics to an existing log directory: never to one a broker
	// is running on.
	set, release, err := targets(g, nil, target.Options{Command: "gen", Output: o.Out}, target.Write)
	if err != nil {
		return err
	}
	defer release()
	o.Out = set.Output.Path
	bar := newProgress(g, "gen", o.RecordTotal(), false)
	if bar != nil {
		bar.Items("records")
		o.Progress = func(n int) { bar.Add(int64(n)) }
	}
	parts, err := gen.Generate(o)
	bar.Finish()
	switch {
	case errors.Is(err, gen.ErrNotKRaft):
		return usageErr("--kraft: %v", err)
	case err != nil:
		return err
	case g.Quiet:
		return nil
	}
	return render(g, g.Stdout, &gen.Report{Out: o.Out, Partitions: parts})
}

// genOptions reads the flags, each refused value named by its flag.
func genOptions(c *cli.Context) (gen.Options, error) {
	if c.NArg() > 0 {
		return gen.Options{}, usageErr("unexpected argument %q (gen writes to --out)", c.Args().First())
	}
	if c.String("out") == "" {
		return gen.Options{}, usageErr("--out: name the log directory to write")
	}
	comp, err := codec.Parse(c.String("compression"))
	if err != nil {
		return gen.Options{}, usageErr("--compression: %v", err)
	}
	// Each of these is replaced by its default when 0: refused instead.
	start, err := timeArg("start-time", c.String("start-time"), 1)
	if err != nil {
		return gen.Options{}, err
	}
	valueBytes, err := sizeArg("value-bytes", c.String("value-bytes"), 1, math.MaxInt32)
	if err != nil {
		return gen.Options{}, err
	}
	segmentBytes, err := sizeArg("segment-bytes", c.String("segment-bytes"), 1024, noMax)
	if err != nil {
		return gen.Options{}, err
	}
	warnBareMillis(c, "time-step", c.String("time-step"))
	step, err := durationArg("time-step", c.String("time-step"), 1, noMax/int64(time.Millisecond))
	if err != nil {
		return gen.Options{}, err
	}
	o := gen.Options{
		Out: c.String("out"), Topics: c.StringSlice("topic"), TopicCount: c.Int("topics"), Partitions: c.Int("partitions"),
		Records: c.Int("records"), Keys: c.Int("keys"), ValueBytes: int(valueBytes), Magic: int8(c.Int("magic")),
		Compression: comp, BatchRecords: c.Int("batch-records"), SegmentBytes: segmentBytes,
		TombstoneRatio: c.Float64("tombstone-ratio"), TransactionalRatio: c.Float64("transactional-ratio"),
		AbortRatio: c.Float64("abort-ratio"), StartTime: start, TimeStep: time.Duration(step) * time.Millisecond, Seed: c.Int64("seed"),
		KRaft: c.Bool("kraft"),
	}
	if o.TopicConfigs, err = gen.ParseTopicConfigs(*c.Generic("config").(*wholeValues)); err != nil {
		return o, usageErr("--config %v", err)
	}
	if o.BrokerConfigs, err = gen.ParseBrokerConfigs(*c.Generic("broker-config").(*wholeValues)); err != nil {
		return o, usageErr("--broker-config %v", err)
	}
	for _, name := range []string{"partitions", "topics", "batch-records"} {
		if c.IsSet(name) && c.Int(name) < 1 {
			return o, usageErr("--%s: want at least 1, got %d", name, c.Int(name))
		}
	}
	return o, optionErr(o.Check(), genFlags)
}

// wholeValues is a repeatable flag that keeps each value whole, where
// StringSliceFlag splits at commas: a config value may hold them
// (cleanup.policy=compact,delete).
type wholeValues []string

func (w *wholeValues) Set(s string) error { *w = append(*w, s); return nil }
func (w *wholeValues) String() string     { return strings.Join(*w, " ") }

// genFlags name the gen.Options fields the flags set.
var genFlags = map[string]string{
	"Out": "out", "Magic": "magic", "Compression": "compression", "Partitions": "partitions", "BatchRecords": "batch-records",
	"Records": "records", "Keys": "keys", "ValueBytes": "value-bytes", "SegmentBytes": "segment-bytes",
	"TombstoneRatio": "tombstone-ratio", "TransactionalRatio": "transactional-ratio", "AbortRatio": "abort-ratio",
	"TopicConfigs": "config", "BrokerConfigs": "broker-config",
}
