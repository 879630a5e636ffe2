package clustermeta

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/logtool/logtool/logfmt/kraft"
	"github.com/logtool/logtool/logfmt/layout"
)

// writeLargeLog writes the metadata log of a large cluster, n records long:
// 10,000 topics of 10 partitions on 3 of 6 brokers, each with three
// configs, then the churn of a busy cluster: ISR changes, leader moves,
// config changes, topics deleted and created again, and the controller's
// NoOp heartbeat, one record a batch as it writes them. Segments roll at
// 64 MiB.
func writeLargeLog(dir string, n int) error {
	rng := rand.New(rand.NewPCG(1, 2))
	w := &segWriter{dir: dir, epoch: 5, ts: 1_700_000_000_000}
	w.add(true, kraft.AppendBeginTransactionRecord(nil, "Bootstrap records"), kraft.AppendFeatureLevelRecord(nil, "metadata.version", 21),
		kraft.AppendConfigRecord(nil, ResourceBroker, "", "min.insync.replicas", ptr("2")), kraft.AppendEndTransactionRecord(nil))
	const topics, parts = 10000, 10
	dirs := [6]TopicID{}
	for i := range dirs {
		dirs[i] = idOf(1000 + i)
	}
	replicas := func(t, p int) []int32 {
		b := int32((t + p) % 6)
		return []int32{1 + b, 1 + (b+1)%6, 1 + (b+2)%6}
	}
	var ids [topics]TopicID
	topic := func(t, gen int) {
		ids[t] = idOf(t*100 + gen)
		name := fmt.Sprintf("topic-%05d", t)
		recs := [][]byte{kraft.AppendTopicRecord(nil, name, ids[t]),
			kraft.AppendConfigRecord(nil, ResourceTopic, name, "cleanup.policy", ptr([]string{"delete", "compact", "compact,delete"}[t%3])),
			kraft.AppendConfigRecord(nil, ResourceTopic, name, "retention.ms", ptr(fmt.Sprint(3600000*(1+t%168)))),
			kraft.AppendConfigRecord(nil, ResourceTopic, name, "segment.bytes", ptr("104857600"))}
		for p := 0; p < parts; p++ {
			r := replicas(t, p)
			recs = append(recs, kraft.AppendPartitionRecord(nil, kraft.PartitionSpec{Topic: ids[t], Partition: int32(p), Replicas: r, ISR: r, Leader: r[0],
				Directories: []TopicID{dirs[r[0]-1], dirs[r[1]-1], dirs[r[2]-1]}, Version: 2}))
		}
		w.add(true, recs...)
	}
	for t := 0; t < topics; t++ {
		topic(t, 0)
	}
	for w.records < n {
		switch k := rng.IntN(100); {
		case k < 50:
			w.add(false, AppendNoOpRecord(nil))
		case k < 98:
			var recs [][]byte
			for range 1 + rng.IntN(10) {
				t, p := rng.IntN(topics), rng.IntN(parts)
				r := replicas(t, p)
				isr := r[:1+rng.IntN(3)]
				recs = append(recs, kraft.AppendPartitionChangeRecord(nil, kraft.ChangeSpec{Topic: ids[t], Partition: int32(p), Leader: isr[0], ISR: isr, Version: 2}))
			}
			w.add(false, recs...)
		case k < 99:
			t := rng.IntN(topics)
			w.add(false, kraft.AppendConfigRecord(nil, ResourceTopic, fmt.Sprintf("topic-%05d", t), "retention.ms", ptr(fmt.Sprint(rng.IntN(1<<30)))))
		default:
			t := rng.IntN(topics)
			w.add(false, kraft.AppendRemoveTopicRecord(nil, ids[t]))
			topic(t, 1+rng.IntN(99))
		}
	}
	return w.flush()
}

func ptr(s string) *string { return &s }

func idOf(i int) TopicID {
	var id TopicID
	id[0], id[14], id[15] = 1, byte(i>>8), byte(i)
	id[13] = byte(i >> 16)
	return id
}

// segWriter appends batches to segments of at most 64 MiB.
type segWriter struct {
	dir     string
	buf     []byte
	base    int64
	next    int64
	epoch   int32
	ts      int64
	records int
}

func (w *segWriter) add(oneBatch bool, recs ...[]byte) {
	for len(recs) > 0 {
		n := len(recs)
		if !oneBatch {
			n = min(n, 10)
		}
		var err error
		if w.buf, err = kraft.AppendBatch(w.buf, w.next, w.epoch, w.ts, false, 0, recs[:n]...); err != nil {
			panic(err)
		}
		w.next += int64(n)
		w.ts += 500
		w.records += n
		recs = recs[n:]
		if len(w.buf) >= 64<<20 {
			if err := w.flush(); err != nil {
				panic(err)
			}
		}
	}
}

func (w *segWriter) flush() error {
	err := os.WriteFile(filepath.Join(w.dir, layout.SegmentName(w.base, layout.LogExt)), w.buf, 0o644)
	w.buf, w.base = w.buf[:0], w.next
	return err
}

// benchLogEnv names a metadata directory written by TestWriteBenchLog,
// so that scripts/bench.sh times the replay alone, in a process of its own.
const benchLogEnv = "LOGTOOL_BENCH_METADATA"

// TestWriteBenchLog writes the 1M-record log of BenchmarkReplay into the
// directory $LOGTOOL_BENCH_METADATA_WRITE, for scripts/bench.sh.
func TestWriteBenchLog(t *testing.T) {
	dir := os.Getenv(benchLogEnv + "_WRITE")
	if dir == "" {
		t.Skip(benchLogEnv + "_WRITE not set")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := writeLargeLog(dir, 1_000_000); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkReplay replays a 1M-record metadata log (issue 17: under 2 s
// and 64 MiB), the one in $LOGTOOL_BENCH_METADATA when set.
func BenchmarkReplay(b *testing.B) {
	dir := os.Getenv(benchLogEnv)
	if dir == "" {
		dir = filepath.Join(b.TempDir(), PartitionDir)
		if err := os.Mkdir(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := writeLargeLog(dir, 1_000_000); err != nil {
			b.Fatal(err)
		}
	}
	var size int64
	segs, _ := filepath.Glob(filepath.Join(dir, "*"+layout.LogExt))
	for _, s := range segs {
		fi, err := os.Stat(s)
		if err != nil {
			b.Fatal(err)
		}
		size += fi.Size()
	}
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		im, err := Load(dir)
		if err != nil {
			b.Fatal(err)
		}
		if i == 0 {
			b.ReportMetric(float64(im.Records), "records")
			if len(im.Topics()) != 10000 || len(im.Notes) > 0 {
				b.Fatalf("%d topics, notes %q", len(im.Topics()), im.Notes)
			}
		}
	}
}
