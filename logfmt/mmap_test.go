package logfmt

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"
)

// TestMapWindowsMatchesPlainReader reads files through page-sized mapped
// windows, so that entries straddle windows in every way, and holds the
// result to a plain reader's.
func TestMapWindowsMatchesPlainReader(t *testing.T) {
	page := int64(os.Getpagesize())
	for name, data := range windowInputs(t) {
		path := filepath.Join(t.TempDir(), "seg.log")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, w := range []int64{page, 3 * page, 1 << 20} {
			for _, seek := range [][2]int64{{-1, 0}, {3, 0}, {5, int64(len(data) / 2)}} {
				t.Run(fmt.Sprintf("%s/%d/%d-%d", name, w, seek[0], seek[1]), func(t *testing.T) {
					want := trace(NewSegmentReader(bytes.NewReader(data), int64(len(data)), "seg"), int(seek[0]), seek[1])
					f, err := os.Open(path)
					if err != nil {
						t.Fatal(err)
					}
					defer f.Close()
					sr := NewSegmentReader(f, int64(len(data)), "seg", MappedWindows)
					if sr.mapFile == nil {
						t.Skip("no mapping on this system")
					}
					sr.mapLen = w
					got := trace(sr, int(seek[0]), seek[1])
					sr.Close()
					if got != want {
						t.Fatalf("mapped reads\n%s\nplain reads\n%s", got, want)
					}
				})
			}
		}
	}
}

// TestCatchFault truncates a mapped file under the reader, as another
// process could, and expects an error where a buffered read would come up
// short, not a crash.
func TestCatchFault(t *testing.T) {
	seg := windowInputs(t)["clean"]
	for len(seg) < 64<<10 {
		seg = append(seg, seg...)
	}
	sr, path := mappedAfterFirst(t, seg)
	second := sr.Pos()
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	err := sr.CatchFault(func() {
		for sr.Next() {
			sr.Batch().ComputeCRC()
		}
	})
	// The position is the first byte read of the next entry's header.
	var at int64
	if err == nil || !strings.Contains(err.Error(), "the file shrank while it was read") {
		t.Fatalf("reading a truncated mapping: %v", err)
	}
	if _, serr := fmt.Sscanf(err.Error()[strings.Index(err.Error(), "no data at byte"):], "no data at byte %d", &at); serr != nil ||
		at < second || at >= second+HeaderSizeUpToMagic {
		t.Fatalf("reading a truncated mapping: %v; want a position in the header at %d", err, second)
	}
	t.Log(err)
}

// TestCatchFaultPassesOtherPanics: only faults on mapped memory are caught.
func TestCatchFaultPassesOtherPanics(t *testing.T) {
	defer func() {
		if r := recover(); r != "not a fault" {
			t.Fatalf("recovered %v", r)
		}
	}()
	_ = NewSegmentReader(bytes.NewReader(nil), 0, "x").CatchFault(func() { panic("not a fault") })
	t.Fatal("the panic was swallowed")
}

// TestShrunkInsideLastPage truncates a mapped file inside a page that is
// still mapped: the bytes there read as zeros instead of faulting, and the
// reader must report the shrink, not a zero tail or damage.
func TestShrunkInsideLastPage(t *testing.T) {
	// Whole batches, all in the first page.
	var seg []byte
	all := NewSegmentReader(bytes.NewReader(windowInputs(t)["clean"]), 1<<20, "seg")
	for all.Next() && all.Pos() < int64(os.Getpagesize()) {
		seg = append(seg, all.Batch().Data...)
	}
	sr, path := mappedAfterFirst(t, seg)
	if err := os.Truncate(path, sr.Pos()+3); err != nil {
		t.Fatal(err)
	}
	err := sr.CatchFault(func() {
		for sr.Next() {
		}
	})
	if err == nil {
		err = sr.Err()
	}
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("the file shrank from %d to %d bytes", len(seg), sr.Pos()+3)) {
		t.Fatalf("after truncation inside a mapped page: %v (end %v)", err, sr.End())
	}
}

// TestFaultPos: only addresses inside the mapped window are the file's.
func TestFaultPos(t *testing.T) {
	m := make([]byte, 100)
	base := uintptr(unsafe.Pointer(&m[0]))
	s := &SegmentReader{mapping: m, bufPos: 4096}
	for _, c := range []struct {
		addr uintptr
		pos  int64
		ok   bool
	}{
		{base - 1, 0, false},
		{base, 4096, true},
		{base + 99, 4195, true},
		{base + 100, 0, false},
		{base + 1<<30, 0, false},
	} {
		pos, ok := s.faultPos(c.addr)
		if pos != c.pos || ok != c.ok {
			t.Errorf("faultPos(base%+d) = %d, %v; want %d, %v", int64(c.addr-base), pos, ok, c.pos, c.ok)
		}
	}
	if _, ok := (&SegmentReader{}).faultPos(base); ok {
		t.Error("a fault with nothing mapped is the file's")
	}
}

// mappedAfterFirst writes seg to a file and returns a reader mapping it,
// past its first batch, with the file's path; the test is skipped where
// files cannot be mapped.
func mappedAfterFirst(t *testing.T, seg []byte) (*SegmentReader, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "seg.log")
	if err := os.WriteFile(path, seg, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	sr := NewSegmentReader(f, int64(len(seg)), path, MappedWindows)
	if sr.mapFile == nil {
		t.Skip("no mapping on this system")
	}
	t.Cleanup(sr.Close)
	if !sr.Next() {
		t.Fatalf("no first batch: %v", sr.Err())
	}
	return sr, path
}
