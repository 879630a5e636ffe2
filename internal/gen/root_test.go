package gen

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/logtool/logtool/logfmt/layout"
)

// TestGenMergesRootCheckpoints: a second run keeps the entries of other
// partitions, replaces those of the partitions it writes again, and keeps
// the file in partition order.
func TestGenMergesRootCheckpoints(t *testing.T) {
	dir := t.TempDir()
	o := Options{Out: dir, Topics: []string{"m"}, Partitions: 2, Records: 20, Keys: 5, ValueBytes: 10, Seed: 3}
	first, err := Generate(o)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, layout.RecoveryPointCheckpointFile)
	want := fmt.Sprintf("0\n2\nm 0 %d\nm 1 %d\n", first[0].LogEndOffset, first[1].LogEndOffset)
	if got, err := os.ReadFile(path); err != nil || string(got) != want {
		t.Fatalf("first run wrote %q, %v; want %q", got, err, want)
	}

	// A partition already there is refused before anything is written.
	if err := os.WriteFile(path, []byte("0\n4\na 0 1\nm 0 7\nm 1 99\nz 3 4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o.Topics = []string{"c", "m"}
	o.Partitions = 1
	if _, err := Generate(o); !errors.Is(err, ErrPartitionExists) || !errors.Is(err, fs.ErrExist) {
		t.Fatalf("generating m-0 again: %v, want ErrPartitionExists", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "c-0")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("c-0 was written before m-0 was refused: %v", err)
	}

	// Partitions gen does not write stay where they are, and c-0 is new.
	o.Topics = []string{"c"}
	second, err := Generate(o)
	if err != nil {
		t.Fatal(err)
	}
	want = fmt.Sprintf("0\n5\na 0 1\nc 0 %d\nm 0 7\nm 1 99\nz 3 4\n", second[0].LogEndOffset)
	if got, err := os.ReadFile(path); err != nil || string(got) != want {
		t.Errorf("second run wrote %q, %v; want %q", got, err, want)
	}
	if got, err := os.ReadFile(filepath.Join(dir, layout.CleanerOffsetCheckpointFile)); err != nil || string(got) != "0\n0\n" {
		t.Errorf("cleaner-offset-checkpoint = %q, %v", got, err)
	}
}
