package verify

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/internal/testkit/gentest"
	"github.com/logtool/logtool/internal/testkit/testutil"
	"github.com/logtool/logtool/logfmt/codec"
)

// benchDir generates a log directory of partitions of about 64 MiB of v2
// batches each, gen's default record shape (100-byte values, up to 10
// records a batch), and returns it with the bytes of its logs.
func benchDir(b *testing.B, partitions int, c codec.Type) (string, int64) {
	b.Helper()
	dir := b.TempDir()
	if _, err := gen.Generate(gen.Options{Out: dir, Topics: []string{"bench"}, Partitions: partitions, Records: 480_000, Keys: 1000,
		Magic: 2, Compression: c, SegmentBytes: 16 << 20, Seed: 7}); err != nil {
		b.Fatal(err)
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "*", "*.log"))
	var size int64
	for _, l := range logs {
		fi, err := os.Stat(l)
		if err != nil {
			b.Fatal(err)
		}
		size += fi.Size()
	}
	return dir, size
}

func benchVerify(b *testing.B, partitions int, c codec.Type, o Options) {
	dir, size := benchDir(b, partitions, c)
	o.Workers = partitions
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r := run(b, o, dir); r.problems != 0 || len(r.failures) != 0 {
			b.Fatal(r)
		}
	}
}

// BenchmarkVerify is `logtool verify` on one partition: framing, checksums
// and offsets of every batch, and reindex's check of the index files, which
// reads the log a second time alongside.
func BenchmarkVerify(b *testing.B) { benchVerify(b, 1, codec.None, Options{}) }

// BenchmarkVerifyPartitions verifies two partitions at once.
func BenchmarkVerifyPartitions(b *testing.B) { benchVerify(b, 2, codec.None, Options{}) }

// BenchmarkVerifyDeep is `logtool verify --deep`: every record parsed too.
func BenchmarkVerifyDeep(b *testing.B) { benchVerify(b, 1, codec.None, Options{Deep: true}) }

// BenchmarkVerifyDeepLZ4 decompresses every batch.
func BenchmarkVerifyDeepLZ4(b *testing.B) { benchVerify(b, 1, codec.LZ4, Options{Deep: true}) }

// BenchmarkVerifyDeepParallel is `logtool verify --deep` on a partition of
// small compressed batches (issue 19: 8 records of 200-byte values), with
// --workers at GOMAXPROCS, side by side at 1 and 2 (and every CPU): the
// speedup is the target's ratio.
func BenchmarkVerifyDeepParallel(b *testing.B) {
	for _, c := range []codec.Type{codec.Gzip, codec.Zstd} {
		b.Run(c.String(), func(b *testing.B) {
			part, _, size, err := gentest.SmallBatches(b.TempDir(), c, 200_000)
			if err != nil {
				b.Fatal(err)
			}
			testutil.Procs(b, func(b *testing.B) {
				b.SetBytes(size)
				defer testutil.ReportCPU(b, size)()
				for b.Loop() {
					if r := run(b, Options{Deep: true, Workers: runtime.GOMAXPROCS(0)}, part); r.problems != 0 || len(r.failures) != 0 {
						b.Fatal(r)
					}
				}
			})
		})
	}
}
