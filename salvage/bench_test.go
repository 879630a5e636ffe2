package salvage

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/internal/testutil"
	"github.com/logtool/logtool/logfmt/layout"
)

func benchPartition(b *testing.B) (string, int64) {
	b.Helper()
	parts, err := gen.Generate(gen.Options{Out: b.TempDir(), Topics: []string{"bench"}, Records: 300_000, Keys: 100_000, Magic: 2, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	p, err := layout.ReadPartition(parts[0].Dir)
	if err != nil {
		b.Fatal(err)
	}
	var size int64
	for _, s := range p.Segments {
		fi, _ := os.Stat(s.Log)
		size += fi.Size()
	}
	return parts[0].Dir, size
}

// BenchmarkSalvage salvages an undamaged uncompressed partition (every
// record checked, every byte copied and fsynced); BenchmarkSalvageCat
// copies the same .log as cat > file would, for the ratio (issue 20: within
// 2x cat).
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
		in, err := os.Open(filepath.Join(dir, layout.SegmentName(0, ".log")))
		if err != nil {
			b.Fatal(err)
		}
		out, err := os.Create(filepath.Join(tmp, "copy.log"))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(struct{ io.Writer }{out}, struct{ io.Reader }{in}); err != nil {
			b.Fatal(err)
		}
		in.Close()
		out.Close()
	}
}
