//go:build unix

package faulttest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logtool/logtool/logfmt/layout"
)

// The tests of links out of a log directory: a segment, index, time index,
// checkpoint or partition directory that is a symbolic link to something
// elsewhere is reported and never followed, by readers and writers alike.

// linkOut moves path out of the log directory and leaves a link to it in
// its place; it returns where the bytes now are.
func linkOut(t *testing.T, path string) string {
	t.Helper()
	outside := filepath.Join(t.TempDir(), filepath.Base(path))
	if err := os.Rename(path, outside); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, path); err != nil {
		t.Fatal(err)
	}
	return outside
}

// linkedFiles are the files of the first segment, and a checkpoint of the
// partition, each tried as the link.
func linkedFiles(t *testing.T, part string) []string {
	seg := segments(t, part)[0]
	return []string{seg.Log, seg.Index, seg.TimeIndex, filepath.Join(part, layout.LeaderEpochCheckpointFile)}
}

// TestSymlinkedFilesRead: verify, dump and export never report the bytes
// of a linked file as the partition's; verify finds a problem naming the
// link, dump, export, find and grep name it.
func TestSymlinkedFilesRead(t *testing.T) {
	f := format{"v2-none", 2, 0}
	for i := range 4 {
		dir := fixture(t, matrixOptions(f))
		part := onlyPartition(t, dir)
		link := linkedFiles(t, part)[i]
		name := filepath.Base(link)
		linkOut(t, link)

		r := run(t, "verify", "--deep", dir)
		if r.code != 3 || !strings.Contains(r.stdout, "problem: "+link+": a symbolic link") {
			t.Errorf("verify with %s linked: %v\n%s", name, r, r.stdout)
		}
		r = run(t, "--format", "json", "dump", "--deep-iteration", part)
		var saw, leaked bool
		for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
			var o struct{ Type, File, Message string }
			if err := json.Unmarshal([]byte(line), &o); err != nil || o.File != link {
				continue
			}
			switch {
			case o.Type == "problem" && strings.Contains(o.Message, "symbolic link"):
				saw = true
			case o.Type != "file" && !leaked:
				leaked = true
				t.Errorf("dump with %s linked reports what the link points at: %s", name, line)
			}
		}
		if !saw {
			t.Errorf("dump with %s linked does not name the link: %v", name, r)
		}
		if i != 0 {
			continue
		}
		r = run(t, "export", part)
		if r.code != 0 || !strings.Contains(r.stderr, link+": a symbolic link") {
			t.Errorf("export with %s linked: %v", name, r)
		}
		for _, args := range [][]string{{"find", "--offset", "0", part}, {"grep", "--key-regex", ".", "--count", part}} {
			if r := run(t, args...); !strings.Contains(r.stdout+r.stderr, link+": a symbolic link") {
				t.Errorf("%s with %s linked: %v; want the link named", args[0], name, r)
			}
		}
		first := segments(t, part)[0].Base // the first listed, past the link
		for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
			var o struct{ Offset int64 }
			if json.Unmarshal([]byte(line), &o) == nil && o.Offset < first {
				t.Errorf("export with %s linked exports offset %d, from the linked segment", name, o.Offset)
				break
			}
		}
	}
}

