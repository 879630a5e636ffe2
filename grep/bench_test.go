package grep

import (
	"io"
	"runtime"
	"testing"

	"github.com/logtool/logtool/dump"
	"github.com/logtool/logtool/fetch"
	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/internal/target"
	"github.com/logtool/logtool/internal/testkit/testutil"
	"github.com/logtool/logtool/logfmt/codec"
	"github.com/logtool/logtool/logfmt/layout"
)

// benchPartition is one partition of a single segment as gen writes it
// by default (100-byte values, batches of 10), about 64 MiB, with 100,000
// keys: the shape of the targets, scaled down. scripts/bench.sh
// runs the same comparisons on 256 MiB.
func benchPartition(b *testing.B, c codec.Type) (*layout.Partition, int64) {
	b.Helper()
	dir := genDir(b, gen.Options{Topics: []string{"bench"}, Records: 480_000, Keys: 100_000, Magic: 2, Compression: c,
		SegmentBytes: 1 << 30, Seed: 7})
	p := partition(b, dir)
	return p, testutil.LogBytes(b, p)
}

// benchGrep is `logtool grep --key key-004242` on the partition, with the
// command's workers.
func benchGrep(b *testing.B, c codec.Type) {
	p, size := benchPartition(b, c)
	m, err := NewMatcher(Spec{Keys: []string{"key-004242"}})
	if err != nil {
		b.Fatal(err)
	}
	o := Options{Match: m, Range: fetch.DefaultOptions(), Workers: runtime.GOMAXPROCS(0), KeyMapMemory: 128 << 20}
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	defer testutil.ReportCPU(b, size)()
	for range b.N {
		var n int64
		if err := Run(io.Discard, []Job{{Partition: p}}, o, func(r *Result) {
			if r.Err != nil {
				b.Fatal(r.Err)
			}
			n = r.Counts.Total()
		}); err != nil {
			b.Fatal(err)
		}
		if n == 0 {
			b.Fatal("no match")
		}
	}
}

// BenchmarkGrepKey is grep --key on uncompressed data; BenchmarkGrepCat
// reads the same files as cat would, for the 3× target.
func BenchmarkGrepKey(b *testing.B) { benchGrep(b, codec.None) }

func BenchmarkGrepCat(b *testing.B) {
	p, size := benchPartition(b, codec.None)
	b.SetBytes(size)
	buf := make([]byte, 128<<10)
	b.ResetTimer()
	defer testutil.ReportCPU(b, size)()
	for range b.N {
		testutil.Cat(b, p, buf)
	}
}

// BenchmarkGrepKeyLZ4 and BenchmarkGrepKeyZstd are grep --key on
// compressed data; BenchmarkGrepDumpDeepLZ4 and BenchmarkGrepDumpDeepZstd
// are dump --deep-iteration of the same files, for the 1.5× target.
func BenchmarkGrepKeyLZ4(b *testing.B)        { benchGrep(b, codec.LZ4) }
func BenchmarkGrepKeyZstd(b *testing.B)       { benchGrep(b, codec.Zstd) }
func BenchmarkGrepDumpDeepLZ4(b *testing.B)   { benchDumpDeep(b, codec.LZ4) }
func BenchmarkGrepDumpDeepZstd(b *testing.B)  { benchDumpDeep(b, codec.Zstd) }
func BenchmarkGrepDumpDeepPlain(b *testing.B) { benchDumpDeep(b, codec.None) }

func benchDumpDeep(b *testing.B, c codec.Type) {
	p, size := benchPartition(b, c)
	var paths []string
	for _, s := range p.Segments {
		paths = append(paths, s.Log)
	}
	set, err := target.Resolve(paths, target.Options{Command: "dump", Takes: target.Files})
	if err != nil {
		b.Fatal(err)
	}
	o := dump.DefaultOptions()
	o.Deep, o.Workers = true, runtime.GOMAXPROCS(0)
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	defer testutil.ReportCPU(b, size)()
	for range b.N {
		if res, err := dump.Run(set, o, io.Discard, io.Discard); err != nil || res.Problems != 0 {
			b.Fatal(err, res)
		}
	}
}
