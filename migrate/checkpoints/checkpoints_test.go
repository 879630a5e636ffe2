package checkpoints

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/internal/testkit/kafkasamples"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/checkpoint"
	"github.com/logtool/logtool/logfmt/layout"
)

const (
	ckRoot = layout.CleanerOffsetCheckpointFile
	ckCP   = layout.CleanerCheckpointFile
)

// ckTree is a directory's content: relative path → file content, with
// directories as "name/" → "".
type ckTree map[string]string

// ckBuild writes t under a new temporary directory and returns its path.
func ckBuild(t testing.TB, files ckTree) string {
	t.Helper()
	dir := t.TempDir()
	ckWrite(t, dir, files)
	return dir
}

func ckWrite(t testing.TB, dir string, files ckTree) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(dir, name)
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(path, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// ckSnapshot reads the whole tree under dir.
func ckSnapshot(t testing.TB, dir string) ckTree {
	t.Helper()
	got := ckTree{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			got[rel+"/"] = ""
			return nil
		}
		b, err := os.ReadFile(path)
		got[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// ckWithDirs adds the directories that hold t's entries.
func ckWithDirs(t ckTree) ckTree {
	out := maps.Clone(t)
	for k := range t {
		for d := filepath.Dir(strings.TrimSuffix(k, "/")); d != "."; d = filepath.Dir(d) {
			out[filepath.ToSlash(d)+"/"] = ""
		}
	}
	return out
}

func ckDiff(got, want ckTree) string {
	got, want = ckWithDirs(got), ckWithDirs(want)
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if g, ok := got[k]; !ok {
			fmt.Fprintf(&b, "  missing %s\n", k)
		} else if g != want[k] {
			fmt.Fprintf(&b, "  %s = %q, want %q\n", k, g, want[k])
		}
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[k]; !ok {
			fmt.Fprintf(&b, "  unexpected %s = %q\n", k, got[k])
		}
	}
	return b.String()
}

func ckCheck(t testing.TB, dir string, want ckTree) {
	t.Helper()
	if d := ckDiff(ckSnapshot(t, dir), want); d != "" {
		t.Errorf("%s differs:\n%s", dir, d)
	}
}

// ckWith returns a copy of base changed by edits; an edit to "" deletes.
func ckWith(base ckTree, edits ckTree) ckTree {
	out := maps.Clone(base)
	for k, v := range edits {
		if v == "\x00" {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	return out
}

const ckGone = "\x00" // with: delete this path

func ckFile(offset, ms int64) string { return fmt.Sprintf("1\n%d %d\n", offset, ms) }

// ckEntries reads a root file the way Kafka does: the last line of a
// partition wins.
func ckEntries(t testing.TB, path string) map[string]int64 {
	t.Helper()
	es, err := checkpoint.ReadOffsetsFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]int64{}
	for _, e := range es {
		m[layout.PartitionDirName(e.Topic, e.Partition)] = e.Offset
	}
	return m
}

func ckRun(t testing.TB, opts Options) *Report {
	t.Helper()
	rep, err := Migrate(opts)
	if err != nil {
		t.Fatalf("Migrate(%+v): %v", opts, err)
	}
	return rep
}

// ckSample is a log directory with topics named with '-' and '.', a partition
// without an entry, an entry without a partition, and the renamed
// directories Kafka leaves while deleting or moving partitions.
var ckSample = ckTree{
	"meta.properties": "version=0\nbroker.id=1\n",
	ckRoot: "0\n6\n" +
		"orders 0 120\n" +
		"orders 1 0\n" +
		"legacy.events-v0 0 77\n" +
		"legacy.events-v0-snappy 0 5\n" +
		"gone-topic 3 44\n" +
		"moving 0 9\n",
	"orders-0/00000000000000000000.log":                  "",
	"orders-1/00000000000000000000.log":                  "",
	"orders-2/00000000000000000000.log":                  "", // no entry: left alone
	"legacy.events-v0-0/00000000000000000000.log":        "",
	"legacy.events-v0-snappy-0/00000000000000000000.log": "",
	"moving-0.0123456789abcdef0123456789abcdef-future/":  "",
	"orders-1.fedcba9876543210fedcba9876543210-delete/":  "",
	"stale-0.00112233445566778899aabbccddeeff-stray/":    "",
}

// ckSampleMigrated is sample after a forward migration with unknown times.
var ckSampleMigrated = ckWith(ckSample, ckTree{
	ckRoot:                              ckGone,
	MigratedFile:                        ckSample[ckRoot],
	"orders-0/" + ckCP:                  ckFile(120, -1),
	"orders-1/" + ckCP:                  ckFile(0, -1),
	"legacy.events-v0-0/" + ckCP:        ckFile(77, -1),
	"legacy.events-v0-snappy-0/" + ckCP: ckFile(5, -1),
})

func TestCheckpointsForward(t *testing.T) {
	dir := ckBuild(t, ckSample)
	rep := ckRun(t, Options{LogDirs: []string{dir}})
	ckCheck(t, dir, ckSampleMigrated)

	d := rep.LogDirs[0]
	if !d.Changed || d.Root != RootRenamed || !d.HadRoot || d.HadMigrated {
		t.Errorf("report %+v: want changed, root renamed", d)
	}
	type row struct {
		name   string
		action Action
		file   string
		line   int
	}
	var got []row
	for _, e := range d.Entries {
		rel, _ := filepath.Rel(dir, e.File)
		got = append(got, row{layout.PartitionDirName(e.Topic, e.Partition), e.Action, filepath.ToSlash(rel), e.Line})
		if e.From != filepath.Join(dir, ckRoot) || e.CleanTimeMs != -1 {
			t.Errorf("entry %+v: want From the root file and clean time -1", e)
		}
	}
	want := []row{
		{"gone-topic-3", Absent, MigratedFile, 7},
		{"legacy.events-v0-0", Write, "legacy.events-v0-0/" + ckCP, 5},
		{"legacy.events-v0-snappy-0", Write, "legacy.events-v0-snappy-0/" + ckCP, 6},
		{"moving-0", Absent, MigratedFile, 8},
		{"orders-0", Write, "orders-0/" + ckCP, 3},
		{"orders-1", Write, "orders-1/" + ckCP, 4},
	}
	if !slices.Equal(got, want) {
		t.Errorf("entries:\n got %v\nwant %v", got, want)
	}
	if note := d.Entries[3].Note; !strings.Contains(note, "-future") {
		t.Errorf("note for an entry whose partition is only a -future dir = %q", note)
	}
	var kinds []layout.DirKind
	for _, s := range d.Skipped {
		kinds = append(kinds, s.Kind)
	}
	if !slices.Equal(kinds, []layout.DirKind{layout.Future, layout.Delete, layout.Stray}) {
		t.Errorf("skipped kinds = %v", kinds)
	}

	// A second run changes nothing and says so.
	rep = ckRun(t, Options{LogDirs: []string{dir}})
	if d := rep.LogDirs[0]; d.Changed || d.Root != RootNone || !d.HadMigrated || len(d.Entries) != 0 {
		t.Errorf("second ckRun: %+v", d)
	}
	ckCheck(t, dir, ckSampleMigrated)
}

func TestCheckpointsForwardCleanTime(t *testing.T) {
	mtime := time.Date(2024, 3, 1, 12, 0, 0, 250e6, time.UTC)
	for _, tc := range []struct {
		name string
		opts Options
		want int64
	}{
		{"unknown", Options{CleanTime: CleanTimeUnknown, CleanTimeMs: 99}, -1},
		{"file-mtime", Options{CleanTime: CleanTimeFileMtime}, mtime.UnixMilli()},
		{"fixed", Options{CleanTime: CleanTimeFixed, CleanTimeMs: 1700000000123}, 1700000000123},
		{"fixed zero", Options{CleanTime: CleanTimeFixed}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := ckBuild(t, ckTree{ckRoot: "0\n1\na.b-c 2 31\n", "a.b-c-2/": ""})
			if err := os.Chtimes(filepath.Join(dir, ckRoot), mtime, mtime); err != nil {
				t.Fatal(err)
			}
			tc.opts.LogDirs = []string{dir}
			ckRun(t, tc.opts)
			ckCheck(t, dir, ckTree{
				MigratedFile:      "0\n1\na.b-c 2 31\n",
				"a.b-c-2/":        "",
				"a.b-c-2/" + ckCP: ckFile(31, tc.want),
			})
			fi, err := os.Stat(filepath.Join(dir, MigratedFile))
			if err != nil {
				t.Fatal(err)
			}
			if !fi.ModTime().Equal(mtime) {
				t.Errorf("the renamed root file lost its modification time: %v", fi.ModTime())
			}
		})
	}
}

func TestCheckpointsForwardKeepOld(t *testing.T) {
	dir := ckBuild(t, ckSample)
	rep := ckRun(t, Options{LogDirs: []string{dir}, KeepOld: true})
	want := ckWith(ckSampleMigrated, ckTree{ckRoot: ckSample[ckRoot], MigratedFile: ckGone})
	ckCheck(t, dir, want)
	d := rep.LogDirs[0]
	if d.Root != RootKept || !d.Changed {
		t.Errorf("report %+v", d)
	}
	for _, e := range d.Entries {
		if e.Action == Absent && e.File != filepath.Join(dir, ckRoot) {
			t.Errorf("absent entry %+v: want it left in the root file", e)
		}
	}
	rep = ckRun(t, Options{LogDirs: []string{dir}, KeepOld: true})
	if d := rep.LogDirs[0]; d.Changed {
		t.Errorf("second --keep-old ckRun changed something: %+v", d)
	}
	// A later run without KeepOld completes the migration.
	ckRun(t, Options{LogDirs: []string{dir}})
	ckCheck(t, dir, ckSampleMigrated)
}

func TestCheckpointsForwardDuplicates(t *testing.T) {
	root := "0\n3\nt 0 5\nt 1 6\nt 0 9\n"
	dir := ckBuild(t, ckTree{ckRoot: root, "t-0/": "", "t-1/": ""})
	rep := ckRun(t, Options{LogDirs: []string{dir}})
	ckCheck(t, dir, ckTree{MigratedFile: root, "t-0/": "", "t-1/": "", "t-0/" + ckCP: ckFile(9, -1), "t-1/" + ckCP: ckFile(6, -1)})
	var actions []Action
	for _, e := range rep.LogDirs[0].Entries {
		actions = append(actions, e.Action)
	}
	if want := []Action{Duplicate, Write, Write}; !slices.Equal(actions, want) {
		t.Errorf("actions = %v, want %v", actions, want)
	}
}

func TestCheckpointsEmptyAndMissingRoot(t *testing.T) {
	for _, root := range []string{"", "0\n", "0\n0\n"} {
		dir := ckBuild(t, ckTree{ckRoot: root, "t-0/": ""})
		ckRun(t, Options{LogDirs: []string{dir}})
		ckCheck(t, dir, ckTree{MigratedFile: root, "t-0/": ""})
		ckRun(t, Options{LogDirs: []string{dir}, Reverse: true})
		// Reverse writes the empty file a broker writes.
		ckCheck(t, dir, ckTree{ckRoot: "0\n0\n", "t-0/": ""})
	}

	dir := ckBuild(t, ckTree{"t-0/": ""})
	for _, reverse := range []bool{false, true} {
		rep := ckRun(t, Options{LogDirs: []string{dir}, Reverse: reverse})
		if d := rep.LogDirs[0]; d.Changed || d.Root != RootNone {
			t.Errorf("reverse=%v ckWith no checkpoint at all: %+v", reverse, d)
		}
	}
	ckCheck(t, dir, ckTree{"t-0/": ""})
}

func TestCheckpointsMalformedRoot(t *testing.T) {
	long := strings.Repeat("x", layout.MaxTopicLength+1)
	for _, tc := range []struct {
		name, root string
		pos        int64
		msg        string
	}{
		{"bad version", "1\n0\n", 0, "line 1: unsupported version 1"},
		{"count too high", "0\n2\nt 0 1\n", 2, "line 2: declares 2 entries, file has 1"},
		{"entry beyond count", "0\n1\nt 0 1\nt 1 1\n", 10, "line 4"},
		{"two fields", "0\n1\nt 0\n", 4, "line 3: malformed entry"},
		{"bad offset", "0\n1\nt 0 x\n", 4, "line 3: offset"},
		{"traversal", "0\n2\nt 0 1\n../outside 0 5\n", 10, "line 4: invalid topic name"},
		{"slash", "0\n1\na/b 0 5\n", 4, "line 3: invalid topic name"},
		{"dot", "0\n1\n. 0 5\n", 4, "line 3: invalid topic name"},
		{"dotdot CRLF", "0\r\n1\r\n.. 0 5\r\n", 6, "line 3: invalid topic name"},
		{"dotdot CR", "0\r1\r.. 0 5\r", 4, "line 3: invalid topic name"},
		{"leading blank", "0\n1\n t 0 5\n", 4, "line 3: malformed entry"},
		{"empty topic", "0\n1\n 0 5\n", 4, "line 3: invalid topic name: empty"},
		{"too long", "0\n1\n" + long + " 0 5\n", 4, "line 3: invalid topic name"},
		{"negative partition", "0\n1\nt -1 5\n", 4, "line 3: partition -1 is negative"},
		{"negative offset", "0\n2\nt 0 5\nt 1 -3\n", 10, "line 4: offset -3 is negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent := t.TempDir()
			logs := filepath.Join(parent, "logs")
			// A second, valid log directory: a JBOD run writes nothing at all
			// when any of its log directories is bad.
			good := filepath.Join(parent, "good")
			ckWrite(t, parent, ckTree{
				"logs/" + ckRoot:       tc.root,
				"logs/t-0/":            "",
				"logs/t-1/":            "",
				"outside-0/":           "",
				"good/" + ckRoot:       "0\n1\nt 0 3\n",
				"good/t-0/":            "",
				"logs/a/b-0/":          "",
				"logs/" + long + "-0/": "",
			})
			before := ckSnapshot(t, parent)
			for _, reverse := range []bool{false, true} {
				_, err := Migrate(Options{LogDirs: []string{good, logs}, Reverse: reverse})
				ce, ok := logfmt.AsCorrupt(err)
				if !ok {
					t.Fatalf("reverse=%v: error %v, want a CorruptError", reverse, err)
				}
				if ce.File != filepath.Join(logs, ckRoot) || ce.Pos != tc.pos || !strings.Contains(ce.Error(), tc.msg) {
					t.Errorf("reverse=%v: error %q (file %s, pos %d), want %q at byte %d", reverse, ce, ce.File, ce.Pos, tc.msg, tc.pos)
				}
				ckCheck(t, parent, before)
			}
		})
	}
}

// TestLinePosAgrees checks that positions computed for entries match the
// ones the checkpoint reader reports for the same line.
func TestCheckpointsLinePosAgrees(t *testing.T) {
	for _, body := range []string{
		"0\n2\nt 0 1\nt x 1\n", "0\r\n2\r\nt 0 1\r\nt x 1\r\n", "0\r2\rt 0 1\rt x 1\r", "0\n2\r\nt 0 1\rt x 1",
	} {
		path := filepath.Join(t.TempDir(), ckRoot)
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := checkpoint.ReadOffsetsFile(path)
		ce, ok := logfmt.AsCorrupt(err)
		if !ok {
			t.Fatalf("%q: %v", body, err)
		}
		if got := checkpointLinePos(path, 4); got != ce.Pos {
			t.Errorf("%q: checkpointLinePos = %d, the reader says %d", body, got, ce.Pos)
		}
	}
	if got := checkpointLinePos(filepath.Join(t.TempDir(), "missing"), 2); got != -1 {
		t.Errorf("linePos of a missing file = %d", got)
	}
	if got := checkpointLinePos(filepath.Join("testdata", "nonexistent"), 1); got != -1 {
		t.Errorf("linePos of a missing file, line 1 = %d", got)
	}
}

func TestCheckpointsConflicts(t *testing.T) {
	base := ckTree{ckRoot: "0\n2\nt 0 100\nt 1 200\n", "t-0/" + ckCP: ckFile(90, 1000), "t-1/": ""}

	dir := ckBuild(t, base)
	_, err := Migrate(Options{LogDirs: []string{dir}})
	if !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), filepath.Join(dir, "t-0", ckCP)) {
		t.Fatalf("error %v, want a conflict naming t-0's file", err)
	}
	ckCheck(t, dir, base)

	rep := ckRun(t, Options{LogDirs: []string{dir}, Overwrite: true})
	ckCheck(t, dir, ckTree{MigratedFile: base[ckRoot], "t-0/": "", "t-1/": "", "t-0/" + ckCP: ckFile(100, -1), "t-1/" + ckCP: ckFile(200, -1)})
	if e := rep.LogDirs[0].Entries[0]; e.Action != Replace || e.PreviousOffset != 90 {
		t.Errorf("entry %+v: want replace of 90", e)
	}

	// The same offset with another clean time is no conflict: the file,
	// and its known clean time, stay.
	dir = ckBuild(t, ckWith(base, ckTree{"t-0/" + ckCP: ckFile(100, 1000)}))
	rep = ckRun(t, Options{LogDirs: []string{dir}, CleanTime: CleanTimeFixed, CleanTimeMs: 5})
	if e := rep.LogDirs[0].Entries[0]; e.Action != Unchanged || e.CleanTimeMs != 1000 {
		t.Errorf("entry %+v: want unchanged ckWith clean time 1000", e)
	}
	ckCheck(t, dir, ckTree{MigratedFile: base[ckRoot], "t-0/": "", "t-1/": "", "t-0/" + ckCP: ckFile(100, 1000), "t-1/" + ckCP: ckFile(200, 5)})

	// An unreadable per-partition file stops the run, unless overwritten.
	bad := ckWith(base, ckTree{"t-0/" + ckCP: "2\n100 5\n"})
	dir = ckBuild(t, bad)
	_, err = Migrate(Options{LogDirs: []string{dir}})
	if ce, ok := logfmt.AsCorrupt(err); !ok || ce.File != filepath.Join(dir, "t-0", ckCP) {
		t.Fatalf("error %v, want a CorruptError for t-0's file", err)
	}
	ckCheck(t, dir, bad)
	rep = ckRun(t, Options{LogDirs: []string{dir}, Overwrite: true})
	if e := rep.LogDirs[0].Entries[0]; e.Action != Replace || e.PreviousOffset != -1 {
		t.Errorf("entry %+v: want replace ckWith unknown previous offset", e)
	}

	// Reverse: a root file kept by --keep-old went stale while compaction
	// advanced the per-partition file.
	dir = ckBuild(t, base)
	ckRun(t, Options{LogDirs: []string{dir}, KeepOld: true, Overwrite: true})
	ckWrite(t, dir, ckTree{"t-0/" + ckCP: ckFile(150, 2000)})
	before := ckSnapshot(t, dir)
	_, err = Migrate(Options{LogDirs: []string{dir}, Reverse: true})
	if !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), "line 3") {
		t.Fatalf("reverse error %v, want a conflict naming line 3", err)
	}
	ckCheck(t, dir, before)
	ckRun(t, Options{LogDirs: []string{dir}, Reverse: true, Overwrite: true})
	ckCheck(t, dir, ckTree{ckRoot: "0\n2\nt 0 150\nt 1 200\n", "t-0/": "", "t-1/": ""})
}

