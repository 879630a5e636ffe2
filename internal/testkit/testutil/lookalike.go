package testutil

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// LookalikeNames are names a writer might take for its own leftovers: the
// digits MkdirTemp puts before a suffix, the suffixes of Kafka's cleaner
// and of temporary files, and Kafka's deleted, future and stray partition
// directories. None is a name logtool makes, so none may be touched.
var LookalikeNames = []string{
	"123-delete",
	"4294967295-delete",
	"notes.cleaned",
	"notes.swap",
	"notes.tmp",
	"orders-0.0123456789abcdef0123456789abcdef-delete",
	"orders-0.0123456789abcdef0123456789abcdef-future",
	"orders-0.0123456789abcdef0123456789abcdef-stray",
}

// Lookalikes are planted look-alike names and the bytes and modes they had.
type Lookalikes map[string]lookalike

type lookalike struct {
	mode fs.FileMode
	data []byte
}

// PlantLookalikes makes every LookalikeNames entry in each of dirs (making
// dirs if missing): the "-delete", "-future" and "-stray" names as
// directories holding a file, the others as files.
func PlantLookalikes(t testing.TB, dirs ...string) Lookalikes {
	t.Helper()
	l := Lookalikes{}
	for _, dir := range dirs {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, name := range LookalikeNames {
			path := filepath.Join(dir, name)
			data := []byte("not logtool's: " + path)
			if isDirName(name) {
				if err := os.Mkdir(path, 0o750); err != nil {
					t.Fatal(err)
				}
				l[path] = lookalike{mode: fs.ModeDir | 0o750}
				path = filepath.Join(path, "notes")
			}
			if err := os.WriteFile(path, data, 0o640); err != nil {
				t.Fatal(err)
			}
			l[path] = lookalike{mode: 0o640, data: data}
		}
	}
	return l
}

// Check fails t for every planted name whose type, mode or bytes changed,
// or that is gone.
func (l Lookalikes) Check(t testing.TB) {
	t.Helper()
	for path, want := range l {
		fi, err := os.Lstat(path)
		if err != nil {
			t.Errorf("look-alike %s: %v", path, err)
			continue
		}
		if fi.Mode() != want.mode {
			t.Errorf("look-alike %s: mode %v, want %v", path, fi.Mode(), want.mode)
		}
		if fi.IsDir() {
			continue
		}
		if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, want.data) {
			t.Errorf("look-alike %s: %q, %v; want %q", path, got, err, want.data)
		}
	}
}

func isDirName(name string) bool {
	for _, s := range []string{"-delete", "-future", "-stray"} {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}
