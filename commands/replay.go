package commands

import (
	"encoding/json"
	"errors"
	"fmt"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/logtool/logtool/internal/fielderr"
	"github.com/logtool/logtool/internal/human"
	"github.com/logtool/logtool/internal/jsonbytes"
	"github.com/logtool/logtool/internal/table"
	"github.com/logtool/logtool/replay"
)

func replayCommand() *cli.Command {
	return &cli.Command{
		Name:      "replay",
		Category:  "rescue",
		Usage:     "produce the records of log directories to a live cluster, resumably",
		ArgsUsage: "PATH...",
		Description: "Produces every record a read_committed consumer would see (or, with --isolation read_uncommitted, every\n" +
			"record but the control records) to the cluster at --bootstrap-server, with franz-go's client: idempotent,\n" +
			"acks=all, keys, values, headers and timestamps kept (as CreateTime), order kept within each partition. Each\n" +
			"partition goes to the partition of the same number of its topic, or of the topic --topic-map names\n" +
			"(--partition key-hash: the partition Kafka's default partitioner gives the key). Destination topics must\n" +
			"exist, with enough partitions.\n\n" +
			"--resume FILE keeps, for each source partition, the offset below which every record was acknowledged,\n" +
			"rewritten crash-safely as acknowledgements come. Run again with the same FILE after a failure, a crash or a\n" +
			"kill: nothing is skipped, and only records that were in flight or acknowledged after the file's last write\n" +
			"are sent again (at most --max-in-flight per run, as duplicates). --dry-run counts what would be sent.\n\n" +
			"--command-config FILE takes the client.properties Kafka's tools take (security.protocol, sasl.mechanism,\n" +
			"sasl.jaas.config for PLAIN and SCRAM, PEM stores in ssl.truststore.* and ssl.keystore.*,\n" +
			"ssl.endpoint.identification.algorithm, bootstrap.servers); a JKS or PKCS12 store is refused with how to convert\n" +
			"it, properties replay does not use are named in a warning, and the flags below override the file.\n\n" +
			"TLS: --tls, --tls-ca, --tls-cert/--tls-key, --tls-server-name, --tls-insecure-skip-verify. SASL:\n" +
			"--sasl-mechanism PLAIN|SCRAM-SHA-256|SCRAM-SHA-512 with --sasl-user and the password in an environment\n" +
			"variable (--sasl-password-env) or a file (--sasl-password-file); it is never printed. Exit 1 when a record\n" +
			"cannot be produced after retries, naming the partition and the offset reached.\n\n" +
			"Examples:\n" +
			"  logtool replay --dry-run --bootstrap-server localhost:9092 testdata/kafka-logs\n" +
			"  logtool replay --bootstrap-server localhost:9092 --resume orders.resume testdata/kafka-logs/orders-0\n" +
			"  logtool replay --bootstrap-server b1:9093 --tls --tls-ca ca.pem --sasl-mechanism SCRAM-SHA-512 --sasl-user ops \\\n" +
			"      --sasl-password-env KAFKA_PASSWORD --topic-map orders=orders-restored --rate 20MiB /var/lib/kafka/logs\n" +
			"  logtool replay --bootstrap-server b1:9093 --command-config client.properties /var/lib/kafka/logs/orders-0",
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
	o.Security = securityFlags(c, cc.Security, pw)
	if _, err := o.Security.Opts(); err != nil {
		return o, optionErr(err, replayFlags)
	}
	return o, nil
}

// securityFlags lays the flags given over the settings of --command-config,
// as Kafka's tools let a flag override their client properties.
func securityFlags(c *cli.Context, s replay.Security, password string) replay.Security {
	if c.IsSet("tls") {
		s.TLS = c.Bool("tls")
	}
	if c.IsSet("tls-ca") {
		s.CAFile, s.CAPEM = c.String("tls-ca"), nil
	}
	if c.IsSet("tls-cert") || c.IsSet("tls-key") {
		s.CertFile, s.KeyFile, s.CertPEM, s.KeyPEM = c.String("tls-cert"), c.String("tls-key"), nil, nil
	}
	if c.IsSet("tls-server-name") {
		s.ServerName = c.String("tls-server-name")
	}
	if c.IsSet("tls-insecure-skip-verify") {
		s.InsecureSkipVerify = c.Bool("tls-insecure-skip-verify")
	}
	if c.IsSet("sasl-mechanism") {
		s.SASLMechanism = c.String("sasl-mechanism")
	}
	if c.IsSet("sasl-user") {
		s.User = c.String("sasl-user")
	}
	if password != "" {
		s.Password = password
	}
	return s
}

func runReplay(c *cli.Context) error {
	g, err := global(c)
	if err != nil {
		return err
	}
	if c.NArg() == 0 {
		return usageErr("no PATH given (a partition directory or a log directory)")
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
	bar := newProgress(g, "replay", 0, true)
	if bar != nil {
		bar.Set(0, partitionBytes(parts))
		o.Fetch.Progress = bar.Add
		// The bar counts the bytes read; the records sent are told here.
		var recs atomic.Int64
		start := time.Now()
		o.Progress = func(r, _ int64) {
			n := recs.Add(r)
			secs := max(time.Since(start).Seconds(), 0.001)
			bar.Describe(fmt.Sprintf("replay %d records, %.0f records/s, read", n, float64(n)/secs))
		}
	}
	res, err := replay.Run(ctx, parts, o)
	bar.Finish()
	if _, ok := errors.AsType[*fielderr.Error](err); ok {
		return optionErr(err, replayFlags) // refused before anything was produced
	}
	if rerr := replaySummary(g, o, res); rerr != nil && err == nil {
		err = rerr
	}
	if err != nil {
		for _, r := range res {
			if r.Err != nil && !errors.Is(r.Err, ctx.Err()) {
				return fmt.Errorf("%s: %w; acknowledged up to offset %d (exclusive)%s", r.Partition.Dir.Name, err, r.Next, resumeHint(o))
			}
		}
		return fmt.Errorf("%w%s", err, resumeHint(o))
	}
	return nil
}

func resumeHint(o replay.Options) string {
	if o.ResumeFile == "" {
		return ""
	}
	return "; run again with --resume " + o.ResumeFile + " to go on"
}

func replaySummary(g Global, o replay.Options, res []replay.Result) error {
	if g.JSON() {
		enc := json.NewEncoder(g.Stdout)
		for _, r := range res {
			dest := r.DestPartition
			var failed *int64
			if r.Err != nil {
				failed = &r.FailedAtOffset
			}
			if err := enc.Encode(struct {
				Type string         `json:"type"`
				File jsonbytes.Text `json:"file"`
				partJSON
				DestTopic      string `json:"destinationTopic"`
				DestPartition  *int32 `json:"destinationPartition"`
				From           int64  `json:"fromOffset"`
				Resumed        bool   `json:"resumed"`
				Next           int64  `json:"nextOffset"`
				Records        int64  `json:"records"`
				Bytes          int64  `json:"bytes"`
				DryRun         bool   `json:"dryRun"`
				FailedAtOffset *int64 `json:"failedAtOffset"`
				Error          string `json:"error,omitempty"`
			}{"replay", jsonbytes.Text(r.Partition.Path), partJSON{r.Partition.Dir.Topic, r.Partition.Dir.Partition}, r.Topic, ptrIf(dest, dest >= 0), r.From, r.Resumed, r.Next,
				r.Records, r.Bytes, o.DryRun, failed, errString(r.Err)}); err != nil {
				return err
			}
		}
		return nil
	}
	if g.Quiet {
		return nil
	}
	t := table.New("PARTITION", "TO", "FROM OFFSET", "NEXT OFFSET", "RECORDS", "BYTES", "STATUS")
	var recs, bytes int64
	for _, r := range res {
		to := r.Topic
		if r.DestPartition >= 0 {
			to = fmt.Sprintf("%s-%d", r.Topic, r.DestPartition)
		}
		status := "done"
		switch {
		case r.Err != nil:
			status = "failed"
		case r.From < 0:
			status = "not started"
		case o.DryRun:
			status = "dry run"
		}
		from := fmt.Sprint(r.From)
		if r.Resumed {
			from += " (resumed)"
		}
		t.Append(r.Partition.Dir.Name, to, from, fmt.Sprint(r.Next), fmt.Sprint(r.Records), human.Bytes(r.Bytes), status)
		recs += r.Records
		bytes += r.Bytes
	}
	if _, err := t.WriteTo(g.Stdout); err != nil {
		return err
	}
	verb := "replayed"
	if o.DryRun {
		verb = "would replay"
	}
	_, err := fmt.Fprintf(g.Stdout, "%s %d record(s), %s of keys, values and headers, from %d partition(s)\n", verb, recs, human.Bytes(bytes), len(res))
	return err
}

func ptrIf[T any](v T, ok bool) *T {
	if !ok {
		return nil
	}
	return &v
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// replayFlags name the replay.Options and replay.Security fields the flags
// set.
var replayFlags = map[string]string{
	"CAFile": "tls-ca", "CertFile": "tls-cert", "CAPEM": "command-config", "CertPEM": "command-config", "KeyFile": "tls-key", "SASLMechanism": "sasl-mechanism", "Partitioning": "partition",
}
