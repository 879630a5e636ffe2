package gen

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/logtool/logtool/internal/testkit/indextest"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/codec"
	"github.com/logtool/logtool/logfmt/layout"
)

// independent decodes a compressed payload without logfmt's codec package.
func independent(t *testing.T, c codec.Type, b []byte) []byte {
	t.Helper()
	var r io.Reader
	switch c {
	case codec.Gzip:
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	case codec.LZ4:
		r = lz4.NewReader(bytes.NewReader(b))
	case codec.Zstd:
		zr, err := zstd.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		r = zr
	case codec.Snappy: // xerial framing: 16-byte header, then length-prefixed raw blocks
		var out []byte
		if !bytes.HasPrefix(b, []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}) {
			t.Fatal("snappy payload is not xerial-framed")
		}
		for p := 16; p < len(b); {
			n := int(binary.BigEndian.Uint32(b[p:]))
			block, err := s2.Decode(nil, b[p+4:p+4+n])
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, block...)
			p += 4 + n
		}
		return out
	default:
		return b
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("%s: %v", c, err)
	}
	return out
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// checkIndependently walks a segment with kmsg and the standard libraries
// only, checking every CRC and returning the offsets of its data records.
func checkIndependently(t *testing.T, path string, magic int8) []int64 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var offsets []int64
	for p := 0; p < len(data); {
		size := int(binary.BigEndian.Uint32(data[p+8:]))
		entry := data[p : p+12+size]
		p += 12 + size
		if magic == 2 {
			var b kmsg.RecordBatch
			if err := b.ReadFrom(entry); err != nil {
				t.Fatal(err)
			}
			if uint32(b.CRC) != crc32.Checksum(entry[21:], castagnoli) {
				t.Fatalf("%s: batch at %d: bad CRC", path, p)
			}
			raw := independent(t, codec.Type(b.Attributes&7), b.Records)
			for i := int32(0); i < b.NumRecords; i++ {
				var r kmsg.Record
				if err := r.ReadFrom(raw); err != nil {
					t.Fatal(err)
				}
				raw = raw[len(binary.AppendVarint(nil, int64(r.Length)))+int(r.Length):]
				if b.Attributes&0x20 == 0 {
					offsets = append(offsets, b.FirstOffset+int64(r.OffsetDelta))
				}
			}
			continue
		}
		if crc32.ChecksumIEEE(entry[16:]) != binary.BigEndian.Uint32(entry[12:]) {
			t.Fatalf("%s: message at %d: bad CRC", path, p)
		}
		c := codec.Type(entry[17] & 7)
		if c == codec.None {
			offsets = append(offsets, int64(binary.BigEndian.Uint64(entry)))
			continue
		}
		var m kmsg.MessageV1
		if magic == 0 {
			var m0 kmsg.MessageV0
			if err := m0.ReadFrom(entry); err != nil {
				t.Fatal(err)
			}
			m.Value = m0.Value
		} else if err := m.ReadFrom(entry); err != nil {
			t.Fatal(err)
		}
		if c == codec.LZ4 && magic == 0 {
			// Kafka writes magic-0 LZ4 frames with its broken header checksum
			// (KAFKA-3160); readers patch it before a standard decoder sees it.
			if !bytes.HasPrefix(m.Value, []byte{0x04, 0x22, 0x4d, 0x18, 0x60, 0x40, 0x1a}) {
				t.Fatalf("magic-0 lz4 frame header %x lacks Kafka's broken checksum", m.Value[:7])
			}
			m.Value = append([]byte{}, m.Value...)
			m.Value[6] = 0x82
		}
		inner := independent(t, c, m.Value)
		wrapper := int64(binary.BigEndian.Uint64(entry))
		var rel []int64
		for q := 0; q < len(inner); {
			n := int(binary.BigEndian.Uint32(inner[q+8:]))
			msg := inner[q : q+12+n]
			if crc32.ChecksumIEEE(msg[16:]) != binary.BigEndian.Uint32(msg[12:]) {
				t.Fatalf("%s: inner message: bad CRC", path)
			}
			rel = append(rel, int64(binary.BigEndian.Uint64(msg)))
			q += 12 + n
		}
		for _, r := range rel {
			if magic == 1 {
				r += wrapper - rel[len(rel)-1]
			}
			offsets = append(offsets, r)
		}
	}
	return offsets
}

