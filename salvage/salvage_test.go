package salvage

import (
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/internal/testkit/testutil"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/layout"
)

// writeBatches writes a partition of one segment based at 0, one v2 batch
// of n records per entry of counts, and returns it and each batch's byte
// position.
func writeBatches(t *testing.T, counts ...int) (string, []int64) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "src", "orders-0")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var data []byte
	var pos []int64
	off := int64(0)
	for _, n := range counts {
		var recs []logfmt.Record
		for i := range n {
			recs = append(recs, logfmt.Record{Offset: off + int64(i), Timestamp: 1000 + off + int64(i), Value: []byte("v")})
		}
		o := logfmt.DefaultBatchOptions(off)
		o.PartitionLeaderEpoch = 0
		pos = append(pos, int64(len(data)))
		var err error
		if data, err = logfmt.AppendBatch(data, o, recs); err != nil {
			t.Fatal(err)
		}
		off += int64(n)
	}
	if err := os.WriteFile(filepath.Join(dir, layout.SegmentName(0, ".log")), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, pos
}

// setBase changes a batch's base offset, which its checksum does not cover.
func setBase(t *testing.T, dir string, pos, base int64) {
	t.Helper()
	path := filepath.Join(dir, layout.SegmentName(0, ".log"))
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	binary.BigEndian.PutUint64(b[pos:], uint64(base))
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func keptOffsets(t *testing.T, dir string) []int64 {
	t.Helper()
	seg, err := logfmt.OpenSegment(filepath.Join(dir, layout.SegmentName(0, ".log")))
	if err != nil {
		t.Fatal(err)
	}
	defer seg.Close()
	var out []int64
	for seg.Next() {
		out = append(out, seg.Batch().Header().BaseOffset())
	}
	return out
}

// TestOffsets: a batch whose base offset jumped ahead is left out, not the
// batches after it; one that went back is left out; the report gives the
// offsets no kept batch holds.
func TestOffsets(t *testing.T) {
	for _, tc := range []struct {
		name     string
		batch    int
		base     int64
		kept     []int64
		from, to int64
	}{
		{"ahead", 5, 7, []int64{0, 1, 2, 3, 4, 6, 7, 8, 9}, 5, 5},
		{"back", 6, 3, []int64{0, 1, 2, 3, 4, 5, 7, 8, 9}, 6, 6},
		{"far-ahead", 5, 1000, []int64{0, 1, 2, 3, 4, 6, 7, 8, 9}, 5, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, pos := writeBatches(t, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1)
			setBase(t, dir, pos[tc.batch], tc.base)
			out := filepath.Join(t.TempDir(), "orders-0")
			rep, err := Partition(dir, out, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := keptOffsets(t, out); !slices.Equal(got, tc.kept) {
				t.Errorf("kept %v, want %v", got, tc.kept)
			}
			if len(rep.Lost) != 1 || rep.Lost[0].Position != pos[tc.batch] || rep.Lost[0].End != pos[tc.batch+1] ||
				rep.Lost[0].FromOffset != tc.from || rep.Lost[0].ToOffset != tc.to {
				t.Errorf("lost %+v", rep.Lost)
			}
			if rep.LogEndOffset != 10 || rep.KeptBatches != 9 {
				t.Errorf("report %+v", rep)
			}
		})
	}
}

// TestEndKept: when the last batches are lost, an empty segment at the high
// watermark keeps their offsets from being given again.
func TestEndKept(t *testing.T) {
	dir, pos := writeBatches(t, 2, 2, 2)
	path := filepath.Join(dir, layout.SegmentName(0, ".log"))
	b, _ := os.ReadFile(path)
	os.WriteFile(path, b[:pos[2]+10], 0o644) // the last batch torn
	if err := os.WriteFile(filepath.Join(dir, "..", "replication-offset-checkpoint"), []byte("0\n1\norders 0 6\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "orders-0")
	rep, err := Partition(dir, out, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.LogEndOffset != 6 || !rep.EmptyEndSegment || len(rep.Lost) != 1 || rep.Lost[0].FromOffset != 4 || rep.Lost[0].ToOffset != -1 {
		t.Errorf("report %+v, lost %+v", rep, rep.Lost)
	}
	p, err := layout.ReadPartition(out)
	if err != nil || len(p.Segments) != 2 || p.Segments[1].Base != 6 {
		t.Errorf("output segments %+v (%v)", p.Segments, err)
	}
	if fi, err := os.Stat(p.Segments[1].Log); err != nil || fi.Size() != 0 {
		t.Errorf("end segment: %v", err)
	}
}

// TestRefusals: an existing output is never replaced, and nothing is left
// behind.
func TestRefusals(t *testing.T) {
	dir, _ := writeBatches(t, 1)
	out := filepath.Join(t.TempDir(), "orders-0")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Partition(dir, out, Options{}); !errors.Is(err, ErrExists) {
		t.Errorf("existing output: %v", err)
	}
	if left, _ := filepath.Glob(out + ".salvage*"); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// TestStagesRemoved: the staging directories a killed salvage to the same
// output left are removed; other names are left alone.
func TestStagesRemoved(t *testing.T) {
	dir, _ := writeBatches(t, 1)
	parent := t.TempDir()
	ours := []string{"orders-0.salvage123-delete", "orders-0.salvage4294967295-delete"}
	others := []string{"orders-0.salvage-delete", "orders-0.salvagex1-delete", "orders-1.salvage5-delete", "orders-0.0123456789abcdef0123456789abcdef-delete"}
	for _, name := range append(slices.Clone(ours), others...) {
		if err := os.Mkdir(filepath.Join(parent, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(parent, name, "00000000000000000000.log"), []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(parent, "orders-0")
	if _, err := Partition(dir, out, Options{}); err != nil {
		t.Fatal(err)
	}
	// A broker makes partition directories 0755.
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("%s: %v; want mode 0755", out, err)
	}
	for _, name := range ours {
		if _, err := os.Lstat(filepath.Join(parent, name)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: %v, want it removed", name, err)
		}
	}
	for _, name := range others {
		if _, err := os.Stat(filepath.Join(parent, name, "00000000000000000000.log")); err != nil {
			t.Errorf("%s: %v, want it kept", name, err)
		}
	}
}

// TestLookalikesUntouched: names that look like leftovers, planted next to
// the source and the output, keep every byte through a salvage, one that
// fails at each file-system step, and a rerun.
func TestLookalikesUntouched(t *testing.T) {
	dir, _ := writeBatches(t, 1, 2)
	parent := t.TempDir()
	planted := testutil.PlantLookalikes(t, parent, filepath.Dir(dir))
	out := filepath.Join(parent, "orders-0")
	counter := &safefile.Faults{}
	restore := safefile.SetFaultHook(counter.Hook)
	_, err := Partition(dir, out, Options{})
	restore()
	if err != nil {
		t.Fatal(err)
	}
	planted.Check(t)
	for n := int64(1); n <= counter.Steps(); n++ {
		if err := os.RemoveAll(out); err != nil {
			t.Fatal(err)
		}
		f := &safefile.Faults{FailAt: n}
		restore := safefile.SetFaultHook(f.Hook)
		_, err := Partition(dir, out, Options{})
		restore()
		if err == nil {
			t.Fatalf("step %d: no error", n)
		}
		planted.Check(t)
		if _, err := Partition(dir, out, Options{}); err != nil && !errors.Is(err, ErrExists) {
			t.Fatalf("step %d: rerun: %v", n, err)
		}
		planted.Check(t)
	}
}

// TestOutputAncestorsDurable: the missing ancestors salvage makes for the
// output are fsynced into their parents, up to the first that existed.
func TestOutputAncestorsDurable(t *testing.T) {
	dir, _ := writeBatches(t, 1)
	root := t.TempDir()
	synced := map[string]bool{}
	restore := safefile.SetFaultHook(func(step safefile.Step, path string) error {
		if step == safefile.StepSyncDir {
			synced[path] = true
		}
		return nil
	})
	_, err := Partition(dir, filepath.Join(root, "a", "b", "orders-0"), Options{})
	restore()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{root, filepath.Join(root, "a"), filepath.Join(root, "a", "b")} {
		if !synced[d] {
			t.Errorf("%s: not fsynced", d)
		}
	}
}

// TestStageWithForeignContentRefused: a directory under a stage's name that
// holds more than the regular files salvage writes is not salvage's: it is
// refused, not removed recursively.
func TestStageWithForeignContentRefused(t *testing.T) {
	dir, _ := writeBatches(t, 1)
	parent := t.TempDir()
	inner := filepath.Join(parent, "orders-0.salvage7-delete", "keep")
	if err := os.MkdirAll(inner, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(inner, "data"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Partition(dir, filepath.Join(parent, "orders-0"), Options{}); err == nil {
		t.Error("salvage removed a stage holding a directory")
	}
	if b, err := os.ReadFile(filepath.Join(inner, "data")); err != nil || string(b) != "mine" {
		t.Errorf("%s: %q, %v", inner, b, err)
	}
}

// TestStageWithUserFileRefused: a directory bearing a stage's name that
// holds a file logtool never writes in a stage is left whole, the
// segment file in it too: nothing is removed before everything is checked.
func TestStageWithUserFileRefused(t *testing.T) {
	dir, _ := writeBatches(t, 1)
	parent := t.TempDir()
	stage := filepath.Join(parent, "orders-0.salvage456-delete")
	if err := os.Mkdir(stage, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"00000000000000000000.log": "seg", "mydata.txt": "mine"}
	for n, b := range files {
		if err := os.WriteFile(filepath.Join(stage, n), []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Partition(dir, filepath.Join(parent, "orders-0"), Options{}); err == nil {
		t.Error("salvage removed a stage holding a user's file")
	}
	for n, want := range files {
		if b, err := os.ReadFile(filepath.Join(stage, n)); err != nil || string(b) != want {
			t.Errorf("%s: %q, %v", n, b, err)
		}
	}
}
