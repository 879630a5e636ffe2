package reindex

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/logtool/logtool/index"
	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/internal/testkit/testutil"
	"github.com/logtool/logtool/internal/testkit/txnbatch"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/codec"
	"github.com/logtool/logtool/logfmt/layout"
)

// corruptFixture is a partition whose first segment has a bad batch in its
// middle; it returns the partition, the .log and where its valid batches end.
func corruptFixture(t *testing.T) (dir, log string, valid int64) {
	t.Helper()
	dir = genPartition(t, gen.Options{Magic: 2, Records: 900, BatchRecords: 5, SegmentBytes: 30000, Compression: codec.LZ4, Seed: 21})
	log = filepath.Join(dir, layout.SegmentName(0, layout.LogExt))
	bs := batchesOf(t, log)
	bad := bs[len(bs)*2/3]
	flipByte(t, log, bad.pos+62)
	return dir, log, bad.pos
}

// TestCorruptSegmentIndexedToValidPrefix: the indexes cover the batches
// before the corruption, as recovery's would, and the .log is not touched.
func TestCorruptSegmentIndexedToValidPrefix(t *testing.T) {
	dir, log, valid := corruptFixture(t)
	before, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	rep := mustPartition(t, dir, all(Write))
	after, err := os.ReadFile(log)
	if err != nil || !slices.Equal(before, after) {
		t.Fatalf("the .log changed (%v)", err)
	}
	s := rep.Segments[0]
	if s.ValidBytes != valid || s.Stop == nil || s.Tail() != int64(len(before))-valid {
		t.Fatalf("valid %d, stop %v, tail %d; want valid %d", s.ValidBytes, s.Stop, s.Tail(), valid)
	}
	if ce, ok := logfmt.AsCorrupt(s.Stop); !ok || ce.Pos != valid || ce.File != log {
		t.Errorf("stop %v: want a CorruptError at byte %d of %s", s.Stop, valid, log)
	}
	wantIdx, wantTime := independentIndexes(before[:valid], 0, index.DefaultIntervalBytes)
	got := files(t, dir)
	if !slices.Equal(got[layout.SegmentName(0, layout.IndexExt)], wantIdx) || !slices.Equal(got[layout.SegmentName(0, layout.TimeIndexExt)], wantTime) {
		t.Error("indexes differ from the rule applied to the valid prefix")
	}
	text := findingsText(rep)
	if !strings.Contains(text, "recovery would truncate") || !strings.Contains(text, "delete the") || !strings.Contains(text, "--truncate-corrupt-tail") {
		t.Errorf("the corruption is not reported as it should be:\n%s", text)
	}
}

// TestDamageLeftIsProblem: a write or dry run that leaves a damaged .log as
// it is reports its end as a problem, so that the run does not pass for a
// success, as a check does; a cut that repairs it leaves it a note.
func TestDamageLeftIsProblem(t *testing.T) {
	dir, log, valid := corruptFixture(t)
	end := func(rep *PartitionReport) (Severity, bool) {
		for _, f := range rep.Findings {
			if f.File == log && f.Pos == valid && f.Entry < 0 {
				return f.Severity, true
			}
		}
		return 0, false
	}
	cut := all(DryRun)
	cut.TruncateCorruptTail = true
	for _, tc := range []struct {
		name string
		o    Options
		want Severity
	}{{"check", all(Check), Problem}, {"dry run", all(DryRun), Problem}, {"dry run with a cut", cut, Note}, {"write", all(Write), Problem}} {
		rep := mustPartition(t, dir, tc.o)
		if sev, ok := end(rep); !ok || sev != tc.want || tc.o.Mode != Check && tc.want == Problem && rep.Counts[Problem] != 1 {
			t.Errorf("%s: the end of the valid batches is %v (found %v, %d problem(s)), want %v:\n%s", tc.name, sev, ok, rep.Counts[Problem], tc.want, findingsText(rep))
		}
	}
}

