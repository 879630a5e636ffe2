package commands

import (
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/logtool/logtool/internal/target"
	"github.com/logtool/logtool/topicconfig"
)

// topicConfigFlags are the flags of compact and retention about where the
// topic configuration comes from and which cleanup policy applies.
func topicConfigFlags(policyUsage string) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "topic-config", Usage: "the topic configuration, as kafka-topics.sh --describe or kafka-configs.sh --describe [--all] print it, in place of the log dirs' cluster metadata"},
		&cli.StringFlag{Name: "cleanup-policy", Usage: policyUsage},
		&cli.StringFlag{Name: "unlisted-topics", Value: "skip", Usage: "a topic on disk that --topic-config does not name: skip (its configuration is unknown: left alone, with a note) or defaults (Kafka's defaults and the broker-level values of the file)"},
		&cli.StringFlag{Name: "server-properties", Usage: "the broker's server.properties: its log.* values are the static broker level, under the topic and dynamic broker configs (without it, or --kafka-defaults, a topic whose deciding values no topic or dynamic broker config sets is skipped)"},
		&cli.BoolFlag{Name: "kafka-defaults", Usage: "values that no topic config, dynamic broker config, --server-properties or flag sets are Kafka's defaults, as on a broker whose server.properties sets none of them"},
	}
}

// flagConfig is a flag that sets a topic config for the run.
type flagConfig struct {
	flag, config string
	// value reads the flag's text into the config's units, its error
	// naming the flag; nil takes the text as it is.
	value func(flag, s string) (string, error)
}

// topicOverrides reads the flags that were given into topic configs, in
// Kafka's names and units; flags not given override nothing.
func topicOverrides(c *cli.Context, flags []flagConfig) (map[string]string, error) {
	overrides := map[string]string{}
	for _, f := range append(flags, flagConfig{"cleanup-policy", topicconfig.CleanupPolicy, nil}) {
		if !c.IsSet(f.flag) {
			continue
		}
		v := c.String(f.flag)
		if strings.HasSuffix(f.config, ".ms") {
			warnBareMillis(c, f.flag, v)
		}
		if f.value != nil {
			var err error
			if v, err = f.value(f.flag, v); err != nil {
				return nil, err
			}
		}
		// Kafka's own validation of the value, before anything is read.
		if _, err := topicconfig.Load(nil, topicconfig.Options{Overrides: map[string]string{f.config: v}}); err != nil {
			return nil, usageErr("--%s: %v", f.flag, err)
		}
		overrides[f.config] = v
	}
	return overrides, nil
}

// durationValue reads a duration flag, at least lo, as milliseconds.
func durationValue(lo int64) func(flag, s string) (string, error) {
	return func(flag, s string) (string, error) {
		ms, err := durationArg(flag, s, lo, noMax)
		return strconv.FormatInt(ms, 10), err
	}
}

// sizeValue reads a size flag, in [lo, hi], as bytes.
func sizeValue(lo, hi int64) func(flag, s string) (string, error) {
	return func(flag, s string) (string, error) {
		n, err := sizeArg(flag, s, lo, hi)
		return strconv.FormatInt(n, 10), err
	}
}

// or makes word stand for the config value v (Kafka's value for no limit)
// in front of read.
func or(word, v string, read func(flag, s string) (string, error)) func(flag, s string) (string, error) {
	return func(flag, s string) (string, error) {
		if s == word {
			return v, nil
		}
		return read(flag, s)
	}
}

// topicJobs loads the configuration of the run and hands each partition
// its topic's to job (topicconfig.Run.Jobs), skipping those whose values
// among decisive, which decide what a command of policy does, are not
// known; --topic chooses topics.
func topicJobs(c *cli.Context, set *target.Set, overrides map[string]string, names []string, policy string, decisive []string,
	explicitPolicy string, job topicconfig.Job) (*topicconfig.Report, error) {
	rt, err := loadTopics(c, set, overrides)
	if err != nil {
		return nil, err
	}
	report, err := rt.Jobs(set, c.String("topic") != "", names, policy, decisive, explicitPolicy, job)
	return report, usageOf(err)
}

// loadTopics loads the topic configuration of the run's log dirs, or of
// --topic-config, with the flags' overrides.
func loadTopics(c *cli.Context, set *target.Set, overrides map[string]string) (*topicconfig.Run, error) {
	o := topicconfig.Options{File: c.String("topic-config"), Overrides: overrides,
		ServerProperties: c.String("server-properties"), KafkaDefaults: c.Bool("kafka-defaults")}
	if o.ServerProperties != "" && o.KafkaDefaults {
		return nil, usageErr("--server-properties and --kafka-defaults: give one; the file's values are the broker's, the rest Kafka's defaults")
	}
	switch u := c.String("unlisted-topics"); {
	case u == "defaults":
		o.UnlistedDefaults = true
	case u != "skip":
		return nil, usageErr("--unlisted-topics: %q is neither skip nor defaults", u)
	}
	rt, err := topicconfig.LoadRun(set, o)
	if _, ok := errors.AsType[*topicconfig.OptionError](err); ok {
		return nil, usageErr("%v", err)
	}
	if err != nil {
		return nil, err
	}
	if g, err := global(c); err == nil {
		warnAll(g, rt.Catalog.Warnings)
	}
	return rt, nil
}

// report is a feature's report of a run, which renders itself.
type report interface {
	WriteText(w io.Writer) error
	WriteJSON(w io.Writer) error
}

// render writes r to w in the format of --format.
func render(g Global, w io.Writer, r report) error {
	if g.JSON() {
		return r.WriteJSON(w)
	}
	return r.WriteText(w)
}

// usageOf makes a path or option a library cannot take a usage error
// (exit 2).
func usageOf(err error) error {
	if ue, ok := errors.AsType[*target.UsageError](err); ok {
		return &ExitError{Code: ExitUsage, Err: ue}
	}
	return err
}
