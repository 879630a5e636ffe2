package snapshot

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/logtool/logtool/internal/testkit/kafkasamples"
	"github.com/logtool/logtool/logfmt"
)

var (
	idle = Entry{ProducerID: 1000, Epoch: 0, LastSequence: 41, LastOffset: 1234, OffsetDelta: 3,
		Timestamp: 1700000000000, CoordinatorEpoch: -1, CurrentTxnFirstOffset: -1}
	inTxn = Entry{ProducerID: -2, Epoch: 32767, LastSequence: 2147483647, LastOffset: 9223372036854775807,
		OffsetDelta: -2147483648, Timestamp: -1, CoordinatorEpoch: 7, CurrentTxnFirstOffset: 1200}
)

// The bytes of a snapshot holding idle then inTxn, spelled out field by field.
var twoEntries = func() []byte {
	b := []byte{0, 1, 0, 0, 0, 0, 0, 0, 0, 2}
	b = append(b, 0, 0, 0, 0, 0, 0, 0x03, 0xe8) // producer id 1000
	b = append(b, 0, 0)                         // epoch
	b = append(b, 0, 0, 0, 41)                  // last sequence
	b = append(b, 0, 0, 0, 0, 0, 0, 0x04, 0xd2) // last offset 1234
	b = append(b, 0, 0, 0, 3)                   // offset delta
	b = append(b, 0, 0, 0x01, 0x8b, 0xcf, 0xe5, 0x68, 0x00)
	b = append(b, 0xff, 0xff, 0xff, 0xff)
	b = append(b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)
	b = append(b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe)
	b = append(b, 0x7f, 0xff)
	b = append(b, 0x7f, 0xff, 0xff, 0xff)
	b = append(b, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)
	b = append(b, 0x80, 0, 0, 0)
	b = append(b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)
	b = append(b, 0, 0, 0, 7)
	b = append(b, 0, 0, 0, 0, 0, 0, 0x04, 0xb0)
	binary.BigEndian.PutUint32(b[2:], crc32.Checksum(b[6:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}()

func TestAppend(t *testing.T) {
	if got := Append(nil, []Entry{idle, inTxn}); !bytes.Equal(got, twoEntries) {
		t.Fatalf("Append =\n% x\nwant\n% x", got, twoEntries)
	}
	// The CRC covers only what this call appended.
	if got := Append([]byte("prefix"), []Entry{idle, inTxn}); !bytes.Equal(got[6:], twoEntries) {
		t.Fatalf("Append after a prefix =\n% x\nwant\n% x", got[6:], twoEntries)
	}
	// An empty snapshot: version 1, the CRC-32C of four zero bytes, count 0.
	if got, want := Append(nil, nil), []byte{0, 1, 0x48, 0x67, 0x4b, 0xc7, 0, 0, 0, 0}; !bytes.Equal(got, want) {
		t.Fatalf("Append(nil) = % x, want % x", got, want)
	}
}

func TestParse(t *testing.T) {
	got, err := Parse(twoEntries, "s")
	if err != nil {
		t.Fatal(err)
	}
	if want := []Entry{idle, inTxn}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Parse = %+v, want %+v", got, want)
	}
	got, err = Parse(Append(nil, nil), "s")
	if err != nil || len(got) != 0 {
		t.Fatalf("empty snapshot: %+v, %v", got, err)
	}
}

// withCRC returns b with its CRC recomputed, so that a test reaches the
// checks after the CRC.
func withCRC(b []byte) []byte {
	b = bytes.Clone(b)
	binary.BigEndian.PutUint32(b[2:], crc32.Checksum(b[6:], castagnoli))
	return b
}

func TestParseCorrupt(t *testing.T) {
	badVersion := bytes.Clone(twoEntries)
	badVersion[1] = 2
	flipped := bytes.Clone(twoEntries)
	flipped[60] ^= 1
	negative := bytes.Clone(twoEntries[:10])
	binary.BigEndian.PutUint32(negative[6:], 0xffffffff)
	huge := bytes.Clone(twoEntries[:10])
	binary.BigEndian.PutUint32(huge[6:], 0x7fffffff)
	countOne := bytes.Clone(twoEntries)
	binary.BigEndian.PutUint32(countOne[6:], 1)
	countThree := bytes.Clone(twoEntries)
	binary.BigEndian.PutUint32(countThree[6:], 3)

	tests := []struct {
		name string
		in   []byte
		pos  int64
		err  string
	}{
		{"empty", nil, 0, "0 bytes, shorter than the 10-byte header"},
		{"short header", twoEntries[:9], 0, "9 bytes, shorter than the 10-byte header"},
		{"version 2", badVersion, 0, "unknown snapshot version 2"},
		{"bit flip", flipped, 2, "CRC mismatch"},
		{"truncated entry", twoEntries[:len(twoEntries)-1], 2, "CRC mismatch"},
		{"negative count", withCRC(negative), 6, "negative entry count -1"},
		{"2^31-1 entries in 10 bytes", withCRC(huge), 10, "2147483647 entries declared, but 0 bytes follow"},
		{"count short of the entries", withCRC(countOne), 56, "1 entries declared, but 92 bytes follow"},
		{"count past the entries", withCRC(countThree), 102, "3 entries declared, but 92 bytes follow"},
		{"partial entry", withCRC(twoEntries[:len(twoEntries)-1]), 56, "2 entries declared, but 91 bytes follow"},
		{"trailing byte", withCRC(append(bytes.Clone(twoEntries), 0)), 102, "2 entries declared, but 93 bytes follow"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "snap")
			if err := os.WriteFile(path, tt.in, 0o644); err != nil {
				t.Fatal(err)
			}
			_, parseErr := Parse(tt.in, path)
			_, readErr := Read(path, int64(len(tt.in)))
			for _, err := range []error{parseErr, readErr} {
				ce, ok := logfmt.AsCorrupt(err)
				if !ok {
					t.Fatalf("error = %v, want a CorruptError", err)
				}
				if ce.File != path || ce.Pos != tt.pos || !strings.Contains(ce.Msg, tt.err) {
					t.Fatalf("error = {%q, %d, %q}, want {%q, %d, containing %q}", ce.File, ce.Pos, ce.Msg, path, tt.pos, tt.err)
				}
			}
		})
	}
}

