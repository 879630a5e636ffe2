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
	"github.com/logtool/logtool/internal/testkit/testutil"
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
	const skipped = "1 partition(s) skipped: a KRaft broker sets their logs aside as stray"
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

// TestStrayByTopicIDLeftAlone: a partition whose topic the KRaft metadata
// knows, but whose log a broker sets aside as stray all the same
// (LogManager.isStrayKraftReplica), keeps every byte through retention and
// compact, dry run and real run, and is not audited by grep: a
// partition.metadata topic ID other than the topic's (a deleted and
// recreated topic's old log), a partition number the topic does not have,
// a partition not assigned to the log dir's broker, a partition.metadata
// that cannot be parsed. Each is named, and the
// run exits 2; the healthy partitions are acted on. A broker id that is
// not known leaves the assignment unchecked.
func TestStrayByTopicIDLeftAlone(t *testing.T) {
	const skipped = " partition(s) skipped: a KRaft broker sets their logs aside as stray"
	// kraft is a copy of testdata/kafka-logs (a KRaft log dir) with node id
	// node, and the topic ID of topic's partition 0 changed, and partition
	// 7 of orders, which has 2.
	kraft := func(t *testing.T, node int32, topic string) (dir string, strays []string) {
		dir = filepath.Join(t.TempDir(), "kafka-logs")
		testutil.CopyTree(t, "../testdata/kafka-logs", dir)
		os.Remove(filepath.Join(dir, ".lock"))
		testutil.SetNode(t, dir, node)
		pm := filepath.Join(dir, topic+"-0", "partition.metadata")
		b, err := os.ReadFile(pm)
		if err != nil {
			t.Fatal(err)
		}
		b = regexp.MustCompile(`(?m)^topic_id: .*$`).ReplaceAll(b, []byte("topic_id: AAAAAAAAAAAAAAAAAAAAQQ"))
		if err := os.WriteFile(pm, b, 0o644); err != nil {
			t.Fatal(err)
		}
		testutil.CopyTree(t, filepath.Join(dir, "orders-1"), filepath.Join(dir, "orders-7"))
		return dir, []string{filepath.Join(dir, topic+"-0"), filepath.Join(dir, "orders-7")}
	}
	check := func(t *testing.T, args []string, node int32, topic, healthy string, notes ...string) {
		t.Helper()
		dir, strays := kraft(t, node, topic)
		before := map[string]map[string]string{}
		for _, p := range strays {
			before[p] = treeBytes(t, p)
		}
		healthyBefore := treeBytes(t, filepath.Join(dir, healthy))
		code, out, errOut := runArgs(append(args, dir)...)
		if code != ExitUsage || !strings.Contains(errOut, "2"+skipped) {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
		for _, n := range notes {
			if !strings.Contains(out+errOut, n) {
				t.Errorf("%v: no %q in stdout %q, stderr %q", args, n, out, errOut)
			}
		}
		for _, p := range strays {
			sameTree(t, strings.Join(args, " "), before[p], treeBytes(t, p))
		}
		if args[0] != "grep" {
			actedOn(t, args, out, filepath.Join(dir, healthy), healthyBefore)
		} else if !strings.Contains(out, healthy) {
			t.Errorf("%v: %s not searched: %q", args, healthy, out)
		}
	}
	const otherID = "its topic ID is not the cluster metadata's for its topic: a broker sets the log aside as stray"
	const noPartition = "orders-7: skipped: its topic has no such partition in the cluster metadata"
	for _, args := range [][]string{
		{"retention", "--kafka-defaults", "--retention-ms", "1000", "--dry-run"},
		{"retention", "--kafka-defaults", "--retention-ms", "1000"},
	} {
		check(t, args, 1, "orders", "orders-1", "orders-0: skipped: "+otherID, noPartition)
	}
	for _, args := range [][]string{
		{"compact", "--kafka-defaults", "--max-lag", "1ms", "--dry-run"},
		{"compact", "--kafka-defaults", "--max-lag", "1ms"},
	} {
		check(t, args, 1, "user-profiles", "legacy.events-v0-0", otherID, "its topic has no such partition in the cluster metadata")
	}
	check(t, []string{"grep", "--kafka-defaults", "--max-lag", "topic", "--key", "key-000001"}, 1, "user-profiles", "orders-1",
		otherID+", and applies no policy to it, so it is not audited: user-profiles-0", "its topic has no such partition in the cluster metadata")

	// Node 9 is assigned none of the partitions: every one is stray.
	dir, _ := kraft(t, 9, "orders")
	before := treeBytes(t, filepath.Join(dir, "orders-1"))
	code, out, errOut := runArgs("retention", "--kafka-defaults", "--retention-ms", "1000", dir)
	if code != ExitUsage || !strings.Contains(out, "orders-1: skipped: the cluster metadata does not assign it to this broker") {
		t.Errorf("node 9: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	sameTree(t, "retention on node 9", before, treeBytes(t, filepath.Join(dir, "orders-1")))

	// A partition.metadata a broker cannot parse: it does not load the log.
	dir, _ = kraft(t, 1, "orders")
	if err := os.WriteFile(filepath.Join(dir, "orders-1", "partition.metadata"), []byte("version: 0\ntopic_id: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before = treeBytes(t, filepath.Join(dir, "orders-1"))
	code, out, errOut = runArgs("retention", "--kafka-defaults", "--retention-ms", "1000", dir)
	if code != ExitUsage || !strings.Contains(out, "orders-1: skipped: its topic ID cannot be read") || !strings.Contains(errOut, "3"+skipped) {
		t.Errorf("unparsable partition.metadata: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	sameTree(t, "retention with an unparsable partition.metadata", before, treeBytes(t, filepath.Join(dir, "orders-1")))

	// Without a node id, the assignment is not checked; the topic ID is.
	dir, strays := kraft(t, 9, "orders")
	if err := os.Remove(filepath.Join(dir, "meta.properties")); err != nil {
		t.Fatal(err)
	}
	strayBefore, healthyBefore := treeBytes(t, strays[0]), treeBytes(t, filepath.Join(dir, "orders-1"))
	args := []string{"retention", "--kafka-defaults", "--retention-ms", "1000"}
	code, out, errOut = runArgs(append(args, dir)...)
	if code != ExitUsage || !strings.Contains(errOut, "2"+skipped) {
		t.Errorf("no node id: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	sameTree(t, "retention without a node id", strayBefore, treeBytes(t, strays[0]))
	actedOn(t, args, out, filepath.Join(dir, "orders-1"), healthyBefore)
}
