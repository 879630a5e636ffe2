package testutil

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestCopyTree(t *testing.T) {
	src, dst := t.TempDir(), filepath.Join(t.TempDir(), "copy")
	old := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := os.MkdirAll(filepath.Join(src, "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join("a", "b", "00000000000000000000.log")
	if err := os.WriteFile(filepath.Join(src, file), []byte("segment"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(filepath.Join(src, file), old, old); err != nil {
		t.Fatal(err)
	}
	CopyTree(t, src, dst)
	fi, err := os.Stat(filepath.Join(dst, file))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dst, file))
	if string(b) != "segment" || !fi.ModTime().Equal(old) || fi.Mode().Perm() != 0o600 {
		t.Fatalf("copied %q, mtime %v, mode %v; want the source's", b, fi.ModTime(), fi.Mode().Perm())
	}
}

func TestFlipByte(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte{0, 1, 2}, 0o644); err != nil {
		t.Fatal(err)
	}
	FlipByte(t, path, 1)
	if b, _ := os.ReadFile(path); string(b) != string([]byte{0, 0xfe, 2}) {
		t.Fatalf("after FlipByte: %v", b)
	}
}
