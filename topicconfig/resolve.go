package topicconfig

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/logtool/logtool/clustermeta"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/layout"
)

// Value is one config as it applies to a topic.
type Value struct {
	Name   string `json:"-"`      // the topic config
	Value  string `json:"value"`  // as Kafka describes it: retention.ms is in ms even when set in hours
	Source Source `json:"source"` // where it comes from
	// From is the config the value was set under when that is not Name:
	// a broker synonym such as log.retention.hours.
	From string `json:"from,omitempty"`
	// assumed: no source set the value; Kafka's default stands in for a
	// broker's server.properties that was not read (Resolver.Gaps).
	assumed bool
}

// Config is the effective configuration of one topic.
type Config struct {
	Topic string
	// Known tells whether the configuration source describes the topic. A
	// topic absent from the metadata (deleted, or never created there) or
	// from the file gets the broker-level and default values.
	Known bool

	Compact, Delete        bool // cleanup.policy holds compact, delete (both, or neither)
	MaxCompactionLagMs     int64
	MinCompactionLagMs     int64
	MinCleanableDirtyRatio float64
	DeleteRetentionMs      int64
	SegmentBytes           int32
	SegmentMs              int64
	SegmentIndexBytes      int32
	IndexIntervalBytes     int32
	RetentionMs            int64 // -1: no limit
	RetentionBytes         int64 // negative: no limit
	MaxMessageBytes        int32
	TimestampType          logfmt.TimestampType // message.timestamp.type
	MessageFormatVersion   string
	RemoteStorageEnable    bool
	LocalRetentionMs       int64 // -2: retention.ms
	LocalRetentionBytes    int64 // -2: retention.bytes

	// Values holds every config above, in Names order.
	Values []Value
}

// Get returns the named config; ok is false for a name Config does not hold.
func (c *Config) Get(name string) (v Value, ok bool) {
	i, ok := defIndex[name]
	if !ok {
		return Value{}, false
	}
	return c.Values[i], true
}

// level is one layer of configuration: a topic's, a broker's.
type level map[string]entry

// resolve computes a topic's config from its own level, the broker levels
// in precedence order, and the command line.
func resolve(topic string, known bool, topicLevel level, brokers []level, overrides map[string]string) (*Config, error) {
	c := &Config{Topic: topic, Known: known, Values: make([]Value, len(defs))}
	for i := range defs {
		d := &defs[i]
		v, pv, err := pick(d, topicLevel, brokers, overrides)
		if err != nil {
			return nil, err
		}
		c.Values[i] = v
		d.set(c, pv)
	}
	return c, nil
}

// pick finds the value in force for one config.
func pick(d *def, topicLevel level, brokers []level, overrides map[string]string) (Value, value, error) {
	if s, ok := overrides[d.name]; ok {
		return check(d, Value{Name: d.name, Value: s, Source: CommandLine}, d.kind, 1, false)
	}
	if e, ok := topicLevel[d.name]; ok {
		return check(d, Value{Name: d.name, Value: e.value, Source: e.source, From: e.from}, d.kind, 1, false)
	}
	// Within a broker level the first synonym set wins; a higher level's
	// value hides all synonyms below it (DynamicBrokerConfig.overrideProps).
	for _, l := range brokers {
		for _, syn := range d.synonyms {
			e, ok := l[syn.name]
			if !ok {
				continue
			}
			scale := max(syn.scale, 1)
			from := syn.name
			if e.from != "" {
				from = e.from
			}
			v, pv, err := check(d, Value{Name: d.name, Value: e.value, Source: e.source, From: from}, syn.kind, scale, true)
			if err != nil {
				return v, pv, err
			}
			// KafkaConfig.logRetentionTimeMillis: the broker's retention in
			// ms, a negative one meaning none.
			if d.name == RetentionMs && pv.i < 0 {
				pv.i = -1
			}
			if scale != 1 || d.name == RetentionMs {
				v.Value = strconv.FormatInt(pv.i, 10)
			}
			return v, pv, nil
		}
	}
	v, pv, err := check(d, Value{Name: d.name, Value: d.def, Source: Default, assumed: true}, d.kind, 1, false)
	if err != nil {
		panic(err) // the defaults table is wrong
	}
	return v, pv, nil
}

