package commands

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logtool/logtool/clustermeta"
	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/internal/testkit/kafkasamples"
	"github.com/logtool/logtool/internal/testkit/testutil"
	"github.com/logtool/logtool/logfmt/checkpoint"
	"github.com/logtool/logtool/logfmt/layout"
)

// plainLogDir generates a log directory without cluster metadata, as a
// ZooKeeper-era broker leaves it: orders (2 partitions) and legacy, from
// 2024-01-01.
func plainLogDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "kafka-logs")
	for _, o := range []gen.Options{
		{Topics: []string{"orders"}, Partitions: 2, Magic: 2, Records: 600, Keys: 30, SegmentBytes: 16 << 10, Seed: 1},
		{Topics: []string{"legacy"}, Magic: 0, Records: 300, Keys: 30, SegmentBytes: 8 << 10, Seed: 2},
	} {
		o.Out = dir
		if _, err := gen.Generate(o); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// configObjects runs a command with --format json and returns its
// compaction or retention objects by partition directory name.
func configObjects(t *testing.T, args ...string) map[string]map[string]any {
	t.Helper()
	return configObjectsExit(t, ExitOK, args...)
}

// configObjectsExit is configObjects of a run that exits with code.
func configObjectsExit(t *testing.T, code int, args ...string) map[string]map[string]any {
	t.Helper()
	got, out, errOut := runArgs(append([]string{"--format", "json"}, args...)...)
	if got != code {
		t.Fatalf("%v: exit %d, want %d, stderr %q", args, got, code, errOut)
	}
	objs := map[string]map[string]any{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var obj map[string]any
		if err := json.Unmarshal([]byte(line), &obj); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if obj["type"] == "compaction" || obj["type"] == "retention" {
			objs[filepath.Base(obj["file"].(string))] = obj
		}
	}
	return objs
}

// configOf returns the value and source of a config in an object.
func configOf(obj map[string]any, name string) (value, source, from string) {
	cfg, _ := obj["config"].(map[string]any)
	v, _ := cfg[name].(map[string]any)
	value, _ = v["value"].(string)
	source, _ = v["source"].(string)
	from, _ = v["from"].(string)
	return value, source, from
}

// TestWholeLogDirWithoutConfiguration: without cluster metadata or
// --topic-config, a log directory named whole is refused in one line
// before anything is written, not even the leftover of an interrupted run
// removed; --topic and partition directories named on the command line are
// consent, and work with Kafka's defaults.
func TestWholeLogDirWithoutConfiguration(t *testing.T) {
	dir := plainLogDir(t)
	leftover := filepath.Join(dir, "recovery-point-offset-checkpoint.logtool.tmp")
	if err := os.WriteFile(leftover, []byte("0\n0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := treeHash(t, dir)
	want := "logtool: %s: " + dir + ": no topic configuration (no __cluster_metadata-0 in the log dir or another of its broker's): " +
		"name topics with --topic REGEX, or give --topic-config FILE\n"
	for _, args := range [][]string{
		{"compact", "--kafka-defaults", "--now", "2024-03-01T00:00:00Z"},
		{"compact", "--kafka-defaults", "--dry-run"},
		{"retention", "--kafka-defaults", "--now", "2024-03-01T00:00:00Z"},
		{"retention", "--kafka-defaults", "--dry-run", "--retention-ms", "1h"},
	} {
		code, out, errOut := runArgs(append(args, dir)...)
		if code != ExitUsage || out != "" || errOut != strings.ReplaceAll(want, "%s", args[0]) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
		if treeHash(t, dir) != before {
			t.Fatalf("%v changed the log directory", args)
		}
	}
	// Consent: every partition chosen gets Kafka's defaults.
	objs := configObjects(t, "compact", "--kafka-defaults", "--dry-run", "--now", "2024-03-01T00:00:00Z", "--topic", "orders", dir)
	if o := objs["orders-0"]; o == nil || o["eligible"] != true || len(objs) != 2 {
		t.Fatalf("--topic orders: %v", objs)
	}
	if v, src, _ := configOf(objs["orders-0"], "cleanup.policy"); v != "compact" || src != "COMMAND_LINE" {
		t.Errorf("a partition chosen on the command line: cleanup.policy=%s (%s)", v, src)
	}
	if v, src, _ := configOf(objs["orders-0"], "min.cleanable.dirty.ratio"); v != "0.5" || src != "DEFAULT_CONFIG" {
		t.Errorf("min.cleanable.dirty.ratio=%s (%s)", v, src)
	}
	objs = configObjects(t, "retention", "--kafka-defaults", "--dry-run", "--now", "2024-03-01T00:00:00Z", filepath.Join(dir, "legacy-0"))
	if o := objs["legacy-0"]; o == nil || o["segmentsDeleted"].(float64) == 0 {
		t.Errorf("legacy-0 named: %v", objs)
	}
	if v, src, _ := configOf(objs["legacy-0"], "retention.ms"); v != "604800000" || src != "DEFAULT_CONFIG" {
		t.Errorf("retention.ms=%s (%s)", v, src)
	}
	if code, _, errOut := runArgs("retention", "--kafka-defaults", "--now", "2024-03-01T00:00:00Z", "--topic", ".*", dir); code != ExitOK {
		t.Errorf("retention --topic '.*': exit %d, %s", code, errOut)
	}
	if _, err := os.Stat(leftover); err == nil {
		t.Error("a run that went ahead left the interrupted run's temporary file")
	}
}

// TestTopicConfigFile: both kinds of --topic-config file make a log
// directory's configuration known, with their sources; a line neither tool
// prints is a usage error naming the line.
func TestTopicConfigFile(t *testing.T) {
	dir := plainLogDir(t)
	files := t.TempDir()
	topics := filepath.Join(files, "topics.txt")
	configs := filepath.Join(files, "configs.txt")
	bad := filepath.Join(files, "bad.txt")
	for path, text := range map[string]string{
		topics: "Topic: orders\tTopicId: 8gBP5j5oTBaUOYFzVi-kXA\tPartitionCount: 2\tReplicationFactor: 1\tConfigs: cleanup.policy=compact,delete,min.cleanable.dirty.ratio=0.1\n" +
			"\tTopic: orders\tPartition: 0\tLeader: 1\tReplicas: 1\tIsr: 1\n" +
			"Topic: legacy\tTopicId: 9gBP5j5oTBaUOYFzVi-kXA\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: retention.ms=1000\n",
		configs: "All configs for topic legacy are:\n" +
			"  cleanup.policy=compact sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:cleanup.policy=compact, DEFAULT_CONFIG:log.cleanup.policy=delete}\n" +
			"  delete.retention.ms=3600000 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:log.cleaner.delete.retention.ms=3600000, DEFAULT_CONFIG:log.cleaner.delete.retention.ms=86400000}\n",
		bad: "Topic: orders\tConfigs: cleanup.policy=compact\nthis is not kafka-topics.sh output\n",
	} {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	objs := configObjects(t, "compact", "--kafka-defaults", "--dry-run", "--now", "2024-03-01T00:00:00Z", "--topic-config", topics, dir)
	if objs["orders-0"]["eligible"] != true || objs["legacy-0"]["reason"] != "cleanup.policy=delete" {
		t.Errorf("kafka-topics.sh file: %v", objs)
	}
	if v, src, _ := configOf(objs["orders-1"], "min.cleanable.dirty.ratio"); v != "0.1" || src != "TOPIC_CONFIG_FILE" {
		t.Errorf("min.cleanable.dirty.ratio=%s (%s)", v, src)
	}
	objs = configObjects(t, "retention", "--kafka-defaults", "--dry-run", "--now", "2024-03-01T00:00:00Z", "--topic-config", topics, dir)
	if objs["legacy-0"]["segmentsDeleted"].(float64) == 0 || objs["orders-0"]["segmentsDeleted"].(float64) == 0 {
		t.Errorf("retention with the kafka-topics.sh file: %v", objs)
	}

	// orders is not in the file: skipped, so exit 2, with the JSON written.
	objs = configObjectsExit(t, ExitUsage, "compact", "--kafka-defaults", "--dry-run", "--now", "2024-03-01T00:00:00Z", "--topic-config", configs, dir)
	if reason, _ := objs["orders-0"]["reason"].(string); objs["legacy-0"]["eligible"] != true || !strings.HasPrefix(reason, "topic orders is not in --topic-config "+configs) {
		t.Errorf("kafka-configs.sh file: %v", objs)
	}
	objs = configObjects(t, "compact", "--kafka-defaults", "--dry-run", "--now", "2024-03-01T00:00:00Z", "--topic-config", configs, "--unlisted-topics", "defaults", dir)
	if objs["legacy-0"]["eligible"] != true || objs["orders-0"]["reason"] != "cleanup.policy=delete" {
		t.Errorf("kafka-configs.sh file, unlisted topics with defaults: %v", objs)
	}
	if v, src, from := configOf(objs["legacy-0"], "delete.retention.ms"); v != "3600000" || src != "DYNAMIC_DEFAULT_BROKER_CONFIG" || from != "log.cleaner.delete.retention.ms" {
		t.Errorf("delete.retention.ms=%s (%s from %s)", v, src, from)
	}
	if v, src, _ := configOf(objs["legacy-0"], "cleanup.policy"); v != "compact" || src != "DYNAMIC_TOPIC_CONFIG" {
		t.Errorf("cleanup.policy=%s (%s)", v, src)
	}

	code, out, errOut := runArgs("compact", "--kafka-defaults", "--topic-config", bad, dir)
	if code != ExitUsage || out != "" || !strings.HasPrefix(errOut, "logtool: compact: --topic-config: "+bad+": line 2: ") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("bad file: exit %d, stderr %q", code, errOut)
	}
}

// TestConfigurationPrecedence: the command line, then the topic's own
// config, then the cluster-wide broker default (under the broker's names),
// then Kafka's default; a flag not given overrides nothing.
func TestConfigurationPrecedence(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "kafka-logs")
	_, err := gen.Generate(gen.Options{Out: dir, Topics: []string{"profiles", "events"}, Magic: 2, Records: 600, Keys: 30, SegmentBytes: 16 << 10,
		KRaft: true, Seed: 4,
		TopicConfigs: map[string]map[string]string{
			"profiles": {"cleanup.policy": "compact", "min.cleanable.dirty.ratio": "0.9", "max.compaction.lag.ms": "86400000"},
			"events":   {"retention.ms": "3600000"},
		},
		BrokerConfigs: map[string]string{"log.cleaner.min.cleanable.ratio": "0.1", "log.cleaner.delete.retention.ms": "60000", "log.retention.hours": "2"},
	})
	if err != nil {
		t.Fatal(err)
	}
	type want struct{ value, source, from string }
	check := func(obj map[string]any, name string, w want) {
		t.Helper()
		if v, src, from := configOf(obj, name); v != w.value || src != w.source || from != w.from {
			t.Errorf("%s=%s (%s from %q); want %+v", name, v, src, from, w)
		}
	}
	now := []string{"--now", "2024-03-01T00:00:00Z"}
	objs := configObjects(t, append(append([]string{"compact", "--kafka-defaults", "--dry-run"}, now...), dir)...)
	p := objs["profiles-0"]
	check(p, "cleanup.policy", want{"compact", "DYNAMIC_TOPIC_CONFIG", ""})
	check(p, "min.cleanable.dirty.ratio", want{"0.9", "DYNAMIC_TOPIC_CONFIG", ""})
	check(p, "delete.retention.ms", want{"60000", "DYNAMIC_DEFAULT_BROKER_CONFIG", "log.cleaner.delete.retention.ms"})
	check(p, "min.compaction.lag.ms", want{"0", "DEFAULT_CONFIG", ""})
	if p["eligible"] != true || !strings.HasPrefix(p["reason"].(string), "max lag exceeded by ") || objs["events-0"]["eligible"] != false {
		t.Errorf("profiles-0 %v, events-0 %v", p, objs["events-0"])
	}

	objs = configObjects(t, append(append([]string{"compact", "--kafka-defaults", "--dry-run", "--kafka-defaults", "--max-lag", "unlimited", "--min-cleanable-ratio", "1", "--delete-retention", "0"}, now...), dir)...)
	p = objs["profiles-0"]
	check(p, "max.compaction.lag.ms", want{"9223372036854775807", "COMMAND_LINE", ""})
	check(p, "min.cleanable.dirty.ratio", want{"1", "COMMAND_LINE", ""})
	check(p, "delete.retention.ms", want{"0", "COMMAND_LINE", ""})
	check(p, "cleanup.policy", want{"compact", "DYNAMIC_TOPIC_CONFIG", ""})
	if p["eligible"] != false {
		t.Errorf("with the flags: %v", p)
	}

	objs = configObjects(t, append(append([]string{"retention", "--kafka-defaults", "--dry-run"}, now...), dir)...)
	check(objs["events-0"], "retention.ms", want{"3600000", "DYNAMIC_TOPIC_CONFIG", ""})
	check(objs["profiles-0"], "retention.ms", want{"7200000", "DYNAMIC_DEFAULT_BROKER_CONFIG", "log.retention.hours"})
	check(objs["profiles-0"], "retention.bytes", want{"-1", "DEFAULT_CONFIG", ""})
	if objs["events-0"]["segmentsDeleted"].(float64) == 0 || objs["profiles-0"]["segmentsDeleted"].(float64) != 0 ||
		objs["profiles-0"]["reason"] != "cleanup.policy=compact: only the log start offset rule applies" {
		t.Errorf("events-0 %v, profiles-0 %v", objs["events-0"], objs["profiles-0"])
	}
	objs = configObjects(t, append(append([]string{"retention", "--kafka-defaults", "--dry-run", "--retention-ms", "-1", "--cleanup-policy", "delete"}, now...), dir)...)
	check(objs["events-0"], "retention.ms", want{"-1", "COMMAND_LINE", ""})
	check(objs["profiles-0"], "cleanup.policy", want{"delete", "COMMAND_LINE", ""})
	if objs["events-0"]["segmentsDeleted"].(float64) != 0 {
		t.Errorf("--retention-ms -1: %v", objs["events-0"])
	}

	// A flag that makes a topic's configuration one Kafka refuses is a
	// usage error naming both values and their sources.
	code, _, errOut := runArgs(append(append([]string{"compact", "--kafka-defaults", "--dry-run", "--min-lag", "2d"}, now...), dir)...)
	if code != ExitUsage || errOut != "logtool: compact: topic profiles: conflict topic config setting min.compaction.lag.ms (172800000, COMMAND_LINE) > "+
		"max.compaction.lag.ms (86400000, DYNAMIC_TOPIC_CONFIG)\n" {
		t.Errorf("--min-lag above the topic's max lag: exit %d, %q", code, errOut)
	}
}

// TestStreamsSampleAsABroker runs compact and retention on a copy of a
// Kafka 4.1 broker's log dir, with partition directories added for the
// topics its metadata configures (the copy has their metadata, not their
// logs): __consumer_offsets (compact, segment.bytes 100 MiB) and a Kafka
// Streams changelog (compact,delete, retention.ms 86430000).
func TestStreamsSampleAsABroker(t *testing.T) {
	src := kafkasamples.Dir("logdirs", "yashasvi960_kafka-4.1-kraft-streams-config")
	if _, err := os.Stat(src); err != nil {
		kafkasamples.Skip(t, err)
	}
	dir := filepath.Join(t.TempDir(), "kafka-logs")
	testutil.CopyTree(t, src, dir)
	im, err := clustermeta.Load(filepath.Join(dir, clustermeta.PartitionDir))
	if err != nil {
		t.Fatal(err)
	}
	const changelog = "telemetry-streams-KSTREAM-AGGREGATE-STATE-STORE-0000000001-changelog"
	for _, topic := range []string{"__consumer_offsets", changelog} {
		part := filepath.Join(dir, layout.PartitionDirName(topic, 0))
		testutil.CopyTree(t, filepath.Join(dir, "vehicle.avg.speed-0"), part)
		b := checkpoint.AppendPartitionMetadata(nil, checkpoint.PartitionMetadata{TopicID: im.Topic(topic).ID})
		if err := os.WriteFile(filepath.Join(part, layout.PartitionMetadataFile), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if code, out, _ := runArgs("verify", dir); code != ExitOK {
		t.Fatalf("the copy does not verify:\n%s", out)
	}
	// The records are from 2026-02-25 up to 03:26:07; a day and an hour
	// later the changelog's 24h0m30s have passed, a week has not.
	now := []string{"--now", "2026-02-26T04:30:00Z"}
	objs := configObjects(t, append(append([]string{"compact", "--kafka-defaults", "--dry-run"}, now...), dir)...)
	if len(objs) != 4 || objs["telemetry-0"]["reason"] != "cleanup.policy=delete" || objs["vehicle.avg.speed-0"]["reason"] != "cleanup.policy=delete" {
		t.Errorf("delete-policy topics: %v", objs)
	}
	offsets, cl := objs["__consumer_offsets-0"], objs[changelog+"-0"]
	if v, src, _ := configOf(offsets, "segment.bytes"); v != "104857600" || src != "DYNAMIC_TOPIC_CONFIG" || offsets["segmentsBefore"].(float64) == 0 {
		t.Errorf("__consumer_offsets-0: segment.bytes=%s (%s): %v", v, src, offsets)
	}
	if v, src, _ := configOf(cl, "cleanup.policy"); v != "compact,delete" || src != "DYNAMIC_TOPIC_CONFIG" || cl["segmentsBefore"].(float64) == 0 {
		t.Errorf("changelog: cleanup.policy=%s (%s): %v", v, src, cl)
	}

	// The broker's server.properties is not in the sample: the retention
	// of the topics that set none is unknown until the run states it.
	const gap = "telemetry-0: skipped: cleanup.policy, retention.ms, retention.bytes not set by topic or dynamic config"
	if code, out, errOut := runArgs(append(append([]string{"retention", "--dry-run"}, now...), dir)...); code != ExitUsage || !strings.Contains(out, gap) {
		t.Errorf("retention without server.properties: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	objs = configObjects(t, append(append([]string{"retention", "--kafka-defaults"}, now...), dir)...)
	if cl := objs[changelog+"-0"]; cl["segmentsDeleted"].(float64) != 1 || cl["rolledSegment"] == nil {
		t.Errorf("changelog past its retention.ms: %v", cl)
	}
	if v, src, _ := configOf(objs[changelog+"-0"], "retention.ms"); v != "86430000" || src != "DYNAMIC_TOPIC_CONFIG" {
		t.Errorf("changelog retention.ms=%s (%s)", v, src)
	}
	for _, p := range []string{"telemetry-0", "vehicle.avg.speed-0", "__consumer_offsets-0"} {
		if objs[p]["segmentsDeleted"].(float64) != 0 {
			t.Errorf("%s: %v", p, objs[p])
		}
	}
	if objs["__consumer_offsets-0"]["reason"] != "cleanup.policy=compact: only the log start offset rule applies" {
		t.Errorf("__consumer_offsets-0: %v", objs["__consumer_offsets-0"])
	}
	if code, out, _ := runArgs("verify", dir); code != ExitOK {
		t.Errorf("after retention:\n%s", out)
	}
}
