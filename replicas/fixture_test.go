package replicas_test

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/internal/target"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/checkpoint"
	"github.com/logtool/logtool/logfmt/codec"
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
	if o.Keys == 0 {
		o.Keys = 40
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

// brokers copies base to n brokers under root, named b1..bn with node ids
// 1..n, and returns their log directories.
func brokers(t testing.TB, base string, n int) []string {
	t.Helper()
	root := t.TempDir()
	var dirs []string
	for i := 1; i <= n; i++ {
		d := filepath.Join(root, "b"+string(rune('0'+i)))
		copyTree(t, base, d)
		setNode(t, d, int32(i))
		dirs = append(dirs, d)
	}
	return dirs
}

func copyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if fi.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		if fi.Name() == layout.LockFile {
			return nil
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(to)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			return err
		}
		return out.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
}

func setNode(t testing.TB, dir string, id int32) {
	t.Helper()
	m := checkpoint.MetaProperties{Version: 1, BrokerID: -1, NodeID: id, ClusterID: "fixture-cluster-000000"}
	write(t, filepath.Join(dir, layout.MetaPropertiesFile), checkpoint.AppendMetaProperties(nil, m, time.Unix(0, 0).UTC()))
}

func write(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func partDir(logDir string) string { return filepath.Join(logDir, topic+"-0") }

// batches lists a partition's batches as (segment, position, base, last).
type at struct {
	seg        string
	pos        int64
	base, last int64
}

func batchesOf(t testing.TB, logDir string) []at {
	t.Helper()
	p, err := layout.ReadPartition(partDir(logDir))
	if err != nil {
		t.Fatal(err)
	}
	var out []at
	for _, s := range p.Segments {
		f, err := logfmt.OpenSegment(s.Log)
		if err != nil {
			t.Fatal(err)
		}
		for f.Next() {
			b := f.Batch()
			base := b.EntryOffset()
			out = append(out, at{s.Log, b.Pos, base, b.LastOffset()})
		}
		f.Close()
	}
	return out
}

// truncate cuts a replica's log at the first batch starting at or past off,
// as a broker's truncation does, and removes the segments after it.
func truncate(t testing.TB, logDir string, off int64) {
	t.Helper()
	for _, b := range batchesOf(t, logDir) {
		if b.base < off {
			continue
		}
		if err := os.Truncate(b.seg, b.pos); err != nil {
			t.Fatal(err)
		}
		p, _ := layout.ReadPartition(partDir(logDir))
		for _, s := range p.Segments {
			if s.Log > b.seg {
				for _, f := range []string{s.Log, s.Index, s.TimeIndex, s.TxnIndex} {
					if f != "" {
						os.Remove(f)
					}
				}
			}
		}
		break
	}
	dropIndexes(t, logDir)
}

// dropIndexes removes index files, which the changes leave stale: a broker
// rebuilds them.
func dropIndexes(t testing.TB, logDir string) {
	p, _ := layout.ReadPartition(partDir(logDir))
	for _, s := range p.Segments {
		for _, f := range []string{s.Index, s.TimeIndex} {
			if f != "" {
				os.Remove(f)
			}
		}
	}
	for _, f := range p.Snapshots {
		os.Remove(f)
	}
}

// logEnd is the offset after a replica's last batch.
func logEnd(t testing.TB, logDir string) int64 {
	bs := batchesOf(t, logDir)
	return bs[len(bs)-1].last + 1
}

// appendBatches writes n batches of 5 records from the replica's log end,
// with leader epoch epoch and values made of tag, as a leader of that epoch
// would append them.
func appendBatches(t testing.TB, logDir string, epoch int32, n int, tag string) {
	t.Helper()
	bs := batchesOf(t, logDir)
	seg := bs[len(bs)-1].seg
	next := bs[len(bs)-1].last + 1
	var buf []byte
	ts := time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	for i := 0; i < n; i++ {
		o := logfmt.DefaultBatchOptions(next)
		o.PartitionLeaderEpoch, o.Compression = epoch, codec.None
		var recs []logfmt.Record
		for k := 0; k < 5; k++ {
			recs = append(recs, logfmt.Record{Offset: next, Timestamp: ts + next, Key: []byte("k" + string(rune('a'+k))), Value: []byte(tag)})
			next++
		}
		var err error
		if buf, err = logfmt.AppendBatch(buf, o, recs); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.OpenFile(seg, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(buf); err != nil {
		t.Fatal(err)
	}
	f.Close()
	dropIndexes(t, logDir)
}

// setEpochs writes the replica's leader-epoch-checkpoint.
func setEpochs(t testing.TB, logDir string, es ...checkpoint.EpochEntry) {
	write(t, filepath.Join(partDir(logDir), layout.LeaderEpochCheckpointFile), checkpoint.AppendLeaderEpochs(nil, es))
}

// setRoot sets the partition's entry of a root offset checkpoint.
func setRoot(t testing.TB, logDir, name string, off int64) {
	write(t, filepath.Join(logDir, name), checkpoint.AppendOffsets(nil, []checkpoint.OffsetEntry{{Topic: topic, Partition: 0, Offset: off}}))
}

func open(t testing.TB, dirs ...string) []replicas.Source {
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
		s, err := replicas.OpenLogDirs(set, replicas.Options{})
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
	var vs []*replicas.Verdict
	sum, err := replicas.Run(open(t, dirs...), o, func(v *replicas.Verdict) error {
		vs = append(vs, v)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return vs, sum
}

func replicaOf(t testing.TB, v *replicas.Verdict, broker string) replicas.Replica {
	t.Helper()
	i := slices.IndexFunc(v.Replicas, func(r replicas.Replica) bool { return r.Broker == broker })
	if i < 0 {
		t.Fatalf("no broker %s in %v", broker, v.Replicas)
	}
	return v.Replicas[i]
}

// runWith is run with load options.
func runWith(t testing.TB, lo replicas.Options, o replicas.RunOptions, dirs ...string) ([]*replicas.Verdict, replicas.Summary) {
	t.Helper()
	var srcs []replicas.Source
	for _, d := range dirs {
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
	var vs []*replicas.Verdict
	sum, err := replicas.Run(srcs, o, func(v *replicas.Verdict) error {
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
	f, err := logfmt.OpenSegment(b.seg)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.SeekTo(b.pos)
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

// appendRaw appends bytes to a replica's last segment.
func appendRaw(t testing.TB, logDir string, buf []byte) {
	t.Helper()
	bs := batchesOf(t, logDir)
	f, err := os.OpenFile(bs[len(bs)-1].seg, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(buf); err != nil {
		t.Fatal(err)
	}
	dropIndexes(t, logDir)
}

// rewrite replaces, in place, the uncompressed batch holding offset off with
// the batch change makes of its records, which must keep its size.
func rewrite(t testing.TB, logDir string, off int64, change func(recs []logfmt.Record, o *logfmt.BatchOptions)) {
	t.Helper()
	for _, b := range batchesOf(t, logDir) {
		if b.base > off || b.last < off {
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
		w, err := os.OpenFile(b.seg, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		if _, err := w.WriteAt(out, b.pos); err != nil {
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
