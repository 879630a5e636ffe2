package testutil

import "testing"

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
