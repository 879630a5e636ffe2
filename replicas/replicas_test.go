package replicas_test

import (
	"testing"

	"github.com/logtool/logtool/internal/gen"
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
		for _, b := range r.Batches {
			if b.Last >= r.WouldTruncateTo {
				lost += int64(b.Count)
			}
		}
		if r.Lost.Records != lost {
			t.Errorf("broker %s: %d records lost, counted %d", r.Broker, r.Lost.Records, lost)
		}
		if want := lost > 0 && r.WouldTruncateTo < r.HighWatermark; r.Lost.BelowHighWatermark != want {
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
	base := t.TempDir()
	genBase(t, base, gen.Options{})
	dirs := brokers(t, base, 3)
	vs, sum := run(t, replicas.RunOptions{}, dirs...)
	v := one(t, vs)
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
	base := t.TempDir()
	genBase(t, base, gen.Options{})
	dirs := brokers(t, base, 3)
	end := logEnd(t, dirs[0])
	n := batchesOf(t, dirs[0])[12].base
	truncate(t, dirs[1], n)
	appendBatches(t, dirs[1], 1, 4, "new-leader")
	setEpochs(t, dirs[1], checkpoint.EpochEntry{Epoch: 0, StartOffset: 0}, checkpoint.EpochEntry{Epoch: 1, StartOffset: n})
	// Broker 3 followed broker 2 in epoch 1 for a while.
	truncate(t, dirs[2], n)
	appendBatches(t, dirs[2], 1, 2, "new-leader")
	setEpochs(t, dirs[2], checkpoint.EpochEntry{Epoch: 0, StartOffset: 0}, checkpoint.EpochEntry{Epoch: 1, StartOffset: n})
	for _, d := range dirs {
		setRoot(t, d, layout.ReplicationOffsetCheckpointFile, n-20)
	}
	setRoot(t, dirs[0], layout.ReplicationOffsetCheckpointFile, end-5)

	vs, sum := run(t, replicas.RunOptions{}, dirs...)
	v := one(t, vs)
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
	vs, _ = run(t, replicas.RunOptions{Leader: "1"}, dirs...)
	v = one(t, vs)
	checkModel(t, v)
	if r2 := replicaOf(t, v, "2"); r2.WouldTruncateTo != n || r2.Lost.Records != 20 || r2.Lost.BelowHighWatermark {
		t.Errorf("broker 2 following 1: truncate to %d losing %+v; want %d, 20 records, above its high watermark", r2.WouldTruncateTo, r2.Lost, n)
	}
}

func TestLaggingFollowerAgrees(t *testing.T) {
	base := t.TempDir()
	genBase(t, base, gen.Options{})
	dirs := brokers(t, base, 2)
	cut := batchesOf(t, dirs[1])[20].base
	truncate(t, dirs[1], cut)
	vs, sum := run(t, replicas.RunOptions{}, dirs...)
	v := one(t, vs)
	if v.Status != replicas.Agree || sum.Failed() {
		t.Fatalf("status %s, notes %v", v.Status, v.Notes)
	}
	checkModel(t, v)
	if r := replicaOf(t, v, "2"); r.Lost.Records != 0 || r.LogEndOffset != cut {
		t.Errorf("lagging broker: end %d, lost %+v", r.LogEndOffset, r.Lost)
	}
	// A leader behind its follower in the same epoch: the follower loses
	// what the leader never had, above nothing it diverges on.
	vs, _ = run(t, replicas.RunOptions{Leader: "2"}, dirs...)
	v = one(t, vs)
	checkModel(t, v)
	if r := replicaOf(t, v, "1"); r.WouldTruncateTo != cut || r.Lost.Records == 0 {
		t.Errorf("broker 1 following the shorter 2: truncate to %d, lost %+v", r.WouldTruncateTo, r.Lost)
	}
}
