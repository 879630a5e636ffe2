package commands

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/logtool/logtool/internal/human"
	"github.com/logtool/logtool/internal/table"
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

// runTopics is the topic configuration of a run of compact or retention,
// loaded once from the log dirs of the run (or --topic-config).
type runTopics struct {
	cat       *topicconfig.Catalog
	overrides map[string]string
}

// topicJob is what a command makes of one partition: cfg is its topic's
// configuration; skip, when not "", is why the partition is left alone
// (the cluster metadata does not know its topic, and a broker would set
// the log aside as stray); explicit tells that no source describes its log
// dir, so that the command line alone chose it. applied tells whether the
// command applies cfg, or only looked at its policy.
type topicJob func(p *target.Partition, cfg *topicconfig.Config, skip string, explicit bool) (applied bool, err error)

// topicJobs loads the configuration of the run and hands each partition
// its topic's to job; a partition whose topic's configuration, or one of
// the values among decisive that decide what a command of policy deletes
// or rewrites, is unknown is handed a skip (Resolver.Missing). A log dir
// named whole whose configuration is not known is refused (exit 2, before
// anything is written) unless --topic chose its topics: a broker would
// apply each topic's own policy, which is then not known. explicitPolicy, when not "", is the cleanup.policy of a
// partition the command line alone chose, unless a flag set one.
func topicJobs(c *cli.Context, set *target.Set, overrides map[string]string, names []string, policy string, decisive []string, explicitPolicy string, job topicJob) (*configReport, error) {
	rt, err := loadTopics(c, set, overrides)
	if err != nil {
		return nil, err
	}
	cat := rt.cat
	if c.String("topic") == "" {
		for _, p := range set.Partitions() {
			if !p.Named && !cat.For(p.LogDir.Path).Known() {
				return nil, usageErr("%s: no topic configuration (no %s in the log dir or another of its broker's): "+
					"name topics with --topic REGEX, or give --topic-config FILE", p.LogDir.Path, "__cluster_metadata-0")
			}
		}
	}
	report := newConfigReport(rt, names)
	for _, p := range set.Partitions() {
		r := cat.For(p.LogDir.Path)
		cfg, err := r.Topic(p.Dir.Topic)
		if err != nil {
			return nil, fmt.Errorf("%s: topic %s: %w", p.Path, p.Dir.Topic, err)
		}
		skip, explicit := "", !r.Known() || p.Dir.Topic == "" && r.Unknown(cfg) == ""
		switch {
		case explicit && explicitPolicy != "":
			rt.setPolicy(cfg, explicitPolicy)
		case !explicit:
			var gap bool
			if skip, gap = missing(r, cfg, policy, decisive); gap {
				report.gaps++
			}
		}
		applied, err := job(p, cfg, skip, explicit)
		if err != nil {
			return nil, err
		}
		report.add(p.LogDir.Path, cfg, applied)
	}
	return report, nil
}

// missing is why the configuration of cfg is not known enough for a
// command of policy to act on (Resolver.Missing), or ""; gap tells that
// only values under decisive are missing, which --server-properties or
// --kafka-defaults supply.
func missing(r *topicconfig.Resolver, cfg *topicconfig.Config, policy string, decisive []string) (why string, gap bool) {
	why = r.Missing(cfg, policy, decisive)
	return why, why != "" && r.Unknown(cfg) == ""
}

// loadTopics loads the topic configuration of the run's log dirs, or of
// --topic-config, with the flags' overrides.
func loadTopics(c *cli.Context, set *target.Set, overrides map[string]string) (*runTopics, error) {
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
	if o.File != "" {
		if _, err := topicconfig.Load(nil, topicconfig.Options{File: o.File}); err != nil {
			return nil, usageErr("--topic-config: %v", err)
		}
	}
	if o.ServerProperties != "" {
		if _, err := topicconfig.Load(nil, topicconfig.Options{ServerProperties: o.ServerProperties}); err != nil {
			return nil, usageErr("--server-properties: %v", err)
		}
	}
	var dirs []string
	for _, d := range set.LogDirs {
		dirs = append(dirs, d.Path)
	}
	cat, err := topicconfig.Load(dirs, o)
	if err != nil {
		return nil, err
	}
	return &runTopics{cat: cat, overrides: overrides}, nil
}

// setPolicy makes policy the cleanup.policy of cfg, from the command line,
// unless a flag set it.
func (rt *runTopics) setPolicy(cfg *topicconfig.Config, policy string) {
	if _, ok := rt.overrides[topicconfig.CleanupPolicy]; ok {
		return
	}
	for i := range cfg.Values {
		if cfg.Values[i].Name == topicconfig.CleanupPolicy {
			cfg.Values[i] = topicconfig.Value{Name: topicconfig.CleanupPolicy, Value: policy, Source: topicconfig.CommandLine}
		}
	}
	cfg.Compact, cfg.Delete = strings.Contains(policy, "compact"), strings.Contains(policy, "delete")
}

