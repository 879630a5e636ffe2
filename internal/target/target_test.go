package target

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/logtool/logtool/logfmt/layout"
)

// tree makes files (a name ending in "/" is a directory) and symbolic links
// ("name -> target", target relative to root) under root.
func tree(t *testing.T, root string, entries ...string) {
	t.Helper()
	for _, e := range entries {
		if name, to, ok := strings.Cut(e, " -> "); ok {
			p := filepath.Join(root, name)
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.Symlink(filepath.Join(root, to), p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		p := filepath.Join(root, e)
		if strings.HasSuffix(e, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// logDir is a log directory with two partitions.
var logDir = []string{"D/meta.properties", "D/orders-0/00000000000000000000.log", "D/orders-0/00000000000000000100.log",
	"D/orders-0/00000000000000000000.index",
	"D/clicks-0/00000000000000000000.log", "D/__consumer_offsets-0/00000000000000000000.log"}

var all = Options{Command: "test", Takes: Files | Segments | Partitions | LogDirs}

func resolveOK(t *testing.T, paths []string, o Options) *Set {
	t.Helper()
	s, err := Resolve(paths, o)
	if err != nil {
		t.Fatalf("Resolve(%q): %v", paths, err)
	}
	return s
}

func partNames(s *Set) []string {
	var out []string
	for _, p := range s.Partitions() {
		out = append(out, p.Dir.Name)
	}
	return out
}

func realOf(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestOnePartition: every way of naming one partition twice gives it once,
// with its real path and real log directory.
func TestOnePartition(t *testing.T) {
	root := t.TempDir()
	tree(t, root, logDir...)
	tree(t, root, "link -> D/orders-0", "other/")
	D, P := filepath.Join(root, "D"), filepath.Join(root, "D", "orders-0")
	for _, paths := range [][]string{
		{P, P},
		{P, D + "/./orders-0/"},
		{P, filepath.Join(root, "link")},
		{filepath.Join(root, "link"), P},
		{filepath.Join(root, "other", "..", "D", "orders-0")},
		{P, filepath.Join(P, "00000000000000000100.log")},
	} {
		s := resolveOK(t, paths, Options{Command: "test", Takes: Segments | Partitions})
		ps := s.Partitions()
		if len(ps) != 1 {
			t.Errorf("%q: %d partitions", paths, len(ps))
			continue
		}
		p := ps[0]
		if p.Real != realOf(t, P) || p.LogDir.Real != realOf(t, D) || p.Segments != nil || !p.Named {
			t.Errorf("%q: %+v, log dir %s", paths, p, p.LogDir.Real)
		}
	}
	// A log directory and a partition inside it: the log directory's
	// partitions, each once.
	for _, paths := range [][]string{{D, P}, {P, D}, {D, filepath.Join(root, "link"), D + "/"}} {
		s := resolveOK(t, paths, all)
		if got := partNames(s); len(got) != 3 {
			t.Errorf("%q: partitions %q", paths, got)
		}
	}
}

// TestPathsUsed: a path without a link on the way is used as spelled
// (cleaned); one through a link is used as its real path, so that nothing
// after Resolve goes through the link again.
func TestPathsUsed(t *testing.T) {
	root := t.TempDir()
	tree(t, root, logDir...)
	tree(t, root, "link -> D/orders-0")
	s := resolveOK(t, []string{filepath.Join(root, "D") + "/./orders-0/", filepath.Join(root, "link") + "/../clicks-0"}, all)
	ps := s.Partitions()
	if ps[0].Path != filepath.Join(root, "D", "orders-0") {
		t.Errorf("path %q", ps[0].Path)
	}
	// link/.. is D (the link's target's parent), not root: the real path.
	if len(ps) != 2 || ps[1].Path != realOf(t, filepath.Join(root, "D", "clicks-0")) {
		t.Errorf("partitions %+v", ps)
	}
}

// TestSymlinkedPartition: a partition named through a link from another
// log directory belongs to its real log directory, and the one holding the
// link is involved too; in a log directory named whole the link is never
// followed: noted, and neither the partition nor its log directory is in
// the set.
func TestSymlinkedPartition(t *testing.T) {
	root := t.TempDir()
	tree(t, root, "B/meta.properties", "B/legacy-0/00000000000000000000.log",
		"A/meta.properties", "A/orders-0/00000000000000000000.log", "A/legacy-0 -> B/legacy-0")
	A, B := realOf(t, filepath.Join(root, "A")), realOf(t, filepath.Join(root, "B"))
	for _, c := range []struct {
		path  string
		parts []string
		dirs  []string
		notes int
	}{
		{filepath.Join(root, "A", "legacy-0"), []string{"legacy-0"}, []string{A, B}, 0},
		{filepath.Join(root, "A"), []string{"orders-0"}, []string{A}, 1},
	} {
		s := resolveOK(t, []string{c.path}, all)
		if got := partNames(s); !slices.Equal(got, c.parts) {
			t.Errorf("%s: partitions %q, want %q", c.path, got, c.parts)
		}
		for _, p := range s.Partitions() {
			if p.Dir.Topic == "legacy" && (p.LogDir.Real != B || p.Real != filepath.Join(B, "legacy-0")) {
				t.Errorf("%s: legacy-0 = %+v", c.path, p)
			}
		}
		var dirs []string
		for _, d := range s.LogDirs {
			dirs = append(dirs, d.Real)
		}
		if !slices.Equal(dirs, c.dirs) {
			t.Errorf("%s: log dirs %q, want %q", c.path, dirs, c.dirs)
		}
		if len(s.Notes) != c.notes || c.notes > 0 && !strings.Contains(s.Notes[0], filepath.Join("A", "legacy-0")+": a symbolic link") {
			t.Errorf("%s: notes %q", c.path, s.Notes)
		}
	}
}

// TestLogDirsFolder: a directory holding log directories, named like
// partitions as JBOD mounts often are, is several log directories.
func TestLogDirsFolder(t *testing.T) {
	root := t.TempDir()
	tree(t, root, "data/kafka-logs-1/meta.properties", "data/kafka-logs-1/orders-0/00000000000000000000.log",
		"data/kafka-logs-2/meta.properties", "data/kafka-logs-2/orders-1/00000000000000000000.log", "data/lost+found/")
	s := resolveOK(t, []string{filepath.Join(root, "data")}, all)
	var roots []string
	for _, it := range s.Items {
		if it.Root != nil {
			roots = append(roots, filepath.Base(it.Root.Path))
		}
	}
	if !slices.Equal(roots, []string{"kafka-logs-1", "kafka-logs-2"}) || !slices.Equal(partNames(s), []string{"orders-0", "orders-1"}) {
		t.Errorf("roots %q, partitions %q", roots, partNames(s))
	}
	if _, err := Resolve([]string{filepath.Join(root, "data")}, Options{Command: "find", Takes: Partitions}); !isUsage(err) {
		t.Errorf("a partition-only command: %v", err)
	}
}

func isUsage(err error) bool {
	var ue *UsageError
	return errors.As(err, &ue)
}

// TestTopic: --topic matches whole names, and a bad pattern is shown as
// typed.
func TestTopic(t *testing.T) {
	root := t.TempDir()
	tree(t, root, logDir...)
	D := filepath.Join(root, "D")
	s := resolveOK(t, []string{D}, Options{Command: "test", Takes: LogDirs, Topic: "orders|__.*"})
	if got := partNames(s); !slices.Equal(got, []string{"__consumer_offsets-0", "orders-0"}) {
		t.Errorf("partitions %q", got)
	}
	s = resolveOK(t, []string{D}, Options{Command: "test", Takes: LogDirs, Topic: "order"})
	if got := partNames(s); len(got) != 0 {
		t.Errorf("a partial match selected %q", got)
	}
	_, err := Resolve([]string{D}, Options{Command: "test", Takes: LogDirs, Topic: "a(b"})
	if !isUsage(err) || !strings.Contains(err.Error(), `"a(b"`) || strings.Contains(err.Error(), "^(?:") {
		t.Errorf("bad pattern: %v", err)
	}
}

// TestSkip: Skip leaves partitions out, with a note when it gives one, and
// their log directories are not involved.
func TestSkip(t *testing.T) {
	root := t.TempDir()
	tree(t, root, logDir...)
	tree(t, root, "E/orders-0.0123abcd-delete/00000000000000000000.log")
	o := Options{Command: "test", Takes: Partitions | LogDirs, Skip: func(p *Partition) (bool, string) {
		if p.Dir.Kind != layout.Normal {
			return true, "renamed"
		}
		return strings.HasPrefix(p.Dir.Topic, "__"), ""
	}}
	s := resolveOK(t, []string{filepath.Join(root, "D"), filepath.Join(root, "E", "orders-0.0123abcd-delete")}, o)
	if got := partNames(s); !slices.Equal(got, []string{"clicks-0", "orders-0"}) {
		t.Errorf("partitions %q", got)
	}
	if len(s.Notes) != 1 || !strings.HasSuffix(s.Notes[0], ": renamed") {
		t.Errorf("notes %q", s.Notes)
	}
	for _, d := range s.LogDirs {
		if filepath.Base(d.Real) == "E" {
			t.Errorf("the log directory of a skipped partition is involved")
		}
	}
}

// TestKinds: what a command does not take is a usage error naming what it
// takes; files are files, or select segments.
func TestKinds(t *testing.T) {
	root := t.TempDir()
	tree(t, root, logDir...)
	tree(t, root, "misc/notes.txt")
	D := filepath.Join(root, "D")
	seg := filepath.Join(D, "orders-0", "00000000000000000100.log")
	root1 := filepath.Join(D, "meta.properties")
	for _, c := range []struct {
		o    Options
		path string
		want string
	}{
		{Options{Command: "compact", Takes: Partitions | LogDirs}, seg, "is a file; compact takes partition directories and log directories"},
		{Options{Command: "find", Takes: Partitions}, D, "is a log directory; find takes partition directories"},
		{Options{Command: "migrate-checkpoints", Takes: LogDirs}, filepath.Join(D, "orders-0"), "migrate-checkpoints takes log directories"},
		{Options{Command: "reindex", Takes: Segments | Partitions | LogDirs}, root1, "is not a segment file"},
		{all, filepath.Join(root, "absent"), "no such file"},
		{all, filepath.Join(root, "misc"), "not a file, partition directory or log directory"},
	} {
		_, err := Resolve([]string{c.path}, c.o)
		if !isUsage(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: %v, want a usage error saying %q", c.o.Command, c.path, err, c.want)
		}
	}
	if _, err := Resolve([]string{filepath.Join(root, "absent")}, all); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("absent: %v", err)
	}

	s := resolveOK(t, []string{seg, filepath.Join(D, "orders-0", "00000000000000000000.index"), root1}, all)
	ps := s.Partitions()
	if len(ps) != 1 || !slices.Equal(ps[0].Segments, []int64{100, 0}) || len(s.Items) != 2 || s.Items[1].File == nil {
		t.Errorf("items %+v", s.Items)
	}
	// The root file of a log directory named whole, a file of a partition
	// named whole: covered already.
	s = resolveOK(t, []string{D, root1, filepath.Join(D, "orders-0")}, Options{Command: "dump", Takes: Files | Partitions | LogDirs})
	for _, it := range s.Items {
		if it.File != nil {
			t.Errorf("file %s listed besides its log directory", it.File.Path)
		}
	}
	s = resolveOK(t, []string{filepath.Join(D, "orders-0"), seg}, Options{Command: "dump", Takes: Files | Partitions | LogDirs})
	if len(s.Items) != 1 {
		t.Errorf("a file of a partition named whole: items %+v", s.Items)
	}
}

func TestOutput(t *testing.T) {
	root := t.TempDir()
	tree(t, root, "base/", "link -> base")
	s := resolveOK(t, nil, Options{Command: "gen", Output: filepath.Join(root, "link", "new", "logs")})
	want := filepath.Join(realOf(t, filepath.Join(root, "base")), "new", "logs")
	if s.Output == nil || s.Output.Real != want || s.Output.Path != want || len(s.LogDirs) != 1 {
		t.Fatalf("output %+v", s.Output)
	}
	tree(t, root, "file")
	if _, err := Resolve(nil, Options{Command: "gen", Output: filepath.Join(root, "file")}); !isUsage(err) {
		t.Errorf("output onto a file: %v", err)
	}
}
