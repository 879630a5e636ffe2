package replicas_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/internal/target"
	"github.com/logtool/logtool/internal/testkit/testutil"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/checkpoint"
	"github.com/logtool/logtool/logfmt/layout"
	"github.com/logtool/logtool/replicas"
)

// The fixtures are one log directory written by gen and copied to each
// broker, then changed the way incidents change a replica.

const topic = "orders"

// genBase writes the log directory every broker starts from: one partition of
// orders, records keyed, several segments.
func genBase(t testing.TB, dir string, o gen.Options) {
	t.Helper()
	o.Out, o.Partitions, o.Magic = dir, 1, 2
	if o.Topics == nil {
		o.Topics = []string{topic}
	}
	if o.Records == 0 {
		o.Records = 300
	}
	switch {
	case o.Keys == 0:
		o.Keys = 40
	case o.Keys < 0: // keyless records
		o.Keys = 0
	}
	if o.SegmentBytes == 0 {
		o.SegmentBytes = 8 << 10
	}
	if o.Seed == 0 {
		o.Seed = 7
	}
	if _, err := gen.Generate(o); err != nil {
		t.Fatal(err)
	}
}

// newBrokers writes the base log directory with o (genBase) and copies it
// to n brokers, node ids 1..n.
func newBrokers(t testing.TB, o gen.Options, n int) []string {
	t.Helper()
	base := t.TempDir()
	genBase(t, base, o)
	return brokers(t, base, n)
}

// dropSegments deletes the first n segments of a replica and moves its log
// start offset checkpoint to the next one's base, as retention does; it
// returns that base.
func dropSegments(t testing.TB, logDir string, n int) int64 {
	t.Helper()
	p, err := layout.ReadPartition(partDir(logDir))
	if err != nil || len(p.Segments) <= n {
		t.Fatalf("want more than %d segments: %v", n, err)
	}
	for _, s := range p.Segments[:n] {
		for _, f := range []string{s.Log, s.Index, s.TimeIndex, s.TxnIndex} {
			if f != "" {
				os.Remove(f)
			}
		}
	}
	start := p.Segments[n].Base
	setRoot(t, logDir, layout.LogStartOffsetCheckpointFile, start)
	return start
}

// damageBatch overwrites two bytes of a batch's records: its checksum fails.
func damageBatch(t testing.TB, b at) {
	t.Helper()
	f, err := os.OpenFile(b.Segment, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte{0xde, 0xad}, b.Pos+70); err != nil {
		t.Fatal(err)
	}
}

// brokers copies base to n brokers, node ids 1..n.
func brokers(t testing.TB, base string, n int) []string { return testutil.Brokers(t, base, n) }

func setNode(t testing.TB, dir string, id int32) { testutil.SetNode(t, dir, id) }

func write(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func partDir(logDir string) string { return filepath.Join(logDir, topic+"-0") }

// at is a batch of the partition: segment, position, offsets.
type at = testutil.SegmentBatch

func batchesOf(t testing.TB, logDir string) []at {
	return testutil.PartitionBatches(t, partDir(logDir))
}

func truncate(t testing.TB, logDir string, off int64) {
	testutil.TruncateReplica(t, partDir(logDir), off)
}

// logEnd is the offset after a replica's last batch.
func logEnd(t testing.TB, logDir string) int64 {
	bs := batchesOf(t, logDir)
	return bs[len(bs)-1].Last + 1
}

func appendBatches(t testing.TB, logDir string, epoch int32, n int, tag string) {
	testutil.AppendRecords(t, partDir(logDir), epoch, n, tag)
}

// electedAt makes a replica the one elected in epoch 1 at offset n, or one
// that followed it: its log cut at n, then the given number of batches of
// epoch 1 with a history of their own, and its epoch checkpoint saying so.
func electedAt(t testing.TB, logDir string, n int64, batches int) {
	truncate(t, logDir, n)
	appendBatches(t, logDir, 1, batches, "new-leader")
	setEpochs(t, logDir, checkpoint.EpochEntry{Epoch: 0, StartOffset: 0}, checkpoint.EpochEntry{Epoch: 1, StartOffset: n})
}

func setEpochs(t testing.TB, logDir string, es ...checkpoint.EpochEntry) {
	testutil.SetEpochs(t, partDir(logDir), es...)
}

func setRoot(t testing.TB, logDir, name string, off int64) {
	testutil.SetRootOffset(t, logDir, name, topic, 0, off)
}

func open(t testing.TB, lo replicas.Options, dirs ...string) []replicas.Source {
	t.Helper()
	var srcs []replicas.Source
	for _, d := range dirs {
		if strings.HasSuffix(d, ".digest") {
			s, err := replicas.OpenDigest(d)
			if err != nil {
				t.Fatal(err)
			}
			srcs = append(srcs, s)
			continue
		}
		set, err := target.Resolve([]string{d}, target.Options{Command: "replicas", Takes: target.LogDirs})
		if err != nil {
			t.Fatal(err)
		}
		s, err := replicas.OpenLogDirs(set, lo)
		if err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, s...)
	}
	return srcs
}

