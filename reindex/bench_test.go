package reindex

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/internal/testkit/testutil"
	"github.com/logtool/logtool/logfmt/codec"
)

// benchPartition is a 64 MiB partition of 1 KiB records in 16 MiB segments.
func benchPartition(b *testing.B) (dir string, logs []string, size int64) {
	b.Helper()
	dir = genPartition(b, gen.Options{Magic: 2, Records: 62000, ValueBytes: 1000, Keys: 1000, BatchRecords: 10,
		SegmentBytes: 16 << 20, Compression: codec.None, Seed: 1})
	logs, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range logs {
		st, err := os.Stat(l)
		if err != nil {
			b.Fatal(err)
		}
		size += st.Size()
	}
	return dir, logs, size
}

// BenchmarkPartition measures a rebuild (whose files are unchanged after
// the first run, so the cost is reading, checksumming and comparing) and a
// check, in log bytes per second, next to cat reading the same .log files
// (the target: a check within 1.5x cat).
func BenchmarkPartition(b *testing.B) {
	dir, logs, size := benchPartition(b)
	b.Run("cat", func(b *testing.B) {
		b.SetBytes(size)
		buf := make([]byte, 128<<10)
		for b.Loop() {
			for _, l := range logs {
				testutil.CatFile(b, l, buf)
			}
		}
	})
	for _, m := range []struct {
		name string
		mode Mode
	}{{"write", Write}, {"check", Check}} {
		b.Run(m.name, func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Partition(dir, all(m.mode)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
