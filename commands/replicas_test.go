package commands

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/internal/testkit/testutil"
	"github.com/logtool/logtool/logfmt/checkpoint"
	"github.com/logtool/logtool/logfmt/layout"
)

// incident writes $DIR/incident/b1..b3, three brokers' log directories after
// an unclean election: broker 1 led epoch 0 to the end; broker 2, which had
// fallen behind at offset 120, was elected in epoch 1 and wrote 20 records of
// its own, of which broker 3 fetched 10. A second partition, on brokers 1
// and 3, agrees, broker 3 lagging.
func incident(t *testing.T, dir string) {
	base := filepath.Join(t.TempDir(), "base")
	o := gen.Options{Out: base, Topics: []string{"payments"}, Partitions: 2, Records: 200, Keys: 30, Magic: 2, SegmentBytes: 8 << 10, Seed: 3}
	if _, err := gen.Generate(o); err != nil {
		t.Fatal(err)
	}
	bs := testutil.Brokers(t, base, 3)
	for i, b := range bs {
		to := filepath.Join(dir, "incident", filepath.Base(b))
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(b, to); err != nil {
			t.Fatal(err)
		}
		bs[i] = to
	}
	p0 := func(b string) string { return filepath.Join(b, "payments-0") }
	const n = 120
	epochs := []checkpoint.EpochEntry{{Epoch: 0, StartOffset: 0}, {Epoch: 1, StartOffset: n}}
	testutil.TruncateReplica(t, p0(bs[1]), n)
	testutil.AppendRecords(t, p0(bs[1]), 1, 4, "written by broker 2")
	testutil.SetEpochs(t, p0(bs[1]), epochs...)
	testutil.TruncateReplica(t, p0(bs[2]), n)
	testutil.AppendRecords(t, p0(bs[2]), 1, 2, "written by broker 2")
	testutil.SetEpochs(t, p0(bs[2]), epochs...)
	for i, hw := range []int64{190, 110, 110} {
		testutil.SetRootOffset(t, bs[i], layout.ReplicationOffsetCheckpointFile, "payments", 0, hw)
	}
	os.RemoveAll(filepath.Join(bs[1], "payments-1"))
	testutil.TruncateReplica(t, filepath.Join(bs[2], "payments-1"), 150)
}

// lagging writes $DIR/b1 and $DIR/b2, broker 2 a follower behind broker 1.
func lagging(t *testing.T, dir string) {
	base := filepath.Join(t.TempDir(), "base")
	o := gen.Options{Out: base, Topics: []string{"clicks"}, Records: 100, Magic: 2, Seed: 4}
	if _, err := gen.Generate(o); err != nil {
		t.Fatal(err)
	}
	for i, b := range testutil.Brokers(t, base, 2) {
		to := filepath.Join(dir, filepath.Base(b))
		if err := os.Rename(b, to); err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			testutil.TruncateReplica(t, filepath.Join(to, "clicks-0"), 70)
		}
	}
}

// digests is incident with a digest of each broker beside it.
func digests(t *testing.T, dir string) {
	incident(t, dir)
	for _, b := range []string{"b1", "b2", "b3"} {
		var out, errb bytes.Buffer
		args := []string{"logtool", "digest", "--out", filepath.Join(dir, b+".digest"), filepath.Join(dir, "incident", b)}
		if code := Run(args, strings.NewReader(""), &out, &errb); code != 0 {
			t.Fatalf("digest %s: exit %d: %s", b, code, errb.String())
		}
	}
}

