package commands

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
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

// actedOn fails t unless a run of args worked on the partition dir: a
// dry run left its bytes as before and planned a change to it (its row
// neither skipped nor ineligible), a real run changed them.
func actedOn(t *testing.T, args []string, out, dir string, before map[string]string) {
	t.Helper()
	if slices.Contains(args, "--dry-run") {
		sameTree(t, strings.Join(args, " "), before, treeBytes(t, dir))
		row := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(filepath.Base(dir)) + ` +(\S+)`).FindStringSubmatch(out)
		if row == nil || row[1] == "skipped" || row[1] == "no" || row[1] == "0" {
			t.Errorf("%v: no change planned for %s: %q", args, dir, out)
		}
		return
	}
	if reflect.DeepEqual(treeBytes(t, dir), before) {
		t.Errorf("%v: %s unchanged", args, dir)
	}
}

// TestUnlistedTopicLeftAlone: with a --topic-config file that does not
// name a topic on disk, compact and retention (dry run and real run)
// change no byte of its partitions and say so naming it, act on the
// topics the file names, and exit 2, as the run did not do all it was
// asked; grep's audit says its configuration is unknown, not that no
// deadline applies, and exits 2 too. With --topic choosing the listed
// topics alone, nothing is skipped.
func TestUnlistedTopicLeftAlone(t *testing.T) {
	const skipped = "1 partition(s) skipped: their topics are not in --topic-config "
	topicsFile := func(t *testing.T, text string) string {
		file := filepath.Join(t.TempDir(), "topics.txt")
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return file
	}
	for _, args := range [][]string{
		{"retention", "--kafka-defaults", "--dry-run", "--now", "2030-01-01T00:00:00Z"},
		{"retention", "--kafka-defaults", "--now", "2030-01-01T00:00:00Z"},
		{"compact", "--kafka-defaults", "--dry-run", "--now", "2030-01-01T00:00:00Z", "--min-lag", "0"},
		{"compact", "--kafka-defaults", "--now", "2030-01-01T00:00:00Z", "--min-lag", "0"},
	} {
		dir := plainLogDir(t)
		file := topicsFile(t, "Topic: orders\tTopicId: 8gBP5j5oTBaUOYFzVi-kXA\tPartitionCount: 2\tReplicationFactor: 1\tConfigs: cleanup.policy=compact,delete,retention.ms=1000\n")
		legacy, orders := filepath.Join(dir, "legacy-0"), filepath.Join(dir, "orders-0")
		before, ordersBefore := treeBytes(t, legacy), treeBytes(t, orders)
		code, out, errOut := runArgs(append(args, "--topic-config", file, dir)...)
		if code != ExitUsage || !strings.Contains(out+errOut, "topic legacy is not in --topic-config "+file) || !strings.Contains(errOut, skipped+file+";") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
		sameTree(t, strings.Join(args, " "), before, treeBytes(t, legacy))
		actedOn(t, args, out, orders, ordersBefore)
	}

	dir := plainLogDir(t)
	file := topicsFile(t, "Topic: orders\tConfigs: cleanup.policy=compact\n")
	code, out, errOut := runArgs("grep", "--kafka-defaults", "--max-lag", "topic", "--topic-config", file, "--key", "k1", dir)
	if code != ExitUsage || !strings.Contains(out+errOut, "topic legacy is not in --topic-config "+file+": its configuration is unknown") ||
		!strings.Contains(errOut, skipped+file+";") || !strings.Contains(out, "orders-0") {
		t.Errorf("grep audit: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	// --topic leaves the unlisted topic out of the run: nothing skipped.
	for _, args := range [][]string{
		{"retention", "--kafka-defaults", "--dry-run", "--now", "2030-01-01T00:00:00Z"},
		{"compact", "--kafka-defaults", "--dry-run", "--now", "2030-01-01T00:00:00Z"},
		{"grep", "--kafka-defaults", "--max-lag", "topic", "--key", "k1"},
	} {
		code, out, errOut := runArgs(append(args, "--topic", "orders", "--topic-config", file, dir)...)
		if code != ExitOK {
			t.Errorf("%v --topic orders: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}

	// A topic the file does not name and one whose retention.ms only the
	// broker's server.properties could give: both causes said.
	file = topicsFile(t, "Topic: orders\tConfigs: cleanup.policy=delete\n")
	code, out, errOut = runArgs("retention", "--dry-run", "--now", "2030-01-01T00:00:00Z", "--topic-config", file, dir)
	if code != ExitUsage || !strings.Contains(errOut, "2 partition(s) skipped: their topic configuration is not fully known") ||
		!strings.Contains(errOut, skipped+file+";") {
		t.Errorf("retention, unlisted and gaps: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestUnnamedDirLeftAlone: a partition directory named on the command line
// whose name gives no topic (a copy, "legacy-0.bak") has an unknown
// configuration when a source is given: left alone, not given Kafka's
// defaults, unless --unlisted-topics defaults says so, and the run exits 2.
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
		if code != ExitUsage || !strings.Contains(out+errOut, "not named <topic>-<partition>: its topic, and so its configuration, is unknown") ||
			!strings.Contains(errOut, "1 partition(s) skipped: their directories are not named <topic>-<partition>") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
		sameTree(t, strings.Join(args, " "), before, treeBytes(t, bak))
	}
}

// TestStrayTopicLeftAlone: a topic on disk that the KRaft metadata of its
// log dir does not know (deleted, or never created there: a broker sets
// its log aside as stray) has an unknown configuration in every command
// that reads configuration. compact and retention (dry run and real run)
// change no byte of it and say so naming it, even with a flag that would
// make Kafka's defaults act on it, act on the known topic, and exit 2;
// grep's audit says its configuration is unknown, and exits 2. --topic
// choosing the known topic skips nothing. upgrade, salvage, reindex and migrate-checkpoints read no
// topic configuration.
func TestStrayTopicLeftAlone(t *testing.T) {
	const now = "2030-01-01T00:00:00Z"
	const note = "topic ghost is not in the cluster metadata: a broker sets its log aside as stray; its configuration is unknown"
	const skipped = "1 partition(s) skipped: their topics are not in the cluster metadata (stray)"
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
		orders := filepath.Join(dir, "orders-0")
		before, ordersBefore := treeBytes(t, ghost), treeBytes(t, orders)
		code, out, errOut := runArgs(append(args, dir)...)
		if code != ExitUsage || !strings.Contains(out+errOut, note) || !strings.Contains(errOut, skipped) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
		sameTree(t, strings.Join(args, " "), before, treeBytes(t, ghost))
		actedOn(t, args, out, orders, ordersBefore)
	}

	dir, _ := kraft(t)
	code, out, errOut := runArgs("grep", "--kafka-defaults", "--max-lag", "topic", "--now", now, "--key", "key-000001", dir)
	if code != ExitUsage || !strings.Contains(out+errOut, note) || !strings.Contains(errOut, skipped) || !strings.Contains(out, "orders-0") {
		t.Errorf("grep audit: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	for _, args := range [][]string{
		{"retention", "--kafka-defaults", "--dry-run", "--now", now},
		{"compact", "--kafka-defaults", "--dry-run", "--now", now},
		{"grep", "--kafka-defaults", "--max-lag", "topic", "--now", now, "--key", "key-000001"},
	} {
		code, out, errOut := runArgs(append(args, "--topic", "orders", dir)...)
		if code != ExitOK {
			t.Errorf("%v --topic orders: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
}
