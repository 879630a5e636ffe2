package commands

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/internal/testkit/testutil"
)

// The sample's topics have their own configurations (scripts/make-sample.sh):
// these tables are what an operator reads before and after a run.
func TestCompactGolden(t *testing.T) {
	cases := []goldenCase{
		{name: "log-dir-dry-run", args: []string{"compact", "--dry-run", "--now", "2024-03-01T00:00:00Z", sample}},
		{name: "flags-override", args: []string{"compact", "--dry-run", "--now", "2024-03-01T00:00:00Z", "--max-lag", "7d",
			"--min-cleanable-ratio", "0.9", "--topic", "user-profiles|legacy.*|orders", sample}},
		{name: "delete-policy-named", args: []string{"compact", "--dry-run", "--now", "2024-03-01T00:00:00Z", sample + "/orders-0", sample + "/clicks-v1-0"}},
		{name: "run", setup: copySample, args: []string{"compact", "--now", "2024-03-01T00:00:00Z", "$DIR/kafka-logs"}},
		{name: "json", args: []string{"--format", "json", "compact", "--dry-run", "--now", "2024-03-01T00:00:00Z", sample + "/user-profiles-0", sample + "/orders-1"}},
		{name: "no-configuration", setup: plainSample, args: []string{"compact", "$DIR/kafka-logs"}},
		{name: "no-configuration-named", setup: plainSample, args: []string{"compact", "--dry-run", "--now", "2024-03-01T00:00:00Z", "$DIR/kafka-logs/legacy-0"}},
		{name: "topic-config-file", setup: topicConfigFile, args: []string{"compact", "--dry-run", "--now", "2024-03-01T00:00:00Z",
			"--topic-config", "$DIR/topics.txt", "$DIR/kafka-logs"}},
	}
	runGolden(t, "compact", cases)
	checkWidth(t, "compact", cases)
}

func TestRetentionGolden(t *testing.T) {
	cases := []goldenCase{
		{name: "log-dir-dry-run", setup: copySampleDated, args: []string{"retention", "--dry-run", "--now", "2024-01-02T00:00:00Z", "$DIR/kafka-logs"}},
		{name: "flags-override", args: []string{"retention", "--dry-run", "--now", "2024-01-02T00:00:00Z", "--retention-ms", "1h",
			"--retention-bytes", "64KiB", "--topic", "orders|user-profiles", sample}},
		{name: "run", setup: copySampleDated, args: []string{"retention", "--now", "2024-01-05T00:00:00Z", "$DIR/kafka-logs"}},
		{name: "json", args: []string{"--format", "json", "retention", "--dry-run", "--now", "2024-01-02T00:00:00Z", sample + "/payments.txn-0", sample + "/user-profiles-0"}},
		{name: "no-configuration", setup: plainSample, args: []string{"retention", "--dry-run", "$DIR/kafka-logs"}},
		{name: "topic-config-file", setup: topicConfigFile, args: []string{"retention", "--dry-run", "--now", "2024-01-02T00:00:00Z",
			"--topic-config", "$DIR/topics.txt", "$DIR/kafka-logs"}},
	}
	runGolden(t, "retention", cases)
	checkWidth(t, "retention", cases)
}

// checkWidth requires the text reports of the cases to keep within 120
// columns, as an operator's terminal shows them without wrapping.
func checkWidth(t *testing.T, sub string, cases []goldenCase) {
	t.Helper()
	for _, c := range cases {
		if slices.Contains(c.args, "json") {
			continue
		}
		b, err := os.ReadFile(filepath.Join("testdata", "golden", sub, c.name+".golden"))
		if err != nil {
			t.Fatal(err)
		}
		_, stdout, _ := strings.Cut(string(b), "--- stdout\n")
		stdout, _, _ = strings.Cut(stdout, "--- stderr\n")
		for _, line := range strings.Split(stdout, "\n") {
			if n := utf8.RuneCountInString(line); n > 120 {
				t.Errorf("%s/%s: a line of %d columns: %q", sub, c.name, n, line)
			}
		}
	}
}

func copySample(t *testing.T, dir string) {
	testutil.CopyTree(t, sample, filepath.Join(dir, "kafka-logs"))
}

// copySampleDated is copySample with fixed modification times on the
// segments of the magic 0 topics, whose largest timestamp is the file's
// mtime: a checkout gives its files the time of the checkout.
func copySampleDated(t *testing.T, dir string) {
	copySample(t, dir)
	for part, at := range map[string]string{
		"legacy.events-v0-0":        "2024-01-01T00:04:02.456Z",
		"legacy.events-v0-snappy-0": "2024-01-01T00:06:38.355Z",
	} {
		tm, err := time.Parse(time.RFC3339Nano, at)
		if err != nil {
			t.Fatal(err)
		}
		logs, err := filepath.Glob(filepath.Join(dir, "kafka-logs", part, "*.log"))
		if err != nil || len(logs) == 0 {
			t.Fatalf("%s: no segments (%v)", part, err)
		}
		for _, l := range logs {
			if err := os.Chtimes(l, tm, tm); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// plainSample is a log dir without cluster metadata.
func plainSample(t *testing.T, dir string) {
	for _, o := range []gen.Options{
		{Topics: []string{"orders"}, Magic: 2, Records: 600, Keys: 30, SegmentBytes: 16 << 10, Seed: 1},
		{Topics: []string{"legacy"}, Magic: 0, Records: 300, Keys: 30, SegmentBytes: 8 << 10, Seed: 2},
	} {
		o.Out = filepath.Join(dir, "kafka-logs")
		if _, err := gen.Generate(o); err != nil {
			t.Fatal(err)
		}
	}
}

// topicConfigFile is plainSample with the output of kafka-topics.sh
// --describe for its topics.
func topicConfigFile(t *testing.T, dir string) {
	plainSample(t, dir)
	text := "Topic: orders\tTopicId: 8gBP5j5oTBaUOYFzVi-kXA\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: retention.ms=3600000\n" +
		"\tTopic: orders\tPartition: 0\tLeader: 1\tReplicas: 1\tIsr: 1\n" +
		"Topic: legacy\tTopicId: 9gBP5j5oTBaUOYFzVi-kXA\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: cleanup.policy=compact,delete,segment.bytes=1048576\n"
	if err := os.WriteFile(filepath.Join(dir, "topics.txt"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
