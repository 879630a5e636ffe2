package commands

import (
	"cmp"
	"errors"
	"fmt"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/logtool/logtool/internal/fielderr"
	"github.com/logtool/logtool/internal/meter"
	"github.com/logtool/logtool/logfmt/layout"
	"github.com/logtool/logtool/replay"
)

func replayCommand() *cli.Command {
	return &cli.Command{
		Name:        "replay",
		Category:    "rescue",
		Usage:       "produce the records of log directories to a live cluster, resumably",
		ArgsUsage:   "PATH...",
		Description: description("replay"),
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "bootstrap-server", Usage: "HOST:PORT[,HOST:PORT...] of the destination cluster"},
			&cli.StringFlag{Name: "command-config", Usage: "`FILE` of Kafka client properties (security.protocol, sasl.*, ssl.* PEM stores, bootstrap.servers); flags override it"},
			&cli.StringSliceFlag{Name: "topic-map", Usage: "OLD=NEW: send topic OLD's records to topic NEW"},
			&cli.StringFlag{Name: "partition", Value: "same", Usage: "same (the source partition's number) or key-hash (Kafka's default partitioner)"},
			&cli.StringFlag{Name: "resume", Usage: "`FILE` of the offsets reached: read at the start, kept up to date (a Kafka offset checkpoint)"},
			&cli.StringFlag{Name: "rate", Usage: "limit the bytes of keys, values and headers sent per second (1048576, 512KiB, 10MiB)"},
			&cli.BoolFlag{Name: "dry-run", Usage: "count what would be sent; connect to nothing"},
			&cli.IntFlag{Name: "max-in-flight", Value: replay.DefaultMaxInFlight, Usage: "records sent and not yet acknowledged, at most"},
			&cli.IntFlag{Name: "retries", Value: replay.DefaultRetries, Usage: "tries of a record before the replay fails"},
			&cli.BoolFlag{Name: "tls", Usage: "connect with TLS (security.protocol SSL, or SASL_SSL with --sasl-mechanism)"},
			&cli.StringFlag{Name: "tls-ca", Usage: "PEM file of the CA certificates that sign the brokers' (default: the system's)"},
			&cli.StringFlag{Name: "tls-cert", Usage: "PEM file of the client certificate, for mutual TLS"},
			&cli.StringFlag{Name: "tls-key", Usage: "PEM file of the client certificate's key"},
			&cli.StringFlag{Name: "tls-server-name", Usage: "name to check in the brokers' certificates"},
			&cli.BoolFlag{Name: "tls-insecure-skip-verify", Usage: "do not check the brokers' certificates (tests only)"},
			&cli.StringFlag{Name: "sasl-mechanism", Usage: "PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512"},
			&cli.StringFlag{Name: "sasl-user", Usage: "SASL user name"},
			&cli.StringFlag{Name: "sasl-password-env", Usage: "environment variable holding the SASL password"},
			&cli.StringFlag{Name: "sasl-password-file", Usage: "file holding the SASL password (a trailing newline is dropped)"},
		}, readFlags()...),
		Action: runReplay,
	}
}