var replicasGoldenCases = []goldenCase{
	{name: "unclean-election", setup: incident, args: []string{"replicas", "$DIR/incident"}},
	{name: "leader", setup: incident, args: []string{"replicas", "--leader", "1", "$DIR/incident/b1", "$DIR/incident/b2", "$DIR/incident/b3"}},
	{name: "leader-without-replica", setup: incident, args: []string{"replicas", "--leader", "2", "$DIR/incident"}},
	{name: "json", setup: incident, args: []string{"--format", "json", "replicas", "$DIR/incident"}},
	{name: "digests", setup: digests, args: []string{"replicas", "$DIR/b1.digest", "$DIR/b2.digest", "$DIR/b3.digest"}},
	{name: "two-of-three", setup: incident, args: []string{"replicas", "$DIR/incident/b1", "$DIR/incident/b3/payments-1/../"}},
	{name: "agree", setup: lagging, args: []string{"replicas", "$DIR/b1", "$DIR/b2"}},
	{name: "same-broker", setup: incident, args: []string{"replicas", "$DIR/incident/b1", "$DIR/incident/b1"}},
	{name: "one-broker", setup: incident, args: []string{"replicas", "$DIR/incident/b1"}},
	{name: "unknown-leader", setup: incident, args: []string{"replicas", "--leader", "9", "$DIR/incident"}},
	{name: "digest", setup: incident, args: []string{"digest", "--out", "$DIR/b1.digest", "$DIR/incident/b1"}},
	{name: "digest-two-brokers", setup: incident, args: []string{"digest", "--out", "$DIR/all.digest", "$DIR/incident"}},
}

func TestReplicasGolden(t *testing.T) {
	runGolden(t, "replicas", replicasGoldenCases)
	checkWidth(t, "replicas", replicasGoldenCases)
}

// Digests and log directories give the same report, but for where each
// replica was read.
func TestReplicasDigestSameReport(t *testing.T) {
	dir := t.TempDir()
	digests(t, dir)
	report := func(paths ...string) (string, int) {
		var out, errb bytes.Buffer
		code := Run(append([]string{"logtool", "replicas"}, paths...), strings.NewReader(""), &out, &errb)
		return out.String(), code
	}
	fromDirs, c1 := report(filepath.Join(dir, "incident"))
	fromDigests, c2 := report(filepath.Join(dir, "b1.digest"), filepath.Join(dir, "b2.digest"), filepath.Join(dir, "b3.digest"))
	if fromDirs != fromDigests || c1 != c2 || c1 != ExitProblems {
		t.Fatalf("exit %d and %d:\n%s\n%s", c1, c2, fromDirs, fromDigests)
	}
}

// A digest that cannot be read is a usage error naming it.
func TestReplicasBadDigest(t *testing.T) {
	dir := t.TempDir()
	digests(t, dir)
	good := filepath.Join(dir, "b1.digest")
	b, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "cut.digest")
	if err := os.WriteFile(bad, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	code := Run([]string{"logtool", "replicas", bad, filepath.Join(dir, "b2.digest")}, strings.NewReader(""), &out, &errb)
	if code != ExitUsage || !strings.Contains(errb.String(), bad) || !strings.Contains(errb.String(), "truncated") {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
}

// kraftCopy copies testdata/kafka-logs (a KRaft log dir) to a new
// directory, with node id id.
func kraftCopy(t *testing.T, id int32) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "kafka-logs")
	testutil.CopyTree(t, "../testdata/kafka-logs", dir)
	os.Remove(filepath.Join(dir, ".lock"))
	testutil.SetNode(t, dir, id)
	return dir
}

// A partition holding an entry a broker cannot load (here 14.log) makes
// `replicas` on the log directories exit 3; `digest` of the same broker
// exits 3 too, and its digest carries the entry as damage, so that
// `replicas` on the digests, or on a log dir and a digest, says the same
// (the digest lost it before).
func TestDigestKeepsWhatABrokerCannotLoad(t *testing.T) {
	a, b := kraftCopy(t, 1), kraftCopy(t, 2)
	if err := os.WriteFile(filepath.Join(b, "orders-0", "14.log"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	direct, _, _ := runLogtool(t, "replicas", "--no-progress", a, b)
	out := t.TempDir()
	da, db := filepath.Join(out, "a.digest"), filepath.Join(out, "b.digest")
	runLogtool(t, "digest", "--no-progress", "--out", da, a)
	runLogtool(t, "digest", "--no-progress", "--out", db, b)
	if _, err := os.Stat(db); err != nil {
		t.Fatalf("no digest written: %v", err)
	}
	viaDigests, _, _ := runLogtool(t, "replicas", "--no-progress", da, db)
	mixed, _, _ := runLogtool(t, "replicas", "--no-progress", a, db)
	if direct != ExitProblems || direct != viaDigests || direct != mixed {
		t.Fatalf("replicas exits %d on the log dirs, %d on their digests, %d on a log dir and a digest", direct, viaDigests, mixed)
	}
}
