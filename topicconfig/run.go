package topicconfig

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/logtool/logtool/internal/human"
	"github.com/logtool/logtool/internal/table"
	"github.com/logtool/logtool/internal/target"
	"github.com/logtool/logtool/logfmt/layout"
)

// Run is the topic configuration of one run of compact, retention or
// grep's audit: its log dirs' (or a file's), and the values the command
// line gives every topic.
type Run struct {
	Catalog   *Catalog
	Overrides map[string]string
}

// LoadRun loads the configuration of the log dirs of set, with o's
// sources and overrides.
func LoadRun(set *target.Set, o Options) (*Run, error) {
	var dirs []string
	for _, d := range set.LogDirs {
		dirs = append(dirs, d.Path)
	}
	cat, err := Load(dirs, o)
	if err != nil {
		return nil, err
	}
	return &Run{Catalog: cat, Overrides: o.Overrides}, nil
}

// SetPolicy makes policy the cleanup.policy of cfg, from the command line,
// unless an override set it.
func (rt *Run) SetPolicy(cfg *Config, policy string) {
	if _, ok := rt.Overrides[CleanupPolicy]; ok {
		return
	}
	for i := range cfg.Values {
		if cfg.Values[i].Name == CleanupPolicy {
			cfg.Values[i] = Value{Name: CleanupPolicy, Value: policy, Source: CommandLine}
		}
	}
	cfg.Compact, cfg.Delete = strings.Contains(policy, "compact"), strings.Contains(policy, "delete")
}

// Job is what a command makes of one partition: cfg is its topic's
// configuration; skip, when not "", is why the partition is left alone
// (the configuration source does not know its topic, or a broker would
// set the log aside as stray); explicit tells that no source describes its
// log dir, so that the command line alone chose it. applied tells whether
// the command applies cfg, or only looked at its policy.
type Job func(p *target.Partition, cfg *Config, skip string, explicit bool) (applied bool, err error)

// Jobs hands each partition of set its topic's configuration, to job; a
// partition whose topic's configuration, or one of the values among
// decisive that decide what a command of policy deletes or rewrites, is not
// known, or whose log a KRaft broker sets aside as stray, is handed a skip
// (Report.Missing), counted in Report.Gaps when only such values are
// missing, else by why the topic or log is not known. A
// log dir named whole whose configuration is not known is refused (a
// *target.UsageError) unless topicChosen (--topic chose its topics): a
// broker would apply each topic's own policy, which is then not known.
// explicitPolicy, when not "", is the cleanup.policy of a partition the
// command line alone chose, unless an override set one. The report lists
// the configuration the partitions had, names being the configs the
// command uses.
func (rt *Run) Jobs(set *target.Set, topicChosen bool, names []string, policy string, decisive []string, explicitPolicy string, job Job) (*Report, error) {
	if !topicChosen {
		for _, p := range set.Partitions() {
			if !p.Named && !rt.Catalog.For(p.LogDir.Path).Known() {
				return nil, &target.UsageError{Err: fmt.Errorf("%s: no topic configuration (no %s-0 in the log dir or another of its broker's): "+
					"name topics with --topic REGEX, or give --topic-config FILE", p.LogDir.Path, layout.MetadataTopic)}
			}
		}
	}
	report := rt.NewReport(names)
	for _, p := range set.Partitions() {
		r := rt.Catalog.For(p.LogDir.Path)
		cfg, err := r.Topic(p.Dir.Topic)
		if err != nil {
			return nil, fmt.Errorf("%s: topic %s: %w", p.Path, p.Dir.Topic, err)
		}
		skip, explicit := "", !r.Known() || p.Dir.Topic == "" && r.Unknown(cfg) == ""
		switch {
		case explicit && explicitPolicy != "":
			rt.SetPolicy(cfg, explicitPolicy)
		case !explicit:
			skip = report.Missing(r, p, cfg, policy, decisive)
		}
		applied, err := job(p, cfg, skip, explicit)
		if err != nil {
			return nil, err
		}
		report.Add(p.LogDir.Path, cfg, applied)
	}
	return report, nil
}

// Map is a partition's "config" object of the JSON output: Kafka's config
// name -> {value, source}, for the names given; nil for no Config.
func (c *Config) Map(names []string) map[string]Value {
	if c == nil {
		return nil
	}
	m := make(map[string]Value, len(names))
	for _, n := range names {
		if v, ok := c.Get(n); ok {
			m[n] = v
		}
	}
	return m
}

// Report collects the configuration of the partitions of a run for the
// text report: a row per value that is not Kafka's default, the
// overrides' once.
type Report struct {
	rt     *Run
	names  []string
	topics []*reportTopic
	byKey  map[string]*reportTopic
	dirs   []string // log dirs, in order of appearance
	// Gaps counts the partitions skipped because a deciding value is not
	// known (Resolver.Gaps): the run did not do all it was asked.
	Gaps int
	// Unlisted counts the partitions skipped because the --topic-config
	// file (UnlistedFile) does not name their topic, Stray those a KRaft
	// broker sets aside as stray (their topic, topic ID or partition is
	// not the cluster metadata's, or not this broker's), Unnamed those whose
	// directory names no topic (Resolver.Unknown): the run did not do all
	// it was asked either, each for its own reason.
	Unlisted, Stray, Unnamed int
	UnlistedFile             string
}

