package safefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStage: a stage is made 0755 under the name given, never over one
// that exists; installing it replaces nothing, not even an empty
// directory; it is removed only when it holds logtool's files alone, and
// not at all once installed.
func TestStage(t *testing.T) {
	parent := t.TempDir()
	own := func(name string) bool { return strings.HasSuffix(name, ".log") }
	s, err := CreateStage(parent, "p-0.stage-delete", own)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(s.Dir); err != nil || fi.Mode().Perm() != 0o755 || filepath.Base(s.Dir) != "p-0.stage-delete" {
		t.Fatalf("stage %s: %v %v", s.Dir, fi.Mode(), err)
	}
	if _, err := CreateStage(parent, "p-0.stage-delete", own); !errors.Is(err, fs.ErrExist) {
		t.Errorf("a second stage of the same name: %v, want fs.ErrExist", err)
	}
	if err := os.WriteFile(filepath.Join(s.Dir, "0.log"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	taken := filepath.Join(parent, "taken")
	if err := os.Mkdir(taken, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := s.Install(taken); !errors.Is(err, fs.ErrExist) {
		t.Errorf("install over an empty directory: %v, want fs.ErrExist", err)
	}
	if left, _ := os.ReadDir(taken); len(left) > 0 {
		t.Errorf("the empty directory was replaced: it holds %v", left)
	}
	final := filepath.Join(parent, "p-0")
	if err := s.Install(final); err != nil {
		t.Fatal(err)
	}
	if err := s.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(final, "0.log")); err != nil {
		t.Errorf("installed stage: %v", err)
	}

	random, err := CreateStage(parent, "p-1.stage*-delete", own)
	if err != nil {
		t.Fatal(err)
	}
	if name := filepath.Base(random.Dir); name == "p-1.stage*-delete" || !strings.HasPrefix(name, "p-1.stage") {
		t.Errorf("a pattern's stage is named %s", name)
	}
	if err := os.WriteFile(filepath.Join(random.Dir, "notes.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := random.Remove(); err == nil {
		t.Error("a stage holding a file logtool does not write was removed")
	}
	if _, err := os.Stat(filepath.Join(random.Dir, "notes.txt")); err != nil {
		t.Errorf("the foreign file: %v", err)
	}
}
