package compact

import (
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/codec"
)

// TestLargeRecordBufferReused: compacting a partition of large records a
// second time allocates no buffer for them, as the first run's are given
// back. The cleaning pass's iterator, which keeps its bytes past a
// batch's end, kept its record's buffer in the batch workers' pool, and
// every later partition read its first large record into a new one: with
// four workers on 20 MiB zstd records compact took up to 139 MiB.
func TestLargeRecordBufferReused(t *testing.T) {
	if raceOn {
		t.Skip("the race detector makes sync.Pool drop what it is given; make test runs this without it")
	}
	value := make([]byte, 8<<20)
	rng := rand.New(rand.NewPCG(3, 3)) // incompressible, so zstd stores it whole
	for i := 0; i < len(value); i += 8 {
		binary.LittleEndian.PutUint64(value[i:], rng.Uint64())
	}
	var seg []byte
	for i, k := range []string{"k0", "k1"} {
		o := logfmt.DefaultBatchOptions(int64(i))
		o.Compression = codec.Zstd
		var err error
		if seg, err = logfmt.AppendBatch(seg, o, []logfmt.Record{{Offset: int64(i), Timestamp: t0 + int64(i), Key: []byte(k), Value: value}}); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(t.TempDir(), "large-0")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "00000000000000000000.log"), seg, 0o644); err != nil {
		t.Fatal(err)
	}
	o := testOptions(t0 + day)
	o.MaxLag, o.DryRun = 1, true
	if r := mustCompact(t, dir, o); r.Passes == 0 {
		t.Fatalf("no pass: %s", r.Reason)
	}
	for range 3 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		mustCompact(t, dir, o)
		runtime.ReadMemStats(&after)
		if got := after.TotalAlloc - before.TotalAlloc; got >= uint64(len(value)) {
			t.Fatalf("a later run allocated %d bytes, the size of a record or more", got)
		}
	}
}
