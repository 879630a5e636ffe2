// Package topicconfig resolves the configuration of each topic as a Kafka
// broker does for its logs (LogConfig): the topic's own override, else the
// broker's dynamic configuration (the broker's own, then the cluster-wide
// default) under the broker's names for it, else its server.properties,
// else Kafka's default. A value
// given on logtool's command line overrides all of them for the run. Each
// value carries its source, named as Kafka's DescribeConfigs names them.
//
// The configuration comes from the KRaft metadata log of the log dirs
// (package clustermeta) or, for clusters without one, from a file holding the
// output of kafka-topics.sh --describe or kafka-configs.sh --describe
// (ParseFile). A broker's static server.properties is not on disk: it is
// read when given (parseServerProperties), below the dynamic levels; else a
// value only it could set is Kafka's default, marked as assumed, and the
// commands do not act on it (Resolver.Gaps).
package topicconfig

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/logtool/logtool/logfmt"
)

// Source is where a value comes from, by Kafka's ConfigSource names.
type Source string

const (
	DynamicTopic         Source = "DYNAMIC_TOPIC_CONFIG"
	DynamicBroker        Source = "DYNAMIC_BROKER_CONFIG"
	DynamicDefaultBroker Source = "DYNAMIC_DEFAULT_BROKER_CONFIG"
	StaticBroker         Source = "STATIC_BROKER_CONFIG" // known only from a kafka-configs.sh --all file
	Default              Source = "DEFAULT_CONFIG"
	CommandLine          Source = "COMMAND_LINE"      // a logtool flag
	File                 Source = "TOPIC_CONFIG_FILE" // a --topic-config file line that does not state the source
)

// Names of the topic configs logtool resolves (TopicConfig).
const (
	CleanupPolicy          = "cleanup.policy"
	MaxCompactionLagMs     = "max.compaction.lag.ms"
	MinCompactionLagMs     = "min.compaction.lag.ms"
	MinCleanableDirtyRatio = "min.cleanable.dirty.ratio"
	DeleteRetentionMs      = "delete.retention.ms"
	SegmentBytes           = "segment.bytes"
	SegmentMs              = "segment.ms"
	SegmentIndexBytes      = "segment.index.bytes"
	IndexIntervalBytes     = "index.interval.bytes"
	RetentionMs            = "retention.ms"
	RetentionBytes         = "retention.bytes"
	MaxMessageBytes        = "max.message.bytes"
	MessageTimestampType   = "message.timestamp.type"
	MessageFormatVersion   = "message.format.version"
	RemoteStorageEnable    = "remote.storage.enable"
	LocalRetentionMs       = "local.retention.ms"
	LocalRetentionBytes    = "local.retention.bytes"
)

type kind int

const (
	kLong kind = iota
	kInt
	kDouble
	kBool
	kString
	kList
)

// synonym is a broker config standing in for a topic config, scaled to the
// topic config's unit (ServerTopicConfigSynonyms).
type synonym struct {
	name  string
	kind  kind
	scale int64 // hours and minutes to milliseconds; 0 means 1
}

// def is a topic config: its type, default and validity as LogConfig
// defines them, its broker synonyms in order of precedence, and the field
// of Config it sets.
type def struct {
	name     string
	kind     kind
	def      string // the default as Kafka prints it
	valid    func(v value) error
	synonyms []synonym
	set      func(c *Config, v value)
}

