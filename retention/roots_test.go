package retention

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/logfmt/checkpoint"
	"github.com/logtool/logtool/logfmt/layout"
)

// TestRootsKeepOnlyTheirPartitions: readRoots holds the entries of the
// partitions worked on, and write streams the others from the old file.
func TestRootsKeepOnlyTheirPartitions(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, layout.LogStartOffsetCheckpointFile)
	if err := os.WriteFile(path, []byte("0\n5\nghost 0 1\norders 1 10\nghost 1 2\norders 1 12\nother 0 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rc, err := readRoots(dir, []string{filepath.Join(dir, "orders-1"), filepath.Join(dir, "orders-2"), filepath.Join(dir, "not a partition")})
	if err != nil {
		t.Fatal(err)
	}
	want := []checkpoint.OffsetEntry{{Topic: "orders", Partition: 1, Offset: 10, Line: 4}, {Topic: "orders", Partition: 1, Offset: 12, Line: 6}}
	if !rc.hasLogStart || rc.hasRecovery || !reflect.DeepEqual(rc.logStart, want) {
		t.Fatalf("read %+v (found %v, recovery found %v), want %+v", rc.logStart, rc.hasLogStart, rc.hasRecovery, want)
	}
	if off, ok := lookup(rc.logStart, "orders", 1); !ok || off != 12 {
		t.Fatalf("lookup = %d, %v; want the last line's 12", off, ok)
	}

	entries := append([]checkpoint.OffsetEntry{}, rc.logStart...)
	entries[0].Offset, entries[1].Offset = 20, 20
	entries = append(entries, checkpoint.OffsetEntry{Topic: "orders", Partition: 2, Offset: 30})
	if err := rc.write(layout.LogStartOffsetCheckpointFile, entries); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := "0\n6\nghost 0 1\norders 1 20\nghost 1 2\norders 1 20\nother 0 3\norders 2 30\n"; string(got) != want {
		t.Fatalf("wrote %q, want %q", got, want)
	}
}

// TestRootsChangedSinceRead: a file that is not the one read is not
// replaced.
func TestRootsChangedSinceRead(t *testing.T) {
	for _, changed := range []string{
		"0\n2\nghost 0 1\norders 0 10\n",            // an entry more
		"0\n1\norders 1 10\n",                       // the line of the entry moved
		"0\n2\nghost 0 1\nother 1 10\n",             // another partition on its line
		"0\n3\nghost 0 1\norders 1 10\nghost 1 1\n", // an entry more after it
	} {
		dir := t.TempDir()
		path := filepath.Join(dir, layout.RecoveryPointCheckpointFile)
		if err := os.WriteFile(path, []byte("0\n2\nghost 0 1\norders 1 10\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		rc, err := readRoots(dir, []string{filepath.Join(dir, "orders-1")})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(changed), 0o644); err != nil {
			t.Fatal(err)
		}
		entries := append([]checkpoint.OffsetEntry{}, rc.recovery...)
		entries[0].Offset = 20
		err = rc.write(layout.RecoveryPointCheckpointFile, entries)
		if err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("%q: error %v, want one naming %s", changed, err, path)
		}
		if got, _ := os.ReadFile(path); string(got) != changed {
			t.Errorf("%q: replaced by %q", changed, got)
		}
		if _, err := os.Stat(safefile.TempName(path)); !os.IsNotExist(err) {
			t.Errorf("%q: temporary file left: %v", changed, err)
		}
	}
}
