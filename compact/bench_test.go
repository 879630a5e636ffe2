package compact

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/internal/testkit/gentest"
	"github.com/logtool/logtool/internal/testkit/testutil"
	"github.com/logtool/logtool/logfmt/codec"
)

// BenchmarkCompact compacts a generated partition of 200,000 records over
// 20,000 keys (10 per key, 1% tombstones), the shape of the 2 GiB
// target at a tenth of the keys. Each iteration starts from a fresh copy;
// the copy is not timed. MB/s is of the input log. LOGTOOL_BENCH_PARTITION
// names an existing partition to compact instead, so the target can be
// checked on the 2 GiB (scripts/bench.sh generates one).
func BenchmarkCompact(b *testing.B) {
	part := os.Getenv("LOGTOOL_BENCH_PARTITION")
	if part == "" {
		src := b.TempDir()
		if _, err := gen.Generate(gen.Options{Out: src, Topics: []string{"bench"}, Magic: 2, Records: 200_000, Keys: 20_000,
			ValueBytes: 170, TombstoneRatio: 0.01, SegmentBytes: 16 << 20, StartTime: t0, Seed: 1}); err != nil {
			b.Fatal(err)
		}
		part = filepath.Join(src, "bench-0")
	}
	var size int64
	entries, _ := os.ReadDir(part)
	for _, e := range entries {
		if filepath.Ext(e.Name()) == ".log" {
			fi, _ := e.Info()
			size += fi.Size()
		}
	}
	now := t0 + 30*day
	if os.Getenv("LOGTOOL_BENCH_PARTITION") != "" {
		now = 1893456000000 // 2030-01-01: past any generated data's max lag
	}
	o := DefaultOptions(now)
	o.MaxLag = day
	b.SetBytes(size)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dir := filepath.Join(b.TempDir(), "bench-0")
		testutil.CopyTree(b, part, dir)
		b.StartTimer()
		r, err := Compact(dir, o)
		if err != nil || r.Passes < 1 {
			b.Fatalf("%v, %+v", err, r)
		}
	}
}

// BenchmarkOffsetMap measures building the map: one put per record.
func BenchmarkOffsetMap(b *testing.B) {
	m := newTestMap(b, 128<<20)
	keys := make([][]byte, 1<<16)
	for i := range keys {
		keys[i] = []byte(ints(i * 7919)[0])
	}
	b.SetBytes(int64(len(keys[0])))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.put(keys[i%len(keys)], int64(i))
	}
}

// BenchmarkOffsetMapPut puts two million digests of 200,000 keys, in
// batches of ten, into a default 128 MiB map the way the map pass does: the
// measure behind touchAhead.
func BenchmarkOffsetMapPut(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	it := &mapItem{hs: make([]keyHash, 2_000_000)}
	for i := range it.hs {
		k := rng.Uint64N(200_000)
		it.hs[i] = keyHash{h1: k * 0x9E3779B97F4A7C15, h2: k, offset: int64(i)}
		if i%10 == 9 {
			it.ends = append(it.ends, batchEnd{n: i + 1, last: int64(i)})
		}
	}
	m := newTestMap(b, 128<<20)
	ps := &pass{c: &cleaner{m: m}}
	b.SetBytes(int64(len(it.hs)) * bytesPerEntry)
	for b.Loop() {
		m.reset()
		if ps.putItem(it) {
			b.Fatal("the map filled")
		}
	}
}

// BenchmarkCompactParallel compacts a partition of small compressed
// batches (issue 19: 8 records of 200-byte values, 10 per key), with
// BatchWorkers at GOMAXPROCS as Run gives one partition, side by side at 1
// and 2 (and every CPU): the speedup is the target's ratio. The copy each
// iteration starts from is not timed. A million records make the passes
// outweigh what does not depend on the log's size (finding the latest
// offsets scans the whole 128 MiB map).
func BenchmarkCompactParallel(b *testing.B) {
	for _, c := range []codec.Type{codec.Gzip, codec.Zstd} {
		b.Run(c.String(), func(b *testing.B) {
			part, _, size, err := gentest.SmallBatches(b.TempDir(), c, 1_000_000)
			if err != nil {
				b.Fatal(err)
			}
			testutil.Procs(b, func(b *testing.B) {
				// A million records a second apart from 2024-01-01 (gen's
				// start) end within January.
				o := DefaultOptions(time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC).UnixMilli())
				o.MaxLag, o.BatchWorkers = day, runtime.GOMAXPROCS(0)
				b.SetBytes(size)
				defer testutil.ReportCPU(b, size)()
				for range b.N {
					b.StopTimer()
					dir := filepath.Join(b.TempDir(), "bench-0")
					testutil.CopyTree(b, part, dir)
					b.StartTimer()
					if r, err := Compact(dir, o); err != nil || r.Passes < 1 {
						b.Fatalf("%v, %+v", err, r)
					}
				}
			})
		})
	}
}