func TestTruncateCorruptTail(t *testing.T) {
	dir, log, valid := corruptFixture(t)
	before, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	o := all(DryRun)
	o.TruncateCorruptTail = true
	rep := mustPartition(t, dir, o)
	if b, _ := os.ReadFile(log); !slices.Equal(b, before) || !strings.Contains(findingsText(rep), "would cut") {
		t.Fatalf("dry run: the .log changed or no report:\n%s", findingsText(rep))
	}
	o.Mode = Write
	rep = mustPartition(t, dir, o)
	backup := BackupName(log, valid)
	if rep.Segments[0].Backup != backup {
		t.Errorf("backup %q, want %q", rep.Segments[0].Backup, backup)
	}
	cut, err := os.ReadFile(log)
	if err != nil || !slices.Equal(cut, before[:valid]) {
		t.Fatalf("the .log is not cut at %d (%d bytes, %v)", valid, len(cut), err)
	}
	saved, err := os.ReadFile(backup)
	if err != nil || !slices.Equal(saved, before[valid:]) {
		t.Fatalf("the backup does not hold the removed bytes (%v)", err)
	}
	if layout.ParseFileName(filepath.Base(backup)).Kind != layout.Unknown {
		t.Errorf("%s is a name Kafka's loader acts on", backup)
	}
	if rep := mustPartition(t, dir, o); rep.Segments[0].Tail() != 0 || rep.Counts[Problem] != 0 {
		t.Errorf("second run:\n%s", findingsText(rep))
	}
	if rep := mustPartition(t, dir, all(Check)); rep.Counts[Problem] != 0 {
		t.Errorf("check after the cut:\n%s", findingsText(rep))
	}
}

