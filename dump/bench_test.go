//go:build unix

package dump

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/internal/testkit/gentest"
	"github.com/logtool/logtool/internal/testkit/testutil"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/codec"
)

// benchSegment generates one v2 segment of about 64 MiB in the shape of
// the speed targets (100-byte values, batches of up to 20 records).
// LOGTOOL_BENCH_SEGMENT names an existing segment to use instead, so the
// targets can be checked on their 512 MB segment.
func benchSegment(b *testing.B) (path string, size int64) {
	b.Helper()
	path = os.Getenv("LOGTOOL_BENCH_SEGMENT")
	if path == "" {
		parts, err := gen.Generate(gen.Options{Out: b.TempDir(), Topics: []string{"bench"}, Records: 480_000, Keys: 1000,
			Magic: 2, BatchRecords: 20, SegmentBytes: 1 << 30, Seed: 7})
		if err != nil {
			b.Fatal(err)
		}
		path = filepath.Join(parts[0].Dir, "00000000000000000000.log")
	}
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	return path, fi.Size()
}

func benchDump(b *testing.B, o Options) {
	path, size := benchSegment(b)
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	defer reportCPU(b)()
	for i := 0; i < b.N; i++ {
		res, err := Run(resolve(b, path), o, io.Discard, io.Discard)
		if err != nil || res.Problems != 0 {
			b.Fatal(err, res)
		}
	}
}

// BenchmarkDumpShallow is `logtool dump <segment>`: one Kafka batch line
// per batch, every CRC checked.
func BenchmarkDumpShallow(b *testing.B) { benchDump(b, DefaultOptions()) }

// BenchmarkDumpDeep is `logtool dump --deep-iteration <segment>`: a line per
// record too.
func BenchmarkDumpDeep(b *testing.B) {
	o := DefaultOptions()
	o.Deep = true
	benchDump(b, o)
}

// BenchmarkDumpDeepJSON is the same in JSON Lines.
func BenchmarkDumpDeepJSON(b *testing.B) {
	o := DefaultOptions()
	o.Deep, o.JSON = true, true
	benchDump(b, o)
}

// BenchmarkCat reads the segment as cat does, for scale.
func BenchmarkCat(b *testing.B) {
	path, size := benchSegment(b)
	b.SetBytes(size)
	buf := make([]byte, 128<<10)
	b.ResetTimer()
	defer reportCPU(b)()
	for i := 0; i < b.N; i++ {
		testutil.CatFile(b, path, buf)
	}
}

// BenchmarkKmsgDecode decodes the same segment's batches and records with
// franz-go's kmsg, as a Go program using it would: RecordBatch.ReadFrom per
// batch, Record.ReadFrom per record. It is the yardstick of the issue's
// deep-iteration target. The batch and record values are reused, as a
// careful caller would, so kmsg allocates only what it must; framing uses
// the same SegmentReader as the dump, and no CRC is checked (the dump checks
// every one).
func BenchmarkKmsgDecode(b *testing.B) {
	path, size := benchSegment(b)
	b.SetBytes(size)
	b.ReportAllocs()
	var rb kmsg.RecordBatch
	var r kmsg.Record
	b.ResetTimer()
	defer reportCPU(b)()
	for i := 0; i < b.N; i++ {
		sf, err := logfmt.OpenSegment(path)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for sf.Next() {
			if err := rb.ReadFrom(sf.Batch().Data); err != nil {
				b.Fatal(err)
			}
			recs := rb.Records
			for j := 0; j < int(rb.NumRecords); j++ {
				if err := r.ReadFrom(recs); err != nil {
					b.Fatal(err)
				}
				recs = recs[varintLen(r.Length)+int(r.Length):]
				n++
			}
		}
		if err := sf.Err(); err != nil {
			b.Fatal(err)
		}
		sf.Close()
		if n == 0 {
			b.Fatal("no records")
		}
	}
}

// varintLen is the size of v as a zigzag varint.
func varintLen(v int32) int {
	u := uint32(v<<1) ^ uint32(v>>31)
	n := 1
	for ; u >= 0x80; u >>= 7 {
		n++
	}
	return n
}

// BenchmarkDumpSummary is `logtool dump --summary <segment>`: every batch
// read and checked, no line printed.
func BenchmarkDumpSummary(b *testing.B) {
	o := DefaultOptions()
	o.Summary, o.SummaryOnly = true, true
	benchDump(b, o)
}

// reportCPU adds the process's CPU time (user and system, all goroutines)
// per op to the benchmark's figures. The machines these run on are shared,
// and there wall time measures the neighbours as much as the code; CPU time
// also shows what the dump's second goroutine costs.
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() { b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op") }
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkDumpDeepParallel is `logtool dump --deep-iteration` on a
// partition of small compressed batches (issue 19: 8 records of 200-byte
// values), with --workers at GOMAXPROCS, side by side at 1 and 2 (and every
// CPU): the speedup is the target's ratio.
func BenchmarkDumpDeepParallel(b *testing.B) {
	for _, c := range []codec.Type{codec.Gzip, codec.Zstd} {
		b.Run(c.String(), func(b *testing.B) {
			_, path, size, err := gentest.SmallBatches(b.TempDir(), c, 200_000)
			if err != nil {
				b.Fatal(err)
			}
			testutil.Procs(b, func(b *testing.B) {
				o := DefaultOptions()
				o.Deep, o.Workers = true, runtime.GOMAXPROCS(0)
				b.SetBytes(size)
				defer testutil.ReportCPU(b, size)()
				for b.Loop() {
					res, err := Run(resolve(b, path), o, io.Discard, io.Discard)
					if err != nil || res.Problems != 0 {
						b.Fatal(err, res)
					}
				}
			})
		})
	}
}
