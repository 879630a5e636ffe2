package replicas_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/logtool/logtool/compact"
	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/internal/testkit/testutil"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/checkpoint"
	"github.com/logtool/logtool/logfmt/layout"
	"github.com/logtool/logtool/replicas"
)

// modelTruncateTo is the test's own model of where a follower's log ends once
// it follows leader: Kafka truncates a follower to the end of the largest
// leader epoch both hold, which is the first offset at which the epoch the
// follower's cache gives and the epoch the leader's gives differ, the leader's
// log end opening a new epoch. A follower with no epoch falls back to its high
// watermark.
func modelTruncateTo(f, leader *replicas.Partition) int64 {
	t := modelEpochTruncation(f, leader)
	if t < leader.LogStartOffset {
		// Out of the leader's range: the follower starts again at the
		// leader's log start.
		return leader.LogStartOffset
	}
	return t
}

func modelEpochTruncation(f, leader *replicas.Partition) int64 {
	if len(f.Epochs) == 0 {
		return min(f.HighWatermark, f.LogEndOffset)
	}
	epochOf := func(es []checkpoint.EpochEntry, leo, off int64, newEpoch bool) int64 {
		if newEpoch && off >= leo {
			return -2
		}
		e := int64(-1)
		for _, x := range es {
			if x.StartOffset <= off {
				e = int64(x.Epoch)
			}
		}
		return e
	}
	start := f.Epochs[0].StartOffset
	if len(leader.Epochs) > 0 {
		start = max(start, leader.Epochs[0].StartOffset)
	}
	// Only epoch boundaries can change the answer: check each.
	points := []int64{start}
	for _, es := range [][]checkpoint.EpochEntry{f.Epochs, leader.Epochs} {
		for _, e := range es {
			points = append(points, e.StartOffset)
		}
	}
	points = append(points, leader.LogEndOffset)
	best := f.LogEndOffset
	for _, o := range points {
		if o < start || o >= f.LogEndOffset {
			continue
		}
		if epochOf(f.Epochs, f.LogEndOffset, o, false) != epochOf(leader.Epochs, leader.LogEndOffset, o, true) {
			best = min(best, o)
		}
	}
	return best
}

// checkModel checks every replica's truncation against the model.
func checkModel(t *testing.T, v *replicas.Verdict) {
	t.Helper()
	var leader *replicas.Partition
	for _, r := range v.Replicas {
		if r.Broker == v.Leader {
			leader = r.Partition
		}
	}
	if leader == nil {
		t.Fatalf("%s-%d: no leader", v.Topic, v.Partition)
	}
	for _, r := range v.Replicas {
		if r.Broker == v.Leader {
			if r.WouldTruncateTo != -1 {
				t.Errorf("leader %s truncates to %d", r.Broker, r.WouldTruncateTo)
			}
			continue
		}
		if want := modelTruncateTo(r.Partition, leader); r.WouldTruncateTo != want {
			t.Errorf("broker %s following %s: wouldTruncateTo %d, the model says %d", r.Broker, v.Leader, r.WouldTruncateTo, want)
		}
		var lost int64
		first := int64(-1)
		for _, b := range r.Batches {
			if b.Last >= r.WouldTruncateTo || r.WouldTruncateTo > r.LogEndOffset {
				lost += int64(b.Count)
				if first < 0 {
					first = b.Base
				}
			}
		}
		if r.Lost.Records != lost {
			t.Errorf("broker %s: %d records lost, counted %d", r.Broker, r.Lost.Records, lost)
		}
		if want := lost > 0 && first < r.HighWatermark; r.Lost.BelowHighWatermark != want {
			t.Errorf("broker %s: lost below high watermark %v, want %v", r.Broker, r.Lost.BelowHighWatermark, want)
		}
	}
}

func one(t *testing.T, vs []*replicas.Verdict) *replicas.Verdict {
	t.Helper()
	if len(vs) != 1 {
		t.Fatalf("%d verdicts, want 1", len(vs))
	}
	return vs[0]
}

