package layout

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSegmentBytes: only the files that hold records count (a leftover
// .deleted segment does), in a directory or named alone.
func TestSegmentBytes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "orders-0")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, size := range map[string]int{"00000000000000000000.log": 100, "00000000000000000000.index": 8, "00000000000000000000.timeindex": 12,
		"00000000000000000050-0000000001.checkpoint": 30, "leader-epoch-checkpoint": 5, "00000000000000000010.log.deleted": 40} {
		if err := os.WriteFile(filepath.Join(dir, name), make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := SegmentBytes(dir); got != 170 {
		t.Errorf("directory: %d bytes, want 170", got)
	}
	if got := SegmentBytes(filepath.Join(dir, "00000000000000000000.log")); got != 100 {
		t.Errorf("a segment named: %d bytes, want 100", got)
	}
	if got := SegmentBytes(filepath.Join(dir, "00000000000000000000.index")); got != 0 {
		t.Errorf("an index named: %d bytes, want 0", got)
	}
}
