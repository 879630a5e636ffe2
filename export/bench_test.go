package export

import (
	"io"
	"runtime"
	"testing"

	"github.com/logtool/logtool/fetch"
	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/internal/testkit/testutil"
	"github.com/logtool/logtool/logfmt/layout"
)

// benchPartition is an uncompressed v2 partition as gen writes it by
// default (100-byte values, batches of up to 10), the shape of issue 20's
// 300 MB/s target.
func benchPartition(b *testing.B) (*layout.Partition, int64) {
	b.Helper()
	parts, err := gen.Generate(gen.Options{Out: b.TempDir(), Topics: []string{"bench"}, Records: 300_000, Keys: 100_000, Magic: 2, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	p, err := layout.ReadPartition(parts[0].Dir)
	if err != nil {
		b.Fatal(err)
	}
	return p, testutil.LogBytes(b, p)
}

// BenchmarkExport is export's speed in MB/s of .log input, JSON encoding
// included; BenchmarkExportCat reads the same files as cat would, for the
// ratio.
func BenchmarkExport(b *testing.B) {
	p, size := benchPartition(b)
	b.SetBytes(size)
	b.ResetTimer()
	defer testutil.ReportCPU(b, size)()
	for range b.N {
		if _, err := Partition(io.Discard, p, Options{Fetch: fetch.DefaultOptions()}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkExportCat(b *testing.B) {
	p, size := benchPartition(b)
	b.SetBytes(size)
	buf := make([]byte, 128<<10)
	b.ResetTimer()
	defer testutil.ReportCPU(b, size)()
	for range b.N {
		testutil.Cat(b, p, buf)
	}
}

// BenchmarkExportParallel is the same export run as the command runs it:
// the partition's 16 MiB units encoded by one goroutine per CPU.
func BenchmarkExportParallel(b *testing.B) {
	p, size := benchPartition(b)
	b.SetBytes(size)
	b.ResetTimer()
	defer testutil.ReportCPU(b, size)()
	for range b.N {
		o := Options{Fetch: fetch.DefaultOptions(), Workers: runtime.GOMAXPROCS(0)}
		if err := Run(io.Discard, []*layout.Partition{p}, o, func(Result) {}); err != nil {
			b.Fatal(err)
		}
	}
}
