package commands

// The second adversary's cases against the refusal of duplicate partitions
// (fe60dad), each failing before its fix.

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
)

// A log directory's partition directory may be a symbolic link: a broker
// lists the log directory and follows it (LogManager.loadLogs keeps the
// entries for which File.isDirectory, which follows links), so a link in one
// log directory and a directory of the same name in another of the same
// broker are two copies it refuses to start with. Named as the link, the
// partition's "log directory" became the link target's parent, which has no
// meta.properties, and both copies were taken: retention rewrote both and
// exited 0, verify said nothing.
func TestDuplicateThroughLinkRefused(t *testing.T) {
	const now = "2024-03-01T00:00:00Z"
	for _, c := range []struct {
		name  string
		code  int
		args  []string
		whole bool // a named whole: the link is skipped, b's copy must not change
	}{
		{"verify", ExitProblems, []string{"verify"}, false},
		{"retention", ExitFailure, []string{"retention", "--now", now, "--retention-ms", "1ms", "--kafka-defaults"}, false},
		{"retention on the log dirs", ExitFailure, []string{"retention", "--now", now, "--retention-ms", "1ms", "--kafka-defaults"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := reindexCopy(t)
			b := otherDisk(t, "1", "orders-0")
			// a's copy lives elsewhere, reached through a link in a.
			elsewhere := filepath.Join(t.TempDir(), "orders-0")
			if err := os.Rename(filepath.Join(a, "orders-0"), elsewhere); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(elsewhere, filepath.Join(a, "orders-0")); err != nil {
				t.Fatal(err)
			}
			before := [2]map[string]string{treeFiles(t, elsewhere), treeFiles(t, filepath.Join(b, "orders-0"))}
			named := filepath.Join(a, "orders-0")
			if c.whole {
				named = a
			}
			code, out, errOut := runArgs(append(c.args, named, b)...)
			if code != c.code || !strings.Contains(errOut, "does not start") {
				t.Errorf("exit %d, want %d, naming the two copies\n%s%s", code, c.code, clip(out), clip(errOut))
			}
			if c.code == ExitFailure {
				for i, d := range []string{elsewhere, filepath.Join(b, "orders-0")} {
					if !maps.Equal(before[i], treeFiles(t, d)) {
						t.Errorf("%s changed", d)
					}
				}
			}
		})
	}
}

// replay reads the log directories but writes into a cluster: both copies
// of a partition that two log directories of one broker hold went to the
// same target partition, every record twice, and only then did the run say
// (exit 3) that a broker would not start with both. Two copies of one
// partition, whoever holds them, are now a usage error before anything is
// sent (exit 2).
func TestReplayRefusesTwoCopies(t *testing.T) {
	a := reindexCopy(t, "meta.properties", "orders-0")
	b := otherDisk(t, "1", "orders-0")
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "orders"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	code, out, errOut := runArgs("replay", "--bootstrap-server", strings.Join(c.ListenAddrs(), ","), a, b)
	if code != ExitUsage || strings.Contains(out, "replayed") || !strings.Contains(errOut, "name one copy") {
		t.Errorf("exit %d: both copies replayed into orders-0\n%s%s", code, clip(out), clip(errOut))
	}
}

// A link in one log directory to the partition directory of another log
// directory of the same broker (a partition "moved" to another disk and
// linked back): the broker lists both log directories and loads the one
// directory twice, under two names, and loadLog throws ("Duplicate log
// directories for orders-0 are found in both"). Both paths resolve to one
// partition here, counted once, so nothing was refused: verify said no
// problems and retention rewrote it, exit 0.
func TestLinkIntoAnotherLogDirRefused(t *testing.T) {
	const now = "2024-03-01T00:00:00Z"
	for _, c := range []struct {
		name string
		code int
		args []string
	}{
		{"verify", ExitProblems, []string{"verify"}},
		{"retention", ExitFailure, []string{"retention", "--now", now, "--retention-ms", "1ms", "--kafka-defaults"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := reindexCopy(t)
			b := otherDisk(t, "1", "orders-0")
			if err := os.RemoveAll(filepath.Join(a, "orders-0")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(b, "orders-0"), filepath.Join(a, "orders-0")); err != nil {
				t.Fatal(err)
			}
			before := treeFiles(t, filepath.Join(b, "orders-0"))
			code, out, errOut := runArgs(append(c.args, filepath.Join(a, "orders-0"), b)...)
			if code != c.code || !strings.Contains(errOut, "does not start") {
				t.Errorf("exit %d, want %d, saying the broker does not start\n%s%s", code, c.code, clip(out), clip(errOut))
			}
			if c.code == ExitFailure && !maps.Equal(before, treeFiles(t, filepath.Join(b, "orders-0"))) {
				t.Errorf("%s changed", filepath.Join(b, "orders-0"))
			}
		})
	}
}

