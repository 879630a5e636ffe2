package topicconfig

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/logtool/logtool/clustermeta"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/checkpoint"
	"github.com/logtool/logtool/logfmt/kraft"
	"github.com/logtool/logtool/logfmt/layout"
)

var time0 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// metaDir writes a log dir of broker node whose metadata log holds records.
func metaDir(t *testing.T, node int32, records ...[]byte) string {
	t.Helper()
	dir := t.TempDir()
	m := checkpoint.MetaProperties{Version: 1, NodeID: node, BrokerID: -1, ClusterID: "c1"}
	if err := os.WriteFile(filepath.Join(dir, layout.MetaPropertiesFile), checkpoint.AppendMetaProperties(nil, m, time0), 0o644); err != nil {
		t.Fatal(err)
	}
	if len(records) == 0 {
		return dir
	}
	meta := filepath.Join(dir, clustermeta.PartitionDir)
	if err := os.Mkdir(meta, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := kraft.AppendBatch(nil, 0, 1, 1, false, 0, records...)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(meta, "00000000000000000000.log"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func topicRec(name string, c byte) []byte {
	var id clustermeta.TopicID
	id[0], id[15] = c, 1
	return kraft.AppendTopicRecord(nil, name, id)
}

func conf(typ int8, res, name, value string) []byte {
	return kraft.AppendConfigRecord(nil, typ, res, name, &value)
}

func topicConf(topic, name, value string) []byte {
	return conf(clustermeta.ResourceTopic, topic, name, value)
}
func clusterConf(name, value string) []byte { return conf(clustermeta.ResourceBroker, "", name, value) }
func brokerConf(id, name, value string) []byte {
	return conf(clustermeta.ResourceBroker, id, name, value)
}

func resolver(t *testing.T, o Options, dir string) *Resolver {
	t.Helper()
	c, err := Load([]string{dir}, o)
	if err != nil {
		t.Fatal(err)
	}
	return c.For(dir)
}

func topicConfig(t *testing.T, r *Resolver, topic string) *Config {
	t.Helper()
	c, err := r.Topic(topic)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// With nothing configured, every value is Kafka's default, as LogConfig
// defines it.
func TestDefaults(t *testing.T) {
	r := resolver(t, Options{}, metaDir(t, 1, topicRec("t", 1)))
	c := topicConfig(t, r, "t")
	want := map[string]string{
		"cleanup.policy": "delete", "max.compaction.lag.ms": "9223372036854775807", "min.compaction.lag.ms": "0",
		"min.cleanable.dirty.ratio": "0.5", "delete.retention.ms": "86400000", "segment.bytes": "1073741824",
		"segment.ms": "604800000", "segment.index.bytes": "10485760", "index.interval.bytes": "4096",
		"retention.ms": "604800000", "retention.bytes": "-1", "max.message.bytes": "1048588",
		"message.timestamp.type": "CreateTime", "message.format.version": "3.0-IV1", "remote.storage.enable": "false",
		"local.retention.ms": "-2", "local.retention.bytes": "-2",
	}
	if len(c.Values) != len(want) {
		t.Fatalf("%d values, want %d", len(c.Values), len(want))
	}
	for name, v := range want {
		got, ok := c.Get(name)
		if !ok || got.Value != v || got.Source != Default || got.Name != name {
			t.Errorf("%s = %+v, want %s from DEFAULT_CONFIG", name, got, v)
		}
	}
	if !c.Known || c.Compact || !c.Delete || c.MaxCompactionLagMs != math.MaxInt64 || c.MinCleanableDirtyRatio != 0.5 ||
		c.DeleteRetentionMs != 86400000 || c.SegmentBytes != 1<<30 || c.RetentionMs != 604800000 || c.RetentionBytes != -1 ||
		c.TimestampType != logfmt.CreateTime || c.LocalRetentionMs != -2 || c.SegmentIndexBytes != 10<<20 || c.IndexIntervalBytes != 4096 ||
		c.MaxMessageBytes != 1048588 || c.SegmentMs != 604800000 || c.MessageFormatVersion != "3.0-IV1" || c.RemoteStorageEnable {
		t.Errorf("typed values %+v", c)
	}
	if _, ok := c.Get("no.such.config"); ok {
		t.Error("Get of an unknown name")
	}
}

// Each level hides the ones below it: command line, topic, this broker,
// the cluster-wide default, Kafka's default.
func TestPrecedence(t *testing.T) {
	for _, c := range []struct {
		name     string
		records  [][]byte
		override map[string]string
		config   string
		value    string
		source   Source
		from     string
	}{
		{"cluster default", [][]byte{clusterConf("log.retention.ms", "1000")}, nil, "retention.ms", "1000", DynamicDefaultBroker, "log.retention.ms"},
		{"cluster default in hours", [][]byte{clusterConf("log.retention.hours", "2")}, nil, "retention.ms", "7200000", DynamicDefaultBroker, "log.retention.hours"},
		{"minutes before hours", [][]byte{clusterConf("log.retention.hours", "2"), clusterConf("log.retention.minutes", "3")}, nil, "retention.ms", "180000", DynamicDefaultBroker, "log.retention.minutes"},
		{"ms before minutes", [][]byte{clusterConf("log.retention.minutes", "3"), clusterConf("log.retention.ms", "5")}, nil, "retention.ms", "5", DynamicDefaultBroker, "log.retention.ms"},
		{"negative broker retention is none", [][]byte{clusterConf("log.retention.ms", "-7")}, nil, "retention.ms", "-1", DynamicDefaultBroker, "log.retention.ms"},
		{"this broker before the cluster", [][]byte{clusterConf("log.retention.ms", "5"), brokerConf("1", "log.retention.hours", "1")}, nil, "retention.ms", "3600000", DynamicBroker, "log.retention.hours"},
		{"another broker's config", [][]byte{brokerConf("2", "log.retention.ms", "5")}, nil, "retention.ms", "604800000", Default, ""},
		{"topic before brokers", [][]byte{clusterConf("log.retention.ms", "5"), brokerConf("1", "log.retention.ms", "6"), topicConf("t", "retention.ms", "7")}, nil, "retention.ms", "7", DynamicTopic, ""},
		{"command line before all", [][]byte{topicConf("t", "retention.ms", "7")}, map[string]string{"retention.ms": "8"}, "retention.ms", "8", CommandLine, ""},
		{"another topic's config", [][]byte{topicRec("u", 2), topicConf("u", "retention.ms", "7")}, nil, "retention.ms", "604800000", Default, ""},
		{"cleanup policy", [][]byte{clusterConf("log.cleanup.policy", "compact")}, nil, "cleanup.policy", "compact", DynamicDefaultBroker, "log.cleanup.policy"},
		{"dirty ratio", [][]byte{clusterConf("log.cleaner.min.cleanable.ratio", "0.1")}, nil, "min.cleanable.dirty.ratio", "0.1", DynamicDefaultBroker, "log.cleaner.min.cleanable.ratio"},
		{"max lag", [][]byte{clusterConf("log.cleaner.max.compaction.lag.ms", "60000")}, nil, "max.compaction.lag.ms", "60000", DynamicDefaultBroker, "log.cleaner.max.compaction.lag.ms"},
		{"min lag", [][]byte{brokerConf("1", "log.cleaner.min.compaction.lag.ms", "10")}, nil, "min.compaction.lag.ms", "10", DynamicBroker, "log.cleaner.min.compaction.lag.ms"},
		{"delete retention", [][]byte{clusterConf("log.cleaner.delete.retention.ms", "10")}, nil, "delete.retention.ms", "10", DynamicDefaultBroker, "log.cleaner.delete.retention.ms"},
		{"segment bytes", [][]byte{clusterConf("log.segment.bytes", "2000000")}, nil, "segment.bytes", "2000000", DynamicDefaultBroker, "log.segment.bytes"},
		{"roll hours", [][]byte{clusterConf("log.roll.hours", "1")}, nil, "segment.ms", "3600000", DynamicDefaultBroker, "log.roll.hours"},
		{"roll ms before hours", [][]byte{clusterConf("log.roll.hours", "1"), clusterConf("log.roll.ms", "9")}, nil, "segment.ms", "9", DynamicDefaultBroker, "log.roll.ms"},
		{"message max bytes", [][]byte{clusterConf("message.max.bytes", "100")}, nil, "max.message.bytes", "100", DynamicDefaultBroker, "message.max.bytes"},
		{"index size", [][]byte{clusterConf("log.index.size.max.bytes", "4096")}, nil, "segment.index.bytes", "4096", DynamicDefaultBroker, "log.index.size.max.bytes"},
		{"timestamp type", [][]byte{clusterConf("log.message.timestamp.type", "LogAppendTime")}, nil, "message.timestamp.type", "LogAppendTime", DynamicDefaultBroker, "log.message.timestamp.type"},
		{"a removed topic config", [][]byte{topicConf("t", "retention.ms", "7"), kraft.AppendConfigRecord(nil, clustermeta.ResourceTopic, "t", "retention.ms", nil)}, nil, "retention.ms", "604800000", Default, ""},
		{"a removed broker config", [][]byte{clusterConf("log.retention.ms", "7"), kraft.AppendConfigRecord(nil, clustermeta.ResourceBroker, "", "log.retention.ms", nil)}, nil, "retention.ms", "604800000", Default, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := resolver(t, Options{Overrides: c.override}, metaDir(t, 1, append([][]byte{topicRec("t", 1)}, c.records...)...))
			got, _ := topicConfig(t, r, "t").Get(c.config)
			want := Value{Name: c.config, Value: c.value, Source: c.source, From: c.from}
			if got != want {
				t.Fatalf("got  %+v\nwant %+v", got, want)
			}
		})
	}
}

// The per-broker level applies to the log dirs of that broker only, and
// not at all when the broker is not known.
func TestPerBroker(t *testing.T) {
	recs := [][]byte{topicRec("t", 1), brokerConf("1", "log.retention.ms", "11"), brokerConf("2", "log.retention.ms", "22")}
	one, two := metaDir(t, 1, recs...), metaDir(t, 2)
	c, err := Load([]string{one, two}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for dir, want := range map[string]int64{one: 11, two: 22} {
		if got := topicConfig(t, c.For(dir), "t").RetentionMs; got != want {
			t.Errorf("%s: retention %d, want %d", dir, got, want)
		}
	}
	if c.For(two).Image() != c.For(one).Image() || c.For(two).BrokerID() != 2 {
		t.Error("the second broker's log dir does not use the cluster's metadata")
	}
	os.Remove(filepath.Join(two, layout.MetaPropertiesFile))
	c, err = Load([]string{two, one}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r := c.For(two); r.Known() || r.BrokerID() != -1 {
		t.Errorf("a log dir of no known broker or cluster uses %s", r.Describe())
	}
	if r := c.For("/elsewhere"); r.Known() || topicConfig(t, r, "t").RetentionMs != 604800000 {
		t.Error("a log dir not loaded has a configuration")
	}
}

func TestPolicy(t *testing.T) {
	for value, want := range map[string][2]bool{"compact": {true, false}, "delete": {false, true}, "compact,delete": {true, true},
		"delete , compact": {true, true}, "": {false, false}, " compact ": {true, false}} {
		r := resolver(t, Options{}, metaDir(t, 1, topicRec("t", 1), topicConf("t", "cleanup.policy", value)))
		c := topicConfig(t, r, "t")
		if c.Compact != want[0] || c.Delete != want[1] {
			t.Errorf("cleanup.policy=%q: compact %v delete %v", value, c.Compact, c.Delete)
		}
	}
}

// Values are parsed as Kafka's ConfigDef parses them, and a value Kafka
// would refuse is an error naming the config and its source.
func TestInvalidValues(t *testing.T) {
	for _, c := range []struct {
		record []byte
		want   string
	}{
		{topicConf("t", "retention.ms", "abc"), `invalid value "abc" for configuration retention.ms (DYNAMIC_TOPIC_CONFIG)`},
		{topicConf("t", "retention.ms", "-2"), "at least -1"},
		{topicConf("t", "retention.ms", "0x10"), "not a number"},
		{topicConf("t", "retention.ms", "1_000"), "not a number"},
		{topicConf("t", "retention.ms", "9223372036854775808"), "out of range"},
		{topicConf("t", "segment.bytes", "3000000000"), "out of range for a 32-bit"},
		{topicConf("t", "segment.bytes", "5"), "at least 14"},
		{topicConf("t", "cleanup.policy", "compact,Delete"), `invalid value "Delete"`},
		{topicConf("t", "cleanup.policy", "compact,"), `invalid value ""`},
		{topicConf("t", "min.cleanable.dirty.ratio", "1.5"), "no more than 1"},
		{topicConf("t", "min.cleanable.dirty.ratio", "inf"), "not a number"},
		{topicConf("t", "max.compaction.lag.ms", "0"), "at least 1"},
		{topicConf("t", "message.timestamp.type", "createtime"), "must be one of CreateTime, LogAppendTime"},
		{topicConf("t", "message.format.version", "latest"), "not a version"},
		{topicConf("t", "remote.storage.enable", "yes"), "true or false"},
		{clusterConf("log.retention.hours", "x"), `configuration log.retention.hours (DYNAMIC_DEFAULT_BROKER_CONFIG)`},
		{brokerConf("1", "log.cleaner.min.cleanable.ratio", "-0.1"), "log.cleaner.min.cleanable.ratio (DYNAMIC_BROKER_CONFIG)"},
	} {
		r := resolver(t, Options{}, metaDir(t, 1, topicRec("t", 1), c.record))
		if _, err := r.Topic("t"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
	for name, v := range map[string]string{"retention.ms": "forever", "log.retention.ms": "1", "cleanup.policy": "none"} {
		if _, err := Load(nil, Options{Overrides: map[string]string{name: v}}); err == nil {
			t.Errorf("override %s=%s accepted", name, v)
		}
	}
}

func TestParseValues(t *testing.T) {
	for _, c := range []struct {
		k    kind
		in   string
		want value
	}{
		{kLong, " 1000\t", value{i: 1000}}, {kLong, "+5", value{i: 5}}, {kLong, "-1", value{i: -1}},
		{kInt, "2147483647", value{i: math.MaxInt32}},
		{kDouble, "0.5", value{f: 0.5}}, {kDouble, "5e-1", value{f: 0.5}}, {kDouble, "0.5d", value{f: 0.5}}, {kDouble, ".25F", value{f: 0.25}},
		{kBool, "TRUE", value{b: true}}, {kBool, "False", value{}},
		{kList, "compact , delete", value{list: []string{"compact", "delete"}}},
		{kString, " CreateTime ", value{s: "CreateTime"}},
	} {
		got, err := parse(c.k, c.in)
		if err != nil || got.i != c.want.i || got.f != c.want.f || got.b != c.want.b || got.s != c.want.s || strings.Join(got.list, "|") != strings.Join(c.want.list, "|") {
			t.Errorf("parse(%q) = %+v %v, want %+v", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"", "+", "--1", "1.0", "1e3", " 1 2"} {
		if _, err := parse(kLong, in); err == nil {
			t.Errorf("parse long %q accepted", in)
		}
	}
	for _, in := range []string{"", "0x1p-1", "Inf", "nan", "1dd", "--1", "1.5.5"} {
		if _, err := parse(kDouble, in); err == nil {
			t.Errorf("parse double %q accepted", in)
		}
	}
	if v, err := parse(kDouble, "NaN"); err != nil || !math.IsNaN(v.f) || between01(v) != nil {
		t.Error("NaN is a double, in range as Java compares")
	}
}

// The sources are Kafka's ConfigSource names, as franz-go spells them.
func TestSourceNames(t *testing.T) {
	for _, s := range []Source{DynamicTopic, DynamicBroker, DynamicDefaultBroker, StaticBroker, Default} {
		if _, err := kmsg.ParseConfigSource(string(s)); err != nil {
			t.Errorf("%s: %v", s, err)
		}
		found := false
		for _, k := range kmsg.ConfigSourceStrings() {
			found = found || k == string(s)
		}
		if !found {
			t.Errorf("%s is not one of %v", s, kmsg.ConfigSourceStrings())
		}
	}
}

func TestCatalogSharesMetadata(t *testing.T) {
	data := metaDir(t, 1) // a JBOD data dir of node 1
	meta := metaDir(t, 1, topicRec("t", 1), topicConf("t", "cleanup.policy", "compact"))
	c, err := Load([]string{data, meta, data}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.For(data).Image() == nil || c.For(data).Image() != c.For(meta).Image() {
		t.Fatal("the data dir does not use its broker's metadata")
	}
	if !topicConfig(t, c.For(data), "t").Compact {
		t.Error("policy not read")
	}
	if !strings.Contains(c.For(data).Describe(), "cluster metadata") {
		t.Errorf("describe: %s", c.For(data).Describe())
	}
	other := metaDir(t, 1, topicRec("t", 1))
	if _, err := Load([]string{meta, other}, Options{}); err == nil || !strings.Contains(err.Error(), "both hold the metadata log of node 1") {
		t.Errorf("two metadata logs of one node: %v", err)
	}
	bad := metaDir(t, 1, topicRec("t", 1), topicRec("t", 2))
	if _, err := Load([]string{bad}, Options{}); err == nil {
		t.Error("bad metadata accepted")
	}
}

// A topic deleted and created again keeps nothing of its old configs; a
// deleted topic is not known.
func TestRecreatedTopic(t *testing.T) {
	var old clustermeta.TopicID
	old[0], old[15] = 1, 1
	dir := metaDir(t, 1, topicRec("t", 1), topicConf("t", "cleanup.policy", "compact"), topicRec("gone", 3),
		kraft.AppendRemoveTopicRecord(nil, old), topicRec("t", 2), topicConf("t", "retention.ms", "5"))
	r := resolver(t, Options{}, dir)
	c := topicConfig(t, r, "t")
	if c.Compact || !c.Delete || c.RetentionMs != 5 || !c.Known {
		t.Errorf("re-created topic: %+v", c)
	}
	if id := r.Image().Topic("t").ID; id[0] != 2 {
		t.Errorf("re-created topic has ID %s", id)
	}
	var gone clustermeta.TopicID
	gone[0], gone[15] = 3, 1
	dir = metaDir(t, 1, topicRec("gone", 3), topicConf("gone", "cleanup.policy", "compact"), kraft.AppendRemoveTopicRecord(nil, gone))
	if c := topicConfig(t, resolver(t, Options{}, dir), "gone"); c.Known || c.Compact {
		t.Errorf("deleted topic: %+v", c)
	}
}
