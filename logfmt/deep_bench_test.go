package logfmt_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"testing"

	"github.com/logtool/logtool/internal/testkit/gentest"
	"github.com/logtool/logtool/internal/testkit/testutil"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/codec"
)

// BenchmarkDeepReader reads every record of a gen partition of small
// batches (8 records of 200-byte values, issue 19's shape), side by side:
// "codec" decompresses the payloads alone, held in memory, with a reused
// decoder (the floor for one goroutine); "codec-split" does the same on a
// goroutine per GOMAXPROCS, each with its own decoder and share of the
// payloads, nothing handed between them (the most a DeepReader could
// gain); "iter" is a SegmentReader and a RecordIter, as every deep read was
// before; "deep" is a DeepReader with a worker per GOMAXPROCS, at 1 (which
// is "iter") and 2 (and every CPU). ns/batch is per batch of the partition.
func BenchmarkDeepReader(b *testing.B) {
	for _, c := range []codec.Type{codec.None, codec.Gzip, codec.Zstd} {
		_, path, _, err := gentest.SmallBatches(b.TempDir(), c, 200_000)
		if err != nil {
			b.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		var batches []logfmt.Batch
		sr := logfmt.NewSegmentReader(bytesAt(data), int64(len(data)), path)
		for sr.Next() {
			batches = append(batches, logfmt.Batch{Pos: sr.Batch().Pos, Data: bytes.Clone(sr.Batch().Data)})
		}
		perBatch := func(b *testing.B) {
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(batches)), "ns/batch")
		}
		if c != codec.None {
			b.Run(fmt.Sprintf("%v/codec", c), func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				defer testutil.ReportCPU(b, int64(len(data)))()
				for b.Loop() {
					decodeAll(b, c, batches)
				}
				perBatch(b)
			})
			b.Run(fmt.Sprintf("%v/codec-split", c), func(b *testing.B) {
				testutil.Procs(b, func(b *testing.B) {
					b.SetBytes(int64(len(data)))
					defer testutil.ReportCPU(b, int64(len(data)))()
					n := runtime.GOMAXPROCS(0)
					for b.Loop() {
						var wg sync.WaitGroup
						for i := range n {
							wg.Go(func() { decodeAll(b, c, batches[i*len(batches)/n:(i+1)*len(batches)/n]) })
						}
						wg.Wait()
					}
					perBatch(b)
				})
			})
		}
		b.Run(fmt.Sprintf("%v/iter", c), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			defer testutil.ReportCPU(b, int64(len(data)))()
			for b.Loop() {
				readDeep(b, path, 1)
			}
			perBatch(b)
		})
		b.Run(fmt.Sprintf("%v/deep", c), func(b *testing.B) {
			testutil.Procs(b, func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				defer testutil.ReportCPU(b, int64(len(data)))()
				for b.Loop() {
					readDeep(b, path, runtime.GOMAXPROCS(0))
				}
				perBatch(b)
			})
		})
	}
}

// decodeAll decompresses the payloads of batches with one decoder.
func decodeAll(b *testing.B, c codec.Type, batches []logfmt.Batch) {
	var r codec.Reader
	buf := make([]byte, 256<<10)
	for i := range batches {
		if err := r.Reset(c, batches[i].Data[logfmt.V2HeaderSize:], 2, 0); err != nil {
			b.Error(err)
			return
		}
		for {
			if _, err := r.Read(buf); err == io.EOF {
				break
			} else if err != nil {
				b.Error(err)
				return
			}
		}
	}
}

type bytesAt []byte

func (b bytesAt) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(b)) {
		return 0, io.EOF
	}
	n := copy(p, b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// readDeep checks and reads every record of the segment at path, on
// workers goroutines.
func readDeep(b *testing.B, path string, workers int) {
	f, err := logfmt.OpenSegment(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	d := logfmt.NewDeepReader(f.SegmentReader, workers)
	defer d.Close()
	var it logfmt.RecordIter
	for d.Next() {
		bt := d.Batch()
		if err := bt.Validate(); err != nil {
			b.Fatal(err)
		}
		if err := it.Reset(bt); err != nil {
			b.Fatal(err)
		}
		for it.Next() {
		}
		if it.Err() != nil {
			b.Fatal(it.Err())
		}
	}
	if d.Err() != nil {
		b.Fatal(d.Err())
	}
}