// TestRootAndMigratedBoth covers a broker that ran on the old format after
// a migration: it made a new root file next to the .migrated one.
func TestCheckpointsRootAndMigratedBoth(t *testing.T) {
	migrated := "0\n3\nt 0 100\ngone 5 7\nt 1 50\n"
	for _, tc := range []struct {
		name, root   string
		wantMigrated string
		wantRoot     RootAction
		wantReverse  map[string]int64
	}{
		// The broker started with no checkpoint and cleaned t-0 further.
		{"newer entries", "0\n1\nt 0 300\n", "0\n3\nt 0 300\ngone 5 7\nt 1 50\n", RootMerged,
			map[string]int64{"t-0": 300, "t-1": 50, "gone-5": 7}},
		// It created the file and cleaned nothing.
		{"created empty", "", migrated, RootRemoved,
			map[string]int64{"t-0": 100, "t-1": 50, "gone-5": 7}},
		// It wrote every partition of the old file again.
		{"all partitions", "0\n3\ngone 5 7\nt 1 60\nt 0 300\n", "0\n3\ngone 5 7\nt 1 60\nt 0 300\n", RootRenamed,
			map[string]int64{"t-0": 300, "t-1": 60, "gone-5": 7}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := ckBuild(t, ckTree{
				ckRoot: tc.root, MigratedFile: migrated,
				"t-0/" + ckCP: ckFile(100, 1000), "t-1/" + ckCP: ckFile(50, 1000),
			})
			rep := ckRun(t, Options{LogDirs: []string{dir}, Overwrite: true})
			if got := rep.LogDirs[0].Root; got != tc.wantRoot {
				t.Errorf("root action %v, want %v", got, tc.wantRoot)
			}
			got := ckSnapshot(t, dir)
			if _, ok := got[ckRoot]; ok {
				t.Errorf("root file still there")
			}
			if got[MigratedFile] != tc.wantMigrated {
				t.Errorf(".migrated = %q, want %q", got[MigratedFile], tc.wantMigrated)
			}
			if rep := ckRun(t, Options{LogDirs: []string{dir}}); rep.LogDirs[0].Changed {
				t.Errorf("second run changed something")
			}

			// Reverse restores the newest offset of every partition, and the
			// one of the partition that is not here.
			ckRun(t, Options{LogDirs: []string{dir}, Reverse: true})
			if got := ckEntries(t, filepath.Join(dir, ckRoot)); !maps.Equal(got, tc.wantReverse) {
				t.Errorf("reverse: %v, want %v", got, tc.wantReverse)
			}
		})
	}
}