func TestGenReadsBackIndependently(t *testing.T) {
	for magic := int8(0); magic <= 2; magic++ {
		for c := codec.None; c <= codec.Zstd; c++ {
			if !c.ValidFor(magic) {
				continue
			}
			t.Run(fmt.Sprintf("v%d-%s", magic, c), func(t *testing.T) {
				out := t.TempDir()
				o := Options{Out: out, Topics: []string{"my.topic-x"}, Partitions: 2, Records: 700, Keys: 50, Magic: magic,
					Compression: c, SegmentBytes: 16 << 10, TombstoneRatio: 0.1, Seed: 3}
				if magic == 2 {
					o.TransactionalRatio, o.AbortRatio = 0.3, 0.5
				}
				parts, err := Generate(o)
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range parts {
					part, err := layout.ReadPartition(p.Dir)
					if err != nil {
						t.Fatal(err)
					}
					if len(part.Segments) < 2 || len(part.Segments) != p.Segments {
						t.Fatalf("%d segments (reported %d)", len(part.Segments), p.Segments)
					}
					var indep, mine []int64
					for _, s := range part.Segments {
						indep = append(indep, checkIndependently(t, s.Log, magic)...)
						mine = append(mine, readOffsets(t, s.Log)...)
					}
					if len(indep) != 700 || fmt.Sprint(indep) != fmt.Sprint(mine) {
						t.Fatalf("independent decoder saw %d data records, logfmt %d", len(indep), len(mine))
					}
				}
			})
		}
	}
}

// readOffsets is logfmt's view of the data-record offsets.
func readOffsets(t *testing.T, path string) []int64 {
	seg, err := logfmt.OpenSegment(path)
	if err != nil {
		t.Fatal(err)
	}
	defer seg.Close()
	var it logfmt.RecordIter
	var offs []int64
	for seg.Next() {
		b := seg.Batch()
		if err := b.Validate(); err != nil {
			t.Fatal(err)
		}
		if b.IsControl() {
			continue
		}
		if err := it.Reset(b); err != nil {
			t.Fatal(err)
		}
		for it.Next() {
			offs = append(offs, it.Record().Offset)
		}
	}
	if seg.Err() != nil || seg.End() != logfmt.EndClean {
		t.Fatal(seg.Err(), seg.End())
	}
	return offs
}

func TestGenIsDeterministic(t *testing.T) {
	o := Options{Topics: []string{"t"}, Records: 300, Keys: 10, Magic: 2, Compression: codec.Snappy, SegmentBytes: 8 << 10,
		TransactionalRatio: 0.5, AbortRatio: 0.5, Seed: 42}
	a, b := t.TempDir(), t.TempDir()
	o.Out = a
	if _, err := Generate(o); err != nil {
		t.Fatal(err)
	}
	o.Out = b
	if _, err := Generate(o); err != nil {
		t.Fatal(err)
	}
	filepath.WalkDir(a, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(a, p)
		x, _ := os.ReadFile(p)
		y, err := os.ReadFile(filepath.Join(b, rel))
		if err != nil || !bytes.Equal(x, y) {
			t.Errorf("%s differs between two runs with the same seed", rel)
		}
		return nil
	})
}

func TestGenRejectsImpossibleOptions(t *testing.T) {
	for _, o := range []Options{
		{Out: t.TempDir(), Magic: 1, Compression: codec.Zstd},
		{Out: t.TempDir(), Magic: 3},
		{Out: t.TempDir(), Magic: 1, TransactionalRatio: 0.5},
		{Out: t.TempDir(), Topics: []string{"bad/topic"}},
		{Out: t.TempDir(), SegmentBytes: 10},
	} {
		if _, err := Generate(o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}

// An aborted transaction's entry belongs to the segment holding its marker,
// even when the marker is the batch that rolled a new segment.
func TestGenTxnIndexEntriesLieInTheirSegment(t *testing.T) {
	for seed := int64(0); seed < 8; seed++ {
		out := t.TempDir()
		parts, err := Generate(Options{Out: out, Topics: []string{"t"}, Records: 600, Keys: 10, Magic: 2, SegmentBytes: 4 << 10,
			TransactionalRatio: 0.6, AbortRatio: 0.7, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		part, err := layout.ReadPartition(parts[0].Dir)
		if err != nil {
			t.Fatal(err)
		}
		for i, s := range part.Segments {
			if s.TxnIndex == "" {
				continue
			}
			next := parts[0].LogEndOffset
			if i+1 < len(part.Segments) {
				next = part.Segments[i+1].Base
			}
			b, err := os.ReadFile(s.TxnIndex)
			if err != nil {
				t.Fatal(err)
			}
			txns, problems := indextest.ParseTxnIndex(b, s.TxnIndex)
			if len(problems) > 0 {
				t.Fatal(problems)
			}
			for _, x := range txns {
				if x.LastOffset < s.Base || x.LastOffset >= next {
					t.Fatalf("seed %d: %s: marker %d outside [%d, %d)", seed, s.TxnIndex, x.LastOffset, s.Base, next)
				}
			}
		}
	}
}
