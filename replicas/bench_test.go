package replicas_test

import (
	"fmt"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/internal/target"
	"github.com/logtool/logtool/internal/testkit/testutil"
	"github.com/logtool/logtool/logfmt/layout"
	"github.com/logtool/logtool/replicas"
)

// BenchmarkDigest is digest's speed in MB/s of .log read, on the partition
// shape of issue 20 (uncompressed v2, 100-byte values, batches of 1-10
// records, 0.8 KB on average) and of 1-240 (17 KB on average, as a
// producer's default batch.size of 16 KiB fills them under load), with cat of the same files timed in the
// same run: x-cat is the ratio, whose target is 1.5 on a warm cache; a
// digest's work is mostly per batch, so small batches cost it the most. A digest reads batch headers and checks
// CRCs without decompressing, holding one batch and one window. It runs with
// one worker (one goroutine checksumming, one reading ahead) and with
// GOMAXPROCS, --workers' default (the segment's ranges on every worker), so
// that each run shows what the workers add on its host.
func BenchmarkDigest(b *testing.B) {
	for _, batch := range []int{10, 240} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) { benchmarkDigest(b, batch) })
	}
}

func benchmarkDigest(b *testing.B, batch int) {
	dir := b.TempDir()
	parts, err := gen.Generate(gen.Options{Out: dir, Topics: []string{"bench"}, Records: 300_000, Keys: 100_000, Magic: 2, BatchRecords: batch, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	p, err := layout.ReadPartition(parts[0].Dir)
	if err != nil {
		b.Fatal(err)
	}
	size := testutil.LogBytes(b, p)
	set, err := target.Resolve([]string{dir}, target.Options{Command: "digest", Takes: target.LogDirs})
	if err != nil {
		b.Fatal(err)
	}
	out := filepath.Join(b.TempDir(), "bench.digest")
	buf := make([]byte, 128<<10)
	testutil.Cat(b, p, buf) // warm the cache
	for _, workers := range []int{1, runtime.GOMAXPROCS(0)} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			var cat time.Duration
			b.SetBytes(size)
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				start := time.Now()
				testutil.Cat(b, p, buf)
				cat += time.Since(start)
				srcs, err := replicas.OpenLogDirs(set, replicas.Options{Workers: workers})
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if _, err := replicas.WriteDigest(out, srcs[0]); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(b.Elapsed())/float64(cat), "x-cat")
		})
	}
}
