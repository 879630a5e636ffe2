//go:build unix

package dump

import (
	"bufio"
	"bytes"
	"fmt"
	"hash/crc32"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/logfmt"
)

// kmsgDump is `dump --deep-iteration` of an uncompressed v2 segment written
// the way a Go program built on franz-go's kmsg would write it: kmsg decodes
// each batch and record, hash/crc32 checks the checksum, fmt formats the
// lines. It is the second yardstick of the deep-iteration target
// (the first, BenchmarkKmsgDecode, decodes without printing anything), and
// TestKmsgDumpMatches holds its output to logtool's, byte for byte, so the
// two do the same job.
func kmsgDump(w io.Writer, path string) error {
	bw := bufio.NewWriter(w)
	sf, err := logfmt.OpenSegment(path)
	if err != nil {
		return err
	}
	defer sf.Close()
	table := crc32.MakeTable(crc32.Castagnoli)
	var rb kmsg.RecordBatch
	var r kmsg.Record
	for sf.Next() {
		b := sf.Batch()
		if err := rb.ReadFrom(b.Data); err != nil {
			return err
		}
		if rb.Attributes&0x27 != 0 {
			return fmt.Errorf("kmsgDump handles uncompressed data batches only")
		}
		ts := "CreateTime"
		if rb.Attributes&0x08 != 0 {
			ts = "LogAppendTime"
		}
		lastSeq := rb.FirstSequence
		if lastSeq >= 0 {
			lastSeq += rb.LastOffsetDelta
		}
		fmt.Fprintf(bw, "baseOffset: %d lastOffset: %d count: %d baseSequence: %d lastSequence: %d producerId: %d "+
			"producerEpoch: %d partitionLeaderEpoch: %d isTransactional: %t isControl: %t deleteHorizonMs: OptionalLong.empty "+
			"position: %d %s: %d size: %d magic: %d compresscodec: none crc: %d isvalid: %t\n",
			rb.FirstOffset, rb.FirstOffset+int64(rb.LastOffsetDelta), rb.NumRecords, rb.FirstSequence, lastSeq, rb.ProducerID,
			rb.ProducerEpoch, rb.PartitionLeaderEpoch, rb.Attributes&0x10 != 0, false,
			b.Pos, ts, rb.MaxTimestamp, len(b.Data), rb.Magic, uint32(rb.CRC), uint32(rb.CRC) == crc32.Checksum(b.Data[21:], table))
		recs := rb.Records
		for range rb.NumRecords {
			if err := r.ReadFrom(recs); err != nil {
				return err
			}
			recs = recs[varintLen(r.Length)+int(r.Length):]
			keys := make([]string, len(r.Headers))
			for i, h := range r.Headers {
				keys[i] = h.Key
			}
			valueSize := len(r.Value)
			if r.Value == nil {
				valueSize = -1
			}
			keySize := len(r.Key)
			if r.Key == nil {
				keySize = -1
			}
			seq := int32(-1)
			if rb.FirstSequence >= 0 {
				seq = rb.FirstSequence + r.OffsetDelta
			}
			fmt.Fprintf(bw, "| offset: %d %s: %d keySize: %d valueSize: %d sequence: %d headerKeys: [%s]\n",
				rb.FirstOffset+int64(r.OffsetDelta), ts, rb.FirstTimestamp+r.TimestampDelta64, keySize, valueSize, seq,
				strings.Join(keys, ","))
		}
	}
	if err := sf.Err(); err != nil {
		return err
	}
	return bw.Flush()
}

func TestKmsgDumpMatches(t *testing.T) {
	parts, err := gen.Generate(gen.Options{Out: t.TempDir(), Topics: []string{"k"}, Records: 2000, Keys: 50,
		Magic: 2, BatchRecords: 20, TombstoneRatio: 0.1, SegmentBytes: 1 << 30, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(parts[0].Dir, "00000000000000000000.log")
	var want, got bytes.Buffer
	if err := kmsgDump(&want, path); err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	o.Deep = true
	if _, err := Run(resolve(t, path), o, &got, io.Discard); err != nil {
		t.Fatal(err)
	}
	// logtool starts with Kafka's two header lines.
	_, rest, _ := strings.Cut(got.String(), "\nLog starting offset: 0\n")
	if rest != want.String() {
		t.Errorf("kmsg dump differs from logtool's: %s", firstDiff(rest, want.String()))
	}
	if strings.Count(rest, "\n| offset: ") != 2000 {
		t.Errorf("want 2000 record lines")
	}
}

// firstDiff shows the first line where a and b differ.
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return fmt.Sprintf("line %d:\n got %s\nkmsg %s", i+1, al[i], bl[i])
		}
	}
	return fmt.Sprintf("lengths differ: %d and %d lines", len(al), len(bl))
}

// BenchmarkKmsgDump is kmsgDump over the benchmark segment.
func BenchmarkKmsgDump(b *testing.B) {
	path, size := benchSegment(b)
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	defer reportCPU(b)()
	for i := 0; i < b.N; i++ {
		if err := kmsgDump(io.Discard, path); err != nil {
			b.Fatal(err)
		}
	}
}
