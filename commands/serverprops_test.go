package commands

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logtool/logtool/internal/gen"
)

// kraftDir is a KRaft node's log dir whose metadata gives topic orders the
// configs topic, and no dynamic broker config; its records are from 2024.
func kraftDir(t *testing.T, topic map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	o := gen.Options{Out: dir, KRaft: true, Topics: []string{"orders"}, Magic: 2, Records: 600, Keys: 30,
		SegmentBytes: 8 << 10, TombstoneRatio: 0.3, Seed: 1}
	if topic != nil {
		o.TopicConfigs = map[string]map[string]string{"orders": topic}
	}
	if _, err := gen.Generate(o); err != nil {
		t.Fatal(err)
	}
	return dir
}

// serverProperties writes a server.properties holding text.
func serverProperties(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "server.properties")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// sameTree fails when a file of a tree changed, came or went.
func sameTree(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	if len(after) != len(before) {
		t.Errorf("%s: %d files, now %d", what, len(before), len(after))
	}
	for p, b := range before {
		if after[p] != b {
			t.Errorf("%s: %s changed", what, p)
		}
	}
}

// TestRetentionStaticBrokerGap: KRaft metadata does not hold a broker's
// server.properties, so a topic whose retention no topic or dynamic broker
// config sets is skipped and named, dry run and real run (exit 2, no byte
// changed), not cut by Kafka's 7-day default; --server-properties or
// --kafka-defaults supply the values.
func TestRetentionStaticBrokerGap(t *testing.T) {
	const now = "2030-01-01T00:00:00Z"
	const note = "orders-0: skipped: cleanup.policy, retention.ms, retention.bytes not set by topic or dynamic config, and no --server-properties"
	for _, dry := range []bool{true, false} {
		dir := kraftDir(t, nil)
		args := []string{"retention", "--now", now}
		if dry {
			args = append(args, "--dry-run")
		}
		before := treeBytes(t, filepath.Join(dir, "orders-0"))
		code, out, errOut := runArgs(append(args, dir)...)
		if code != ExitUsage || !strings.Contains(out, note) || !strings.Contains(errOut, "--server-properties") {
			t.Errorf("dry run %v: exit %d, stdout %q, stderr %q", dry, code, out, errOut)
		}
		sameTree(t, strings.Join(args, " "), before, treeBytes(t, filepath.Join(dir, "orders-0")))
	}

	// log.retention.hours=-1 keeps everything, and the report says where
	// the value came from.
	dir := kraftDir(t, nil)
	before := treeBytes(t, filepath.Join(dir, "orders-0"))
	code, out, errOut := runArgs("retention", "--now", now, "--server-properties", serverProperties(t, "log.retention.hours=-1\n"), dir)
	if code != ExitOK || !strings.Contains(out, "STATIC_BROKER_CONFIG:log.retention.hours") || !strings.Contains(out, "-1 (unlimited)") {
		t.Errorf("log.retention.hours=-1: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	sameTree(t, "log.retention.hours=-1", before, treeBytes(t, filepath.Join(dir, "orders-0")))

	for _, args := range [][]string{
		{"--server-properties", serverProperties(t, "log.retention.ms=1000\nlog.retention.hours=-1\n")},
		{"--kafka-defaults"},
	} {
		dir := kraftDir(t, nil)
		objs := configObjects(t, append(append([]string{"retention", "--now", now}, args...), dir)...)
		if o := objs["orders-0"]; o == nil || o["segmentsDeleted"].(float64) == 0 {
			t.Errorf("%v: nothing deleted: %v", args, o)
		}
	}
}

// TestCompactStaticBrokerGap: a compacted topic whose delete.retention.ms
// (and lags, ratio) no topic or dynamic broker config sets keeps its
// tombstones: skipped and named, exit 2; with --server-properties or
// --kafka-defaults it is compacted and the tombstones go.
func TestCompactStaticBrokerGap(t *testing.T) {
	const now = "2030-01-01T00:00:00Z"
	topic := map[string]string{"cleanup.policy": "compact", "min.cleanable.dirty.ratio": "0.01"}
	const note = "max.compaction.lag.ms, min.compaction.lag.ms, delete.retention.ms not set by topic or dynamic config, and no --server-properties"
	for _, dry := range []bool{true, false} {
		dir := kraftDir(t, topic)
		args := []string{"compact", "--now", now}
		if dry {
			args = append(args, "--dry-run")
		}
		before := treeBytes(t, filepath.Join(dir, "orders-0"))
		code, out, errOut := runArgs(append(args, dir)...)
		if code != ExitUsage || !strings.Contains(out+errOut, note) {
			t.Errorf("dry run %v: exit %d, stdout %q, stderr %q", dry, code, out, errOut)
		}
		sameTree(t, strings.Join(args, " "), before, treeBytes(t, filepath.Join(dir, "orders-0")))
	}
	for _, args := range [][]string{
		{"--server-properties", serverProperties(t, "log.cleaner.delete.retention.ms=1000\n")},
		{"--kafka-defaults"},
	} {
		dir := kraftDir(t, topic)
		objs := configObjects(t, append(append([]string{"compact", "--now", now}, args...), dir)...)
		if o := objs["orders-0"]; o == nil || o["tombstonesRemoved"].(float64) == 0 {
			t.Errorf("%v: no tombstone removed: %v", args, o)
		}
	}
}

// TestGrepAuditStaticBrokerGap: grep's audit does not claim a deadline, or
// its absence, from a default the broker's server.properties may replace.
func TestGrepAuditStaticBrokerGap(t *testing.T) {
	const now = "2030-01-01T00:00:00Z"
	dir := kraftDir(t, map[string]string{"cleanup.policy": "compact"})
	code, out, errOut := runArgs("grep", "--max-lag", "topic", "--now", now, dir)
	if code != ExitUsage || !strings.Contains(out+errOut, "max.compaction.lag.ms, min.compaction.lag.ms, min.cleanable.dirty.ratio, delete.retention.ms not set by topic or dynamic config") {
		t.Errorf("no server.properties: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// The broker's own max lag: versions past it are findings.
	props := serverProperties(t, "log.cleaner.max.compaction.lag.ms=60000\n")
	code, out, errOut = runArgs("grep", "--max-lag", "topic", "--now", now, "--server-properties", props, dir)
	if code != ExitProblems {
		t.Errorf("--server-properties: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, errOut = runArgs("grep", "--max-lag", "topic", "--now", now, "--kafka-defaults", dir)
	if code != ExitOK || !strings.Contains(out+errOut, "max.compaction.lag.ms is unlimited") {
		t.Errorf("--kafka-defaults: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestServerPropertiesFlagErrors: a server.properties that cannot be read,
// or one given with --kafka-defaults, is a usage error before anything is
// read or written.
func TestServerPropertiesFlagErrors(t *testing.T) {
	dir := kraftDir(t, nil)
	props := serverProperties(t, "log.retention.hours=-1\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"retention", "--server-properties", filepath.Join(dir, "missing.properties")}, "--server-properties: "},
		{[]string{"retention", "--server-properties", serverProperties(t, "log.retention.ms=\\u12\n")}, "--server-properties: "},
		{[]string{"compact", "--server-properties", props, "--kafka-defaults"}, "--server-properties and --kafka-defaults"},
		{[]string{"grep", "--key", "k", "--kafka-defaults"}, "--kafka-defaults is for the audit"},
	} {
		before := treeBytes(t, filepath.Join(dir, "orders-0"))
		code, out, errOut := runArgs(append(c.args, dir)...)
		if code != ExitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", c.args, code, out, errOut)
		}
		sameTree(t, strings.Join(c.args, " "), before, treeBytes(t, filepath.Join(dir, "orders-0")))
	}
}

// TestServerPropertiesUnknownKeys: a --server-properties key a broker
// ignores though it looks meant for the log (a typo, the first key behind
// a UTF-8 byte order mark) is a warning on stderr naming the file and
// line, once per key, in every command that reads the file; a clean file
// gives none.
func TestServerPropertiesUnknownKeys(t *testing.T) {
	const now = "2030-01-01T00:00:00Z"
	dir := kraftDir(t, map[string]string{"cleanup.policy": "compact"})
	bad := serverProperties(t, "\ufefflog.retention.hours=-1\nlisteners=PLAINTEXT://:9092\nlog.retention.hour=2\n")
	want := []string{
		"logtool: warning: " + bad + " line 1: a UTF-8 byte order mark starts the file, and a broker reads it as part of the first key: " +
			"log.retention.hours is not recognised; ignored, as a broker ignores it\n",
		"logtool: warning: " + bad + " line 3: log.retention.hour is not a broker config logtool knows; ignored, as a broker ignores it\n",
	}
	for _, args := range [][]string{
		{"retention", "--dry-run", "--now", now},
		{"compact", "--dry-run", "--now", now},
		{"grep", "--max-lag", "topic", "--now", now, "--key", "key-000001"},
	} {
		_, out, errOut := runArgs(append(args, "--server-properties", bad, dir)...)
		for _, w := range want {
			if strings.Count(errOut, w) != 1 {
				t.Errorf("%v: want once %q; stdout %q, stderr %q", args, w, out, errOut)
			}
		}
		clean := serverProperties(t, "# a broker\nlisteners=PLAINTEXT://:9092\nnum.network.threads=3\nlog.retention.hours=168\n")
		if _, out, errOut := runArgs(append(args, "--server-properties", clean, dir)...); strings.Contains(errOut, "warning") {
			t.Errorf("%v, a clean file: stdout %q, stderr %q", args, out, errOut)
		}
	}
}
