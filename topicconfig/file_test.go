package topicconfig

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Output of kafka-topics.sh --describe: the 3.x/4.x form with topic IDs
// and ELR columns, and the ZooKeeper-era form without blanks.
const topicsDescribe = `Topic: orders	TopicId: 8gBP5j5oTBaUOYFzVi-kXA	PartitionCount: 2	ReplicationFactor: 1	Configs: cleanup.policy=compact,delete,retention.ms=86400000,segment.bytes=104857600
	Topic: orders	Partition: 0	Leader: 1	Replicas: 1	Isr: 1	Elr: N/A	LastKnownElr: N/A
	Topic: orders	Partition: 1	Leader: 1	Replicas: 1	Isr: 1	Elr: N/A	LastKnownElr: N/A
Topic: clicks	TopicId: qz7tNpI2TKO80syLjyankw	PartitionCount: 1	ReplicationFactor: 1	Configs: 
	Topic: clicks	Partition: 0	Leader: 1	Replicas: 1	Isr: 1
Topic:legacy	PartitionCount:1	ReplicationFactor:1	Configs:cleanup.policy=compact,min.cleanable.dirty.ratio=0.01	MarkedForDeletion:true
	Topic: legacy	Partition: 0	Leader: 0	Replicas: 0	Isr: 0
`

// Output of kafka-configs.sh --describe --all for a topic, and of
// --describe for brokers, as ConfigCommand prints them.
const configsDescribe = `All configs for topic payments are:
  compression.type=producer sensitive=false synonyms={DEFAULT_CONFIG:compression.type=producer}
  leader.replication.throttled.replicas= sensitive=false synonyms={}
  cleanup.policy=compact,delete sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:cleanup.policy=compact,delete, DEFAULT_CONFIG:log.cleanup.policy=delete}
  segment.bytes=2000000 sensitive=false synonyms={STATIC_BROKER_CONFIG:log.segment.bytes=2000000, DEFAULT_CONFIG:log.segment.bytes=1073741824}
  retention.ms=3600000 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.hours=1, DEFAULT_CONFIG:log.retention.hours=168}
  delete.retention.ms=86400000 sensitive=false synonyms={DEFAULT_CONFIG:log.cleaner.delete.retention.ms=86400000}
  max.compaction.lag.ms=9223372036854775807 sensitive=false synonyms={DEFAULT_CONFIG:log.cleaner.max.compaction.lag.ms=9223372036854775807}
Dynamic configs for topic audit are:
  retention.ms=1000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=1000}
Default configs for brokers in the cluster are:
  log.cleaner.min.compaction.lag.ms=5000 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:log.cleaner.min.compaction.lag.ms=5000}
  log.retention.ms=null sensitive=false synonyms={}
Dynamic configs for broker 2 are:
  log.retention.bytes=1000000 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:log.retention.bytes=1000000, DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.bytes=5}
  ssl.keystore.password=null sensitive=true synonyms={DYNAMIC_BROKER_CONFIG:ssl.keystore.password=null}
Configs for topic 'zk' are retention.ms=5,cleanup.policy=compact,delete
Configs for topic 'zk-empty' are 
`

func writeFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "topics.txt")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestFile(t *testing.T) {
	dir := metaDir(t, 2) // broker 2, no metadata
	r := resolver(t, Options{File: writeFile(t, topicsDescribe+configsDescribe)}, dir)
	if !r.Known() || r.File() == nil || !strings.Contains(r.Describe(), "topics.txt") {
		t.Fatalf("resolver %s", r.Describe())
	}
	for _, c := range []struct {
		topic, config string
		want          Value
	}{
		{"orders", "cleanup.policy", Value{Value: "compact,delete", Source: File}},
		{"orders", "retention.ms", Value{Value: "86400000", Source: File}},
		{"orders", "segment.bytes", Value{Value: "104857600", Source: File}},
		{"orders", "delete.retention.ms", Value{Value: "86400000", Source: Default}},
		{"clicks", "cleanup.policy", Value{Value: "delete", Source: Default}},
		{"legacy", "min.cleanable.dirty.ratio", Value{Value: "0.01", Source: File}},
		{"payments", "cleanup.policy", Value{Value: "compact,delete", Source: DynamicTopic}},
		{"payments", "segment.bytes", Value{Value: "2000000", Source: StaticBroker, From: "log.segment.bytes"}},
		{"payments", "retention.ms", Value{Value: "3600000", Source: DynamicDefaultBroker, From: "log.retention.hours"}},
		{"payments", "max.compaction.lag.ms", Value{Value: "9223372036854775807", Source: Default, From: "log.cleaner.max.compaction.lag.ms"}},
		// Topics get the broker sections' values where they state none.
		{"audit", "retention.ms", Value{Value: "1000", Source: DynamicTopic}},
		{"audit", "min.compaction.lag.ms", Value{Value: "5000", Source: DynamicDefaultBroker, From: "log.cleaner.min.compaction.lag.ms"}},
		{"audit", "retention.bytes", Value{Value: "1000000", Source: DynamicBroker, From: "log.retention.bytes"}},
		{"audit", "segment.ms", Value{Value: "604800000", Source: Default}},
		{"zk", "cleanup.policy", Value{Value: "compact,delete", Source: File}},
		{"zk", "retention.ms", Value{Value: "5", Source: File}},
		{"zk-empty", "retention.ms", Value{Value: "604800000", Source: Default}},
	} {
		cfg := topicConfig(t, r, c.topic)
		got, _ := cfg.Get(c.config)
		c.want.Name, c.want.assumed = c.config, c.want.Source == Default && c.want.From == "" // Kafka's default filled in, not the file's DEFAULT_CONFIG line
		if got != c.want || !cfg.Known {
			t.Errorf("%s %s: got %+v, want %+v (known %v)", c.topic, c.config, got, c.want, cfg.Known)
		}
	}
	if cfg := topicConfig(t, r, "unlisted"); cfg.Known || cfg.RetentionBytes != 1000000 {
		t.Errorf("a topic not in the file: %+v", cfg)
	}
	// A kafka-topics.sh line may list overrides only: what it does not set
	// is unknown, unless the user asks for Kafka's defaults for the topics
	// the file leaves out.
	retention := []string{CleanupPolicy, RetentionMs, RetentionBytes}
	if gaps := r.Gaps(topicConfig(t, r, "zk-empty"), "delete", retention); !slices.Equal(gaps, []string{CleanupPolicy, RetentionMs}) {
		t.Errorf("zk-empty: gaps %v, want cleanup.policy and retention.ms, retention.bytes being the broker section's", gaps)
	}
	r = resolver(t, Options{File: writeFile(t, topicsDescribe+configsDescribe), UnlistedDefaults: true}, dir)
	if gaps := r.Gaps(topicConfig(t, r, "unlisted"), "delete", retention); gaps != nil {
		t.Errorf("unlisted, --unlisted-topics defaults: gaps %v", gaps)
	}
	if gaps := r.Gaps(topicConfig(t, r, "zk-empty"), "delete", retention); len(gaps) != 2 {
		t.Errorf("zk-empty, --unlisted-topics defaults: gaps %v", gaps)
	}
	if n := len(r.File().Topics()); n != 7 {
		t.Errorf("%d topics in the file, want 7", n)
	}
}

// Without a broker id, no per-broker section applies.
func TestFileBrokerUnknown(t *testing.T) {
	r := resolver(t, Options{File: writeFile(t, configsDescribe)}, t.TempDir())
	cfg := topicConfig(t, r, "audit")
	if r.BrokerID() != -1 || cfg.RetentionBytes != -1 || cfg.MinCompactionLagMs != 5000 {
		t.Errorf("broker %d, retention.bytes %d, min lag %d", r.BrokerID(), cfg.RetentionBytes, cfg.MinCompactionLagMs)
	}
}

