package checkpoint

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/layout"
)

// checkCorrupt fails unless err is a *logfmt.CorruptError for file at pos
// whose message contains msg.
func checkCorrupt(t *testing.T, err error, file string, pos int64, msg string) {
	t.Helper()
	ce, ok := logfmt.AsCorrupt(err)
	if !ok {
		t.Fatalf("error = %v, want a *logfmt.CorruptError", err)
	}
	if ce.File != file || ce.Pos != pos || !strings.Contains(ce.Msg, msg) {
		t.Fatalf("error = {File %q, Pos %d, Msg %q}, want {File %q, Pos %d, Msg containing %q}",
			ce.File, ce.Pos, ce.Msg, file, pos, msg)
	}
}

func TestReadOffsets(t *testing.T) {
	long := strings.Repeat("t", maxLine+1)
	tests := []struct {
		name string
		in   string
		want []OffsetEntry
		pos  int64  // for errors
		err  string // "" when in is valid
	}{
		{name: "empty file", in: ""},
		{name: "version only", in: "0"},
		{name: "version line only", in: "0\n"},
		{name: "no entries", in: "0\n0\n", want: nil},
		{name: "two entries", in: "0\n2\nfoo 0 12\nbar-baz 7 -1\n", want: []OffsetEntry{
			{Topic: "foo", Partition: 0, Offset: 12, Line: 3}, {Topic: "bar-baz", Partition: 7, Offset: -1, Line: 4}}},
		{name: "CRLF", in: "0\r\n1\r\nfoo 1 2\r\n", want: []OffsetEntry{{Topic: "foo", Partition: 1, Offset: 2, Line: 3}}},
		{name: "CR", in: "0\r1\rfoo 1 2", want: []OffsetEntry{{Topic: "foo", Partition: 1, Offset: 2, Line: 3}}},
		{name: "no final newline", in: "0\n1\nfoo 1 2", want: []OffsetEntry{{Topic: "foo", Partition: 1, Offset: 2, Line: 3}}},
		{name: "runs of white space", in: "0\n1\nfoo\t 1\v\f2 \t\n", want: []OffsetEntry{{Topic: "foo", Partition: 1, Offset: 2, Line: 3}}},
		{name: "signs", in: "0\n1\nfoo +1 -0\n", want: []OffsetEntry{{Topic: "foo", Partition: 1, Offset: 0, Line: 3}}},
		{name: "extreme numbers", in: "0\n1\nfoo -2147483648 9223372036854775807\n",
			want: []OffsetEntry{{Topic: "foo", Partition: -2147483648, Offset: 9223372036854775807, Line: 3}}},
		// Java's split keeps the empty field before leading white space.
		{name: "leading space is an empty topic", in: "0\n1\n 3 4\n", want: []OffsetEntry{{Topic: "", Partition: 3, Offset: 4, Line: 3}}},

		{name: "version 1", in: "1\n0\n", pos: 0, err: "line 1: unsupported version 1, want 0"},
		{name: "version not a number", in: "v0\n", pos: 0, err: "line 1: malformed version line"},
		{name: "version padded", in: " 0\n", pos: 0, err: "line 1: malformed version line"},
		{name: "count not a number", in: "0\ntwo\n", pos: 2, err: "line 2: malformed entry count \"two\""},
		{name: "count 2^31", in: "0\n2147483648\nfoo 0 1\n", pos: 2, err: "line 2: malformed entry count"},
		{name: "negative count", in: "0\n-1\n", pos: 2, err: "line 2: negative entry count -1"},
		{name: "fewer entries", in: "0\n2\nfoo 0 1\n", pos: 2, err: "line 2: declares 2 entries, file has 1"},
		{name: "2^31-1 declared, 3 lines", in: "0\n2147483647\nfoo 0 1\n", pos: 2, err: "declares 2147483647 entries, file has 1"},
		{name: "more entries", in: "0\n1\nfoo 0 1\nfoo 1 1\n", pos: 12, err: "line 4: entry beyond the 1 declared"},
		{name: "two fields", in: "0\n3\nfoo 0 1\nfoo 1\n", pos: 12, err: `line 4: malformed entry "foo 1": want 3 fields`},
		{name: "four fields", in: "0\n1\nfoo 0 1 2\n", pos: 4, err: `line 3: malformed entry "foo 0 1 2": want 3 fields`},
		{name: "blank entry line", in: "0\n1\nfoo 0 1\n\n", pos: 12, err: `line 4: malformed entry ""`},
		{name: "white space line", in: "0\n1\n \t\n", pos: 4, err: "line 3: malformed entry"},
		{name: "partition overflow", in: "0\n1\nfoo 2147483648 1\n", pos: 4, err: `line 3: partition "2147483648" is not an int32`},
		{name: "partition not a number", in: "0\n1\nfoo p 1\n", pos: 4, err: `line 3: partition "p" is not an int32`},
		{name: "offset overflow", in: "0\n1\nfoo 0 9223372036854775808\n", pos: 4, err: "line 3: offset \"9223372036854775808\" is not an int64"},
		{name: "offset with decimals", in: "0\n1\nfoo 0 1.5\n", pos: 4, err: "is not an int64"},
		{name: "invalid UTF-8", in: "0\n1\nf\xffo 0 1\n", pos: 4, err: "line 3: not valid UTF-8"},
		{name: "line too long", in: "0\n1\n" + long + " 0 1\n", pos: 4, err: "line 3: longer than 65536 bytes"},
		{name: "version line too long", in: long, pos: 0, err: "line 1: longer than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadOffsets(strings.NewReader(tt.in), "ckpt")
			if tt.err != "" {
				checkCorrupt(t, err, "ckpt", tt.pos, tt.err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestOffsetsRoundTrip(t *testing.T) {
	entries := []OffsetEntry{
		{Topic: "__consumer_offsets", Partition: 22, Offset: 0},
		{Topic: "orders", Partition: 2, Offset: 18},
		{Topic: "x", Partition: 2147483647, Offset: -9223372036854775808},
	}
	b := AppendOffsets([]byte("keep"), entries)
	const want = "keep0\n3\n__consumer_offsets 22 0\norders 2 18\nx 2147483647 -9223372036854775808\n"
	if string(b) != want {
		t.Fatalf("AppendOffsets = %q, want %q", b, want)
	}
	got, err := ReadOffsets(bytes.NewReader(b[len("keep"):]), "")
	if err != nil {
		t.Fatal(err)
	}
	for i := range entries {
		entries[i].Line = i + 3
	}
	if !reflect.DeepEqual(got, entries) {
		t.Fatalf("round trip gave %+v, want %+v", got, entries)
	}
	if got := AppendOffsets(nil, nil); string(got) != "0\n0\n" {
		t.Fatalf("AppendOffsets(nil) = %q", got)
	}
}

func TestReadOffsetsFile(t *testing.T) {
	dir := t.TempDir()
	_, err := ReadOffsetsFile(filepath.Join(dir, layout.RecoveryPointCheckpointFile))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: error %v, want fs.ErrNotExist", err)
	}

	path := filepath.Join(dir, layout.ReplicationOffsetCheckpointFile)
	if err := os.WriteFile(path, []byte("0\n1\nfoo 0 5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadOffsetsFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := []OffsetEntry{{Topic: "foo", Partition: 0, Offset: 5, Line: 3}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}

	if err := os.WriteFile(path, []byte("0\n2\nfoo 0 5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = ReadOffsetsFile(path)
	checkCorrupt(t, err, path, 2, "declares 2 entries")
}

type failingReader struct{ err error }

func (r failingReader) Read([]byte) (int, error) { return 0, r.err }

func TestReadOffsetsIOError(t *testing.T) {
	boom := errors.New("boom")
	_, err := ReadOffsets(io.MultiReader(strings.NewReader("0\n1\n"), failingReader{boom}), "f")
	if !errors.Is(err, boom) {
		t.Fatalf("error = %v, want one wrapping %v", err, boom)
	}
	if _, ok := logfmt.AsCorrupt(err); ok {
		t.Fatalf("an I/O error was reported as corruption: %v", err)
	}
}

// TestOffsetReaderStreams: entries come out as they are read, before a
// count that does not match is found at the end, and the reader stops at
// its first error.
func TestOffsetReaderStreams(t *testing.T) {
	r := NewOffsetReader(strings.NewReader("0\n3\nfoo 0 1\nfoo 1 2\n"), "ckpt")
	var got []OffsetEntry
	for r.Next() {
		got = append(got, r.Entry())
	}
	want := []OffsetEntry{{Topic: "foo", Partition: 0, Offset: 1, Line: 3}, {Topic: "foo", Partition: 1, Offset: 2, Line: 4}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("entries before the error: %+v, want %+v", got, want)
	}
	checkCorrupt(t, r.Err(), "ckpt", 2, "line 2: declares 3 entries, file has 2")
	if r.Next() {
		t.Fatalf("Next after an error returned an entry %+v", r.Entry())
	}
	checkCorrupt(t, r.Err(), "ckpt", 2, "declares 3 entries")

	r = NewOffsetReader(strings.NewReader(""), "ckpt")
	if r.Next() || r.Err() != nil || r.Next() {
		t.Fatalf("empty file: Next gave %+v, error %v", r.Entry(), r.Err())
	}
}

func TestScanOffsets(t *testing.T) {
	in := "0\n3\nfoo 0 1\nbar 1 2\nfoo 2 3\n"
	var got []OffsetEntry
	err := ScanOffsets(strings.NewReader(in), "ckpt", func(e OffsetEntry) error {
		got = append(got, e)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want, err := ReadOffsets(strings.NewReader(in), "ckpt")
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("ScanOffsets gave %+v, ReadOffsets %+v, %v", got, want, err)
	}

	// An error of fn ends the scan with that error.
	stop := errors.New("stop")
	n := 0
	err = ScanOffsets(strings.NewReader(in), "ckpt", func(OffsetEntry) error {
		if n++; n == 2 {
			return stop
		}
		return nil
	})
	if err != stop || n != 2 {
		t.Fatalf("scan stopped by fn: error %v after %d entries", err, n)
	}

	dir := t.TempDir()
	if err := ScanOffsetsFile(filepath.Join(dir, layout.LogStartOffsetCheckpointFile), func(OffsetEntry) error { return nil }); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: error %v, want fs.ErrNotExist", err)
	}
	path := filepath.Join(dir, layout.ReplicationOffsetCheckpointFile)
	if err := os.WriteFile(path, []byte("0\n1\nfoo 0 5\nfoo 1 6\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err = ScanOffsetsFile(path, func(OffsetEntry) error { return nil })
	checkCorrupt(t, err, path, 12, "line 4: entry beyond the 1 declared")
}

func TestOffsetWriter(t *testing.T) {
	entries := []OffsetEntry{
		{Topic: "__consumer_offsets", Partition: 22, Offset: 0},
		{Topic: "orders", Partition: 2, Offset: 18, Line: 9}, // the line is not written
		{Topic: "x", Partition: 2147483647, Offset: -9223372036854775808},
	}
	for n := range len(entries) + 1 {
		var b bytes.Buffer
		w := NewOffsetWriter(&b, "ckpt", n)
		for _, e := range entries[:n] {
			if err := w.Write(e); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if want := AppendOffsets(nil, entries[:n]); !bytes.Equal(b.Bytes(), want) {
			t.Fatalf("%d entries: wrote %q, want %q", n, b.Bytes(), want)
		}
	}

	var b bytes.Buffer
	w := NewOffsetWriter(&b, "ckpt", 1)
	if err := w.Close(); err == nil || err.Error() != "ckpt: 0 entries written, 1 declared" {
		t.Fatalf("Close short of the count: error %v", err)
	}
	w = NewOffsetWriter(&b, "ckpt", 1)
	if err := w.Write(entries[0]); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(entries[1]); err == nil || err.Error() != "ckpt: more entries than the 1 declared" || w.Close() != err {
		t.Fatalf("writing beyond the count: error %v", err)
	}

	boom := errors.New("boom")
	w = NewOffsetWriter(failingWriter{boom}, "ckpt", 1)
	err := w.Write(entries[0])
	if err == nil {
		err = w.Close()
	}
	if !errors.Is(err, boom) {
		t.Fatalf("error %v, want one wrapping %v", err, boom)
	}
}

type failingWriter struct{ err error }

func (w failingWriter) Write([]byte) (int, error) { return 0, w.err }

func TestReadLeaderEpochs(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []EpochEntry
		pos  int64
		err  string
	}{
		{name: "empty", in: ""},
		{name: "one", in: "0\n1\n0 0\n", want: []EpochEntry{{0, 0}}},
		{name: "several", in: "0\n3\n0 0\n2 2\n20 16\n", want: []EpochEntry{{0, 0}, {2, 2}, {20, 16}}},
		{name: "three fields", in: "0\n1\n0 0 0\n", pos: 4, err: `line 3: malformed entry "0 0 0": want 2 fields`},
		{name: "one field", in: "0\n1\n7\n", pos: 4, err: "want 2 fields"},
		{name: "leading space", in: "0\n1\n 7\n", pos: 4, err: `line 3: epoch "" is not an int32`},
		{name: "epoch overflow", in: "0\n1\n2147483648 0\n", pos: 4, err: "epoch \"2147483648\" is not an int32"},
		{name: "offset not a number", in: "0\n1\n1 x\n", pos: 4, err: "start offset \"x\" is not an int64"},
		{name: "count mismatch", in: "0\n2\n1 1\n", pos: 2, err: "declares 2 entries, file has 1"},
		{name: "version", in: "2\n0\n", pos: 0, err: "unsupported version 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadLeaderEpochs(strings.NewReader(tt.in), "lec")
			if tt.err != "" {
				checkCorrupt(t, err, "lec", tt.pos, tt.err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestLeaderEpochsRoundTrip(t *testing.T) {
	entries := []EpochEntry{{0, 0}, {25, 60500}, {2147483647, 9223372036854775807}}
	b := AppendLeaderEpochs(nil, entries)
	if want := "0\n3\n0 0\n25 60500\n2147483647 9223372036854775807\n"; string(b) != want {
		t.Fatalf("AppendLeaderEpochs = %q, want %q", b, want)
	}
	got, err := ReadLeaderEpochs(bytes.NewReader(b), "")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, entries) {
		t.Fatalf("round trip gave %+v, want %+v", got, entries)
	}
}

func TestSplitFields(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", []string{""}},
		{"   ", nil},
		{"a", []string{"a"}},
		{"a b", []string{"a", "b"}},
		{" a", []string{"", "a"}},
		{"a \t", []string{"a"}},
		{"\ta  b\f", []string{"", "a", "b"}},
	}
	for _, tt := range tests {
		var got []string
		for _, f := range splitFields([]byte(tt.in), nil, 10) {
			got = append(got, string(f))
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("splitFields(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := splitFields([]byte(strings.Repeat("x ", 1000)), nil, 3); len(got) != 4 {
		t.Errorf("splitFields stopped at %d fields, want 4", len(got))
	}
}

func TestParseInt(t *testing.T) {
	tests := []struct {
		in   string
		bits uint
		want int64
		ok   bool
	}{
		{"0", 32, 0, true},
		{"+7", 32, 7, true},
		{"-0", 64, 0, true},
		{"0007", 32, 7, true},
		{"2147483647", 32, 2147483647, true},
		{"-2147483648", 32, -2147483648, true},
		{"2147483648", 32, 0, false},
		{"-2147483649", 32, 0, false},
		{"9223372036854775807", 64, 9223372036854775807, true},
		{"-9223372036854775808", 64, -9223372036854775808, true},
		{"9223372036854775808", 64, 0, false},
		{"99999999999999999999", 64, 0, false},
		{"", 32, 0, false},
		{"-", 32, 0, false},
		{"+-1", 32, 0, false},
		{"1_000", 32, 0, false},
		{"0x10", 32, 0, false},
		{" 1", 32, 0, false},
	}
	for _, tt := range tests {
		got, ok := parseInt([]byte(tt.in), tt.bits)
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseInt(%q, %d) = %d, %v; want %d, %v", tt.in, tt.bits, got, ok, tt.want, tt.ok)
		}
	}
}

// linesReader streams a version-0 checkpoint of n entries without holding it.
type linesReader struct {
	n, i    int
	buf     []byte
	pending []byte // unread part of buf
}

func (r *linesReader) Read(p []byte) (int, error) {
	for len(r.pending) == 0 {
		switch {
		case r.i == 0:
			r.buf = []byte("0\n" + strconv.Itoa(r.n) + "\n")
		case r.i > r.n:
			return 0, io.EOF
		default:
			r.buf = strconv.AppendInt(append(r.buf[:0], "some-topic "...), int64(r.i%50), 10)
			r.buf = append(r.buf, " 1234567\n"...)
		}
		r.pending = r.buf
		r.i++
	}
	n := copy(p, r.pending)
	r.pending = r.pending[n:]
	return n, nil
}

// allocated returns the bytes and objects allocated so far.
func allocated() (bytes, objects uint64) {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.TotalAlloc, m.Mallocs
}

// A million-line checkpoint streams: scanning it costs a fixed amount of
// memory (consecutive entries of a topic share its name), and reading it
// costs memory for the entries only.
func TestMillionLines(t *testing.T) {
	if testing.Short() {
		t.Skip("reads a million lines")
	}
	const n = 1_000_000

	before, _ := allocated()
	lines := 0
	var last OffsetEntry
	err := ScanOffsets(&linesReader{n: n}, "big", func(e OffsetEntry) error {
		lines++
		last = e
		return nil
	})
	after, _ := allocated()
	scanned := after - before
	if err != nil || lines != n {
		t.Fatalf("scan: %d lines, error %v", lines, err)
	}
	if last.Line != n+2 || last.Topic != "some-topic" || last.Partition != int32(n%50) || last.Offset != 1234567 {
		t.Errorf("last entry scanned %+v", last)
	}
	if scanned > 1<<20 {
		t.Errorf("scanning %d lines allocated %d bytes, want a fixed amount under 1 MiB", n, scanned)
	}

	bytesBefore, objectsBefore := allocated()
	entries, err := ReadOffsets(&linesReader{n: n}, "big")
	bytesAfter, objectsAfter := allocated()
	read, objects := bytesAfter-bytesBefore, objectsAfter-objectsBefore
	if err != nil || len(entries) != n {
		t.Fatalf("read %d entries, error %v", len(entries), err)
	}
	// append's geometric growth allocates a few times the final slice, and
	// nothing else may grow with the file.
	limit := 6*uint64(cap(entries))*uint64(unsafe.Sizeof(OffsetEntry{})) + 1<<20
	if read > limit {
		t.Errorf("reading %d entries allocated %d bytes, want at most %d", n, read, limit)
	}
	// The 50 topic names are interned, so objects come from slice growth only.
	if objects > 10_000 {
		t.Errorf("reading %d entries allocated %d objects, want no per-entry allocation", n, objects)
	}
	if last := entries[n-1]; last.Line != n+2 || last.Offset != 1234567 {
		t.Errorf("last entry %+v", last)
	}
}

// A count of 2^31-1 over three lines must not be trusted to size anything.
func TestHugeCountFailsFast(t *testing.T) {
	in := "0\n2147483647\nfoo 0 1\n"
	before, _ := allocated()
	_, err := ReadOffsets(strings.NewReader(in), "f")
	after, _ := allocated()
	checkCorrupt(t, err, "f", 2, "declares 2147483647 entries, file has 1")
	if after-before > 64<<10 {
		t.Errorf("allocated %d bytes for a 3-line file", after-before)
	}
}

// benchOffsets is a checkpoint of 1000 partitions of 20 topics.
func benchOffsets() []byte {
	var entries []OffsetEntry
	for i := range 1000 {
		entries = append(entries, OffsetEntry{Topic: "topic-" + strconv.Itoa(i%20), Partition: int32(i), Offset: int64(i) * 1000})
	}
	return AppendOffsets(nil, entries)
}

func BenchmarkReadOffsets(b *testing.B) {
	data := benchOffsets()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ReadOffsets(bytes.NewReader(data), ""); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkScanOffsets(b *testing.B) {
	data := benchOffsets()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if err := ScanOffsets(bytes.NewReader(data), "", func(OffsetEntry) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOffsetWriter(b *testing.B) {
	var entries []OffsetEntry
	for i := range 1000 {
		entries = append(entries, OffsetEntry{Topic: "topic-" + strconv.Itoa(i%20), Partition: int32(i), Offset: int64(i) * 1000})
	}
	b.SetBytes(int64(len(AppendOffsets(nil, entries))))
	b.ReportAllocs()
	for b.Loop() {
		w := NewOffsetWriter(io.Discard, "", len(entries))
		for _, e := range entries {
			if err := w.Write(e); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestWriteOffsetsFile: the file gets what fill writes, and a failing fill
// or a wrong count leaves the old file as it was.
func TestWriteOffsetsFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "recovery-point-offset-checkpoint")
	entries := []OffsetEntry{{Topic: "a", Partition: 0, Offset: 5}, {Topic: "b", Partition: 3, Offset: 9}}
	fill := func(es []OffsetEntry, fail error) func(func(OffsetEntry) error) error {
		return func(write func(OffsetEntry) error) error {
			for _, e := range es {
				if err := write(e); err != nil {
					return err
				}
			}
			return fail
		}
	}
	if err := WriteOffsetsFile(path, 2, fill(entries, nil)); err != nil {
		t.Fatal(err)
	}
	want := string(AppendOffsets(nil, entries))
	boom := errors.New("boom")
	for _, tc := range []struct {
		n    int
		fill func(func(OffsetEntry) error) error
	}{
		{1, fill(entries[:1], boom)},
		{3, fill(entries, nil)},
	} {
		if err := WriteOffsetsFile(path, tc.n, tc.fill); err == nil {
			t.Fatalf("n %d: no error", tc.n)
		}
		if b, _ := os.ReadFile(path); string(b) != want {
			t.Fatalf("n %d: the file now holds %q, want the old %q", tc.n, b, want)
		}
	}
	if m, _ := filepath.Glob(path + "*"); len(m) != 1 {
		t.Fatalf("left behind: %v", m)
	}
}