// SkipErr says, for each cause, how many partitions the run skipped because
// their configuration is not known, and what the user can give: a
// *target.UsageError, as the input the run needs was not given; nil when
// none was (and for a nil Report).
func (cr *Report) SkipErr() error {
	if cr == nil {
		return nil
	}
	var why []string
	if cr.Gaps > 0 {
		why = append(why, fmt.Sprintf("%d partition(s) skipped: their topic configuration is not fully known; give --server-properties FILE "+
			"(the broker's), or --kafka-defaults to take Kafka's defaults for what nothing sets", cr.Gaps))
	}
	if cr.Unlisted > 0 {
		why = append(why, fmt.Sprintf("%d partition(s) skipped: their topics are not in --topic-config %s; name topics with --topic, "+
			"or give --unlisted-topics defaults", cr.Unlisted, cr.UnlistedFile))
	}
	if cr.Stray > 0 {
		why = append(why, fmt.Sprintf("%d partition(s) skipped: a KRaft broker sets their logs aside as stray (their topic, topic ID or partition is not the "+
			"cluster metadata's, or not assigned to this broker); name topics with --topic, or give their configuration with --topic-config FILE", cr.Stray))
	}
	if cr.Unnamed > 0 {
		why = append(why, fmt.Sprintf("%d partition(s) skipped: their directories are not named <topic>-<partition>, so their topics are unknown; "+
			"rename them, or give --topic-config FILE with --unlisted-topics defaults", cr.Unnamed))
	}
	if len(why) == 0 {
		return nil
	}
	return &target.UsageError{Err: errors.New(strings.Join(why, "; "))}
}

// Missing is why partition p, of topic configuration cfg, is not known
// enough for a command of policy to act on (Resolver.Missing), or a log a
// broker sets aside as stray (Resolver.Stray), or "", counting the skip by
// its cause: a gap where only values among decisive are missing, which
// --server-properties or --kafka-defaults supply, else a topic its source
// does not know, or a stray log.
func (cr *Report) Missing(r *Resolver, p *target.Partition, cfg *Config, policy string, decisive []string) string {
	if r.Unknown(cfg) == "" {
		if why := r.Stray(p.Path, p.Dir); why != "" {
			cr.Stray++
			return why
		}
	}
	why := r.Missing(cfg, policy, decisive)
	switch {
	case why == "":
	case r.Unknown(cfg) == "":
		cr.Gaps++
	case cfg.Topic == "":
		cr.Unnamed++
	case r.File() != nil:
		cr.Unlisted++
		cr.UnlistedFile = r.File().Path
	default:
		cr.Stray++
	}
	return why
}

// reportTopic is a topic's configuration as the run used it. A topic whose
// log dirs' brokers configure it differently has one per configuration.
type reportTopic struct {
	cfg    *Config
	logDir string // where it was first seen
	full   bool   // the command applied it, not only looked at its policy
}

// NewReport is an empty Report of the configs names.
func (rt *Run) NewReport(names []string) *Report {
	return &Report{rt: rt, names: names, byKey: map[string]*reportTopic{}}
}

// Add records the configuration of a partition of logDir. full tells that
// the command applied it; otherwise the partition's policy, or the
// metadata, left it alone, and only its policy is of interest.
func (cr *Report) Add(logDir string, cfg *Config, full bool) {
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

// WriteText prints where the configuration comes from and a table of the
// values that are not Kafka's defaults, one per row so that a row stays
// short and grep finds it.
func (cr *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	for _, d := range cr.dirs {
		r := cr.rt.Catalog.For(d)
		where := r.Describe()
		if !r.Known() {
			where = "none (no cluster metadata, no --topic-config): Kafka's defaults and the flags"
		}
		if len(cr.dirs) > 1 {
			where = d + ": " + where
		}
		fmt.Fprintf(&b, "Topic configuration: %s.\n", where)
	}
	if len(cr.dirs) > 0 {
		if static := cr.rt.Catalog.For(cr.dirs[0]).Static(); static != "" {
			fmt.Fprintf(&b, "Broker's static configuration: %s.\n", static)
		}
	}
	t := table.New("TOPIC", "CONFIG", "VALUE", "SOURCE")
	for _, n := range cr.names {
		if v, ok := cr.rt.Overrides[n]; ok {
			t.Append("(every topic)", n, valueText(n, v), string(CommandLine))
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
			_, flag := cr.rt.Overrides[n]
			if !ok || v.Source == Default || flag || !rt.full && n != CleanupPolicy {
				continue
			}
			// Kafka's notation of a synonym, as kafka-configs.sh prints it.
			source := string(v.Source)
			if v.From != "" {
				source += ":" + v.From
			}
			t.Append(topic, n, valueText(n, v.Value), source)
		}
	}
	if t.Len() == 0 {
		b.WriteString("Every value used is Kafka's default.\n")
	} else {
		t.WriteTo(&b)
		b.WriteString("Values not listed are Kafka's defaults.\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// valueText is a config's value, with a duration or size in human units
// too.
func valueText(name, value string) string {
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
