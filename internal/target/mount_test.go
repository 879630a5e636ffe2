//go:build linux

package target

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/logtool/logtool/internal/lockfile"
	"github.com/logtool/logtool/logfmt/layout"
	"golang.org/x/sys/unix"
)

// bindMount mounts dir on mnt, a new directory, and returns mnt; the test
// is skipped where it cannot mount (not root, no mount namespace).
func bindMount(t *testing.T, mnt, dir string) string {
	t.Helper()
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount(dir, mnt, "", unix.MS_BIND, ""); err != nil {
		t.Skipf("bind mount: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(mnt, unix.MNT_DETACH) })
	return mnt
}

// TestMountedTwiceIsOne: a log directory reached by two real paths (a bind
// mount, a file system mounted twice) is one log directory, whichever path
// comes first, as named whole or through a partition. Its directory.id
// made the two look like a log directory and its backup, and a writer
// worked on every partition twice at once: compact --workers 4 lost 46,000
// of 264,000 records (adversary's finding).
func TestMountedTwiceIsOne(t *testing.T) {
	root := t.TempDir()
	tree(t, root, logDir...)
	d := filepath.Join(root, "D")
	meta := "version=1\ncluster.id=FzgWM7gFf45V8ixIrDLWgw\nnode.id=1\ndirectory.id=lxyMV74dlNCV7pVyba9ekg\n"
	if err := os.WriteFile(filepath.Join(d, "meta.properties"), []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	mnt := bindMount(t, filepath.Join(root, "mnt"), d)
	o := all
	o.Writes = true
	for _, paths := range [][]string{
		{d, mnt},
		{mnt, d},
		{filepath.Join(mnt, "orders-0"), d},
		{d, filepath.Join(mnt, "orders-0")},
		{filepath.Join(d, "orders-0"), mnt},
		{filepath.Join(mnt, "orders-0", "00000000000000000100.log"), filepath.Join(d, "orders-0")},
	} {
		s := resolveOK(t, paths, o)
		seen := map[string]int{}
		for _, p := range s.Partitions() {
			seen[p.Dir.Name]++
		}
		for name, n := range seen {
			if n > 1 {
				t.Errorf("%q: %s is worked on %d times: %q", paths, name, n, partNames(s))
			}
		}
		if len(s.LogDirs) != 1 || len(s.Refused) != 0 {
			t.Errorf("%q: log dirs %+v, refused %+v", paths, s.LogDirs, s.Refused)
		}
		release, err := s.Lock(Write)
		if err != nil {
			t.Fatalf("%q: %v", paths, err)
		}
		release()
	}
	// An output under the other mount is in the log directory.
	o = Options{Command: "upgrade", Takes: LogDirs, Output: filepath.Join(mnt, "new")}
	if _, err := Resolve([]string{d}, o); !isUsage(err) {
		t.Errorf("an output in the log directory through its other mount: %v", err)
	}
	// The lock knows the directory by either path.
	l, err := lockfile.Acquire(d)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if _, err := lockfile.Acquire(mnt); err == nil {
		t.Error("the lock was taken again through the other mount")
	}
}

// TestPartitionMountedElsewhere: a partition directory bind-mounted outside
// its log directory is a partition of the log directory it is in, named
// alone or with that log directory, in either order: through the mount it
// was a partition of a folder without meta.properties, whose lock is no
// broker's and whose configuration is none, and retention deleted a
// compacted topic's segments by Kafka's defaults, past a broker holding the
// log directory (adversary's finding).
func TestPartitionMountedElsewhere(t *testing.T) {
	root := t.TempDir()
	tree(t, root, logDir...)
	d := filepath.Join(root, "D")
	x := filepath.Join(root, "X")
	if err := os.Mkdir(x, 0o755); err != nil {
		t.Fatal(err)
	}
	mnt := bindMount(t, filepath.Join(x, "orders-0"), filepath.Join(d, "orders-0"))
	o := all
	o.Writes = true
	for _, paths := range [][]string{{mnt}, {d, mnt}, {mnt, d}, {filepath.Join(mnt, "00000000000000000100.log")}} {
		s := resolveOK(t, paths, o)
		n := 0
		for _, p := range s.Partitions() {
			if p.Real == mnt || p.LogDir.Real != d {
				t.Errorf("%q: %s is in %s, want %s", paths, p.Real, p.LogDir.Real, d)
			}
			if p.Dir.Name == "orders-0" {
				n++
			}
		}
		// X is locked too, as a log directory holding a link to a
		// partition is: a broker on it would load the partition.
		if n != 1 || !slices.ContainsFunc(s.LogDirs, func(l *LogDir) bool { return l.Real == d }) {
			t.Errorf("%q: orders-0 %d times, log dirs %+v", paths, n, s.LogDirs)
		}
	}
}

func TestMountinfoUnescape(t *testing.T) {
	for in, want := range map[string]string{`/a\040b`: "/a b", `/t\011\134x`: "/t\t\\x", `/plain`: "/plain", `/end\04`: `/end\04`} {
		if got := unescape(in); got != want {
			t.Errorf("unescape(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestMountedWithinItsDirectory: a log directory seen through a writable
// bind mount of a directory above it (Fedora CoreOS: /var bound from a
// read-only /sysroot) keeps the user's path: through the read-only mount
// its lock could not be taken (adversary's finding).
func TestMountedWithinItsDirectory(t *testing.T) {
	root := t.TempDir()
	tree(t, root, "sys/deploy/var/kafka/meta.properties", "sys/deploy/var/kafka/orders-0/00000000000000000000.log")
	v := bindMount(t, filepath.Join(root, "var"), filepath.Join(root, "sys", "deploy", "var"))
	d := filepath.Join(v, "kafka")
	s := resolveOK(t, []string{d}, Options{Command: "test", Takes: LogDirs, Writes: true})
	if len(s.LogDirs) != 1 || s.LogDirs[0].Real != d || s.LogDirs[0].Path != d {
		t.Errorf("log dirs %+v, want %s", s.LogDirs, d)
	}
	for _, p := range s.Partitions() {
		if p.Real != filepath.Join(d, "orders-0") {
			t.Errorf("partition at %s", p.Real)
		}
	}
}

// TestLogDirMountedFromReadOnly: a log directory that is itself a bind
// mount (a Kubernetes hostPath, docker -v) of a file system whose own mount
// is read-only keeps the user's path, named whole or through a partition:
// moved to where the file system's root shows it, its lock could not be
// taken and reindex failed (adversary's finding).
func TestLogDirMountedFromReadOnly(t *testing.T) {
	root := t.TempDir()
	disk := filepath.Join(root, "disk")
	if err := os.Mkdir(disk, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", disk, "tmpfs", 0, ""); err != nil {
		t.Skipf("mount tmpfs: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(disk, unix.MNT_DETACH) })
	tree(t, disk, "kafka/meta.properties", "kafka/orders-0/00000000000000000000.log")
	d := bindMount(t, filepath.Join(root, "kafka"), filepath.Join(disk, "kafka"))
	if err := unix.Mount("", disk, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY, ""); err != nil {
		t.Skipf("remount read-only: %v", err)
	}
	o := all
	o.Writes = true
	for _, paths := range [][]string{{d}, {filepath.Join(d, "orders-0")}} {
		s := resolveOK(t, paths, o)
		if len(s.LogDirs) != 1 || s.LogDirs[0].Real != d {
			for _, l := range s.LogDirs {
				t.Errorf("%q: log dir %s, want %s", paths, l.Real, d)
			}
		}
		release, err := s.Lock(Write)
		if err != nil {
			t.Errorf("%q: %v", paths, err)
			continue
		}
		release()
	}
}

// TestMountedLogDirReadOnce: a log directory seen through a bind mount is
// listed for its root files once a run, not once for each of its
// partitions: with 5,000 partitions, verify spent 25 s resolving them.
func TestMountedLogDirReadOnce(t *testing.T) {
	root := t.TempDir()
	var files []string
	for i := range 50 {
		files = append(files, fmt.Sprintf("disk/kafka/t-%d/00000000000000000000.log", i))
	}
	tree(t, root, append(files, "disk/kafka/meta.properties")...)
	d := bindMount(t, filepath.Join(root, "kafka"), filepath.Join(root, "disk", "kafka"))
	reads := 0
	defer func(f func(string) (layout.PathKind, bool)) { kafkaFilesIn = f }(kafkaFilesIn)
	kafkaFilesIn = func(dir string) (layout.PathKind, bool) {
		reads++
		return layout.KafkaFilesIn(dir)
	}
	s := resolveOK(t, []string{d}, all)
	if n := len(s.Partitions()); n != 50 || reads > 2 {
		t.Errorf("%d partitions, the log directory read %d times", n, reads)
	}
}
