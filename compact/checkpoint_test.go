package compact

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/layout"
)

func TestUpdateRoot(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string // want "" leaves the file as it was
	}{
		{"unchanged", "0\n2\nother 3 7\ntest 0 50\n", ""},
		{"new offset", "0\n2\nother 3 7\ntest 0 40\n", "0\n2\nother 3 7\ntest 0 50\n"},
		{"every line of the partition", "0\n3\ntest 0 40\nother 3 7\ntest 0 45\n", "0\n3\ntest 0 50\nother 3 7\ntest 0 50\n"},
		{"appended", "0\n1\nother 3 7\n", "0\n2\nother 3 7\ntest 0 50\n"},
		{"empty file", "", "0\n1\ntest 0 50\n"},
		{"other partition of the topic", "0\n1\ntest 1 50\n", "0\n2\ntest 1 50\ntest 0 50\n"},
		// The same entries, not laid out as Kafka writes them.
		{"CRLF", "0\r\n1\r\ntest 0 50\r\n", "0\n1\ntest 0 50\n"},
		{"signs", "0\n1\ntest +0 50\n", "0\n1\ntest 0 50\n"},
		{"no final newline", "0\n1\ntest 0 50", "0\n1\ntest 0 50\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), layout.CleanerOffsetCheckpointFile)
			if err := os.WriteFile(path, []byte(tc.in), 0o644); err != nil {
				t.Fatal(err)
			}
			old := time.Now().Add(-time.Hour).Truncate(time.Second)
			if err := os.Chtimes(path, old, old); err != nil {
				t.Fatal(err)
			}
			if err := updateRoot(path, "test", 0, 50); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == "" {
				if string(got) != tc.in || !fi.ModTime().Equal(old) {
					t.Errorf("rewrote %q as %q (modified %v)", tc.in, got, fi.ModTime())
				}
			} else if string(got) != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if _, err := os.Stat(safefile.TempName(path)); !os.IsNotExist(err) {
				t.Errorf("temporary file left: %v", err)
			}
		})
	}
}

func TestUpdateRootRefuses(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, layout.CleanerOffsetCheckpointFile)
	if err := updateRoot(path, "test", 0, 50); err != nil {
		t.Fatalf("missing file: %v", err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("a missing file was created: %v", err)
	}
	const bad = "0\n3\ntest 0 40\nother 3 7\n"
	if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	err := updateRoot(path, "test", 0, 50)
	if ce, ok := logfmt.AsCorrupt(err); !ok || ce.File != path || ce.Pos != 2 {
		t.Fatalf("error %v, want a CorruptError about line 2 of %s", err, path)
	}
	if got, _ := os.ReadFile(path); string(got) != bad {
		t.Fatalf("a malformed file was rewritten: %q", got)
	}
}

// TestUpdateRootStreams rewrites a root checkpoint of many entries without
// holding them: the memory it allocates does not depend on their number.
func TestUpdateRootStreams(t *testing.T) {
	const n = 200_000
	var b bytes.Buffer
	fmt.Fprintf(&b, "0\n%d\n", n)
	for i := range n {
		fmt.Fprintf(&b, "ghost %d %d\n", i, i)
	}
	path := filepath.Join(t.TempDir(), layout.CleanerOffsetCheckpointFile)
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := updateRoot(path, "test", 0, 50); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 2<<20 {
		t.Errorf("rewriting %d entries allocated %d bytes, want under 2 MiB", n, alloc)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := append(bytes.Replace(b.Bytes(), []byte(fmt.Sprint(n)), []byte(fmt.Sprint(n+1)), 1), "test 0 50\n"...)
	if !bytes.Equal(got, want) {
		t.Errorf("the rewritten file is not the old one with the entry appended")
	}
}