// TestFileThroughLink: a --topic-config file the user reaches through a
// link is read where the link points.
func TestFileThroughLink(t *testing.T) {
	link := filepath.Join(t.TempDir(), "topics.txt")
	if err := os.Symlink(writeFile(t, topicsDescribe), link); err != nil {
		t.Fatal(err)
	}
	if _, err := ParseFile(link); err != nil {
		t.Errorf("through a link: %v", err)
	}
}

func TestFileErrors(t *testing.T) {
	for _, c := range []struct {
		content string
		want    string
	}{
		{"Topic: t\tPartitionCount: 1\tConfigs: \n  nonsense\n", "line 2: not a line of kafka-topics.sh or kafka-configs.sh"},
		{"hello\n", "line 1: not a line"},
		{"Topic: bad/name\tPartitionCount: 1\tConfigs: \n", "line 1:"},
		{"Topic: t\tPartitionCount: 1\n", "line 1: kafka-topics.sh line for topic t has no Configs field"},
		{"Topic: t\tweird\tConfigs: \n", `line 1: field "weird"`},
		{"All configs for topic t are:\n  retention.ms=1 sensitive=maybe synonyms={}\n", "line 2: config line"},
		{"All configs for topic t are:\n  retention.ms=1\n", "line 2: config line"},
		{"All configs for topic t are:\n  =1 sensitive=false synonyms={}\n", "line 2: config line"},
		{"All configs for topic t are:\n  retention.ms=1 sensitive=false synonyms={dynamic:retention.ms=1}\n", "line 2: synonym"},
		{"\n\nAll configs for broker x are:\n", "line 3: not a line"},
		{"Configs for brokers 'x' are a=b\n", "line 1: broker \"x\""},
		{"Dynamic configs for topic t are:\n  retention.ms=1 sensitive=false synonyms={}\nsomething\n", "line 3:"},
	} {
		_, err := Parse(strings.NewReader(c.content), "f.txt")
		if err == nil || !strings.Contains(err.Error(), "f.txt: "+c.want) {
			t.Errorf("%q: got %v, want %q", c.content, err, c.want)
		}
	}
	if _, err := ParseFile(filepath.Join(t.TempDir(), "missing")); !os.IsNotExist(err) {
		t.Errorf("missing file: %v", err)
	}
	if _, err := Load(nil, Options{File: writeFile(t, "hello\n")}); err == nil {
		t.Error("Load accepts a bad file")
	}
	// A bad value is the topic's problem, reported when it is resolved.
	r := resolver(t, Options{File: writeFile(t, "Configs for topic 't' are retention.ms=x\n")}, t.TempDir())
	if _, err := r.Topic("t"); err == nil || !strings.Contains(err.Error(), "retention.ms (TOPIC_CONFIG_FILE)") {
		t.Errorf("bad value: %v", err)
	}
}

func TestSplitConfigs(t *testing.T) {
	for in, want := range map[string]string{
		"":                                    "",
		"a=1":                                 "a=1",
		"cleanup.policy=compact,delete,x.y=2": "cleanup.policy=compact,delete|x.y=2",
		"follower.replication.throttled.replicas=0:1,1:2,retention.ms=5": "follower.replication.throttled.replicas=0:1,1:2|retention.ms=5",
		"a=,b=":  "a=|b=",
		"a=x,=y": "a=x,=y",
	} {
		if got := strings.Join(splitConfigs(in), "|"); got != want {
			t.Errorf("splitConfigs(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzParse: any input parses or fails with the line it stopped at, never
// a panic.
func FuzzParse(f *testing.F) {
	f.Add(topicsDescribe)
	f.Add(configsDescribe)
	f.Add("Configs for default brokers are log.retention.ms=1\n")
	f.Fuzz(func(t *testing.T, s string) {
		fc, err := Parse(strings.NewReader(s), "f")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f: line ") && !strings.HasPrefix(err.Error(), "f: bufio") {
				t.Fatalf("error without a line: %v", err)
			}
			return
		}
		r := &Resolver{file: fc, broker: 1}
		for _, topic := range fc.Topics() {
			r.Topic(topic) // may fail on bad values, must not panic
		}
	})
}
