// Package testutil holds helpers that tests of several packages share.
package testutil

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/logtool/logtool/logfmt/layout"
)

// CopyTree copies the directory tree src into dst, which may exist,
// keeping permission bits and modification times: retention's mtime rule,
// the cleaner's legacy tombstone rule and upgrade all read them.
func CopyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if err := os.WriteFile(to, b, info.Mode().Perm()); err != nil {
			return err
		}
		return os.Chtimes(to, info.ModTime(), info.ModTime())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// FlipByte inverts the bits of the byte at pos in the file at path, to
// damage a segment where a test wants it.
func FlipByte(t testing.TB, path string, pos int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if pos < 0 || pos >= len(b) {
		t.Fatalf("%s: byte %d is outside its %d bytes", path, pos, len(b))
	}
	b[pos] ^= 0xff
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// AlternateSegments makes a partition of v0 segments alternate v0 and v1:
// every second segment is moved alone into a scratch partition directory of
// the same name, upgrade is called on it (to run logtool upgrade
// --to-magic 1), and its files are moved back.
func AlternateSegments(t testing.TB, partDir string, upgrade func(scratch string)) {
	t.Helper()
	p, err := layout.ReadPartition(partDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Segments) < 3 {
		t.Fatalf("%s: %d segments, too few to alternate", partDir, len(p.Segments))
	}
	for i, s := range p.Segments {
		if i%2 == 0 {
			continue
		}
		scratch := filepath.Join(t.TempDir(), filepath.Base(partDir))
		if err := os.Mkdir(scratch, 0o755); err != nil {
			t.Fatal(err)
		}
		files := []string{s.Log, s.Index, s.TimeIndex}
		for _, f := range files {
			if err := os.Rename(f, filepath.Join(scratch, filepath.Base(f))); err != nil {
				t.Fatal(err)
			}
		}
		upgrade(scratch)
		for _, f := range files {
			if err := os.Rename(filepath.Join(scratch, filepath.Base(f)), f); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// AppendBytes appends b to the file at path, to give a segment or an index
// the tail a test wants.
func AppendBytes(t testing.TB, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
}