func TestIdenticalReplicasAgree(t *testing.T) {
	dirs := newBrokers(t, gen.Options{}, 3)
	v, sum := runOne(t, replicas.RunOptions{}, dirs...)
	if v.Status != replicas.Agree || sum.Failed() || v.DivergentOffset != -1 {
		t.Fatalf("status %s, divergent %d, notes %v", v.Status, v.DivergentOffset, v.Notes)
	}
	if v.Leader != "1" {
		t.Errorf("leader %s, want 1: ties go to the first named", v.Leader)
	}
	checkModel(t, v)
	for _, r := range v.Replicas[1:] {
		if r.WouldTruncateTo != r.LogEndOffset || r.Lost.Records != 0 {
			t.Errorf("broker %s would lose %+v", r.Broker, r.Lost)
		}
	}
}

// An unclean election: broker 1 led in epoch 0 up to offset 300 while broker 2
// lagged at N; broker 2 was elected in epoch 1 and wrote a different history
// from N.
func TestUncleanElection(t *testing.T) {
	dirs := newBrokers(t, gen.Options{}, 3)
	end := logEnd(t, dirs[0])
	n := batchesOf(t, dirs[0])[12].Base
	electedAt(t, dirs[1], n, 4)
	// Broker 3 followed broker 2 in epoch 1 for a while.
	electedAt(t, dirs[2], n, 2)
	for _, d := range dirs {
		setRoot(t, d, layout.ReplicationOffsetCheckpointFile, n-20)
	}
	setRoot(t, dirs[0], layout.ReplicationOffsetCheckpointFile, end-5)

	v, sum := runOne(t, replicas.RunOptions{}, dirs...)
	if v.Status != replicas.Diverge || v.DivergentOffset != n || !sum.Failed() {
		t.Fatalf("status %s at %d, want diverge at %d; notes %v", v.Status, v.DivergentOffset, n, v.Notes)
	}
	if v.Leader != "2" {
		t.Errorf("leader %s, want 2: the highest epoch, then the longest log", v.Leader)
	}
	checkModel(t, v)
	r1 := replicaOf(t, v, "1")
	if r1.WouldTruncateTo != n || r1.Lost.Records != end-n || !r1.Lost.BelowHighWatermark || !v.BelowHighWatermark {
		t.Errorf("broker 1: truncate to %d losing %+v; want %d, %d records, below its high watermark", r1.WouldTruncateTo, r1.Lost, n, end-n)
	}
	if r3 := replicaOf(t, v, "3"); r3.Lost.Records != 0 || r3.WouldTruncateTo != r3.LogEndOffset {
		t.Errorf("broker 3, behind in the leader's epoch, would lose %+v", r3.Lost)
	}

	// With broker 1 as the leader, brokers 2 and 3 lose their epoch 1.
	v, _ = runOne(t, replicas.RunOptions{Leader: "1"}, dirs...)
	checkModel(t, v)
	if r2 := replicaOf(t, v, "2"); r2.WouldTruncateTo != n || r2.Lost.Records != 20 || r2.Lost.BelowHighWatermark {
		t.Errorf("broker 2 following 1: truncate to %d losing %+v; want %d, 20 records, above its high watermark", r2.WouldTruncateTo, r2.Lost, n)
	}
}

func TestLaggingFollowerAgrees(t *testing.T) {
	dirs := newBrokers(t, gen.Options{}, 2)
	cut := batchesOf(t, dirs[1])[20].Base
	truncate(t, dirs[1], cut)
	v, sum := runOne(t, replicas.RunOptions{}, dirs...)
	if v.Status != replicas.Agree || sum.Failed() {
		t.Fatalf("status %s, notes %v", v.Status, v.Notes)
	}
	checkModel(t, v)
	if r := replicaOf(t, v, "2"); r.Lost.Records != 0 || r.LogEndOffset != cut {
		t.Errorf("lagging broker: end %d, lost %+v", r.LogEndOffset, r.Lost)
	}
	// A leader behind its follower in the same epoch: the follower loses
	// what the leader never had, above nothing it diverges on.
	v, _ = runOne(t, replicas.RunOptions{Leader: "2"}, dirs...)
	checkModel(t, v)
	if r := replicaOf(t, v, "1"); r.WouldTruncateTo != cut || r.Lost.Records == 0 {
		t.Errorf("broker 1 following the shorter 2: truncate to %d, lost %+v", r.WouldTruncateTo, r.Lost)
	}
}

