package compact

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/internal/segswap"
	"github.com/logtool/logtool/internal/testkit/testutil"
	"github.com/logtool/logtool/logfmt"
)

// crashFixture is a partition whose clean merges three segments into one
// and removes records, tombstones and a keyless record.
func crashFixture(t *testing.T) string {
	b := newLog(t)
	for i := 0; i < 30; i++ {
		b.plain(rec(i % 7))
	}
	b.roll()
	b.plain(tomb(3), keyless(1)).plain(rec(2)).roll()
	for i := 0; i < 10; i++ {
		b.plain(rec(i % 5))
	}
	b.roll()
	b.plain(rec(9))
	return b.flush()
}

// segmentFiles reads the files a broker loads: segments, indexes and the
// cleaner checkpoint, leaving temporary files aside.
func segmentFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), safefile.TempSuffix) {
			continue
		}
		files[e.Name()] = readFile(t, filepath.Join(dir, e.Name()))
	}
	return files
}

// TestCrashAtEveryStep fails the run at each file-system step in turn, as
// if the process died there, and checks that recovery (what a broker's
// loader and the next run do) leaves the old or the new records, and that
// the next run then finishes with exactly the bytes of an uninterrupted run.
func TestCrashAtEveryStep(t *testing.T) {
	o := testOptions(t0 + 1000)
	o.SegmentBytes = 1 << 20

	clean := crashFixture(t)
	oldRecords := readView(t, clean).offsets()
	var count safefile.Faults
	restore := safefile.SetFaultHook(count.Hook)
	r, err := Compact(clean, o)
	restore()
	if err != nil {
		t.Fatal(err)
	}
	if r.Passes != 1 || r.SegmentsAfter != 2 {
		t.Fatalf("the fixture should clean in one pass into 2 segments, got %d passes, %d segments", r.Passes, r.SegmentsAfter)
	}
	newRecords := readView(t, clean).offsets()
	want := segmentFiles(t, clean)
	steps := count.Steps()
	if steps < 20 {
		t.Fatalf("only %d steps", steps)
	}

	for n := int64(1); n <= steps; n++ {
		dir := crashFixture(t)
		faults := &safefile.Faults{FailAt: n}
		restore := safefile.SetFaultHook(faults.Hook)
		_, err := Compact(dir, o)
		restore()
		if !errors.Is(err, safefile.ErrInjected) {
			t.Fatalf("step %d: error %v, want the injected fault", n, err)
		}
		for _, unflushed := range []bool{false, true} {
			if got := brokerOffsets(t, dir, unflushed); !slices.Equal(got, oldRecords) && !slices.Equal(got, newRecords) {
				t.Fatalf("step %d: a broker (unflushed %v) serves %v, neither the old %v nor the new %v", n, unflushed, got, oldRecords, newRecords)
			}
		}
		if _, err := segswap.Recover(dir); err != nil {
			t.Fatalf("step %d: recover: %v", n, err)
		}
		got := readView(t, dir).offsets()
		if !slices.Equal(got, oldRecords) && !slices.Equal(got, newRecords) {
			t.Fatalf("step %d: after recovery the log holds %v, neither the old %v nor the new %v", n, got, oldRecords, newRecords)
		}
		if _, err := Compact(dir, o); err != nil {
			t.Fatalf("step %d: rerun: %v", n, err)
		}
		if got := segmentFiles(t, dir); !mapsEqual(got, want) {
			t.Fatalf("step %d: the rerun left %v, want %v", n, keysOf(got), keysOf(want))
		}
	}
}

// brokerOffsets is view.offsets of what a broker serves from the partition
// after loading it with Kafka's rules (internal/testkit/kafkaloader).
func brokerOffsets(t *testing.T, dir string, unflushed bool) []int64 {
	t.Helper()
	var out []int64
	testutil.BrokerRecords(t, filepath.Dir(dir), unflushed, func(part string, _ *logfmt.Batch, r *logfmt.Record) {
		if r.Key != nil && r.Value != nil {
			out = append(out, r.Offset)
		}
	})
	return out
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func keysOf(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