// check parses a value as its kind and scale, then validates it as the
// topic config; a broker's retention may be any number, negative ones
// meaning none.
func check(d *def, v Value, k kind, scale int64, broker bool) (Value, value, error) {
	pv, err := parse(k, v.Value)
	if err == nil && scale != 1 {
		pv.i *= scale
	}
	if err == nil && d.valid != nil && !(broker && d.name == RetentionMs) {
		err = d.valid(pv)
	}
	if err != nil {
		name := d.name
		if v.From != "" {
			name = v.From
		}
		return v, pv, fmt.Errorf("invalid value %q for configuration %s (%s): %v", v.Value, name, v.Source, err)
	}
	return v, pv, nil
}

// Resolver gives the configuration of the topics of one log dir.
type Resolver struct {
	image     *clustermeta.Image // the metadata replayed, or nil
	file      *FileConfig        // the --topic-config file, or nil
	broker    int32              // the log dir's node.id or broker.id; -1 when unknown
	overrides map[string]string
	// unlistedDefaults: a topic the file does not name gets Kafka's
	// defaults, as the user opted in to, instead of being unknown.
	unlistedDefaults bool
	// static is the broker's server.properties (--server-properties), the
	// level below the dynamic ones, or nil when not given.
	static     level
	staticPath string
	// kafkaDefaults: the user stated that what no source sets is Kafka's
	// default (--kafka-defaults).
	kafkaDefaults bool
}

// Unknown says why the configuration of c, a topic of the log dir, is not
// known, or "" when it is: a topic the --topic-config file does not name
// (unless the user opted in to Kafka's defaults for those), or one the
// cluster metadata does not know (a broker sets its log aside as stray).
// Such a topic must be left alone: its real policy could be anything. A
// log dir with no source at all is not this case (see Known).
func (r *Resolver) Unknown(c *Config) string {
	switch {
	case c.Known || !r.Known():
		return ""
	case c.Topic == "":
		if r.file != nil && r.unlistedDefaults {
			return ""
		}
		return "the directory is not named <topic>-<partition>: its topic, and so its configuration, is unknown"
	case r.file != nil && !r.unlistedDefaults:
		return "topic " + c.Topic + " is not in --topic-config " + r.file.Path + ": its configuration is unknown (--unlisted-topics defaults gives it Kafka's defaults)"
	case r.file == nil && r.image != nil:
		return "topic " + c.Topic + " is not in the cluster metadata: a broker sets its log aside as stray; its configuration is unknown"
	}
	return ""
}

// Stray says why a KRaft broker would set aside as stray the log of the
// partition directory at path, named dir, whose topic the cluster metadata
// knows (clustermeta.Image.Stray), or "" when it would not, or when the
// metadata is not the configuration source. No policy may touch such a
// log: the broker applies none to it.
func (r *Resolver) Stray(path string, dir layout.PartitionDir) string {
	if r.file != nil || r.image == nil || dir.Kind != layout.Normal || dir.Topic == "" || dir.Topic == layout.MetadataTopic {
		return ""
	}
	id, err := clustermeta.LogTopicID(path)
	if _, ok := logfmt.AsCorrupt(err); ok {
		return fmt.Sprintf("its topic ID cannot be read (%v): a broker does not load the log, and applies no policy to it", err)
	}
	if err != nil {
		// Not a verdict but the partition's failure, most often its
		// directory's, which the command's own reading of it reports.
		return ""
	}
	if s := r.image.Stray(dir.Topic, dir.Partition, id, r.broker); s != clustermeta.NotStray {
		return s.Why() + ": a broker sets the log aside as stray, and applies no policy to it"
	}
	return ""
}

