package commands

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logtool/logtool/internal/gen"
)

// treeBytes is every file of dir, path → content.
func treeBytes(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		m[p] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestUnlistedTopicLeftAlone: with a --topic-config file that does not
// name a topic on disk, compact and retention (dry run and real run)
// change no byte of its partitions and say so naming it, and grep's audit
// says its configuration is unknown, not that no deadline applies.
func TestUnlistedTopicLeftAlone(t *testing.T) {
	for _, args := range [][]string{
		{"retention", "--kafka-defaults", "--dry-run", "--now", "2030-01-01T00:00:00Z"},
		{"retention", "--kafka-defaults", "--now", "2030-01-01T00:00:00Z"},
		{"compact", "--kafka-defaults", "--dry-run", "--now", "2030-01-01T00:00:00Z", "--min-lag", "0"},
		{"compact", "--kafka-defaults", "--now", "2030-01-01T00:00:00Z", "--min-lag", "0"},
	} {
		dir := plainLogDir(t)
		file := filepath.Join(t.TempDir(), "topics.txt")
		text := "Topic: orders\tTopicId: 8gBP5j5oTBaUOYFzVi-kXA\tPartitionCount: 2\tReplicationFactor: 1\tConfigs: cleanup.policy=compact,delete,retention.ms=1000\n"
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		legacy := filepath.Join(dir, "legacy-0")
		before := treeBytes(t, legacy)
		code, out, errOut := runArgs(append(args, "--topic-config", file, dir)...)
		if code != ExitOK || !strings.Contains(out+errOut, "topic legacy is not in --topic-config "+file) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
		after := treeBytes(t, legacy)
		if len(after) != len(before) {
			t.Errorf("%v: legacy-0 had %d files, now %d", args, len(before), len(after))
		}
		for p, b := range before {
			if after[p] != b {
				t.Errorf("%v: %s changed", args, p)
			}
		}
	}

	dir := plainLogDir(t)
	file := filepath.Join(t.TempDir(), "topics.txt")
	if err := os.WriteFile(file, []byte("Topic: orders\tConfigs: cleanup.policy=compact\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, out, errOut := runArgs("grep", "--kafka-defaults", "--max-lag", "topic", "--topic-config", file, "--key", "k1", dir)
	if !strings.Contains(out+errOut, "topic legacy is not in --topic-config "+file+": its configuration is unknown") {
		t.Errorf("grep audit: stdout %q, stderr %q", out, errOut)
	}
}

// TestUnnamedDirLeftAlone: a partition directory named on the command line
// whose name gives no topic (a copy, "legacy-0.bak") has an unknown
// configuration when a source is given: left alone, not given Kafka's
// defaults, unless --unlisted-topics defaults says so.
func TestUnnamedDirLeftAlone(t *testing.T) {
	for _, args := range [][]string{
		{"retention", "--kafka-defaults", "--now", "2030-01-01T00:00:00Z"},
		{"compact", "--kafka-defaults", "--now", "2030-01-01T00:00:00Z", "--min-lag", "0", "--cleanup-policy", "compact"},
	} {
		dir := plainLogDir(t)
		bak := filepath.Join(dir, "legacy-0.bak")
		if err := os.Rename(filepath.Join(dir, "legacy-0"), bak); err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(t.TempDir(), "topics.txt")
		if err := os.WriteFile(file, []byte("Topic: orders\tConfigs: retention.ms=1000\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		before := treeBytes(t, bak)
		code, out, errOut := runArgs(append(args, "--topic-config", file, bak)...)
		if code != ExitOK || !strings.Contains(out+errOut, "not named <topic>-<partition>: its topic, and so its configuration, is unknown") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
		after := treeBytes(t, bak)
		if len(after) != len(before) {
			t.Errorf("%v: legacy-0.bak had %d files, now %d", args, len(before), len(after))
		}
		for p, b := range before {
			if after[p] != b {
				t.Errorf("%v: %s changed", args, p)
			}
		}
	}
}

// TestStrayTopicLeftAlone: a topic on disk that the KRaft metadata of its
// log dir does not know (deleted, or never created there: a broker sets
// its log aside as stray) has an unknown configuration in every command
// that reads configuration. compact and retention (dry run and real run)
// change no byte of it and say so naming it, even with a flag that would
// make Kafka's defaults act on it, and grep's audit says its configuration
// is unknown. upgrade, salvage, reindex and migrate-checkpoints read no
// topic configuration.
func TestStrayTopicLeftAlone(t *testing.T) {
	const now = "2030-01-01T00:00:00Z"
	const note = "topic ghost is not in the cluster metadata: a broker sets its log aside as stray; its configuration is unknown"
	kraft := func(t *testing.T) (dir, ghost string) {
		dir = t.TempDir()
		if _, err := gen.Generate(gen.Options{Out: dir, KRaft: true, Topics: []string{"orders"}, Magic: 2, Records: 300, Keys: 30,
			SegmentBytes: 8 << 10, Seed: 1, TopicConfigs: map[string]map[string]string{"orders": {"cleanup.policy": "compact,delete"}}}); err != nil {
			t.Fatal(err)
		}
		// The stray partition: written by another (ZooKeeper-era) node, its
		// topic unknown to this node's metadata.
		other := filepath.Join(t.TempDir(), "other")
		if _, err := gen.Generate(gen.Options{Out: other, Topics: []string{"ghost"}, Magic: 2, Records: 300, Keys: 30, SegmentBytes: 8 << 10, Seed: 2}); err != nil {
			t.Fatal(err)
		}
		ghost = filepath.Join(dir, "ghost-0")
		if err := os.Rename(filepath.Join(other, "ghost-0"), ghost); err != nil {
			t.Fatal(err)
		}
		return dir, ghost
	}
	for _, args := range [][]string{
		{"retention", "--kafka-defaults", "--dry-run", "--now", now},
		{"retention", "--kafka-defaults", "--now", now},
		{"retention", "--kafka-defaults", "--now", now, "--retention-ms", "1000"},
		{"compact", "--kafka-defaults", "--dry-run", "--now", now, "--min-lag", "0", "--cleanup-policy", "compact"},
		{"compact", "--kafka-defaults", "--now", now, "--min-lag", "0", "--cleanup-policy", "compact"},
	} {
		dir, ghost := kraft(t)
		before := treeBytes(t, ghost)
		code, out, errOut := runArgs(append(args, dir)...)
		if code != ExitOK || !strings.Contains(out+errOut, note) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
		after := treeBytes(t, ghost)
		if len(after) != len(before) {
			t.Errorf("%v: ghost-0 had %d files, now %d", args, len(before), len(after))
		}
		for p, b := range before {
			if after[p] != b {
				t.Errorf("%v: %s changed", args, p)
			}
		}
	}

	dir, _ := kraft(t)
	_, out, errOut := runArgs("grep", "--kafka-defaults", "--max-lag", "topic", "--now", now, "--key", "key-000001", dir)
	if !strings.Contains(out+errOut, note) {
		t.Errorf("grep audit: stdout %q, stderr %q", out, errOut)
	}
}
