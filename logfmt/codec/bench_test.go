package codec

import (
	"fmt"
	"testing"
)

// The benchmarks work on JSON lines, compressible like typical Kafka values:
// 1 MiB for throughput, 1 KiB for the per-call cost of a small batch. They
// reuse the output buffer as a batch reader would.
var benchSizes = []int{1 << 10, 1 << 20}

func BenchmarkDecompress(b *testing.B) {
	for _, size := range benchSizes {
		in := jsonish(size)
		for _, ct := range codecs[1:] {
			b.Run(fmt.Sprintf("%v/%dKiB", ct, size>>10), func(b *testing.B) {
				enc, err := Compress(nil, ct, in, 2)
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(len(in)))
				b.ReportAllocs()
				var out []byte
				for b.Loop() {
					if out, err = Decompress(out[:0], ct, enc, 2, 0); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(len(in))/float64(len(enc)), "ratio")
			})
		}
	}
}

func BenchmarkCompress(b *testing.B) {
	for _, size := range benchSizes {
		in := jsonish(size)
		for _, ct := range codecs[1:] {
			b.Run(fmt.Sprintf("%v/%dKiB", ct, size>>10), func(b *testing.B) {
				b.SetBytes(int64(len(in)))
				b.ReportAllocs()
				var out []byte
				var err error
				for b.Loop() {
					if out, err = Compress(out[:0], ct, in, 2); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