func TestRetentionOnOneSideAgrees(t *testing.T) {
	dirs := newBrokers(t, gen.Options{}, 2)
	// Broker 1 deleted its first two segments.
	start := dropSegments(t, dirs[0], 2)
	v, sum := runOne(t, replicas.RunOptions{}, dirs...)
	if v.Status != replicas.Agree || sum.Failed() {
		t.Fatalf("status %s, notes %v", v.Status, v.Notes)
	}
	if r := replicaOf(t, v, "1"); r.LogStartOffset != start {
		t.Errorf("log start %d, want %d", r.LogStartOffset, start)
	}
	if !hasNote(v, "broker 1 starts at") {
		t.Errorf("the later start is not said: %v", v.Notes)
	}
	checkModel(t, v)
}

// A copy restored from an older backup is a replica behind the others, with
// its older checkpoints.
func TestRestoredOlderBackupAgrees(t *testing.T) {
	dirs := newBrokers(t, gen.Options{}, 3)
	cut := batchesOf(t, dirs[2])[8].Base
	truncate(t, dirs[2], cut)
	setRoot(t, dirs[2], layout.ReplicationOffsetCheckpointFile, cut)
	v, _ := runOne(t, replicas.RunOptions{}, dirs...)
	if v.Status != replicas.Agree || !hasNote(v, "broker 3 ends at") {
		t.Fatalf("status %s, notes %v", v.Status, v.Notes)
	}
	checkModel(t, v)
}

func TestRecreatedTopicIsNotAReplica(t *testing.T) {
	dirs := newBrokers(t, gen.Options{}, 2)
	id, _ := checkpoint.ParseTopicID("AAAAAAAAAAAAAAAAAAAAAQ")
	write(t, filepath.Join(partDir(dirs[1]), layout.PartitionMetadataFile), checkpoint.AppendPartitionMetadata(nil, checkpoint.PartitionMetadata{TopicID: id}))
	v, sum := runOne(t, replicas.RunOptions{}, dirs...)
	if v.Status != replicas.TopicIDs || !sum.Failed() {
		t.Fatalf("status %s, notes %v", v.Status, v.Notes)
	}
}

// Compaction on one broker only rewrites its batches: not divergence.
func TestCompactionOnOneSideAgrees(t *testing.T) {
	dirs := newBrokers(t, gen.Options{TombstoneRatio: 0.1}, 2)
	compactFixture(t, dirs[0])
	var cleaned int
	v, sum := runWithOne(t, replicas.Options{AllRecords: true}, replicas.RunOptions{}, dirs...)
	for _, b := range replicaOf(t, v, "1").Batches {
		if b.Flags&replicas.Cleaned != 0 {
			cleaned++
		}
	}
	if cleaned == 0 {
		t.Fatal("the cleaner cleaned nothing: the test tests nothing")
	}
	if v.Status != replicas.Agree || sum.Failed() {
		t.Fatalf("status %s at %d, notes %v", v.Status, v.DivergentOffset, v.Notes)
	}
	checkModel(t, v)

	// Without the other side's record hashes the cleaned batches are
	// compared by what the cleaner keeps, and that is said.
	if v, _ := runOne(t, replicas.RunOptions{}, dirs...); v.Status != replicas.Agree || !hasNote(v, "not record by record") {
		t.Fatalf("status %s at %d, notes %v", v.Status, v.DivergentOffset, v.Notes)
	}

	// A record changed under a cleaned batch is divergence all the same.
	off := int64(-1)
	for _, b := range replicaOf(t, v, "1").Batches {
		if b.Flags&replicas.Cleaned != 0 && len(b.Records) > 0 && !b.Records[0].Tombstone {
			off = b.Records[0].Offset
			break
		}
	}
	changeValue(t, dirs[1], off)
	if v, _ := runWithOne(t, replicas.Options{AllRecords: true}, replicas.RunOptions{}, dirs...); v.Status != replicas.Diverge {
		t.Fatalf("a changed record under compaction: status %s, notes %v", v.Status, v.Notes)
	}
}

