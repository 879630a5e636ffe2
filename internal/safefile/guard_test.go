//go:build unix

package safefile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// outside is a file outside the directory written to, which a planted link
// points at; it must never change.
func outside(t *testing.T) (string, []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "precious")
	content := []byte("not logtool's to write")
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, content
}

func checkUntouched(t *testing.T, path string, want []byte) {
	t.Helper()
	if got := readOrNil(t, path); string(got) != string(want) {
		t.Errorf("%s changed to %q", path, got)
	}
}

// TestCreateRefusesPlantedTemp: a symbolic link under the temporary name is
// neither written through nor removed; a regular leftover is replaced.
func TestCreateRefusesPlantedTemp(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "log-start-offset-checkpoint")
	victim, content := outside(t)
	if err := os.Symlink(victim, TempName(target)); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(target, []byte("0\n0\n"), 0o644); !errors.Is(err, ErrSymlink) {
		t.Fatalf("WriteFile with a planted link: %v, want ErrSymlink", err)
	}
	checkUntouched(t, victim, content)
	if fi, err := os.Lstat(TempName(target)); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the planted link was removed or replaced: %v", err)
	}
	if exists(t, target) {
		t.Error("target written")
	}

	os.Remove(TempName(target))
	if err := os.WriteFile(TempName(target), []byte("leftover of a crash, longer than the new content"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(target, []byte("0\n0\n"), 0o644); err != nil {
		t.Fatalf("WriteFile over a regular leftover: %v", err)
	}
	if got := readOrNil(t, target); string(got) != "0\n0\n" {
		t.Errorf("target = %q", got)
	}

	if err := syscall.Mkfifo(TempName(target), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(target, []byte("x"), 0o644); !errors.Is(err, ErrNotRegular) {
		t.Errorf("WriteFile with a FIFO under the temporary name: %v, want ErrNotRegular", err)
	}
}

// TestNoWriteThroughSymlinkTarget: a target, a rename's source or
// destination, a removal and a truncation that are symbolic links are
// refused, and the file the link names is untouched.
func TestNoWriteThroughSymlinkTarget(t *testing.T) {
	dir := t.TempDir()
	victim, content := outside(t)
	link := filepath.Join(dir, "00000000000000000000.log")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	f, err := Create(link, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("new"))
	if err := f.Commit(); !errors.Is(err, ErrSymlink) {
		t.Errorf("Commit over a link: %v, want ErrSymlink", err)
	}
	f.Abort()
	other := filepath.Join(dir, "other")
	os.WriteFile(other, []byte("x"), 0o644)
	for name, err := range map[string]error{
		"Rename from a link": Rename(link, link+".deleted"),
		"Rename onto a link": Rename(other, link),
		"Remove":             Remove(link),
		"Truncate":           Truncate(link, 0),
	} {
		if !errors.Is(err, ErrSymlink) {
			t.Errorf("%s: %v, want ErrSymlink", name, err)
		}
	}
	checkUntouched(t, victim, content)
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link is gone or replaced: %v", err)
	}
	if err := NoSymlinks(other, filepath.Join(dir, "absent")); err != nil {
		t.Errorf("NoSymlinks on a file and an absent path: %v", err)
	}
}

// TestOpenNeverBlocks: a FIFO, a socket and a directory named like a
// segment are refused by Open and ReadFile at once.
func TestOpenNeverBlocks(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "00000000000000040000.log")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "00000000000000050000.log")
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: sock}); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "00000000000000060000.log")
	os.Mkdir(sub, 0o755)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, p := range []string{fifo, sock, sub} {
			if _, err := Open(p); !errors.Is(err, ErrNotRegular) {
				t.Errorf("Open(%s): %v, want ErrNotRegular", p, err)
			}
			if _, err := ReadFile(p); !errors.Is(err, ErrNotRegular) {
				t.Errorf("ReadFile(%s): %v, want ErrNotRegular", p, err)
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Open blocked")
	}
}

// TestOpenRefusesLinks: a link to a regular file is refused by Open and
// ReadFile as not regular, never read through: its bytes are not the log
// directory's.
func TestOpenRefusesLinks(t *testing.T) {
	real, _ := outside(t)
	link := filepath.Join(t.TempDir(), "leader-epoch-checkpoint")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(link); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("ReadFile through a link: %q, %v; want ErrNotRegular", b, err)
	}
	if _, err := Open(link); !errors.Is(err, ErrNotRegular) {
		t.Errorf("Open through a link: %v; want ErrNotRegular", err)
	}
}

func TestTruncate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "00000000000000000000.log")
	os.WriteFile(path, []byte("0123456789"), 0o644)
	if err := Truncate(path, 4); err != nil {
		t.Fatal(err)
	}
	if got := readOrNil(t, path); string(got) != "0123" {
		t.Errorf("after Truncate: %q", got)
	}
}