// defs are the configs, in the order Config.Values lists them. Defaults and
// ranges are LogConfig's (storage/.../log/LogConfig.java) and
// ServerLogConfigs'; synonyms are ServerTopicConfigSynonyms'.
var defs = []def{
	{CleanupPolicy, kList, "delete", in("compact", "delete"), []synonym{{"log.cleanup.policy", kList, 0}}, func(c *Config, v value) {
		c.Compact, c.Delete = slices.Contains(v.list, "compact"), slices.Contains(v.list, "delete")
	}},
	{MaxCompactionLagMs, kLong, strconv.FormatInt(math.MaxInt64, 10), atLeast(1), []synonym{{"log.cleaner.max.compaction.lag.ms", kLong, 0}}, func(c *Config, v value) { c.MaxCompactionLagMs = v.i }},
	{MinCompactionLagMs, kLong, "0", atLeast(0), []synonym{{"log.cleaner.min.compaction.lag.ms", kLong, 0}}, func(c *Config, v value) { c.MinCompactionLagMs = v.i }},
	{MinCleanableDirtyRatio, kDouble, "0.5", between01, []synonym{{"log.cleaner.min.cleanable.ratio", kDouble, 0}}, func(c *Config, v value) { c.MinCleanableDirtyRatio = v.f }},
	{DeleteRetentionMs, kLong, "86400000", atLeast(0), []synonym{{"log.cleaner.delete.retention.ms", kLong, 0}}, func(c *Config, v value) { c.DeleteRetentionMs = v.i }},
	// Kafka 4.0 raised the minimum to 1 MiB (KIP-1030); older clusters
	// accept down to a legacy record's overhead, and their values stand.
	{SegmentBytes, kInt, "1073741824", atLeast(14), []synonym{{"log.segment.bytes", kInt, 0}}, func(c *Config, v value) { c.SegmentBytes = int32(v.i) }},
	{SegmentMs, kLong, "604800000", atLeast(1), []synonym{{"log.roll.ms", kLong, 0}, {"log.roll.hours", kInt, hour}}, func(c *Config, v value) { c.SegmentMs = v.i }},
	{SegmentIndexBytes, kInt, "10485760", atLeast(4), []synonym{{"log.index.size.max.bytes", kInt, 0}}, func(c *Config, v value) { c.SegmentIndexBytes = int32(v.i) }},
	{IndexIntervalBytes, kInt, "4096", atLeast(0), []synonym{{"log.index.interval.bytes", kInt, 0}}, func(c *Config, v value) { c.IndexIntervalBytes = int32(v.i) }},
	{RetentionMs, kLong, "604800000", atLeast(-1), []synonym{{"log.retention.ms", kLong, 0}, {"log.retention.minutes", kInt, minute}, {"log.retention.hours", kInt, hour}}, func(c *Config, v value) { c.RetentionMs = v.i }},
	{RetentionBytes, kLong, "-1", nil, []synonym{{"log.retention.bytes", kLong, 0}}, func(c *Config, v value) { c.RetentionBytes = v.i }},
	{MaxMessageBytes, kInt, "1048588", atLeast(0), []synonym{{"message.max.bytes", kInt, 0}}, func(c *Config, v value) { c.MaxMessageBytes = int32(v.i) }},
	{MessageTimestampType, kString, "CreateTime", in("CreateTime", "LogAppendTime"), []synonym{{"log.message.timestamp.type", kString, 0}}, func(c *Config, v value) {
		c.TimestampType = logfmt.CreateTime
		if v.s == "LogAppendTime" {
			c.TimestampType = logfmt.LogAppendTime
		}
	}},
	// Removed in Kafka 4.0, ignored since inter.broker.protocol.version 3.0.
	{MessageFormatVersion, kString, "3.0-IV1", versionString, []synonym{{"log.message.format.version", kString, 0}}, func(c *Config, v value) { c.MessageFormatVersion = v.s }},
	{RemoteStorageEnable, kBool, "false", nil, nil, func(c *Config, v value) { c.RemoteStorageEnable = v.b }},
	{LocalRetentionMs, kLong, "-2", atLeast(-2), []synonym{{"log.local.retention.ms", kLong, 0}}, func(c *Config, v value) { c.LocalRetentionMs = v.i }},
	{LocalRetentionBytes, kLong, "-2", atLeast(-2), []synonym{{"log.local.retention.bytes", kLong, 0}}, func(c *Config, v value) { c.LocalRetentionBytes = v.i }},
}

const (
	minute = 60 * 1000
	hour   = 60 * minute
)

var defIndex = func() map[string]int {
	m := map[string]int{}
	for i, d := range defs {
		m[d.name] = i
	}
	return m
}()

// value is a parsed config value.
type value struct {
	i    int64
	f    float64
	b    bool
	s    string
	list []string
}

