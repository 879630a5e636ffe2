package index

import (
	"bytes"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/logtool/logtool/internal/testkit/kafkasamples"
	"github.com/logtool/logtool/logfmt"
)

// Kafka's preallocated sizes for the default segment.index.bytes of 10 MiB.
const (
	preallocOffset = 10 << 20
	preallocTime   = (10 << 20) / TimeEntrySize * TimeEntrySize
)

func offsetBytes(t testing.TB, base int64, es ...OffsetEntry) []byte {
	t.Helper()
	var b []byte
	for _, e := range es {
		var err error
		if b, err = AppendOffsetEntry(b, base, e); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

func timeBytes(t testing.TB, base int64, es ...TimeEntry) []byte {
	t.Helper()
	var b []byte
	for _, e := range es {
		var err error
		if b, err = AppendTimeEntry(b, base, e); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

func cat(bs ...[]byte) []byte { return bytes.Join(bs, nil) }

// readOffsets runs OffsetReader over b through an io.ReaderAt, collecting what
// ParseOffsetIndex would return.
func readOffsets(t testing.TB, b []byte, base int64, file string) (OffsetIndex, []Problem) {
	t.Helper()
	r := NewOffsetReader(bytes.NewReader(b), int64(len(b)), base, file)
	var ix OffsetIndex
	var probs []Problem
	for r.Next() {
		ix.Entries = append(ix.Entries, r.Entry())
		probs = append(probs, r.Problems()...)
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	ix.Layout = r.Layout()
	return ix, append(probs, r.Problems()...)
}

func readTimes(t testing.TB, b []byte, base int64, file string) (TimeIndex, []Problem) {
	t.Helper()
	r := NewTimeReader(bytes.NewReader(b), int64(len(b)), base, file)
	var ix TimeIndex
	var probs []Problem
	for r.Next() {
		ix.Entries = append(ix.Entries, r.Entry())
		probs = append(probs, r.Problems()...)
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	ix.Layout = r.Layout()
	return ix, append(probs, r.Problems()...)
}

func TestEntryBytes(t *testing.T) {
	// Hand-computed: relative offset 137-100 = 37 = 0x25, position 4242 = 0x1092.
	got, err := AppendOffsetEntry([]byte{0xaa}, 100, OffsetEntry{Offset: 137, Position: 4242})
	if err != nil {
		t.Fatal(err)
	}
	if want := []byte{0xaa, 0, 0, 0, 0x25, 0, 0, 0x10, 0x92}; !bytes.Equal(got, want) {
		t.Errorf("offset entry = % x, want % x", got, want)
	}
	// The first entry of a real broker's __consumer_offsets-12 .timeindex:
	// timestamp 1587580883405 = 0x171a331d1cd, relative offset 35 = 0x23.
	got, err = AppendTimeEntry(nil, 0, TimeEntry{Timestamp: 1587580883405, Offset: 35})
	if err != nil {
		t.Fatal(err)
	}
	if want := []byte{0, 0, 1, 0x71, 0xa3, 0x31, 0xd1, 0xcd, 0, 0, 0, 0x23}; !bytes.Equal(got, want) {
		t.Errorf("time entry = % x, want % x", got, want)
	}
	// Relative offset at the top of the range: 0x7fffffff.
	got, err = AppendTimeEntry(nil, 1<<40, TimeEntry{Timestamp: 1, Offset: 1<<40 + math.MaxInt32})
	if err != nil {
		t.Fatal(err)
	}
	if want := []byte{0, 0, 0, 0, 0, 0, 0, 1, 0x7f, 0xff, 0xff, 0xff}; !bytes.Equal(got, want) {
		t.Errorf("time entry = % x, want % x", got, want)
	}
}

func TestAppendRefuses(t *testing.T) {
	tests := []struct {
		name  string
		err   error
		wantR bool // want ErrOffsetRange
	}{
		{"offset below base", offsetErr(100, OffsetEntry{Offset: 99, Position: 1}), true},
		{"offset past int32", offsetErr(100, OffsetEntry{Offset: 100 + math.MaxInt32 + 1, Position: 1}), true},
		{"distance overflows int64", offsetErr(math.MinInt64, OffsetEntry{Offset: math.MaxInt64, Position: 1}), true},
		{"position 0", offsetErr(0, OffsetEntry{Offset: 5, Position: 0}), false},
		{"negative position", offsetErr(0, OffsetEntry{Offset: 5, Position: -8}), false},
		{"time offset below base", timeErr(100, TimeEntry{Timestamp: 1, Offset: 0}), true},
		{"time offset past int32", timeErr(0, TimeEntry{Timestamp: 1, Offset: 1 << 31}), true},
		{"negative timestamp", timeErr(0, TimeEntry{Timestamp: -1, Offset: 0}), false},
	}
	for _, tt := range tests {
		if tt.err == nil {
			t.Errorf("%s: no error", tt.name)
			continue
		}
		if got := errors.Is(tt.err, ErrOffsetRange); got != tt.wantR {
			t.Errorf("%s: errors.Is(%v, ErrOffsetRange) = %v", tt.name, tt.err, got)
		}
	}
}

func offsetErr(base int64, e OffsetEntry) error {
	b, err := AppendOffsetEntry([]byte{1}, base, e)
	if len(b) != 1 {
		return errors.New("dst changed on error")
	}
	return err
}

func timeErr(base int64, e TimeEntry) error {
	b, err := AppendTimeEntry([]byte{1}, base, e)
	if len(b) != 1 {
		return errors.New("dst changed on error")
	}
	return err
}

func TestOffsetIndexRoundTrip(t *testing.T) {
	const base = 5000
	es := []OffsetEntry{{5036, 4200}, {5037, 8400}, {5100, 12700}, {base + math.MaxInt32, math.MaxInt32}}
	b := offsetBytes(t, base, es...)
	for name, b := range map[string][]byte{"trimmed": b, "preallocated": append(b, make([]byte, 64)...)} {
		ix, probs := ParseOffsetIndex(b, base, "x.index")
		if len(probs) != 0 {
			t.Errorf("%s: problems %v", name, probs)
		}
		want := OffsetIndex{Entries: es, Layout: Layout{ValidBytes: 32, ZeroTail: int64(len(b)) - 32}}
		if !reflect.DeepEqual(ix, want) {
			t.Errorf("%s: got %+v, want %+v", name, ix, want)
		}
	}
}

func TestTimeIndexRoundTrip(t *testing.T) {
	const base = 1 << 33
	es := []TimeEntry{{0, base}, {1587580883405, base + 35}, {1587580883406, base + 35}, {math.MaxInt64, base + math.MaxInt32}}
	b := timeBytes(t, base, es...)
	for name, b := range map[string][]byte{"trimmed": b, "preallocated": append(b, make([]byte, 120)...)} {
		ix, probs := ParseTimeIndex(b, base, "x.timeindex")
		if len(probs) != 0 {
			t.Errorf("%s: problems %v", name, probs)
		}
		want := TimeIndex{Entries: es, Layout: Layout{ValidBytes: 48, ZeroTail: int64(len(b)) - 48}}
		if !reflect.DeepEqual(ix, want) {
			t.Errorf("%s: got %+v, want %+v", name, ix, want)
		}
	}
}

func TestParseOffsetIndex(t *testing.T) {
	const base = 1000
	e1, e2, e3 := OffsetEntry{1010, 4100}, OffsetEntry{1020, 8200}, OffsetEntry{1030, 12300}
	good := offsetBytes(t, base, e1, e2, e3)
	raw := func(rel, pos uint32) []byte {
		return []byte{byte(rel >> 24), byte(rel >> 16), byte(rel >> 8), byte(rel), byte(pos >> 24), byte(pos >> 16), byte(pos >> 8), byte(pos)}
	}
	tests := []struct {
		name    string
		b       []byte
		base    int64
		entries int
		layout  Layout
		probs   []Problem // File is filled in
	}{
		{name: "empty", b: nil, layout: Layout{}},
		{name: "trimmed", b: good, entries: 3, layout: Layout{ValidBytes: 24}},
		{name: "all zero", b: make([]byte, 80), layout: Layout{ZeroTail: 80}},
		{name: "zero tail", b: cat(good, make([]byte, 40)), entries: 3, layout: Layout{ValidBytes: 24, ZeroTail: 40}},
		{
			name: "corrupt middle entry", b: cat(good[:8], raw(5, 8200), good[16:]), entries: 1, layout: Layout{ValidBytes: 8},
			probs: []Problem{{Pos: 8, Entry: 1, Msg: "offset 1005 is not above the previous entry's 1010"}},
		},
		{
			name: "zeroed middle entry", b: cat(good[:8], make([]byte, 8), good[16:]), entries: 1, layout: Layout{ValidBytes: 8},
			probs: []Problem{{Pos: 16, Entry: 2, Msg: "entry is not zero, but entry 1 before it is all zero and ends the valid entries"}},
		},
		{
			name: "garbage after zero tail", b: cat(good, make([]byte, 37), []byte{1, 0, 0}), entries: 3, layout: Layout{ValidBytes: 24},
			probs: []Problem{{Pos: 56, Entry: 7, Msg: "entry is not zero, but entry 3 before it is all zero and ends the valid entries"}},
		},
		{
			name: "position not increasing", b: cat(good[:16], raw(40, 8200)), entries: 2, layout: Layout{ValidBytes: 16},
			probs: []Problem{{Pos: 16, Entry: 2, Msg: "position 8200 is not above the previous entry's 8200"}},
		},
		{
			name: "position 0 first", b: raw(5, 0), layout: Layout{},
			probs: []Problem{{Pos: 0, Entry: 0, Msg: "position 0, which Kafka never indexes"}},
		},
		{
			name: "negative position", b: cat(good[:8], raw(20, 0x80000000)), entries: 1, layout: Layout{ValidBytes: 8},
			probs: []Problem{{Pos: 8, Entry: 1, Msg: "negative position -2147483648"}},
		},
		{
			name: "negative relative offset", b: raw(0xffffffff, 10), layout: Layout{},
			probs: []Problem{{Pos: 0, Entry: 0, Msg: "negative relative offset -1"}},
		},
		{
			name: "overflowing base", b: raw(2, 10), base: math.MaxInt64 - 1, layout: Layout{},
			probs: []Problem{{Pos: 0, Entry: 0, Msg: "relative offset 2 overflows base offset 9223372036854775806"}},
		},
		{
			name: "partial tail", b: cat(good, []byte{0, 0, 0}), entries: 3, layout: Layout{ValidBytes: 24, PartialTail: 3},
			probs: []Problem{{Pos: 24, Entry: 3, Msg: "3 bytes at the end do not make a whole entry of 8"}},
		},
		{
			name: "zero tail and partial tail", b: cat(good, make([]byte, 21)), entries: 3, layout: Layout{ValidBytes: 24, ZeroTail: 16, PartialTail: 5},
			probs: []Problem{{Pos: 40, Entry: 5, Msg: "5 bytes at the end do not make a whole entry of 8"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.base
			if b == 0 {
				b = base
			}
			for i := range tt.probs {
				tt.probs[i].File = "f.index"
			}
			ix, probs := ParseOffsetIndex(tt.b, b, "f.index")
			if len(ix.Entries) != tt.entries || ix.Layout != tt.layout {
				t.Errorf("got %d entries, %+v; want %d, %+v", len(ix.Entries), ix.Layout, tt.entries, tt.layout)
			}
			if !reflect.DeepEqual(probs, tt.probs) {
				t.Errorf("problems\n got %+v\nwant %+v", probs, tt.probs)
			}
			rix, rprobs := readOffsets(t, tt.b, b, "f.index")
			if !reflect.DeepEqual(rix, ix) || !reflect.DeepEqual(rprobs, probs) {
				t.Errorf("reader disagrees with parser: %+v %+v", rix, rprobs)
			}
		})
	}
}

func TestParseTimeIndex(t *testing.T) {
	const base = 1000
	e1, e2, e3 := TimeEntry{500, 1010}, TimeEntry{600, 1010}, TimeEntry{700, 1030}
	good := timeBytes(t, base, e1, e2, e3)
	raw := func(ts uint64, rel uint32) []byte {
		b := []byte{byte(ts >> 56), byte(ts >> 48), byte(ts >> 40), byte(ts >> 32), byte(ts >> 24), byte(ts >> 16), byte(ts >> 8), byte(ts)}
		return append(b, byte(rel>>24), byte(rel>>16), byte(rel>>8), byte(rel))
	}
	tests := []struct {
		name    string
		b       []byte
		entries []TimeEntry
		layout  Layout
		probs   []Problem
	}{
		{name: "empty"},
		{name: "trimmed", b: good, entries: []TimeEntry{e1, e2, e3}, layout: Layout{ValidBytes: 36}},
		// A file trimmed to one entry: (0, base), as Kafka appends for a
		// first batch of timestamp 0 at the base offset.
		{name: "one zero entry", b: make([]byte, 12), entries: []TimeEntry{{0, 1000}}, layout: Layout{ValidBytes: 12}},
		{
			name: "one zero entry, partial tail", b: make([]byte, 13), entries: []TimeEntry{{0, 1000}}, layout: Layout{ValidBytes: 12, PartialTail: 1},
			probs: []Problem{{Pos: 12, Entry: 1, Msg: "1 bytes at the end do not make a whole entry of 12"}},
		},
		// Only a preallocated file has two zero entries in a row.
		{name: "two zero entries", b: make([]byte, 24), layout: Layout{ZeroTail: 24}},
		{name: "all zero", b: make([]byte, 120), layout: Layout{ZeroTail: 120}},
		// Timestamp 0 is legal: a zero first entry followed by a real one is kept.
		{
			name: "zero first entry then data", b: cat(make([]byte, 12), raw(5, 3)),
			entries: []TimeEntry{{0, 1000}, {5, 1003}}, layout: Layout{ValidBytes: 24},
		},
		{
			name: "zero first entry, zero, data", b: cat(make([]byte, 24), raw(5, 3)), layout: Layout{},
			probs: []Problem{{Pos: 24, Entry: 2, Msg: "entry is not zero, but entry 0 before it is all zero and ends the valid entries"}},
		},
		{name: "zero tail", b: cat(good, make([]byte, 48)), entries: []TimeEntry{e1, e2, e3}, layout: Layout{ValidBytes: 36, ZeroTail: 48}},
		{
			name: "timestamp not increasing", b: cat(good[:24], raw(600, 30)), entries: []TimeEntry{e1, e2}, layout: Layout{ValidBytes: 24},
			probs: []Problem{{Pos: 24, Entry: 2, Msg: "timestamp 600 is not above the previous entry's 600"}},
		},
		{
			name: "offset going back", b: cat(good[:24], raw(601, 9)), entries: []TimeEntry{e1, e2}, layout: Layout{ValidBytes: 24},
			probs: []Problem{{Pos: 24, Entry: 2, Msg: "offset 1009 is below the previous entry's 1010"}},
		},
		{
			name: "negative timestamp", b: raw(math.MaxUint64, 0), layout: Layout{},
			probs: []Problem{{Pos: 0, Entry: 0, Msg: "negative timestamp -1"}},
		},
		{
			name: "negative relative offset", b: cat(good, raw(800, 0xfffffff0)), entries: []TimeEntry{e1, e2, e3}, layout: Layout{ValidBytes: 36},
			probs: []Problem{{Pos: 36, Entry: 3, Msg: "negative relative offset -16"}},
		},
		{
			name: "partial tail", b: cat(good, []byte{9}), entries: []TimeEntry{e1, e2, e3}, layout: Layout{ValidBytes: 36, PartialTail: 1},
			probs: []Problem{{Pos: 36, Entry: 3, Msg: "1 bytes at the end do not make a whole entry of 12"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for i := range tt.probs {
				tt.probs[i].File = "f.timeindex"
			}
			ix, probs := ParseTimeIndex(tt.b, base, "f.timeindex")
			want := TimeIndex{Entries: tt.entries, Layout: tt.layout}
			if !reflect.DeepEqual(ix, want) {
				t.Errorf("got %+v, want %+v", ix, want)
			}
			if !reflect.DeepEqual(probs, tt.probs) {
				t.Errorf("problems\n got %+v\nwant %+v", probs, tt.probs)
			}
			rix, rprobs := readTimes(t, tt.b, base, "f.timeindex")
			if !reflect.DeepEqual(rix, ix) || !reflect.DeepEqual(rprobs, probs) {
				t.Errorf("reader disagrees with parser: %+v %+v", rix, rprobs)
			}
		})
	}
}

// TestPreallocated checks 10 MiB files as Kafka leaves them for an active
// segment: a few entries, then zeros. The file is sparse, so the test costs
// no disk, and spans many reader chunks.
func TestPreallocated(t *testing.T) {
	const base = 7
	dir := t.TempDir()
	sparse := func(name string, size int64, head []byte, at int64, tail []byte) *os.File {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		if err := f.Truncate(size); err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt(head, 0); err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt(tail, at); err != nil {
			t.Fatal(err)
		}
		return f
	}

	offs := offsetBytes(t, base, OffsetEntry{50, 4100}, OffsetEntry{90, 8250}, OffsetEntry{130, 12400})
	f := sparse("a.index", preallocOffset, offs, 0, nil)
	r := NewOffsetReader(f, preallocOffset, base, f.Name())
	n := 0
	for r.Next() {
		n++
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if want := (Layout{ValidBytes: 24, ZeroTail: preallocOffset - 24}); n != 3 || r.Layout() != want || len(r.Problems()) != 0 {
		t.Errorf("got %d entries, %+v, %v; want 3, %+v", n, r.Layout(), r.Problems(), want)
	}
	if err := SanityCheckOffsetIndex(f, preallocOffset, base, f.Name()); err != nil {
		t.Errorf("Kafka's check passes a preallocated offset index, got %v", err)
	}

	times := timeBytes(t, base, TimeEntry{1000, 50}, TimeEntry{2000, 90})
	f = sparse("a.timeindex", preallocTime, times, 0, nil)
	tr := NewTimeReader(f, preallocTime, base, f.Name())
	n = 0
	for tr.Next() {
		n++
	}
	if err := tr.Err(); err != nil {
		t.Fatal(err)
	}
	if want := (Layout{ValidBytes: 24, ZeroTail: preallocTime - 24}); n != 2 || tr.Layout() != want || len(tr.Problems()) != 0 {
		t.Errorf("got %d entries, %+v, %v; want 2, %+v", n, tr.Layout(), tr.Problems(), want)
	}
	// The zero in the last slot is why trunk Kafka skips this check.
	if err := SanityCheckTimeIndex(f, preallocTime, base, f.Name()); err == nil {
		t.Error("Kafka's check passes a preallocated time index with entries")
	}

	// One stray byte near the end, chunks away from the entries.
	f = sparse("b.index", preallocOffset, offs, preallocOffset-3, []byte{1})
	ix, probs := readOffsets(t, mustRead(t, f.Name()), base, f.Name())
	want := []Problem{{File: f.Name(), Pos: preallocOffset - 8, Entry: preallocOffset/8 - 1,
		Msg: "entry is not zero, but entry 3 before it is all zero and ends the valid entries"}}
	if len(ix.Entries) != 3 || ix.ZeroTail != 0 || !reflect.DeepEqual(probs, want) {
		t.Errorf("got %d entries, %+v, %+v; want 3 entries and %+v", len(ix.Entries), ix.Layout, probs, want)
	}
}

func mustRead(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestReaderChunks checks entries that span several reader chunks.
func TestReaderChunks(t *testing.T) {
	const n = 3*chunkEntries + 17
	es := make([]OffsetEntry, n)
	ts := make([]TimeEntry, n)
	for i := range es {
		es[i] = OffsetEntry{Offset: int64(i) * 3, Position: int32(i+1) * 4097}
		ts[i] = TimeEntry{Timestamp: int64(i) + 1e12, Offset: int64(i) * 3}
	}
	b := append(offsetBytes(t, 0, es...), make([]byte, 8*chunkEntries)...)
	ix, probs := readOffsets(t, b, 0, "")
	if len(probs) != 0 || !reflect.DeepEqual(ix.Entries, es) || ix.ZeroTail != 8*chunkEntries {
		t.Errorf("offset reader: %d entries, %+v, %v", len(ix.Entries), ix.Layout, probs)
	}
	tix, probs := readTimes(t, timeBytes(t, 0, ts...), 0, "")
	if len(probs) != 0 || !reflect.DeepEqual(tix.Entries, ts) {
		t.Errorf("time reader: %d entries, %+v, %v", len(tix.Entries), tix.Layout, probs)
	}
}

// errReaderAt serves data, then fails.
type errReaderAt struct {
	data []byte
	err  error
}

func (r errReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n := copy(p, r.data[min(off, int64(len(r.data))):])
	if n < len(p) {
		return n, r.err
	}
	return n, nil
}

func TestReaderErrors(t *testing.T) {
	good := offsetBytes(t, 0, OffsetEntry{1, 5000}, OffsetEntry{2, 9000})
	boom := errors.New("boom")

	// An I/O error comes back as it is.
	r := NewOffsetReader(errReaderAt{good, boom}, 80, 0, "f.index")
	for r.Next() {
		t.Error("entry from a failed read")
	}
	if !errors.Is(r.Err(), boom) {
		t.Errorf("Err = %v, want boom", r.Err())
	}

	// A file shorter than its stated size is corrupt where it ends.
	for _, rd := range []io.ReaderAt{bytes.NewReader(good), errReaderAt{good, nil}} {
		tr := NewTimeReader(rd, 24, 0, "f.timeindex")
		for tr.Next() {
		}
		ce, ok := logfmt.AsCorrupt(tr.Err())
		if !ok || ce.File != "f.timeindex" || ce.Pos != 16 {
			t.Errorf("Err = %#v, want CorruptError in f.timeindex at 16", tr.Err())
		}
	}
}

func TestLookup(t *testing.T) {
	ix := OffsetIndex{Entries: []OffsetEntry{{110, 4100}, {120, 8200}, {130, 12300}}}
	offsets := []struct {
		target int64
		want   OffsetEntry
		ok     bool
	}{
		{100, OffsetEntry{}, false},
		{109, OffsetEntry{}, false},
		{110, OffsetEntry{110, 4100}, true},
		{119, OffsetEntry{110, 4100}, true},
		{120, OffsetEntry{120, 8200}, true},
		{129, OffsetEntry{120, 8200}, true},
		{130, OffsetEntry{130, 12300}, true},
		{math.MaxInt64, OffsetEntry{130, 12300}, true},
	}
	for _, tt := range offsets {
		if got, ok := ix.Lookup(tt.target); got != tt.want || ok != tt.ok {
			t.Errorf("Lookup(%d) = %v, %v; want %v, %v", tt.target, got, ok, tt.want, tt.ok)
		}
	}
	if _, ok := (OffsetIndex{}).Lookup(5); ok {
		t.Error("empty offset index found an entry")
	}

	tix := TimeIndex{Entries: []TimeEntry{{1000, 110}, {2000, 110}, {3000, 150}}}
	times := []struct {
		target int64
		want   TimeEntry
		ok     bool
	}{
		{-1, TimeEntry{}, false},
		{999, TimeEntry{}, false},
		{1000, TimeEntry{1000, 110}, true},
		{2999, TimeEntry{2000, 110}, true},
		{3000, TimeEntry{3000, 150}, true},
		{5000, TimeEntry{3000, 150}, true},
	}
	for _, tt := range times {
		if got, ok := tix.Lookup(tt.target); got != tt.want || ok != tt.ok {
			t.Errorf("Lookup(%d) = %v, %v; want %v, %v", tt.target, got, ok, tt.want, tt.ok)
		}
	}
}

func TestSanityCheck(t *testing.T) {
	const base = 100
	offs := offsetBytes(t, base, OffsetEntry{110, 4100}, OffsetEntry{120, 8200})
	times := timeBytes(t, base, TimeEntry{1000, 110}, TimeEntry{2000, 120})
	tests := []struct {
		name  string
		check func(io.ReaderAt, int64, int64, string) error
		b     []byte
		pos   int64 // -1: passes
	}{
		{"offset empty", SanityCheckOffsetIndex, nil, -1},
		{"offset good", SanityCheckOffsetIndex, offs, -1},
		{"offset zero tail", SanityCheckOffsetIndex, cat(offs, make([]byte, 16)), -1},
		{"offset last below base", SanityCheckOffsetIndex, cat(offs, []byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0x40, 0}), 16},
		{"offset partial", SanityCheckOffsetIndex, cat(offs, []byte{1, 2}), 16},
		{"time empty", SanityCheckTimeIndex, nil, -1},
		{"time good", SanityCheckTimeIndex, times, -1},
		// Only the first and last entries are compared, as in Kafka.
		{"time middle out of order", SanityCheckTimeIndex, cat(times[:12], timeBytes(t, base, TimeEntry{5, 100}), times[12:]), -1},
		{"time zero tail", SanityCheckTimeIndex, cat(times, make([]byte, 12)), 24},
		{"time last below base", SanityCheckTimeIndex, cat(times, []byte{0, 0, 0, 0, 0, 0, 0x10, 0, 0x80, 0, 0, 0}), 24},
		{"time partial", SanityCheckTimeIndex, cat(times, make([]byte, 11)), 24},
	}
	for _, tt := range tests {
		err := tt.check(bytes.NewReader(tt.b), int64(len(tt.b)), base, "f")
		if tt.pos < 0 {
			if err != nil {
				t.Errorf("%s: %v", tt.name, err)
			}
			continue
		}
		if ce, ok := logfmt.AsCorrupt(err); !ok || ce.Pos != tt.pos || ce.File != "f" {
			t.Errorf("%s: got %v, want a CorruptError in f at %d", tt.name, err, tt.pos)
		}
	}
	// A file shorter than the size given.
	if ce, ok := logfmt.AsCorrupt(SanityCheckOffsetIndex(bytes.NewReader(offs), 32, base, "f")); !ok || ce.Pos != 24 {
		t.Errorf("short file: got %v", ce)
	}
}

// samples walks the index files under the shared broker samples.
func samples(t *testing.T, fn func(path string, base int64, b []byte)) {
	root := kafkasamples.Dir("logdirs")
	if _, err := os.Stat(root); err != nil {
		kafkasamples.Skip(t, err)
	}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		switch filepath.Ext(path) {
		case ".index", ".timeindex", ".txnindex":
		default:
			return nil
		}
		name := filepath.Base(path)
		base, err := strconv.ParseInt(name[:strings.IndexByte(name, '.')], 10, 64)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fn(path, base, b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestRealIndexes(t *testing.T) {
	files, entries := 0, 0
	samples(t, func(path string, base int64, b []byte) {
		files++
		var n int
		var probs []Problem
		var layout Layout
		var err error
		switch filepath.Ext(path) {
		case ".index":
			ix, p := ParseOffsetIndex(b, base, path)
			n, probs, layout = len(ix.Entries), p, ix.Layout
			err = SanityCheckOffsetIndex(bytes.NewReader(b), int64(len(b)), base, path)
			if rix, rp := readOffsets(t, b, base, path); !reflect.DeepEqual(rix, ix) || !reflect.DeepEqual(rp, p) {
				t.Errorf("%s: reader disagrees with parser", path)
			}
		case ".timeindex":
			ix, p := ParseTimeIndex(b, base, path)
			n, probs, layout = len(ix.Entries), p, ix.Layout
			err = SanityCheckTimeIndex(bytes.NewReader(b), int64(len(b)), base, path)
			if rix, rp := readTimes(t, b, base, path); !reflect.DeepEqual(rix, ix) || !reflect.DeepEqual(rp, p) {
				t.Errorf("%s: reader disagrees with parser", path)
			}
		case ".txnindex":
			txns, p := ParseTxnIndex(b, path)
			n, probs, layout = len(txns), p, Layout{ValidBytes: int64(len(txns) * TxnEntrySize)}
			err = SanityCheckTxnIndex(bytes.NewReader(b), int64(len(b)), base, path)
		}
		if len(probs) != 0 || err != nil {
			t.Errorf("%s: problems %v, sanity check %v", path, probs, err)
		}
		// The samples are trimmed: every byte is a valid entry.
		if layout.ValidBytes != int64(len(b)) {
			t.Errorf("%s: %+v of %d bytes", path, layout, len(b))
		}
		entries += n
	})
	t.Logf("%d index files, %d entries", files, entries)
	if files == 0 {
		t.Error("no index files in the samples")
	}
}

// TestRealIndexValues pins entries read by hand from a sample's hex dump.
func TestRealIndexValues(t *testing.T) {
	dir := kafkasamples.Dir("logdirs", "volodymyrzee_kafka-2.x-zk", "__consumer_offsets-12")
	b, err := os.ReadFile(filepath.Join(dir, "00000000000000000000.index"))
	if err != nil {
		kafkasamples.Skip(t, err)
	}
	ix, _ := ParseOffsetIndex(b, 0, "")
	if len(ix.Entries) != 10 || ix.Entries[0] != (OffsetEntry{37, 4295}) || ix.Entries[1] != (OffsetEntry{82, 8540}) {
		t.Errorf("got %v", ix.Entries)
	}
	b = mustRead(t, filepath.Join(dir, "00000000000000000000.timeindex"))
	tix, _ := ParseTimeIndex(b, 0, "")
	if len(tix.Entries) != 11 || tix.Entries[0] != (TimeEntry{1587580883405, 35}) {
		t.Errorf("got %v", tix.Entries)
	}
}

func BenchmarkParseOffsetIndex(b *testing.B) {
	es := make([]OffsetEntry, preallocOffset/OffsetEntrySize)
	for i := range es {
		es[i] = OffsetEntry{Offset: int64(i) * 4, Position: int32(i+1) * 1000}
	}
	full := offsetBytes(b, 0, es...)
	prealloc := make([]byte, preallocOffset)
	copy(prealloc, full[:800])
	for _, bc := range []struct {
		name string
		b    []byte
	}{{"full", full}, {"preallocated", prealloc}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.b)))
			for b.Loop() {
				if _, probs := ParseOffsetIndex(bc.b, 0, ""); len(probs) != 0 {
					b.Fatal(probs)
				}
			}
		})
	}
}