// configJSON is a partition's "config" object: Kafka's config name →
// {value, source}.
func configJSON(cfg *topicconfig.Config, names []string) map[string]topicconfig.Value {
	if cfg == nil {
		return nil
	}
	m := make(map[string]topicconfig.Value, len(names))
	for _, n := range names {
		if v, ok := cfg.Get(n); ok {
			m[n] = v
		}
	}
	return m
}

// configReport collects the configuration of the partitions of a run for
// the text report: a row per value that is not Kafka's default, the flags'
// once.
type configReport struct {
	rt     *runTopics
	names  []string
	topics []*reportTopic
	byKey  map[string]*reportTopic
	dirs   []string // log dirs, in order of appearance
	// gaps counts the partitions skipped because a deciding value is
	// unknown (Resolver.Gaps): the run did not do all it was asked.
	gaps int
}

// gapErr is the error of a run that skipped partitions whose deciding
// values are unknown: exit 2, as the input the run needs was not given.
func (cr *configReport) gapErr() error {
	if cr == nil || cr.gaps == 0 {
		return nil
	}
	return usageErr("%d partition(s) skipped: their topic configuration is not fully known; give --server-properties FILE "+
		"(the broker's), or --kafka-defaults to take Kafka's defaults for what nothing sets", cr.gaps)
}

// reportTopic is a topic's configuration as the run used it. A topic whose
// log dirs' brokers configure it differently has one per configuration.
type reportTopic struct {
	cfg    *topicconfig.Config
	logDir string // where it was first seen
	full   bool   // the command applied it, not only looked at its policy
}

func newConfigReport(rt *runTopics, names []string) *configReport {
	return &configReport{rt: rt, names: names, byKey: map[string]*reportTopic{}}
}

// add records the configuration of a partition of logDir. full tells that
// the command applied it; otherwise the partition's policy, or the
// metadata, left it alone, and only its policy is of interest.
func (cr *configReport) add(logDir string, cfg *topicconfig.Config, full bool) {
	if !slices.Contains(cr.dirs, logDir) {
		cr.dirs = append(cr.dirs, logDir)
	}
	key := cfg.Topic
	for _, n := range cr.names {
		v, _ := cfg.Get(n)
		key += "\x00" + v.Value + "\x00" + string(v.Source) + "\x00" + v.From
	}
	rt := cr.byKey[key]
	if rt == nil {
		rt = &reportTopic{cfg: cfg, logDir: logDir}
		cr.byKey[key] = rt
		cr.topics = append(cr.topics, rt)
	}
	rt.full = rt.full || full
}

// write prints where the configuration comes from and a table of the
// values that are not Kafka's defaults, one per row so that a row stays
// short and grep finds it.
func (cr *configReport) write(w *strings.Builder) {
	for _, d := range cr.dirs {
		r := cr.rt.cat.For(d)
		where := r.Describe()
		if !r.Known() {
			where = "none (no cluster metadata, no --topic-config): Kafka's defaults and the flags"
		}
		if len(cr.dirs) > 1 {
			where = d + ": " + where
		}
		fmt.Fprintf(w, "Topic configuration: %s.\n", where)
	}
	if len(cr.dirs) > 0 {
		if static := cr.rt.cat.For(cr.dirs[0]).Static(); static != "" {
			fmt.Fprintf(w, "Broker's static configuration: %s.\n", static)
		}
	}
	t := table.New("TOPIC", "CONFIG", "VALUE", "SOURCE")
	for _, n := range cr.names {
		if v, ok := cr.rt.overrides[n]; ok {
			t.Append("(every topic)", n, configText(n, v), string(topicconfig.CommandLine))
		}
	}
	configs := map[string]int{}
	for _, rt := range cr.topics {
		configs[rt.cfg.Topic]++
	}
	for _, rt := range cr.topics {
		topic := rt.cfg.Topic
		if configs[topic] > 1 {
			topic += " (" + rt.logDir + ")"
		}
		for _, n := range cr.names {
			v, ok := rt.cfg.Get(n)
			_, flag := cr.rt.overrides[n]
			if !ok || v.Source == topicconfig.Default || flag || !rt.full && n != topicconfig.CleanupPolicy {
				continue
			}
			// Kafka's notation of a synonym, as kafka-configs.sh prints it.
			source := string(v.Source)
			if v.From != "" {
				source += ":" + v.From
			}
			t.Append(topic, n, configText(n, v.Value), source)
		}
	}
	if t.Len() == 0 {
		fmt.Fprintln(w, "Every value used is Kafka's default.")
		return
	}
	t.WriteTo(w)
	fmt.Fprintln(w, "Values not listed are Kafka's defaults.")
}

// configText is a config's value, with a duration or size in human units
// too.
func configText(name, value string) string {
	n, err := strconv.ParseInt(value, 10, 64)
	switch {
	case err != nil:
	case n < 0 || n == math.MaxInt64:
		return value + " (unlimited)"
	case strings.HasSuffix(name, ".ms"):
		return value + " (" + human.Duration(n) + ")"
	case strings.HasSuffix(name, ".bytes"):
		return value + " (" + human.Bytes(n) + ")"
	}
	return value
}
