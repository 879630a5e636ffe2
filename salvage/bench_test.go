package salvage

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/internal/testkit/testutil"
	"github.com/logtool/logtool/logfmt/layout"
)

// benchPartition generates an undamaged uncompressed partition of one
// segment. LOGTOOL_BENCH_PARTITION names an existing partition directory of
// one segment to use instead, so the target can be checked on bench.sh's
// 512 MiB dump segment.
func benchPartition(b *testing.B) (string, int64) {
	b.Helper()
	dir := os.Getenv("LOGTOOL_BENCH_PARTITION")
	if dir == "" {
		parts, err := gen.Generate(gen.Options{Out: b.TempDir(), Topics: []string{"bench"}, Records: 300_000, Keys: 100_000, Magic: 2, Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		dir = parts[0].Dir
	}
	p, err := layout.ReadPartition(dir)
	if err != nil {
		b.Fatal(err)
	}
	if len(p.Segments) != 1 || p.Segments[0].Log == "" {
		b.Fatalf("%s: want one segment", dir)
	}
	fi, err := os.Stat(p.Segments[0].Log)
	if err != nil {
		b.Fatal(err)
	}
	return dir, fi.Size()
}

// BenchmarkSalvage salvages an undamaged uncompressed partition (every
// record checked, every byte copied and fsynced); BenchmarkSalvageCat
// copies the same .log as `cat > file && sync file` does (the same bytes
// written into a new file and fsynced once), for the ratio (issue 20:
// within 2x cat).
func BenchmarkSalvage(b *testing.B) {
	dir, size := benchPartition(b)
	tmp := b.TempDir()
	b.SetBytes(size)
	b.ResetTimer()
	defer testutil.ReportCPU(b, size)()
	for range b.N {
		out := filepath.Join(tmp, "bench-0")
		if _, err := Partition(dir, out, Options{}); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		os.RemoveAll(out)
		b.StartTimer()
	}
}

func BenchmarkSalvageCat(b *testing.B) {
	dir, size := benchPartition(b)
	tmp := b.TempDir()
	b.SetBytes(size)
	b.ResetTimer()
	defer testutil.ReportCPU(b, size)()
	for range b.N {
		in, err := os.Open(filepath.Join(dir, layout.SegmentName(0, layout.LogExt)))
		if err != nil {
			b.Fatal(err)
		}
		out, err := os.Create(filepath.Join(tmp, "copy.log"))
		if err != nil {
			b.Fatal(err)
		}
		// cat's loop: read and write through a user-space buffer.
		if _, err := io.CopyBuffer(struct{ io.Writer }{out}, struct{ io.Reader }{in}, make([]byte, 128<<10)); err != nil {
			b.Fatal(err)
		}
		if err := out.Sync(); err != nil {
			b.Fatal(err)
		}
		in.Close()
		out.Close()
		b.StopTimer()
		os.Remove(out.Name())
		b.StartTimer()
	}
}