// A cleaner that ran to the end drops every version of a key whose last
// version is a tombstone past its retention, and every record without a
// key: the broker that never cleaned holds them all, with nothing later of
// the key on either side but the tombstone it alone keeps. That is
// compaction, not divergence.
func TestCompactionToTheEndAgrees(t *testing.T) {
	base := t.TempDir()
	genBase(t, base, gen.Options{Records: 2000, Keys: 50, TombstoneRatio: 0.2})
	// Keyless records amid keyed ones, which the cleaner drops.
	part := filepath.Join(base, topic+"-0")
	next := testutil.PartitionBatches(t, part)[len(testutil.PartitionBatches(t, part))-1].Last + 1
	o := logfmt.DefaultBatchOptions(next)
	keyless, err := logfmt.AppendBatch(nil, o, []logfmt.Record{{Offset: next, Timestamp: 1704067200000, Value: []byte("no key")}})
	if err != nil {
		t.Fatal(err)
	}
	testutil.AppendLog(t, part, keyless)
	appendBatches(t, base, 0, 3, "after")
	dirs := brokers(t, base, 2)
	// The first pass gives tombstones their delete horizon, a pass two
	// days on removes those past it.
	day := int64(24 * time.Hour / time.Millisecond)
	for _, now := range []int64{0, 2 * day} {
		o := compact.DefaultOptions(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli() + now)
		if _, errs := compact.Run([]compact.Job{{Dir: partDir(dirs[0]), Config: o.Config}}, o, 1, func() {}); errs[0] != nil {
			t.Fatal(errs[0])
		}
	}
	v, _ := runWithOne(t, replicas.Options{AllRecords: true}, replicas.RunOptions{}, dirs...)
	if gone := keysGone(t, v); gone < 2 {
		t.Fatalf("%d key(s) gone whole from the cleaned replica, want the keyless record's and a tombstoned key's: the test tests nothing", gone)
	}
	if v.Status != replicas.Agree {
		t.Fatalf("status %s at %d, notes %v", v.Status, v.DivergentOffset, v.Notes)
	}
	checkModel(t, v)
}

// keysGone counts the keys broker 2 holds and broker 1 (cleaned) does not.
func keysGone(t *testing.T, v *replicas.Verdict) int {
	keys := func(p *replicas.Partition) map[uint64]bool {
		m := map[uint64]bool{}
		for _, b := range p.Batches {
			for _, r := range b.Records {
				m[r.Key] = true
			}
		}
		return m
	}
	cleaned, whole := keys(replicaOf(t, v, "1").Partition), keys(replicaOf(t, v, "2").Partition)
	n := 0
	for k := range whole {
		if !cleaned[k] {
			n++
		}
	}
	return n
}