// parse reads s as ConfigDef.parseType does for kind k: the string is
// trimmed of Java's whitespace (any character up to U+0020), numbers are
// Java's decimal integers and doubles, booleans "true" or "false" in any
// case, lists comma-separated with blanks around the commas.
func parse(k kind, s string) (value, error) {
	t := strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
	switch k {
	case kLong, kInt:
		bits := 64
		if k == kInt {
			bits = 32
		}
		i, err := parseJavaInt(t, bits)
		return value{i: i}, err
	case kDouble:
		f, err := parseJavaDouble(t)
		return value{f: f}, err
	case kBool:
		switch strings.ToLower(t) {
		case "true":
			return value{b: true}, nil
		case "false":
			return value{}, nil
		}
		return value{}, fmt.Errorf("expected value to be either true or false")
	case kList:
		if t == "" {
			return value{list: []string{}}, nil
		}
		parts := strings.Split(t, ",")
		for i := range parts {
			parts[i] = strings.TrimFunc(parts[i], isJavaSpace)
		}
		return value{list: parts}, nil
	}
	return value{s: t}, nil
}

// isJavaSpace is \s of Java's regular expressions: the blanks around a
// list's commas (ConfigDef's COMMA_WITH_WHITESPACE).
func isJavaSpace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\v' || r == '\f' || r == '\r'
}

// parseJavaInt is Long.parseLong / Integer.parseInt: an optional sign and
// decimal digits, nothing else.
func parseJavaInt(s string, bits int) (int64, error) {
	digits := strings.TrimLeft(s, "+-")
	if len(s)-len(digits) > 1 || digits == "" || strings.TrimLeft(digits, "0123456789") != "" {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	i, err := strconv.ParseInt(s, 10, bits)
	if err != nil {
		return 0, fmt.Errorf("%q is out of range for a %d-bit integer", s, bits)
	}
	return i, nil
}

// parseJavaDouble is Double.parseDouble for the forms a config holds:
// decimal or exponent notation, an optional d or f suffix, "NaN" and
// "Infinity" spelled as Java spells them. Go's extras (hexadecimal floats,
// underscores, "inf") are refused.
func parseJavaDouble(s string) (float64, error) {
	t := strings.TrimRight(s, "dDfF")
	if len(s)-len(t) > 1 {
		t = s
	}
	body := strings.TrimLeft(t, "+-")
	switch {
	case len(t)-len(body) > 1:
	case body == "NaN":
		return math.NaN(), nil
	case body == "Infinity":
		if strings.HasPrefix(t, "-") {
			return math.Inf(-1), nil
		}
		return math.Inf(1), nil
	case body != "" && strings.TrimLeft(body, "0123456789.eE+-") == "":
		if f, err := strconv.ParseFloat(t, 64); err == nil {
			return f, nil
		}
	}
	return 0, fmt.Errorf("%q is not a number", s)
}

func atLeast(min int64) func(value) error {
	return func(v value) error {
		if v.i < min {
			return fmt.Errorf("value must be at least %d", min)
		}
		return nil
	}
}

// between01 is Range.between(0, 1) on a double: NaN passes, as in Java.
func between01(v value) error {
	if v.f < 0 || v.f > 1 {
		return fmt.Errorf("value must be no more than 1 and at least 0")
	}
	return nil
}

// in is ValidString.in, or ValidList.in for a list: each element must be
// one of the names, case and all.
func in(names ...string) func(value) error {
	ok := func(s string) bool {
		for _, n := range names {
			if s == n {
				return true
			}
		}
		return false
	}
	return func(v value) error {
		items := v.list
		if items == nil {
			items = []string{v.s}
		}
		for _, s := range items {
			if !ok(s) {
				return fmt.Errorf("invalid value %q: must be one of %s", s, strings.Join(names, ", "))
			}
		}
		return nil
	}
}

// versionString accepts what MetadataVersion.fromVersionString does: a
// release such as 0.10.2, 2.8 or 3.0, optionally with its -IV suffix.
func versionString(v value) error {
	rel, iv, _ := strings.Cut(v.s, "-IV")
	parts := strings.Split(rel, ".")
	okNum := func(s string) bool { return s != "" && strings.TrimLeft(s, "0123456789") == "" }
	good := len(parts) >= 2 && len(parts) <= 3
	for _, p := range parts {
		good = good && okNum(p)
	}
	if strings.Contains(v.s, "-IV") {
		good = good && okNum(iv)
	}
	if !good {
		return fmt.Errorf("%q is not a version", v.s)
	}
	return nil
}