// TestTruncateKeepsOtherBackup: a backup file of that name holding other
// bytes is never overwritten.
func TestTruncateKeepsOtherBackup(t *testing.T) {
	dir, log, valid := corruptFixture(t)
	before, _ := os.ReadFile(log)
	backup := BackupName(log, valid)
	if err := os.WriteFile(backup, []byte("someone else's"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := all(Write)
	o.TruncateCorruptTail = true
	if _, err := Partition(dir, o); !errors.Is(err, ErrBackupExists) {
		t.Fatalf("error %v, want ErrBackupExists", err)
	}
	if b, _ := os.ReadFile(log); !slices.Equal(b, before) {
		t.Error("the .log changed")
	}
	if b, _ := os.ReadFile(backup); string(b) != "someone else's" {
		t.Error("the backup changed")
	}
}

// TestTruncateZeroTail: a preallocated .log's zeros are what recovery
// truncates too.
func TestTruncateZeroTail(t *testing.T) {
	dir := genPartition(t, gen.Options{Magic: 1, Records: 200, Compression: codec.Gzip, SegmentBytes: 1 << 20, Seed: 2})
	log := filepath.Join(dir, layout.SegmentName(0, layout.LogExt))
	before, _ := os.ReadFile(log)
	testutil.AppendBytes(t, log, make([]byte, 3000))
	rep := mustPartition(t, dir, all(Check))
	if rep.Counts[Problem] != 0 || !strings.Contains(findingsText(rep), "preallocated tail") {
		t.Errorf("check:\n%s", findingsText(rep))
	}
	o := all(Write)
	o.TruncateCorruptTail = true
	mustPartition(t, dir, o)
	if b, _ := os.ReadFile(log); !slices.Equal(b, before) {
		t.Error("zeros not cut")
	}
}

// TestOffsetOverflow: a batch too far from the base for the index is where
// Kafka splits the segment; it is reported and never cut.
func TestOffsetOverflow(t *testing.T) {
	dir := writeSegments(t, []txnbatch.Spec{txnbatch.Data(-1, 0, 3, false), txnbatch.Data(-1, math.MaxInt32+10, 2, false)})
	log := filepath.Join(dir, layout.SegmentName(0, layout.LogExt))
	before, _ := os.ReadFile(log)
	o := all(Write)
	o.TruncateCorruptTail = true
	rep := mustPartition(t, dir, o)
	s := rep.Segments[0]
	if !s.Overflow || s.Batches != 1 || !strings.Contains(findingsText(rep), "splits") {
		t.Errorf("overflow %v, batches %d:\n%s", s.Overflow, s.Batches, findingsText(rep))
	}
	if b, _ := os.ReadFile(log); !slices.Equal(b, before) {
		t.Error("the .log was cut")
	}
}

// TestCrashSafety fails every file-system step of a rebuild in turn, as a
// crash there would, and checks that every file holds its old or its new
// bytes, and that running again finishes the job.
func TestCrashSafety(t *testing.T) {
	fixture, log, valid := corruptFixture(t)
	// Stale indexes everywhere, so that every file is rewritten.
	for name := range files(t, fixture) {
		switch filepath.Ext(name) {
		case layout.IndexExt, layout.TimeIndexExt:
			if err := os.WriteFile(filepath.Join(fixture, name), make([]byte, 24), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	o := all(Write)
	o.TruncateCorruptTail = true
	old := files(t, fixture)
	done := t.TempDir()
	testutil.CopyTree(t, fixture, done)
	var count safefile.Faults
	restore := safefile.SetFaultHook(count.Hook)
	mustPartition(t, done, o)
	restore()
	want := files(t, done)
	logName := filepath.Base(log)
	backupName := filepath.Base(BackupName(log, valid))
	if count.Steps() < 10 {
		t.Fatalf("only %d steps", count.Steps())
	}
	for n := int64(1); n <= count.Steps(); n++ {
		dir := filepath.Join(t.TempDir(), "t-0")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		testutil.CopyTree(t, fixture, dir)
		faults := &safefile.Faults{FailAt: n}
		restore := safefile.SetFaultHook(faults.Hook)
		_, err := Partition(dir, o)
		restore()
		if err == nil {
			t.Fatalf("step %d: no error", n)
		}
		for name, b := range files(t, dir) {
			switch {
			case strings.HasSuffix(name, safefile.TempSuffix):
			case name == backupName:
				if !slices.Equal(b, want[name]) {
					t.Errorf("step %d: partial backup", n)
				}
			case name == logName:
				if !slices.Equal(b, old[name]) && !slices.Equal(b, want[name]) {
					t.Errorf("step %d: %s is neither old nor new", n, name)
				}
				if !slices.Equal(b, old[name]) {
					if _, ok := files(t, dir)[backupName]; !ok {
						t.Errorf("step %d: the .log was cut before its backup was complete", n)
					}
				}
			case !slices.Equal(b, old[name]) && !slices.Equal(b, want[name]):
				t.Errorf("step %d: %s is neither old nor new", n, name)
			}
		}
		mustPartition(t, dir, o)
		got := files(t, dir)
		for name := range got {
			if strings.HasSuffix(name, safefile.TempSuffix) {
				delete(got, name)
			}
		}
		if !equalFiles(got, want) {
			t.Errorf("step %d: the second run ends elsewhere: %s", n, diffNames(got, want))
		}
	}
}

// TestZeroTailInOlderSegment: zeros after the entries of a segment that is
// not the active one are no preallocation but what a crash left, and the
// note says so.
func TestZeroTailInOlderSegment(t *testing.T) {
	dir := genPartition(t, gen.Options{Magic: 2, Records: 900, BatchRecords: 5, SegmentBytes: 30000, Seed: 22})
	log := filepath.Join(dir, layout.SegmentName(0, layout.LogExt))
	testutil.AppendBytes(t, log, make([]byte, 3000))
	text := findingsText(mustPartition(t, dir, all(Check)))
	if strings.Contains(text, "preallocated tail") || !strings.Contains(text, "not the active one") {
		t.Errorf("check:\n%s", text)
	}
}