// Read decodes what Parse decodes, across more than one window of entries.
func TestRead(t *testing.T) {
	entries := make([]Entry, 3*window/entrySize+7)
	for i := range entries {
		entries[i] = inTxn
		entries[i].ProducerID = int64(i)
	}
	data := Append(nil, entries)
	path := filepath.Join(t.TempDir(), "00000000000000000001.snapshot")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Read(path, int64(len(data)))
	if err != nil || !reflect.DeepEqual(got, entries) {
		t.Fatalf("Read: %d entries, %v; want the %d written", len(got), err, len(entries))
	}
	if _, err := Read(path, int64(len(data))-1); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Read with a limit a byte short: %v; want ErrTooLarge", err)
	}
}

// A large file that is not a snapshot is refused by its header, or by its
// CRC read a window at a time, without being held in memory: a sparse file
// of 256 MiB costs Read less than a MiB, whatever the limit.
func TestReadLargeGarbage(t *testing.T) {
	for _, tt := range []struct {
		name   string
		header []byte
		limit  int64
		err    string
	}{
		{"not a version", []byte("garbage!!!"), 1 << 20, "unknown snapshot version"},
		{"version 1, wrong CRC", []byte{0, 1, 0, 0, 0, 1, 0, 0, 0, 1}, math.MaxInt64, "CRC mismatch"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "00000000000000000001.snapshot")
			if err := os.WriteFile(path, tt.header, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(path, 256<<20); err != nil {
				t.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := Read(path, tt.limit)
			runtime.ReadMemStats(&after)
			if ce, ok := logfmt.AsCorrupt(err); !ok || !strings.Contains(ce.Msg, tt.err) {
				t.Fatalf("Read: %v; want %q", err, tt.err)
			}
			if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
				t.Fatalf("Read allocated %d bytes to refuse it", n)
			}
		})
	}
}