// run compares the brokers and returns the verdicts.
func run(t testing.TB, o replicas.RunOptions, dirs ...string) ([]*replicas.Verdict, replicas.Summary) {
	t.Helper()
	return runWith(t, replicas.Options{}, o, dirs...)
}

func replicaOf(t testing.TB, v *replicas.Verdict, broker string) replicas.Replica {
	t.Helper()
	i := slices.IndexFunc(v.Replicas, func(r replicas.Replica) bool { return r.Broker == broker })
	if i < 0 {
		t.Fatalf("no broker %s in %v", broker, v.Replicas)
	}
	return v.Replicas[i]
}

// runOne is run on brokers that hold one partition: its verdict.
func runOne(t *testing.T, o replicas.RunOptions, dirs ...string) (*replicas.Verdict, replicas.Summary) {
	t.Helper()
	return runWithOne(t, replicas.Options{}, o, dirs...)
}

// runWithOne is runOne with load options.
func runWithOne(t *testing.T, lo replicas.Options, o replicas.RunOptions, dirs ...string) (*replicas.Verdict, replicas.Summary) {
	t.Helper()
	vs, sum := runWith(t, lo, o, dirs...)
	return one(t, vs), sum
}

// runWith is run with load options.
func runWith(t testing.TB, lo replicas.Options, o replicas.RunOptions, dirs ...string) ([]*replicas.Verdict, replicas.Summary) {
	t.Helper()
	var vs []*replicas.Verdict
	sum, err := replicas.Run(open(t, lo, dirs...), o, func(v *replicas.Verdict) error {
		vs = append(vs, v)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return vs, sum
}

// readBatch returns the options and records of the uncompressed batch at b.
func readBatch(t testing.TB, b at) (logfmt.BatchOptions, []logfmt.Record, int) {
	t.Helper()
	f, err := logfmt.OpenSegment(b.Segment)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.SeekTo(b.Pos)
	if !f.Next() {
		t.Fatal(f.Err())
	}
	bt := f.Batch()
	h := bt.Header()
	o := logfmt.DefaultBatchOptions(h.BaseOffset())
	o.PartitionLeaderEpoch, o.Compression, o.Transactional, o.Control = h.PartitionLeaderEpoch(), h.Compression(), h.IsTransactional(), h.IsControl()
	o.ProducerID, o.ProducerEpoch, o.BaseSequence, o.LastOffsetDelta = h.ProducerID(), h.ProducerEpoch(), h.BaseSequence(), h.LastOffsetDelta()
	var recs []logfmt.Record
	var it logfmt.RecordIter
	if err := it.Reset(bt); err != nil {
		t.Fatal(err)
	}
	for it.Next() {
		r := *it.Record()
		r.Key, r.Value = append([]byte(nil), r.Key...), append([]byte(nil), r.Value...)
		recs = append(recs, r)
	}
	return o, recs, bt.Size()
}

func appendRaw(t testing.TB, logDir string, buf []byte) { testutil.AppendLog(t, partDir(logDir), buf) }

// rewrite replaces, in place, the uncompressed batch holding offset off with
// the batch change makes of its records, which must keep its size.
func rewrite(t testing.TB, logDir string, off int64, change func(recs []logfmt.Record, o *logfmt.BatchOptions)) {
	t.Helper()
	for _, b := range batchesOf(t, logDir) {
		if b.Base > off || b.Last < off {
			continue
		}
		o, recs, size := readBatch(t, b)
		change(recs, &o)
		out, err := logfmt.AppendBatch(nil, o, recs)
		if err != nil {
			t.Fatal(err)
		}
		if len(out) != size {
			t.Fatalf("the rewritten batch is %d bytes, was %d", len(out), size)
		}
		w, err := os.OpenFile(b.Segment, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		if _, err := w.WriteAt(out, b.Pos); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("no batch holds offset %d", off)
}

// changeValue flips a byte of the value of the record at off.
func changeValue(t testing.TB, logDir string, off int64) {
	rewrite(t, logDir, off, func(recs []logfmt.Record, _ *logfmt.BatchOptions) {
		for i := range recs {
			if recs[i].Offset == off {
				recs[i].Value[0] ^= 0xff
			}
		}
	})
}
