package reindex

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logtool/logtool/index"
	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/logfmt/layout"
)

// TestWorkersSameReport holds a check and a rebuild read in ranges on
// several goroutines (logfmt.HeaderReader) to one read on one: segments of
// several ranges, with transactions, clean, damaged in the middle, with an
// index of other data, and torn.
func TestWorkersSameReport(t *testing.T) {
	src := genPartition(t, gen.Options{Records: 60000, Keys: 5000, ValueBytes: 100, BatchRecords: 6, Magic: 2,
		SegmentBytes: 5 << 20, TransactionalRatio: 0.3, AbortRatio: 0.3, Seed: 8})
	log := filepath.Join(src, layout.SegmentName(0, layout.LogExt))
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) < 4<<20 {
		t.Fatalf("the first segment is %d bytes: too short for ranges", len(data))
	}
	damages := map[string]func(dir string){
		"clean": func(string) {},
		"flipped": func(dir string) {
			b := append([]byte(nil), data...)
			b[len(b)/2] ^= 0x10
			write(t, filepath.Join(dir, filepath.Base(log)), b)
		},
		"stale index": func(dir string) {
			// The index of a segment whose batches are elsewhere.
			idx := filepath.Join(dir, layout.SegmentName(0, layout.IndexExt))
			b, err := os.ReadFile(idx)
			if err != nil {
				t.Fatal(err)
			}
			for i := 4; i+4 <= len(b); i += index.OffsetEntrySize {
				b[i+3] ^= 0x21
			}
			write(t, idx, b)
		},
		"torn": func(dir string) { write(t, filepath.Join(dir, filepath.Base(log)), data[:len(data)*3/4+5]) },
	}
	for name, damage := range damages {
		t.Run(name, func(t *testing.T) {
			var reports [2]string
			var written [2]map[string][]byte
			for i, w := range []int{1, 3} {
				dir := copyDir(t, src)
				damage(dir)
				o := all(Check)
				o.Workers = w
				reports[i] = reportText(t, mustPartition(t, dir, o), dir)
				o.Mode, o.TruncateCorruptTail = Write, true
				mustPartition(t, dir, o)
				written[i] = files(t, dir)
			}
			if reports[0] != reports[1] {
				t.Fatalf("check, 3 workers:\n%s\none:\n%s", reports[1], reports[0])
			}
			for name, b := range written[0] {
				if string(written[1][name]) != string(b) {
					t.Errorf("%s differs after a rebuild with 3 workers", name)
				}
			}
		})
	}
}

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// copyDir copies a partition directory's files into a new one of the same
// name.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, b := range files(t, src) {
		write(t, filepath.Join(dir, name), b)
	}
	return dir
}

// reportText is the report as JSON, with the directory's name taken out.
func reportText(t *testing.T, rep *PartitionReport, dir string) string {
	t.Helper()
	b, err := json.MarshalIndent(rep, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(string(b)+findingsText(rep), dir, "DIR")
}
