package gen

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/logtool/logtool/logfmt/checkpoint"
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
	path := filepath.Join(dir, checkpoint.RecoveryPoint)
	want := fmt.Sprintf("0\n2\nm 0 %d\nm 1 %d\n", first[0].LogEndOffset, first[1].LogEndOffset)
	if got, err := os.ReadFile(path); err != nil || string(got) != want {
		t.Fatalf("first run wrote %q, %v; want %q", got, err, want)
	}

	// Partitions gen does not write stay where they are; m-1 is written
	// again, and c-0 is new.
	if err := os.WriteFile(path, []byte("0\n4\na 0 1\nm 0 7\nm 1 99\nz 3 4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o.Topics = []string{"m", "c"}
	o.Partitions = 1
	second, err := Generate(o)
	if err != nil {
		t.Fatal(err)
	}
	ends := map[string]int64{}
	for _, p := range second {
		ends[p.Topic] = p.LogEndOffset
	}
	want = fmt.Sprintf("0\n5\na 0 1\nc 0 %d\nm 0 %d\nm 1 99\nz 3 4\n", ends["c"], ends["m"])
	if got, err := os.ReadFile(path); err != nil || string(got) != want {
		t.Errorf("second run wrote %q, %v; want %q", got, err, want)
	}
	if got, err := os.ReadFile(filepath.Join(dir, checkpoint.CleanerOffset)); err != nil || string(got) != "0\n0\n" {
		t.Errorf("cleaner-offset-checkpoint = %q, %v", got, err)
	}
}
