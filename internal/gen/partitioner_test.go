package gen

import (
	"path/filepath"
	"testing"

	"github.com/logtool/logtool/logfmt"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The values of Kafka's UtilsTest.testMurmur2.
func TestMurmur2KafkaValues(t *testing.T) {
	for in, want := range map[string]int32{
		"21":                         -973932308,
		"foobar":                     -790332482,
		"a-little-bit-long-string":   -985981536,
		"a-little-bit-longer-string": -1486304829,
		"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
		"abc": 479470107,
	} {
		if got := murmur2([]byte(in)); got != want {
			t.Errorf("murmur2(%q) = %d, want %d", in, got, want)
		}
	}
}

// franz-go's sticky key partitioner, an independent implementation of the
// Java producer's, places every key where keyPartition does.
func TestKeyPartitionAgreesWithFranzGo(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, 12} {
		part := kgo.StickyKeyPartitioner(nil).ForTopic("t")
		for i := range 2000 {
			k := keyName(i)
			if got, want := keyPartition(k, n), part.Partition(&kgo.Record{Key: k}, n); int(got) != want {
				t.Fatalf("%s of %d partitions: %d, franz-go %d", k, n, got, want)
			}
		}
	}
}

// A generated topic holds each key on the partition the Java producer would
// have sent it to, and on no other.
func TestGeneratedKeysOnTheirPartition(t *testing.T) {
	o := Options{Out: t.TempDir(), Topics: []string{"orders"}, Partitions: 3, Records: 300, Keys: 40, Magic: 2, Seed: 5}
	parts, err := Generate(o)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int32{}
	for _, p := range parts {
		for _, k := range readKeys(t, p.Dir) {
			if want := keyPartition([]byte(k), 3); want != p.Partition {
				t.Fatalf("%s on partition %d, the default partitioner sends it to %d", k, p.Partition, want)
			}
			seen[k] = p.Partition
		}
	}
	if len(seen) < 30 {
		t.Errorf("only %d of 40 keys written", len(seen))
	}
}

// readKeys returns the keys of the data records of every segment in dir.
func readKeys(t *testing.T, dir string) []string {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil || len(logs) == 0 {
		t.Fatalf("no segments in %s: %v", dir, err)
	}
	var keys []string
	for _, path := range logs {
		seg, err := logfmt.OpenSegment(path)
		if err != nil {
			t.Fatal(err)
		}
		var it logfmt.RecordIter
		for seg.Next() {
			if b := seg.Batch(); !b.IsControl() {
				if err := it.Reset(b); err != nil {
					t.Fatal(err)
				}
				for it.Next() {
					keys = append(keys, string(it.Record().Key))
				}
			}
		}
		if err := seg.Err(); err != nil {
			t.Fatal(err)
		}
		seg.Close()
	}
	return keys
}
