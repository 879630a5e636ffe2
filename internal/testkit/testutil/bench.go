package testutil

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"testing"

	"github.com/logtool/logtool/logfmt/layout"
)

// ReportCPU adds the process's CPU time per op, and the MB/s of the bytes
// b.SetBytes gave per CPU second, to a benchmark's figures; call the
// returned function after the timed loop. The machines benchmarks run on
// are shared, and there wall time measures the neighbours as much as the
// code.
func ReportCPU(b *testing.B, bytes int64) func() {
	start := CPUTime()
	return func() {
		cpu := CPUTime() - start
		if cpu <= 0 {
			return
		}
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
		if bytes > 0 {
			b.ReportMetric(float64(bytes)*float64(b.N)/cpu.Seconds()/1e6, "cpu-MB/s")
		}
	}
}

// Procs runs f as sub-benchmarks with GOMAXPROCS at 1, at 2 and at every
// CPU when there are more, and reports on each after the first its speedup:
// the first's time per op over its own. f reads runtime.GOMAXPROCS(0) for
// the workers it starts, as the commands' --workers default does.
func Procs(b *testing.B, f func(b *testing.B)) {
	counts := []int{1, 2}
	if n := runtime.NumCPU(); n > 2 {
		counts = append(counts, n)
	}
	var one float64
	for _, n := range counts {
		b.Run(fmt.Sprintf("procs=%d", n), func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(n))
			f(b)
			ns := float64(b.Elapsed()) / float64(b.N)
			if n == 1 {
				one = ns
			} else if one > 0 {
				b.ReportMetric(one/ns, "speedup")
			}
		})
	}
}

// LogBytes is the size of a partition's .log files: what a benchmark of it
// gives b.SetBytes.
func LogBytes(tb testing.TB, p *layout.Partition) int64 {
	tb.Helper()
	var n int64
	for _, s := range p.Segments {
		fi, err := os.Stat(s.Log)
		if err != nil {
			tb.Fatal(err)
		}
		n += fi.Size()
	}
	return n
}

// Cat reads a partition's .log files as cat does, 128 KiB at a time: the
// yardstick benchmarks of reading commands run next to.
func Cat(tb testing.TB, p *layout.Partition, buf []byte) {
	tb.Helper()
	for _, s := range p.Segments {
		CatFile(tb, s.Log, buf)
	}
}

// CatFile reads a file as cat does, len(buf) bytes at a time into buf.
// io.Copy to io.Discard would not: io.Discard's ReadFrom reads 8 KiB at a
// time into a buffer of its own, which on a 512 MiB segment took six times
// as long as cat and flattered every ratio against it.
func CatFile(tb testing.TB, path string, buf []byte) {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	for {
		if _, err := f.Read(buf); err == io.EOF {
			return
		} else if err != nil {
			tb.Fatal(err)
		}
	}
}
