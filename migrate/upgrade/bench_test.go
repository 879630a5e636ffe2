package upgrade

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/codec"
	"github.com/logtool/logtool/logfmt/layout"
)

// upgradeBenchSegment is a 64 MiB segment of uncompressed magic-0 messages
// with 100-byte values, the input the speed target is about.
func upgradeBenchSegment(b *testing.B) []byte {
	b.Helper()
	var data []byte
	value := bytes.Repeat([]byte("v"), 100)
	key := []byte("key-000042")
	for off := int64(0); len(data) < 64<<20; off++ {
		data = logfmt.AppendLegacyMessage(data, 0, off, 0, -1, key, value)
	}
	return data
}

// BenchmarkUpgradeConvertV0 is the conversion to magic 1 and its read-back
// verification, in memory: the CPU cost per byte of input.
func BenchmarkUpgradeConvertV0(b *testing.B) {
	data := upgradeBenchSegment(b)
	for _, to := range []int8{1, 2} {
		b.Run(map[int8]string{1: "to-v1", 2: "to-v2"}[to], func(b *testing.B) {
			rules := &upgradeRules{toMagic: to}
			var out bytes.Buffer
			out.Grow(len(data) * 5 / 4) // the output must not cost buffer growth
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				out.Reset()
				c := newUpgradeConverter(rules, bytes.NewReader(data), int64(len(data)), "orig", 0)
				c.open = func() (io.Writer, error) { return &out, nil }
				if err := c.run(); err != nil {
					b.Fatal(err)
				}
				if _, err := verifyUpgrade(rules, bytes.NewReader(data), int64(len(data)), "orig", bytes.NewReader(out.Bytes()), int64(out.Len()), "new", 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkUpgradePartitionV0 is the whole upgrade of a generated magic-0
// partition into --output: reading, converting, writing and fsyncing,
// reading back, indexes. The source stays in the page cache, as it would
// after the first pass over a real disk.
func BenchmarkUpgradePartitionV0(b *testing.B) {
	logDir := b.TempDir()
	parts, err := gen.Generate(gen.Options{Out: logDir, Topics: []string{"legacy"}, Records: 400_000, ValueBytes: 100, Keys: 1000,
		Magic: 0, Compression: codec.None, SegmentBytes: 16 << 20, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	p, err := layout.ReadPartition(parts[0].Dir)
	if err != nil {
		b.Fatal(err)
	}
	var size int64
	for _, s := range p.Segments {
		fi, err := os.Stat(s.Log)
		if err != nil {
			b.Fatal(err)
		}
		size += fi.Size()
	}
	b.SetBytes(size)
	out := b.TempDir()
	i := 0
	for b.Loop() {
		i++
		dst := filepath.Join(out, fmt.Sprint(i))
		if _, err := Run(Options{Targets: upgradeTargets(b, parts[0].Dir), Output: dst}); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		os.RemoveAll(dst)
		b.StartTimer()
	}
}

// BenchmarkUpgradeConvertWrapper converts a 16 MiB snappy v0 wrapper to
// magic 2 into a destination that takes its batch a piece at a time, and
// verifies it: the cost of spilling and of the header's checksum.
func BenchmarkUpgradeConvertWrapper(b *testing.B) {
	var recs []logfmt.Record
	for off, n := int64(0), 0; n < 16<<20; off++ {
		v := fmt.Appendf(nil, "%0*d", 1000, off*7919)
		recs = append(recs, logfmt.Record{Offset: off, Timestamp: logfmt.NoTimestamp, Value: v})
		n += len(v)
	}
	data, err := logfmt.AppendLegacyWrapper(nil, logfmt.LegacyWrapperOptions{Magic: 0, Compression: codec.Snappy}, recs)
	if err != nil {
		b.Fatal(err)
	}
	rules := &upgradeRules{toMagic: 2}
	var out upgradeFile
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		out.data = out.data[:0]
		c := newUpgradeConverter(rules, bytes.NewReader(data), int64(len(data)), "orig", 0)
		c.open = func() (io.Writer, error) { return &out, nil }
		if err := c.run(); err != nil {
			b.Fatal(err)
		}
		if _, err := verifyUpgrade(rules, bytes.NewReader(data), int64(len(data)), "orig", bytes.NewReader(out.data), int64(len(out.data)), "new", 0); err != nil {
			b.Fatal(err)
		}
	}
}