// Links in one folder (not a log directory: no meta.properties, and names a
// broker never loads) to two brokers' copies of a partition, named to
// compare them: the folder was taken for a log directory holding both, and
// the run was refused ("in a log directory of the same broker: a broker
// with both does not start"), though no broker holds both (524f1ea).
func TestLinksFolderIsNoBroker(t *testing.T) {
	a := reindexCopy(t, "meta.properties", "orders-0")
	b := otherDisk(t, "2", "orders-0")
	links := t.TempDir()
	for name, target := range map[string]string{"b1-orders": a, "b2-orders": b} {
		if err := os.Symlink(filepath.Join(target, "orders-0"), filepath.Join(links, name)); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errOut := runArgs("verify", filepath.Join(links, "b1-orders"), filepath.Join(links, "b2-orders"))
	if code != ExitOK || strings.Contains(errOut, "does not start") {
		t.Errorf("exit %d\n%s%s", code, clip(out), clip(errOut))
	}
}

// A KRaft broker (3.7 on, KAFKA-16234) asks the metadata image at load
// whether a log is stray before it checks for duplicates: a copy whose
// topic ID the image does not know (a topic deleted and created again while
// its disk was away) is renamed -stray, and the broker starts with the
// other. Such a pair was refused as duplicates, the current copy with it.
func TestStrayCopyIsNoDuplicate(t *testing.T) {
	a := reindexCopy(t)
	b := otherDisk(t, "1", "orders-0")
	pm := filepath.Join(b, "orders-0", "partition.metadata")
	id, err := os.ReadFile(pm)
	if err != nil {
		t.Fatal(err)
	}
	// Another incarnation's topic ID, which the metadata log never had.
	write(t, filepath.Join(b, "orders-0"), "partition.metadata", []byte(strings.ReplaceAll(string(id), "dU3yJFVlmlOFj6NTVBqVWA", "eU3yJFVlmlOFj6NTVBqVWA")))
	// The stray copy is verify's problem, not a duplicate.
	if code, out, errOut := runArgs("verify", a, b); code != ExitProblems || strings.Contains(errOut, "does not start") || !strings.Contains(out, "is not in the cluster metadata") {
		t.Errorf("exit %d\n%s%s", code, clip(out), clip(errOut))
	}
}

// salvage --out into another log directory of the same broker (its
// manual's second example, from /broken/kafka-logs to /var/lib/kafka/logs)
// makes the very pair the duplicate rule refuses: the broker does not start
// with the source and the salvaged copy both. salvage said nothing; it now
// warns (the source is to be moved away, which is the user's step).
func TestSalvageIntoTheSameBrokerWarns(t *testing.T) {
	a := reindexCopy(t)
	b := otherDisk(t, "1")
	code, out, errOut := runArgs("salvage", filepath.Join(a, "orders-0"), "--out", filepath.Join(b, "orders-0"))
	if code != ExitOK || !strings.Contains(errOut, "does not start") {
		t.Errorf("salvage: exit %d, nothing said of the copy %s keeps\n%s%s", code, a, clip(out), clip(errOut))
	}
}

// Two -future copies of one partition in ONE log directory are, whatever its
// meta.properties says or lacks, two future logs of one broker: loadLog
// throws ("Duplicate log directories found"). Without a meta.properties
// they were taken as replicas: verify exited 0 (retention skips -future
// directories, so only readers are shown).
func TestTwoFuturesRefused(t *testing.T) {
	for _, c := range []struct {
		name string
		code int
		args []string
	}{
		{"verify", ExitProblems, []string{"verify"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := reindexCopy(t, "orders-0")
			f1 := filepath.Join(a, "orders-0.0123456789abcdef0123456789abcdef-future")
			f2 := filepath.Join(a, "orders-0.fedcba9876543210fedcba9876543210-future")
			if err := os.CopyFS(f1, os.DirFS(filepath.Join(a, "orders-0"))); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(filepath.Join(a, "orders-0"), f2); err != nil {
				t.Fatal(err)
			}
			before := [2]map[string]string{treeFiles(t, f1), treeFiles(t, f2)}
			code, out, errOut := runArgs(append(c.args, a)...)
			if code != c.code || !strings.Contains(errOut, "does not start") {
				t.Errorf("exit %d, want %d, naming the two copies\n%s%s", code, c.code, clip(out), clip(errOut))
			}
			if c.code == ExitFailure {
				for i, d := range []string{f1, f2} {
					if !maps.Equal(before[i], treeFiles(t, d)) {
						t.Errorf("%s changed", d)
					}
				}
			}
		})
	}
}

// LogManager.loadLogs leaves __cluster_metadata-0 out of the logs it loads
// (its filter: topic != the metadata topic), so two copies of it in two log
// directories of one broker never meet in loadLog's maps: its "Duplicate
// log directories" rule does not apply (a leftover copy is what reordering
// log.dirs leaves, metadata.log.dir defaulting to the first). verify said
// "a broker with both does not start" and exited 3.
func TestMetadataLogIsNoDuplicate(t *testing.T) {
	a := reindexCopy(t)
	b := otherDisk(t, "1", "__cluster_metadata-0")
	if code, out, errOut := runArgs("verify", a, b); code != ExitOK || strings.Contains(errOut, "does not start") {
		t.Errorf("exit %d\n%s%s", code, clip(out), clip(errOut))
	}
}

// TestBackupIsNoDuplicate: a copy of a log directory taken at another time
// (a backup next to the live one) has its directory.id: no broker holds
// both, and checking them in one run says nothing of duplicates. Two log
// directories of one broker have two directory.ids.
func TestBackupIsNoDuplicate(t *testing.T) {
	live, backup := reindexCopy(t), reindexCopy(t)
	if code, out, errOut := runArgs("verify", live, backup); code != ExitOK || strings.Contains(errOut, "does not start") {
		t.Errorf("exit %d\n%s%s", code, clip(out), clip(errOut))
	}
}

// otherDisk copies parts of the testdata log directory, with its
// meta.properties, as another log directory of node: node "1" is the
// testdata's broker, which then holds it on another disk (another
// directory.id).
func otherDisk(t *testing.T, node string, parts ...string) string {
	t.Helper()
	b := reindexCopy(t, append([]string{"meta.properties"}, parts...)...)
	m, err := os.ReadFile(filepath.Join(b, "meta.properties"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, b, "meta.properties", []byte(strings.NewReplacer("directory.id=lxy", "directory.id=mxy", "node.id=1", "node.id="+node).Replace(string(m))))
	return b
}

// TestOldClustersAreNoBroker: meta.properties of Kafka before 0.10.1 names
// a broker.id but no cluster.id, so two old clusters' broker 0 were one
// broker, and their partitions of one name duplicates (the third
// adversary's lead).
func TestOldClustersAreNoBroker(t *testing.T) {
	var dirs []string
	for range 2 {
		d := reindexCopy(t, "orders-0")
		write(t, d, "meta.properties", []byte("version=0\nbroker.id=0\n"))
		dirs = append(dirs, d)
	}
	if code, out, errOut := runArgs(append([]string{"verify"}, dirs...)...); code != ExitOK || strings.Contains(errOut, "does not start") {
		t.Errorf("exit %d\n%s%s", code, clip(out), clip(errOut))
	}
}