// TestSymlinkedFilesWrite: every writer refuses a partition holding a
// linked segment, index, time index or checkpoint (exit 1 naming the link),
// and changes nothing inside or outside; salvage leaves the linked file out
// of the copy and says so.
func TestSymlinkedFilesWrite(t *testing.T) {
	writers := []struct {
		f    format
		args []string
	}{
		{format{"v2-none", 2, 0}, []string{"reindex"}},
		{format{"v2-none", 2, 0}, []string{"compact", "--topic", ".*", "--now", compactNow, "--max-lag", "1ms"}},
		{format{"v2-none", 2, 0}, []string{"retention", "--topic", ".*", "--now", "2030-01-01T00:00:00Z", "--retention-ms", "1h"}},
		{format{"v0-gzip", 0, 1}, []string{"upgrade", "--to-magic", "2"}},
	}
	for _, w := range writers {
		for i := range 4 {
			dir := fixture(t, matrixOptions(w.f))
			part := onlyPartition(t, dir)
			link := linkedFiles(t, part)[i]
			if w.args[0] == "reindex" {
				writeFile(t, segments(t, part)[1].Index, nil) // work to do
			}
			outside := linkOut(t, link)
			content := readFile(t, outside)
			before := digest(t, dir)
			r := run(t, append(w.args, part)...)
			checkOutside(t, w.args[0], outside, content)
			if d := diff(before, digest(t, dir), nil); len(d) > 0 {
				t.Errorf("%s with %s linked: changed %v", w.args[0], filepath.Base(link), d)
			}
			if r.code != 1 || !strings.Contains(r.stderr, link) || !strings.Contains(r.stderr, "symbolic link") {
				t.Errorf("%s with %s linked: %v; want exit 1 naming the link", w.args[0], filepath.Base(link), r)
			}
			if _, err := os.Lstat(filepath.Join(filepath.Dir(outside), ".lock")); err == nil {
				t.Errorf("%s with %s linked: a .lock was created outside", w.args[0], filepath.Base(link))
			}
		}
	}

	dir := fixture(t, matrixOptions(format{"v2-none", 2, 0}))
	part := onlyPartition(t, dir)
	seg := segments(t, part)[0]
	outside := linkOut(t, seg.Log)
	content := readFile(t, outside)
	out := filepath.Join(t.TempDir(), filepath.Base(part))
	r := run(t, "salvage", part, "--out", out)
	checkOutside(t, "salvage", outside, content)
	if !strings.Contains(r.stderr, seg.Log+": not carried over") {
		t.Errorf("salvage with a linked segment: %v; want the link named", r)
	}
	if _, err := os.Lstat(filepath.Join(out, filepath.Base(seg.Log))); err == nil {
		t.Error("salvage copied the linked segment")
	}
}

// TestSymlinkedPartitionDir: a partition directory of a log directory that
// is a link to one elsewhere is skipped with a warning by readers and
// writers given the log directory: its bytes are neither reported nor
// changed, and no .lock is created where it lives.
func TestSymlinkedPartitionDir(t *testing.T) {
	o := matrixOptions(format{"v0-gzip", 0, 1})
	a := fixture(t, o)
	elsewhere := t.TempDir() // not a log directory
	o.Topics = []string{"legacy"}
	src := onlyPartition(t, fixture(t, o))
	target := filepath.Join(elsewhere, "legacy-0")
	if err := os.Rename(src, target); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(a, "legacy-0")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	writeFile(t, segments(t, target)[0].Index, nil) // work for reindex
	before := digest(t, elsewhere)
	for _, args := range [][]string{
		{"reindex"},
		{"upgrade", "--to-magic", "2"},
		{"compact", "--topic", ".*", "--now", compactNow, "--max-lag", "1h"},
		{"retention", "--topic", ".*", "--now", "2030-01-01T00:00:00Z", "--retention-ms", "1h"},
		{"dump", "--deep-iteration"},
		{"export"},
	} {
		r := run(t, append(args, a)...)
		if !strings.Contains(r.stderr, "warning: "+link+": a symbolic link") {
			t.Errorf("%s: %v; want a warning naming the link", args[0], r)
		}
		// The root checkpoints may list it; none of its files is read.
		if strings.Contains(r.stdout, link+"/") || strings.Contains(r.stdout, `"topic":"legacy"`) {
			t.Errorf("%s reports the linked partition's files", args[0])
		}
	}
	if r := run(t, "verify", a); r.code != 3 || !strings.Contains(r.stdout, "problem: "+link+": a symbolic link") {
		t.Errorf("verify: %v\n%s", r, r.stdout)
	}
	if d := diff(before, digest(t, elsewhere), nil); len(d) > 0 {
		t.Errorf("the partition the link points at changed: %v", d)
	}
	if _, err := os.Lstat(filepath.Join(elsewhere, ".lock")); err == nil {
		t.Error("a .lock was created where the linked partition lives")
	}
}