// A count is checked against the file size before anything is allocated.
func TestHugeCountAllocatesNothing(t *testing.T) {
	huge := bytes.Clone(twoEntries[:10])
	binary.BigEndian.PutUint32(huge[6:], 0x7fffffff)
	huge = withCRC(huge)
	allocs := testing.AllocsPerRun(10, func() {
		if _, err := Parse(huge, "s"); err == nil {
			t.Fatal("no error")
		}
	})
	if allocs > 5 {
		t.Fatalf("%v allocations to reject a 10-byte file", allocs)
	}
}

func TestOffsetFromName(t *testing.T) {
	tests := []struct {
		name string
		want int64
		ok   bool
	}{
		{"00000000000000000014.snapshot", 14, true},
		{"00000000000000000000.snapshot", 0, true},
		{"09223372036854775807.snapshot", 9223372036854775807, true},
		{"14.snapshot", 14, true},
		{"09223372036854775808.snapshot", 0, false},
		{".snapshot", 0, false},
		{"-0000000000000000001.snapshot", 0, false},
		{"+0000000000000000001.snapshot", 0, false},
		{"00000000000000000014.snapshot.deleted", 0, false},
		{"00000000000000000014.log", 0, false},
		{"0000000000000000001a.snapshot", 0, false},
		{"00000000000000000014-0000000001.checkpoint", 0, false},
	}
	for _, tt := range tests {
		got, ok := OffsetFromName(tt.name)
		if got != tt.want || ok != tt.ok {
			t.Errorf("OffsetFromName(%q) = %d, %v; want %d, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

var samples = kafkasamples.Dir("logdirs")

// Every producer snapshot a broker wrote parses, and Append rebuilds it byte
// for byte.
func TestSampleSnapshots(t *testing.T) {
	if _, err := os.Stat(samples); err != nil {
		kafkasamples.Skip(t, err)
	}
	var files, entries int
	err := filepath.WalkDir(samples, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if _, ok := OffsetFromName(d.Name()); !ok {
			return nil
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		got, err := Parse(raw, path)
		if err != nil {
			t.Errorf("%v", err)
			return nil
		}
		files++
		entries += len(got)
		if !bytes.Equal(Append(nil, got), raw) {
			t.Errorf("%s: Append does not reproduce the file", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 80 || entries < 1 {
		t.Fatalf("parsed %d snapshots with %d entries; the samples have 84, one with an entry", files, entries)
	}
}

// The one non-empty sample snapshot, from a ksqlDB command topic.
func TestSampleSnapshotEntry(t *testing.T) {
	path := filepath.Join(samples, "itumelengmogase_kraft-ksqldb-txn", "_confluent-ksql-default__command_topic-0", "00000000000000000002.snapshot")
	raw, err := os.ReadFile(path)
	if err != nil {
		kafkasamples.Skip(t, err)
	}
	got, err := Parse(raw, path)
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{{ProducerID: 0, Epoch: 0, LastSequence: 0, LastOffset: 0, OffsetDelta: 0,
		Timestamp: 1728561475581, CoordinatorEpoch: 0, CurrentTxnFirstOffset: -1}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

func FuzzSnapshot(f *testing.F) {
	f.Add(twoEntries)
	f.Add(Append(nil, nil))
	f.Add(withCRC(append(bytes.Clone(twoEntries), 0)))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := Parse(data, "fuzz")
		if err != nil {
			ce, ok := logfmt.AsCorrupt(err)
			if !ok || ce.File != "fuzz" || ce.Pos < 0 || ce.Pos > int64(len(data)) {
				t.Fatalf("error %v: want a CorruptError with a position inside the %d-byte input", err, len(data))
			}
			return
		}
		// Everything in the file is covered by the CRC and the count, so what
		// parses is exactly what Append writes.
		if b := Append(nil, entries); !bytes.Equal(b, data) {
			t.Fatalf("parsed % x, which Append writes as % x", data, b)
		}
	})
}

func BenchmarkParse(b *testing.B) {
	entries := make([]Entry, 1000)
	for i := range entries {
		entries[i] = idle
		entries[i].ProducerID = int64(i)
	}
	data := Append(nil, entries)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(data, ""); err != nil {
			b.Fatal(err)
		}
	}
}
