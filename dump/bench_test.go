package dump

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/codec"
)

// benchSegment generates one v2 segment of about 64 MiB with gen's default
// record shape (100-byte values, batches of up to 10 records).
func benchSegment(b *testing.B, c codec.Type) (path string, size int64) {
	b.Helper()
	dir := b.TempDir()
	parts, err := gen.Generate(gen.Options{Out: dir, Topics: []string{"bench"}, Records: 480_000, Keys: 1000, Magic: 2,
		Compression: c, SegmentBytes: 1 << 30, Seed: 7})
	if err != nil {
		b.Fatal(err)
	}
	path = filepath.Join(parts[0].Dir, "00000000000000000000.log")
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	return path, fi.Size()
}

func benchDump(b *testing.B, o Options) {
	path, size := benchSegment(b, codec.None)
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := Run([]string{path}, o, io.Discard, io.Discard)
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
	path, size := benchSegment(b, codec.None)
	b.SetBytes(size)
	buf := make([]byte, 128<<10)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{f}, buf); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
}

// BenchmarkKmsgDecode decodes the same segment's batches and records with
// franz-go's kmsg, for the deep-iteration comparison the issue asks for.
func BenchmarkKmsgDecode(b *testing.B) {
	path, size := benchSegment(b, codec.None)
	b.SetBytes(size)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sf, err := logfmt.OpenSegment(path)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for sf.Next() {
			var rb kmsg.RecordBatch
			if err := rb.ReadFrom(sf.Batch().Data); err != nil {
				b.Fatal(err)
			}
			recs := rb.Records
			for j := 0; j < int(rb.NumRecords); j++ {
				var r kmsg.Record
				if err := r.ReadFrom(recs); err != nil {
					b.Fatal(err)
				}
				recs = recs[varintLen(r.Length)+int(r.Length):]
				n++
			}
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