func hasNote(v *replicas.Verdict, s string) bool {
	for _, n := range v.Notes {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// Transactions whose markers landed at different offsets on two brokers: each
// history is whole, and they differ from the first marker that moved.
func TestTransactionMarkersAtDifferentOffsets(t *testing.T) {
	dirs := newBrokers(t, gen.Options{TransactionalRatio: 0.5}, 2)
	var marker at
	for _, b := range batchesOf(t, dirs[1]) {
		if b.Base > 100 && b.Base == b.Last && b.Control {
			marker = b
			break
		}
	}
	m := marker.Base
	if m == 0 {
		t.Fatal("gen wrote no marker past offset 100")
	}
	// On broker 2 the marker came after one more batch.
	o, recs, _ := readBatch(t, marker)
	truncate(t, dirs[1], m)
	appendBatches(t, dirs[1], 0, 1, "late")
	o.BaseOffset, recs[0].Offset = m+5, m+5
	buf, err := logfmt.AppendBatch(nil, o, recs)
	if err != nil {
		t.Fatal(err)
	}
	appendRaw(t, dirs[1], buf)
	v, sum := runOne(t, replicas.RunOptions{}, dirs...)
	if v.Status != replicas.Diverge || v.DivergentOffset != m || !sum.Failed() {
		t.Fatalf("status %s at %d, want diverge at %d; notes %v", v.Status, v.DivergentOffset, m, v.Notes)
	}
}

// Damage on one replica is reported, and the comparison goes on past it.
func TestDamageIsReportedAndPassed(t *testing.T) {
	dirs := newBrokers(t, gen.Options{}, 2)
	bs := batchesOf(t, dirs[1])
	bad := bs[5]
	damageBatch(t, bad)
	v, sum := runOne(t, replicas.RunOptions{}, dirs...)
	if v.Status != replicas.Agree || !v.Damaged || !sum.Failed() || !hasNote(v, bad.Segment) {
		t.Fatalf("status %s, damaged %v, notes %v", v.Status, v.Damaged, v.Notes)
	}
	// A change past the damage is still found.
	later := bs[len(bs)-3]
	changeValue(t, dirs[1], later.Base)
	if v, _ := runOne(t, replicas.RunOptions{}, dirs...); v.Status != replicas.Diverge || v.DivergentOffset != later.Base {
		t.Fatalf("status %s at %d, want diverge at %d; notes %v", v.Status, v.DivergentOffset, later.Base, v.Notes)
	}
}

func TestSameBrokerRefused(t *testing.T) {
	dirs := newBrokers(t, gen.Options{}, 2)
	setNode(t, dirs[1], 1)
	for name, paths := range map[string][]string{"same node id": dirs, "same path": {dirs[0], dirs[0]}} {
		_, err := replicas.Run(open(t, replicas.Options{}, paths...), replicas.RunOptions{}, func(*replicas.Verdict) error { return nil })
		if _, ok := errors.AsType[*replicas.InputError](err); !ok {
			t.Errorf("%s: %v, want an InputError", name, err)
		}
	}
}

func TestPartitionOnOneBrokerListed(t *testing.T) {
	dirs := newBrokers(t, gen.Options{}, 2)
	genBase(t, dirs[0], gen.Options{Topics: []string{"solo"}})
	vs, sum := run(t, replicas.RunOptions{}, dirs...)
	if len(vs) != 2 || vs[1].Topic != "solo" || vs[1].Status != replicas.Single || sum.Single != 1 || sum.Failed() {
		t.Fatalf("verdicts %+v, summary %+v", vs, sum)
	}
}

// compactFixture compacts a replica as its broker's cleaner would, its
// tombstones past their retention.
func compactFixture(t testing.TB, logDir string) {
	t.Helper()
	o := compact.DefaultOptions(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli())
	if _, errs := compact.Run([]compact.Job{{Dir: partDir(logDir), Config: o.Config}}, o, 1, func() {}); errs[0] != nil {
		t.Fatal(errs[0])
	}
}

// fakeSource yields n small partitions and counts those given out and not
// yet judged.
type fakeSource struct {
	name       string
	next, n    int
	live, peak *int
}

func (s *fakeSource) Broker() replicas.Broker {
	return replicas.Broker{Name: s.name, NodeID: -1, Dirs: []string{"/" + s.name}}
}
func (s *fakeSource) Close() error { return nil }
func (s *fakeSource) Next() (*replicas.Partition, error) {
	if s.next == s.n {
		return nil, nil
	}
	s.next++
	*s.live++
	*s.peak = max(*s.peak, *s.live)
	return &replicas.Partition{Source: "/" + s.name, Topic: fmt.Sprintf("t%06d", s.next), LogEndOffset: 10,
		Batches: []replicas.Batch{{Base: 0, Last: 9, Count: 10}}}, nil
}

// Run merges partition by partition: it holds at most the partition each
// broker is at and the one being judged, however many partitions there are.
func TestRunHoldsOnePartitionPerBroker(t *testing.T) {
	var live, peak int
	var srcs []replicas.Source
	for _, name := range []string{"1", "2", "3"} {
		srcs = append(srcs, &fakeSource{name: name, n: 5000, live: &live, peak: &peak})
	}
	sum, err := replicas.Run(srcs, replicas.RunOptions{}, func(v *replicas.Verdict) error {
		live -= len(v.Replicas)
		return nil
	})
	if err != nil || sum.Agree != 5000 {
		t.Fatalf("%+v, %v", sum, err)
	}
	if peak > 2*len(srcs) {
		t.Fatalf("%d partitions held at once, want at most %d", peak, 2*len(srcs))
	}
}

// Damage that runs to the end of a segment ends there: the next segment is
// compared.
func TestDamageEndsWithItsSegment(t *testing.T) {
	dirs := newBrokers(t, gen.Options{}, 2)
	bs := batchesOf(t, dirs[1])
	var last, next at
	for i := 1; i < len(bs); i++ {
		if bs[i].Segment != bs[i-1].Segment {
			last, next = bs[i-1], bs[i+1]
			break
		}
	}
	if next.Segment == "" {
		t.Fatal("one segment only")
	}
	damageBatch(t, last)
	changeValue(t, dirs[1], next.Base)
	if v, _ := runOne(t, replicas.RunOptions{}, dirs...); v.Status != replicas.Diverge || v.DivergentOffset != next.Base || !v.Damaged {
		t.Fatalf("status %s at %d, want diverge at %d; notes %v", v.Status, v.DivergentOffset, next.Base, v.Notes)
	}
}

// A follower whose log ends before the leader's log start (retention ran on
// the leader while it was away) is emptied and starts again there.
func TestFollowerBehindLeaderStart(t *testing.T) {
	dirs := newBrokers(t, gen.Options{}, 2)
	start := dropSegments(t, dirs[0], 2)
	truncate(t, dirs[1], start-20)
	v, _ := runOne(t, replicas.RunOptions{}, dirs...)
	checkModel(t, v)
	r := replicaOf(t, v, "2")
	var all int64
	for _, b := range r.Batches {
		all += int64(b.Count)
	}
	if v.Status != replicas.Agree || v.Leader != "1" || r.WouldTruncateTo != start || r.Lost.Records != all {
		t.Fatalf("status %s, leader %s, broker 2 truncates to %d losing %d of %d; notes %v", v.Status, v.Leader, r.WouldTruncateTo, r.Lost.Records, all, v.Notes)
	}
}

// A broker stopped before it flushed its leader-epoch-checkpoint: its log holds
// batches of an epoch the checkpoint lacks. The restart's recovery assigns
// them (LogSegment.recover), so Kafka truncates by the batches' epoch, not the
// stale checkpoint's.
func TestStaleEpochCheckpointRecovered(t *testing.T) {
	dirs := newBrokers(t, gen.Options{}, 2)
	n := batchesOf(t, dirs[0])[12].Base
	electedAt(t, dirs[1], n, 4)
	setEpochs(t, dirs[1], checkpoint.EpochEntry{Epoch: 0, StartOffset: 0})

	v, _ := runOne(t, replicas.RunOptions{}, dirs...)
	if v.Status != replicas.Diverge || v.DivergentOffset != n {
		t.Fatalf("status %s at %d, want diverge at %d", v.Status, v.DivergentOffset, n)
	}
	if v.Leader != "2" {
		t.Errorf("leader %s, want 2: its batches are of epoch 1", v.Leader)
	}
	checkModel(t, v)

	v, _ = runOne(t, replicas.RunOptions{Leader: "1"}, dirs...)
	checkModel(t, v)
	if r2 := replicaOf(t, v, "2"); r2.WouldTruncateTo != n || r2.Lost.Records != 20 {
		t.Errorf("broker 2 following 1: truncate to %d losing %d records; want %d, 20", r2.WouldTruncateTo, r2.Lost.Records, n)
	}
}

// Compaction does not hide an unclean election: broker 2 was elected in epoch
// 1 and wrote at an offset broker 1's cleaner had emptied. A batch of an epoch
// the other log never had there is not one its cleaner dropped.
func TestCompactedAndDiverged(t *testing.T) {
	dirs := newBrokers(t, gen.Options{TombstoneRatio: 0.1}, 2)
	compactFixture(t, dirs[0])
	gap := int64(-1)
	bs := batchesOf(t, dirs[0])
	for i := 1; i < len(bs) && gap < 0; i++ {
		if bs[i].Base > bs[i-1].Last+1 {
			gap = bs[i-1].Last + 1
		}
	}
	if gap < 0 {
		t.Fatal("the cleaner removed no batch: the test tests nothing")
	}
	truncate(t, dirs[1], gap)
	o := logfmt.DefaultBatchOptions(gap)
	o.PartitionLeaderEpoch = 1
	buf, err := logfmt.AppendBatch(nil, o, []logfmt.Record{{Offset: gap, Key: []byte("new-leader"), Value: []byte("v")}})
	if err != nil {
		t.Fatal(err)
	}
	appendRaw(t, dirs[1], buf)
	setEpochs(t, dirs[1], checkpoint.EpochEntry{Epoch: 0, StartOffset: 0}, checkpoint.EpochEntry{Epoch: 1, StartOffset: gap})

	v, sum := runOne(t, replicas.RunOptions{}, dirs...)
	if v.Status != replicas.Diverge || v.DivergentOffset != gap || !sum.Failed() {
		t.Fatalf("status %s at %d, want diverge at %d; notes %v", v.Status, v.DivergentOffset, gap, v.Notes)
	}
	checkModel(t, v)
}