// Gaps names the configs among names whose value for c no source set and
// Kafka's default stood in for, while the broker's server.properties, which
// may set them, was not read and the user did not state that Kafka's
// defaults hold: their real values are unknown. A cleanup.policy that is
// known and lacks policy ("compact", "delete") leaves the command nothing
// to do, and then nothing is missing. A log dir without any source is not
// this case (see Known): the user chose its topics' values; nor is a topic
// the file does not name under --unlisted-topics defaults, which asks for
// Kafka's defaults.
func (r *Resolver) Gaps(c *Config, policy string, names []string) []string {
	if !r.Known() || r.static != nil || r.kafkaDefaults || r.file != nil && r.unlistedDefaults && !c.Known {
		return nil
	}
	if v, _ := c.Get(CleanupPolicy); !v.assumed && !(policy == "compact" && c.Compact || policy == "delete" && c.Delete) {
		return nil
	}
	var gaps []string
	for _, n := range names {
		if v, ok := c.Get(n); ok && v.assumed {
			gaps = append(gaps, n)
		}
	}
	return gaps
}

// Missing is Unknown, else the reason the configs among names, those that
// decide what a command of policy deletes or rewrites, are not known
// (Gaps), or "" when both are known.
func (r *Resolver) Missing(c *Config, policy string, names []string) string {
	if why := r.Unknown(c); why != "" {
		return why
	}
	gaps := r.Gaps(c, policy, names)
	if len(gaps) == 0 {
		return ""
	}
	// Short: a report puts the partition's name before it, and the
	// command's error says what to give.
	return strings.Join(gaps, ", ") + " not set by topic or dynamic config, and no --server-properties"
}

// Known tells whether a configuration source (metadata or file) is known
// for the log dir; without one every topic gets Kafka's defaults and the
// command line's values.
func (r *Resolver) Known() bool { return r.image != nil || r.file != nil }

// Image is the metadata replayed for the log dir, or nil.
func (r *Resolver) Image() *clustermeta.Image { return r.image }

// File is the --topic-config file in use, or nil.
func (r *Resolver) File() *FileConfig { return r.file }

// BrokerID is the id of the broker owning the log dir (meta.properties
// node.id or broker.id), or -1 when unknown: then no per-broker dynamic
// configuration applies.
func (r *Resolver) BrokerID() int32 { return r.broker }

// Topic returns the effective configuration of a topic. An error names a
// config whose value Kafka would not accept.
func (r *Resolver) Topic(name string) (*Config, error) {
	var topicLevel level
	var brokers []level
	known := false
	switch {
	case r.file != nil:
		var ok bool
		topicLevel, ok = r.file.topics[name]
		known = ok
		if r.broker >= 0 {
			brokers = append(brokers, r.file.brokers[strconv.Itoa(int(r.broker))])
		}
		brokers = append(brokers, r.file.brokers[""])
	case r.image != nil:
		known = r.image.Topic(name) != nil
		topicLevel = fromImage(r.image.TopicConfig(name), DynamicTopic)
		if r.broker >= 0 {
			brokers = append(brokers, fromImage(r.image.BrokerConfig(strconv.Itoa(int(r.broker))), DynamicBroker))
		}
		brokers = append(brokers, fromImage(r.image.BrokerConfig(""), DynamicDefaultBroker))
	}
	// server.properties is below every dynamic level (DynamicBrokerConfig).
	if r.static != nil {
		brokers = append(brokers, r.static)
	}
	return resolve(name, known, topicLevel, brokers, r.overrides)
}

func fromImage(m map[string]string, s Source) level {
	if len(m) == 0 {
		return nil
	}
	l := make(level, len(m))
	for k, v := range m {
		l[k] = entry{value: v, source: s}
	}
	return l
}