func TestCheckpointsReverse(t *testing.T) {
	dir := ckBuild(t, ckSample)
	ckRun(t, Options{LogDirs: []string{dir}, CleanTime: CleanTimeFixed, CleanTimeMs: 1})
	rep := ckRun(t, Options{LogDirs: []string{dir}, Reverse: true})

	// Forward then reverse gives the same entries, absent partitions too.
	orig := filepath.Join(t.TempDir(), ckRoot)
	if err := os.WriteFile(orig, []byte(ckSample[ckRoot]), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, want := ckEntries(t, filepath.Join(dir, ckRoot)), ckEntries(t, orig); !maps.Equal(got, want) {
		t.Errorf("reverse entries %v, want %v", got, want)
	}
	want := ckWith(ckSample, ckTree{ckRoot: "0\n6\n" +
		"gone-topic 3 44\n" +
		"legacy.events-v0 0 77\n" +
		"legacy.events-v0-snappy 0 5\n" +
		"moving 0 9\n" +
		"orders 0 120\n" +
		"orders 1 0\n"})
	ckCheck(t, dir, want)
	d := rep.LogDirs[0]
	if d.Root != RootWritten || !d.RemovedMigrated || !d.Changed {
		t.Errorf("report %+v", d)
	}
	for _, e := range d.Entries {
		fromPartition := strings.HasSuffix(e.From, ckCP)
		if e.Removed != fromPartition || fromPartition != (e.CleanTimeMs == 1) || e.Action != Write {
			t.Errorf("entry %+v", e)
		}
	}
	if rep := ckRun(t, Options{LogDirs: []string{dir}, Reverse: true}); rep.LogDirs[0].Changed {
		t.Errorf("second reverse changed something: %+v", rep.LogDirs[0])
	}
	ckCheck(t, dir, want)
}

func TestCheckpointsReverseKeepOld(t *testing.T) {
	dir := ckBuild(t, ckSample)
	ckRun(t, Options{LogDirs: []string{dir}})
	rep := ckRun(t, Options{LogDirs: []string{dir}, Reverse: true, KeepOld: true})
	got := ckSnapshot(t, dir)
	if d := ckDiff(got, ckWith(ckSampleMigrated, ckTree{ckRoot: got[ckRoot]})); d != "" {
		t.Errorf("--keep-old reverse touched the source:\n%s", d)
	}
	for _, e := range rep.LogDirs[0].Entries {
		if e.Removed {
			t.Errorf("entry %+v reported removed", e)
		}
	}
	if rep := ckRun(t, Options{LogDirs: []string{dir}, Reverse: true, KeepOld: true}); rep.LogDirs[0].Changed {
		t.Errorf("second --keep-old reverse changed something")
	}
	// Forward now finds both formats in step, and finishes with a rename.
	rep = ckRun(t, Options{LogDirs: []string{dir}})
	if d := rep.LogDirs[0]; d.Root != RootRenamed || slices.ContainsFunc(d.Entries, func(e Entry) bool {
		return e.Action == Write || e.Action == Replace
	}) {
		t.Errorf("forward after --keep-old reverse: %+v", d)
	}
}

// TestReverseAfterKeepOld reverses a --keep-old migration: the root file is
// in step with the per-partition files and only they are removed.
func TestCheckpointsReverseAfterKeepOld(t *testing.T) {
	dir := ckBuild(t, ckSample)
	ckRun(t, Options{LogDirs: []string{dir}, KeepOld: true})
	rep := ckRun(t, Options{LogDirs: []string{dir}, Reverse: true})
	if d := rep.LogDirs[0]; d.Root != RootUnchanged || !d.Changed || d.RemovedMigrated {
		t.Errorf("report %+v", d)
	}
	ckCheck(t, dir, ckSample)
}

func TestCheckpointsDryRun(t *testing.T) {
	for _, reverse := range []bool{false, true} {
		dir := ckBuild(t, ckSample)
		if reverse {
			ckRun(t, Options{LogDirs: []string{dir}})
		}
		ckWrite(t, dir, ckTree{safefile.TempName("orders-0/" + ckCP): "junk"})
		before := ckSnapshot(t, dir)
		dry := ckRun(t, Options{LogDirs: []string{dir}, Reverse: reverse, DryRun: true})
		ckCheck(t, dir, before)
		real := ckRun(t, Options{LogDirs: []string{dir}, Reverse: reverse})
		if !dry.DryRun || real.DryRun {
			t.Errorf("DryRun flags %v, %v", dry.DryRun, real.DryRun)
		}
		dry.DryRun = false
		if fmt.Sprintf("%+v", dry.LogDirs[0]) != fmt.Sprintf("%+v", real.LogDirs[0]) {
			t.Errorf("reverse=%v: the dry ckRun planned\n%+v\nthe ckRun did\n%+v", reverse, dry.LogDirs[0], real.LogDirs[0])
		}
	}
}

// TestCheckpointsTempsRemoved: the temporary files of an interrupted run are
// removed; those of anything else, the broker's own
// cleaner-offset-checkpoint.tmp first, are left alone.
func TestCheckpointsTempsRemoved(t *testing.T) {
	theirs := ckTree{
		ckRoot + ".tmp":                      "0\n1\norders 0 99\n", // the broker's, cut by a crash
		"orders-1/" + ckCP + ".tmp":          "1\n5 -1\n",           // compact's, or an older logtool's
		"orders-0/" + ckCP + ".logtool.tmp/": "",                    // a directory
		"other-0/unrelated.tmp":              "x",
		"stale-0.00112233445566778899aabbccddeeff-stray/" + safefile.TempName(ckCP): "x",
	}
	dir := ckBuild(t, ckWith(ckWith(ckSampleMigrated, theirs), ckTree{
		safefile.TempName("orders-2/" + ckCP): "1\n",
		safefile.TempName(ckRoot):             "0\n",
		safefile.TempName(MigratedFile):       "",
	}))
	rep := ckRun(t, Options{LogDirs: []string{dir}})
	d := rep.LogDirs[0]
	if !d.Changed || len(d.TempsRemoved) != 3 {
		t.Errorf("report %+v: want 3 temporary files removed", d)
	}
	ckCheck(t, dir, ckWith(ckWith(ckSampleMigrated, theirs), ckTree{"other-0/": ""}))
	// Writing the root file back goes through a temporary file of its own.
	ckRun(t, Options{LogDirs: []string{dir}, Reverse: true})
	after := ckSnapshot(t, dir)
	for name, want := range theirs {
		if got, ok := after[name]; !ok || got != want {
			t.Errorf("reverse: %s is %v, want %q", name, got, want)
		}
	}
}

func TestCheckpointsJBOD(t *testing.T) {
	parent := t.TempDir()
	ckWrite(t, parent, ckTree{
		"d1/" + ckRoot: "0\n2\nt 0 10\nt 1 11\n", // t-1 lives on d2
		"d1/t-0/":      "",
		"d2/" + ckRoot: "0\n1\nt 1 21\n",
		"d2/t-1/":      "",
		"d2/t-0.0123456789abcdef0123456789abcdef-future/": "",
	})
	d1, d2 := filepath.Join(parent, "d1"), filepath.Join(parent, "d2")
	rep := ckRun(t, Options{LogDirs: []string{d1, d2}, Workers: 4})
	if len(rep.LogDirs) != 2 || rep.LogDirs[0].Path != d1 || rep.LogDirs[1].Path != d2 {
		t.Fatalf("report log dirs %+v", rep.LogDirs)
	}
	ckCheck(t, parent, ckTree{
		"d1/": "", "d2/": "",
		"d1/" + MigratedFile: "0\n2\nt 0 10\nt 1 11\n",
		"d1/t-0/":            "",
		"d1/t-0/" + ckCP:     ckFile(10, -1),
		"d2/" + MigratedFile: "0\n1\nt 1 21\n",
		"d2/t-1/":            "",
		"d2/t-1/" + ckCP:     ckFile(21, -1),
		"d2/t-0.0123456789abcdef0123456789abcdef-future/": "",
	})
	ckRun(t, Options{LogDirs: []string{d2, d1}, Reverse: true})
	if got := ckEntries(t, filepath.Join(d1, ckRoot)); !maps.Equal(got, map[string]int64{"t-0": 10, "t-1": 11}) {
		t.Errorf("d1 after reverse: %v", got)
	}
	if got := ckEntries(t, filepath.Join(d2, ckRoot)); !maps.Equal(got, map[string]int64{"t-1": 21}) {
		t.Errorf("d2 after reverse: %v", got)
	}
}

func TestCheckpointsBadArguments(t *testing.T) {
	dir := ckBuild(t, ckTree{ckRoot: "0\n0\n", "t-1/": "", "t-01/": ""})
	for _, tc := range []struct {
		name string
		opts Options
		want string
	}{
		{"no dirs", Options{}, "no log directory"},
		{"negative time", Options{LogDirs: []string{dir}, CleanTime: CleanTimeFixed, CleanTimeMs: -2}, "before 1970"},
		{"bad source", Options{LogDirs: []string{dir}, CleanTime: 7}, "unknown clean time source"},
		{"two dirs for one partition", Options{LogDirs: []string{dir}}, "t-01 and t-1"},
		{"missing", Options{LogDirs: []string{filepath.Join(dir, "nope")}}, "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := ckSnapshot(t, dir)
			_, err := Migrate(tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
			ckCheck(t, dir, before)
		})
	}
}

// TestSampleLogDirs migrates the layout of real brokers' log directories:
// their partition directory names, with an entry for each, and their own
// root files.
func TestCheckpointsSampleLogDirs(t *testing.T) {
	samples := kafkasamples.Dir("logdirs")
	dirs, err := os.ReadDir(samples)
	if errors.Is(err, fs.ErrNotExist) {
		kafkasamples.Skip(t, errors.New("real broker samples not found at "+samples))
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, sd := range dirs {
		if !sd.IsDir() {
			continue
		}
		t.Run(sd.Name(), func(t *testing.T) {
			src, err := layout.ReadLogDir(filepath.Join(samples, sd.Name()))
			if err != nil {
				t.Fatal(err)
			}
			rootBytes, err := os.ReadFile(filepath.Join(samples, sd.Name(), ckRoot))
			if err != nil {
				t.Fatal(err)
			}
			// The broker's own file first (these are empty: nothing was
			// compacted), then one with an entry per partition.
			for _, synthetic := range []bool{false, true} {
				dir := t.TempDir()
				root := string(rootBytes)
				want := ckTree{}
				var entries []checkpoint.OffsetEntry
				for i, p := range src.Partitions {
					want[p.Dir.Name+"/"] = ""
					if synthetic && p.Dir.Kind == layout.Normal {
						entries = append(entries, checkpoint.OffsetEntry{Topic: p.Dir.Topic, Partition: p.Dir.Partition, Offset: int64(i)})
						want[p.Dir.Name+"/"+ckCP] = ckFile(int64(i), -1)
					}
				}
				if synthetic {
					root = string(checkpoint.AppendOffsets(nil, entries))
				}
				ckWrite(t, dir, want)
				ckWrite(t, dir, ckTree{ckRoot: root})
				want[MigratedFile] = root

				ckRun(t, Options{LogDirs: []string{dir}})
				ckCheck(t, dir, want)
				ckRun(t, Options{LogDirs: []string{dir}, Reverse: true})
				orig := filepath.Join(t.TempDir(), ckRoot)
				if err := os.WriteFile(orig, []byte(root), 0o644); err != nil {
					t.Fatal(err)
				}
				if got, want := ckEntries(t, filepath.Join(dir, ckRoot)), ckEntries(t, orig); !maps.Equal(got, want) {
					t.Errorf("round trip: %v, want %v", got, want)
				}
			}
		})
	}
}

// TestCheckpointsManyLeft: a root file of thousands of entries for
// partitions that are not here. The report lists a thousand of them and
// counts the rest; the files keep them all.
func TestCheckpointsManyLeft(t *testing.T) {
	const ghosts = 1500
	var b strings.Builder
	fmt.Fprintf(&b, "0\n%d\n", ghosts+3)
	b.WriteString("t 0 5\n")
	for i := range ghosts {
		fmt.Fprintf(&b, "ghost %d %d\n", i%(ghosts-100), i) // the last 100 repeat earlier ones
	}
	b.WriteString("t 0 6\nt 1 7\n")
	root := b.String()
	dir := ckBuild(t, ckTree{ckRoot: root, "t-0/": "", "t-1/": ""})

	rep := ckRun(t, Options{LogDirs: []string{dir}})
	d := rep.LogDirs[0]
	counts := map[Action]int{}
	for _, e := range d.Entries {
		counts[e.Action]++
	}
	// Line 3 (t-0, overridden on line ghosts+4) and the first 999 ghosts
	// are listed; ghosts 0 to 99 repeat on a later line.
	want := map[Action]int{Write: 2, Duplicate: 1 + 100, Absent: 899}
	if !maps.Equal(counts, want) || d.Unlisted != ghosts-999 || d.Root != RootRenamed {
		t.Errorf("actions %v, %d unlisted, root %v; want %v, %d unlisted, renamed", counts, d.Unlisted, d.Root, want, ghosts-999)
	}
	ckCheck(t, dir, ckTree{MigratedFile: root, "t-0/" + ckCP: ckFile(6, -1), "t-1/" + ckCP: ckFile(7, -1)})

	// A broker ran on the old format and cleaned t-1 again: the merged
	// .migrated file keeps every ghost.
	ckWrite(t, dir, ckTree{ckRoot: "0\n1\nt 1 8\n"})
	rep = ckRun(t, Options{LogDirs: []string{dir}, Overwrite: true})
	if d := rep.LogDirs[0]; d.Root != RootMerged || len(d.Entries) != 1 || d.Unlisted != 0 {
		t.Errorf("merge: root %v, %d entries, %d unlisted", d.Root, len(d.Entries), d.Unlisted)
	}
	merged := "0\n" + fmt.Sprint(ghosts+3) + "\nt 1 8\nt 0 5\n" + root[strings.Index(root, "ghost 0 "):strings.Index(root, "t 1 7\n")]
	ckCheck(t, dir, ckTree{MigratedFile: merged, "t-0/" + ckCP: ckFile(6, -1), "t-1/" + ckCP: ckFile(8, -1)})

	// Reverse writes every partition once, in order: the per-partition
	// files win, then the last line of each ghost.
	rep = ckRun(t, Options{LogDirs: []string{dir}, Reverse: true})
	d = rep.LogDirs[0]
	if len(d.Entries) != 2+1000 || d.Unlisted != ghosts-100-1000 || d.Root != RootWritten {
		t.Errorf("reverse: %d entries, %d unlisted, root %v", len(d.Entries), d.Unlisted, d.Root)
	}
	var es []checkpoint.OffsetEntry
	for i := range ghosts - 100 {
		last := i
		if i < 100 {
			last = i + ghosts - 100
		}
		es = append(es, checkpoint.OffsetEntry{Topic: "ghost", Partition: int32(i), Offset: int64(last)})
	}
	es = append(es, checkpoint.OffsetEntry{Topic: "t", Partition: 0, Offset: 6}, checkpoint.OffsetEntry{Topic: "t", Partition: 1, Offset: 8})
	ckCheck(t, dir, ckTree{ckRoot: string(checkpoint.AppendOffsets(nil, es)), "t-0/": "", "t-1/": ""})
}

// TestCheckpointsForwardStreams: forward over a root file of many entries
// for partitions that are not here allocates what the listed ones take,
// whatever the number of the others.
func TestCheckpointsForwardStreams(t *testing.T) {
	const n = 200_000
	var b strings.Builder
	fmt.Fprintf(&b, "0\n%d\n", n)
	for i := range n {
		fmt.Fprintf(&b, "ghost %d %d\n", i, i)
	}
	dir := ckBuild(t, ckTree{ckRoot: b.String(), "t-0/": ""})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	rep := ckRun(t, Options{LogDirs: []string{dir}, DryRun: true})
	runtime.ReadMemStats(&after)
	if d := rep.LogDirs[0]; len(d.Entries) != maxListedLeft || d.Unlisted != n-maxListedLeft {
		t.Fatalf("%d entries listed, %d unlisted", len(d.Entries), d.Unlisted)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 {
		t.Errorf("planning %d entries allocated %d bytes, want under 4 MiB", n, alloc)
	}
}