func replayOptions(c *cli.Context, g Global) (replay.Options, error) {
	o := replay.Options{Workers: g.Workers, DryRun: c.Bool("dry-run"), ResumeFile: c.String("resume"),
		MaxInFlight: c.Int("max-in-flight"), Retries: c.Int("retries")}
	if c.NArg() == 0 {
		return o, usageErr("no PATH given (a partition directory or a log directory)")
	}
	var err error
	if o.Fetch, err = fetchOptions(c); err != nil {
		return o, err
	}
	o.Fetch.MaxRecordBytes = g.MaxRecordBytes
	var cc replay.ClientConfig
	if f := c.String("command-config"); f != "" {
		if cc, err = replay.LoadClientConfig(f); err != nil {
			return o, usageErr("--command-config %v", err)
		}
		for _, w := range cc.Warnings {
			g.Warnf("--command-config: %s", w)
		}
	}
	if s := c.String("bootstrap-server"); s != "" {
		o.Brokers = strings.Split(s, ",")
	} else if cc.Brokers != nil {
		o.Brokers = cc.Brokers
	} else if !o.DryRun {
		return o, usageErr("--bootstrap-server HOST:PORT is required (or bootstrap.servers in --command-config)")
	}
	if o.TopicMap, err = replay.ParseTopicMap(c.StringSlice("topic-map")); err != nil {
		return o, usageErr("--topic-map %v", err)
	}
	if o.Partitioning, err = replay.ParsePartitioning(c.String("partition")); err != nil {
		return o, usageErr("--partition: %v", err)
	}
	if s := c.String("rate"); s != "" {
		if o.Rate, err = sizeArg("rate", s, 1, noMax); err != nil {
			return o, err
		}
	}
	if o.MaxInFlight < 1 || o.Retries < 1 {
		return o, usageErr("--max-in-flight and --retries: want at least 1")
	}
	pw, err := replay.Secret(c.String("sasl-password-env"), c.String("sasl-password-file"))
	if err != nil {
		return o, usageErr("SASL password: %v", err)
	}
	// Flags override --command-config, as in Kafka's tools.
	o.Security = cc.Security.With(replay.Override{TLS: givenBool(c, "tls"), InsecureSkipVerify: givenBool(c, "tls-insecure-skip-verify"),
		CAFile: givenString(c, "tls-ca"), CertFile: givenString(c, "tls-cert"), KeyFile: givenString(c, "tls-key"), ServerName: givenString(c, "tls-server-name"),
		SASLMechanism: givenString(c, "sasl-mechanism"), User: givenString(c, "sasl-user"), Password: pw})
	if _, err := o.Security.Opts(); err != nil {
		return o, optionErr(err, replayFlags)
	}
	return o, nil
}

func runReplay(c *cli.Context) error {
	g, err := global(c)
	if err != nil {
		return err
	}
	o, err := replayOptions(c, g)
	if err != nil {
		return err
	}
	parts, release, err := readTargets(c, g, "replay", o.ResumeFile)
	if err != nil {
		return err
	}
	defer release()
	// A first Ctrl-C stops cleanly: what was acknowledged is in the resume
	// file.
	ctx, stop := signal.NotifyContext(c.Context, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	bar := replayBar(g, parts, &o)
	res, err := replay.Run(ctx, parts, o)
	bar.Finish()
	if _, ok := errors.AsType[*fielderr.Error](err); ok {
		return optionErr(err, replayFlags) // refused before anything was produced
	}
	if _, ok := errors.AsType[*replay.CopiesError](err); ok {
		return &ExitError{Code: ExitUsage, Err: err}
	}
	// A failed summary fails the run too, with the same resume hint.
	if err = cmp.Or(err, replaySummary(g, replay.Report{Results: res, DryRun: o.DryRun})); err == nil {
		return nil
	}
	for _, r := range res {
		if r.Err != nil && !errors.Is(r.Err, ctx.Err()) {
			return fmt.Errorf("%s: %w; acknowledged up to offset %d (exclusive)%s", r.Partition.Dir.Name, err, r.Next, resumeHint(o))
		}
	}
	return fmt.Errorf("%w%s", err, resumeHint(o))
}

func replaySummary(g Global, rep replay.Report) error {
	if g.Quiet && !g.JSON() {
		return nil
	}
	return render(g, g.Stdout, &rep)
}

// replayBar is partsBar, telling the records sent as well.
func replayBar(g Global, parts []*layout.Partition, o *replay.Options) *meter.Bar {
	bar := partsBar(g, "replay", parts, &o.Fetch)
	if bar != nil {
		var recs atomic.Int64
		start := time.Now()
		o.Progress = func(r, _ int64) {
			n := recs.Add(r)
			secs := max(time.Since(start).Seconds(), 0.001)
			bar.Describe(fmt.Sprintf("replay %d records, %.0f records/s, read", n, float64(n)/secs))
		}
	}
	return bar
}

func resumeHint(o replay.Options) string {
	if o.ResumeFile == "" {
		return ""
	}
	return "; run again with --resume " + o.ResumeFile + " to go on"
}

// replayFlags name the replay.Options and replay.Security fields the flags
// set.
var replayFlags = map[string]string{
	"CAFile": "tls-ca", "CertFile": "tls-cert", "CAPEM": "command-config", "CertPEM": "command-config", "KeyFile": "tls-key", "SASLMechanism": "sasl-mechanism", "Partitioning": "partition",
}
