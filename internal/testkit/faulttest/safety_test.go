//go:build unix

package faulttest

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/logfmt/layout"
)

// The tests of issue 15's hostile file system: a partition named twice,
// FIFOs, links, torn tails, leftovers of crashes and sparse tails.

// TestSamePartitionTwice: however a partition is named twice (again,
// D/./p/, a link, with its log directory), compact works on it once, and
// the result is that of a single run.
func TestSamePartitionTwice(t *testing.T) {
	f := format{"v2-zstd", 2, 4}
	want := fixture(t, matrixOptions(f))
	if r := run(t, "compact", "--topic", ".*", "--now", compactNow, "--max-lag", "1ms", want); r.code != 0 {
		t.Fatalf("reference run: %v", r)
	}
	for _, spell := range []func(dir, part string) []string{
		func(dir, part string) []string { return []string{part, part} },
		func(dir, part string) []string { return []string{part, dir + "/./" + filepath.Base(part) + "/"} },
		func(dir, part string) []string {
			link := filepath.Join(filepath.Dir(dir), "link")
			if err := os.Symlink(part, link); err != nil {
				t.Fatal(err)
			}
			return []string{part, link}
		},
		func(dir, part string) []string { return []string{dir, part} },
	} {
		dir := fixture(t, matrixOptions(f))
		args := spell(dir, onlyPartition(t, dir))
		r := run(t, append([]string{"--format", "json", "--workers", "4", "compact", "--topic", ".*", "--now", compactNow, "--max-lag", "1ms"}, args...)...)
		if r.code != 0 {
			t.Fatalf("%q: %v", args, r)
		}
		if n := strings.Count(r.stdout, `"type":"compaction"`); n != 1 {
			t.Errorf("%q: %d compaction objects, want 1 partition compacted once", args, n)
		}
		if got, ref := logical(t, dir), logical(t, want); !slices.Equal(got, ref) {
			t.Errorf("%q: records differ from a single run's: %s", args, firstDiff(got, ref))
		}
		if r := run(t, "verify", "--deep", dir); r.code != 0 {
			t.Errorf("%q: verify after: %v\n%s", args, r, r.stdout)
		}
	}
}

// runWithin runs logtool and fails the test if it takes longer than a
// minute; unblock is then called every second, so that a run blocked on a
// FIFO can end, and the test stops if that does not help either.
func runWithin(t *testing.T, unblock func(), args ...string) result {
	t.Helper()
	done := make(chan result, 1)
	go func() { done <- run(t, args...) }()
	select {
	case r := <-done:
		return r
	case <-time.After(time.Minute):
		t.Errorf("%s: still running after a minute", strings.Join(args, " "))
	}
	for range 60 {
		unblock()
		select {
		case r := <-done:
			return r
		case <-time.After(time.Second):
		}
	}
	t.Fatalf("%s: blocked for good", strings.Join(args, " "))
	return result{}
}

// TestFIFONamedLikeSegment: a FIFO, a socket or a device named like a file
// of a partition is never opened; Kafka does not load it, so commands skip
// it and verify reports it.
func TestFIFONamedLikeSegment(t *testing.T) {
	f := format{"v1-lz4", 1, 3}
	dir := fixture(t, matrixOptions(f))
	part := onlyPartition(t, dir)
	segs := segments(t, part)
	last := segs[len(segs)-1].Base
	fifo := filepath.Join(part, layout.SegmentName(last+1000, layout.LogExt))
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{layout.SegmentName(segs[0].Base, layout.TimeIndexExt), layout.SegmentName(segs[1].Base, layout.IndexExt), "leader-epoch-checkpoint"} {
		p := filepath.Join(part, name)
		os.Remove(p)
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rootFIFO := filepath.Join(dir, "recovery-point-offset-checkpoint")
	os.Remove(rootFIFO)
	if err := syscall.Mkfifo(rootFIFO, 0o644); err != nil {
		t.Fatal(err)
	}
	// A reader blocked in open(2) on a FIFO is released by a writer.
	unblock := func() {
		for _, p := range []string{fifo, rootFIFO, filepath.Join(part, "leader-epoch-checkpoint"), segs[0].TimeIndex, segs[1].Index} {
			if w, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				w.Close()
			}
		}
	}
	r := runWithin(t, unblock, "verify", "--deep", dir)
	if r.code != 3 || !strings.Contains(r.stdout, "problem: "+fifo+": not a regular file (a FIFO)") {
		t.Errorf("verify: %v\n%s", r, r.stdout)
	}
	for _, args := range [][]string{
		{"dump", "--deep-iteration", part},
		{"dump", dir},
		{"find", "--offset", "10", part},
		{"export", "-o", filepath.Join(t.TempDir(), "records.jsonl"), part},
		{"grep", "--key-regex", ".", "--count", dir},
		{"salvage", part, "--out", filepath.Join(t.TempDir(), filepath.Base(part))},
		{"reindex", part},
		{"reindex", "--check", part},
		{"upgrade", "--to-magic", "2", part},
		{"compact", "--topic", ".*", "--now", compactNow, "--max-lag", "1ms", part},
		{"retention", "--topic", ".*", "--now", "2030-01-01T00:00:00Z", "--retention-ms", "1h", part},
	} {
		r := runWithin(t, unblock, args...)
		if r.code == exitPanic {
			continue
		}
		if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
			t.Fatalf("%s removed or replaced the FIFO: %v", args[0], err)
		}
	}
	if r := runWithin(t, unblock, "dump", fifo); r.code != 2 {
		t.Errorf("dump of the FIFO itself: %v, want exit 2", r)
	}
}

// TestFIFONamedLock: a FIFO named .lock hangs no reader and no dry run. A
// broker opens .lock read-write and can lock a FIFO, so it is tested for a
// lock like a regular file (none is held here) and the commands run.
func TestFIFONamedLock(t *testing.T) {
	dir := fixture(t, matrixOptions(format{"v2-zstd", 2, 4}))
	part := onlyPartition(t, dir)
	lock := filepath.Join(dir, ".lock")
	os.Remove(lock)
	if err := syscall.Mkfifo(lock, 0o644); err != nil {
		t.Fatal(err)
	}
	unblock := func() {
		if w, err := os.OpenFile(lock, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	}
	// verify says a FIFO is there, as it does of any file that is not regular.
	if r := runWithin(t, unblock, "verify", dir); r.code != 3 || !strings.Contains(r.stdout, "problem: "+lock+": not a regular file (a FIFO)") {
		t.Errorf("verify: %v\n%s", r, r.stdout)
	}
	// dump reports it too, as a problem (exit 3), and goes on.
	if r := runWithin(t, unblock, "dump", dir); r.code != 3 || !strings.Contains(r.stderr, lock+": not a regular file (a FIFO)") {
		t.Errorf("dump: %v", r)
	}
	out := t.TempDir()
	for _, args := range [][]string{
		{"export", "-o", filepath.Join(out, "records.jsonl"), part},
		{"grep", "--key-regex", ".", "--count", dir},
		{"find", "--offset", "1", part},
		{"reindex", "--check", part},
		{"compact", "--dry-run", "--topic", ".*", "--now", compactNow, part},
		{"upgrade", "--dry-run", "--to-magic", "2", part},
		{"retention", "--dry-run", "--topic", ".*", "--now", compactNow, part},
		{"salvage", part, "--out", filepath.Join(out, "rescued", filepath.Base(part))},
	} {
		if r := runWithin(t, unblock, args...); r.code != 0 {
			t.Errorf("%s: %v", strings.Join(args, " "), r)
		}
	}
	if fi, err := os.Lstat(lock); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf(".lock replaced: %v", err)
	}
}

// outsideFile is a file outside the log directory that a planted link
// points at; it must never change.
func outsideFile(t *testing.T) (string, []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "precious")
	content := []byte("not logtool's to write\n")
	writeFile(t, path, content)
	return path, content
}

func checkOutside(t *testing.T, what, path string, want []byte) {
	t.Helper()
	if b, err := os.ReadFile(path); err != nil || string(b) != string(want) {
		t.Errorf("%s: the file outside the log directory changed: %q, %v", what, b, err)
	}
}

// TestPlantedTempLinks: a link planted under the name of a temporary file a
// writer uses is never written through.
func TestPlantedTempLinks(t *testing.T) {
	f := format{"v2-none", 2, 0}
	retention := []string{"retention", "--topic", ".*", "--now", "2030-01-01T00:00:00Z", "--retention-bytes", "6000", "--retention-ms", "-1"}
	compact := []string{"compact", "--topic", ".*", "--now", compactNow, "--max-lag", "1ms"}
	for _, c := range []struct {
		name string // the planted link, relative to the log directory; %p is the partition
		args []string
		code int
	}{
		{"log-start-offset-checkpoint.logtool.tmp", retention, 1},
		// The broker's temporary name: not logtool's to write or remove.
		{"log-start-offset-checkpoint.tmp", retention, 0},
		{"%p/00000000000000000000.index.logtool.tmp", []string{"reindex"}, 1},
		{"%p/00000000000000000000.index.tmp", []string{"reindex"}, 0},
		{"%p/cleaner-checkpoint.logtool.tmp", compact, 1},
		{"%p/cleaner-checkpoint.tmp", compact, 0},
	} {
		dir := fixture(t, matrixOptions(f))
		part := onlyPartition(t, dir)
		if c.args[0] == "reindex" {
			writeFile(t, segments(t, part)[0].Index, nil) // work to do
		}
		victim, content := outsideFile(t)
		link := filepath.Join(dir, strings.ReplaceAll(c.name, "%p", filepath.Base(part)))
		if err := os.Symlink(victim, link); err != nil {
			t.Fatal(err)
		}
		r := run(t, append(c.args, part)...)
		checkOutside(t, c.args[0], victim, content)
		if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("%s removed or replaced the planted %s: %v", c.args[0], c.name, err)
		}
		switch {
		case r.code != c.code:
			t.Errorf("%s with %s planted: %v; want exit %d", c.args[0], c.name, r, c.code)
		case c.code == 1 && (!strings.Contains(r.stderr, filepath.Base(link)) || !strings.Contains(r.stderr, "symbolic link")):
			t.Errorf("%s with %s planted: %v; want the link named", c.args[0], c.name, r)
		}
	}
}

// TestSymlinkedSegment: a writer asked to rewrite, truncate or delete a
// segment that is a link refuses (exit 1) and changes nothing, inside the
// log directory or out.
func TestSymlinkedSegment(t *testing.T) {
	for _, c := range []struct {
		f    format
		args []string
		seg  int // which segment is a link
	}{
		{format{"v2-none", 2, 0}, []string{"reindex", "--truncate-corrupt-tail"}, -1},
		{format{"v2-none", 2, 0}, []string{"retention", "--topic", ".*", "--now", "2030-01-01T00:00:00Z", "--retention-ms", "1h"}, 0},
		{format{"v2-none", 2, 0}, []string{"compact", "--topic", ".*", "--now", compactNow, "--max-lag", "1ms"}, 0},
		{format{"v0-gzip", 0, 1}, []string{"upgrade", "--to-magic", "2"}, 0},
	} {
		dir := fixture(t, matrixOptions(c.f))
		part := onlyPartition(t, dir)
		segs := segments(t, part)
		seg := segs[(c.seg+len(segs))%len(segs)]
		// The segment moves out of the log directory; a link takes its
		// place. For reindex its tail is torn, so that there is a cut to
		// make.
		outside := filepath.Join(t.TempDir(), filepath.Base(seg.Log))
		b := readFile(t, seg.Log)
		if c.args[0] == "reindex" {
			b = b[:len(b)-7]
		}
		writeFile(t, outside, b)
		os.Remove(seg.Log)
		if err := os.Symlink(outside, seg.Log); err != nil {
			t.Fatal(err)
		}
		before := digest(t, dir)
		r := run(t, append(c.args, part)...)
		checkOutside(t, c.args[0], outside, b)
		if d := diff(before, digest(t, dir), nil); len(d) > 0 {
			t.Errorf("%s: changed %v", c.args[0], d)
		}
		if fi, err := os.Lstat(seg.Log); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("%s: the link was replaced or removed: %v", c.args[0], err)
		}
		if r.code != 1 || !strings.Contains(r.stderr, filepath.Base(seg.Log)) || !strings.Contains(r.stderr, "symbolic link") {
			t.Errorf("%s: %v; want exit 1 naming the linked segment", c.args[0], r)
		}
	}
}

// TestRetentionTornTail: a last segment cut inside its last batch stops
// retention's partition (exit 1, nothing deleted) instead of rolling a
// segment at an offset the broker's recovery would not give.
func TestRetentionTornTail(t *testing.T) {
	for _, cut := range []int{1, 7, 40} {
		dir := fixture(t, matrixOptions(format{"v2-none", 2, 0}))
		part := onlyPartition(t, dir)
		segs := segments(t, part)
		last := segs[len(segs)-1].Log
		b := readFile(t, last)
		replaceFile(t, last, b[:len(b)-cut])
		before := digest(t, dir)
		r := run(t, "retention", "--topic", ".*", "--now", "2030-01-01T00:00:00Z", "--retention-ms", "1h", part)
		if r.code != 1 || !strings.Contains(r.stderr, filepath.Base(last)) || !strings.Contains(r.stderr, "torn") {
			t.Errorf("cut %d: %v; want exit 1 naming the torn segment", cut, r)
		}
		if d := diff(before, digest(t, dir), nil); len(d) > 0 {
			t.Errorf("cut %d: changed %v", cut, d)
		}
	}
}

// TestOwnLeftoversRemoved: the temporary files a killed writer leaves are
// removed by the next run of any writer, and every other "<name>.tmp" (the
// broker's, a user's, an earlier logtool's) is left alone.
func TestOwnLeftoversRemoved(t *testing.T) {
	for _, args := range [][]string{
		{"compact", "--topic", ".*", "--now", compactNow, "--max-lag", "1ms"},
		{"retention", "--topic", ".*", "--now", "2024-01-01T00:00:00Z", "--retention-ms", "-1"},
		{"reindex"},
		{"upgrade", "--to-magic", "2"},
	} {
		f := format{"v1-none", 1, 0}
		dir := fixture(t, matrixOptions(f))
		part := onlyPartition(t, dir)
		base := segments(t, part)[0].Base
		ours := []string{
			filepath.Join(part, "cleaner-checkpoint.logtool.tmp"),
			filepath.Join(dir, "recovery-point-offset-checkpoint.logtool.tmp"),
		}
		// Kafka's temporary names of files these runs do not rewrite (a
		// file logtool rewrites goes through the same name, as it does
		// when Kafka rewrites it).
		// Names an earlier logtool wrote through, which a user's files
		// may bear as well.
		brokers := []string{
			filepath.Join(part, layout.SegmentName(base, layout.LogExt+layout.CleanedSuffix+safefile.TempSuffix)),
			filepath.Join(part, layout.SegmentName(base, layout.IndexExt+safefile.TempSuffix)),
			filepath.Join(part, "cleaner-checkpoint.tmp"),
			filepath.Join(dir, "replication-offset-checkpoint.tmp"),
			filepath.Join(part, "partition.metadata.tmp"),
			filepath.Join(part, "leader-epoch-checkpoint.tmp"),
		}
		for _, p := range append(slices.Clone(ours), brokers...) {
			writeFile(t, p, []byte("left by a crash"))
		}
		if r := run(t, append(args, part)...); r.code != 0 {
			t.Fatalf("%s: %v", args[0], r)
		}
		for _, p := range ours {
			if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%s left %s", args[0], filepath.Base(p))
			}
		}
		for _, p := range brokers {
			if _, err := os.Stat(p); err != nil {
				t.Errorf("%s removed %s, which is not its own", args[0], filepath.Base(p))
			}
		}
	}
}

// TestUpgradeOutputStage: a killed upgrade --output leaves nothing a broker
// refuses to start on (every directory of the output parses as Kafka's
// LocalLog.parseTopicPartitionName parses it), and the next run removes
// its staging directory.
func TestUpgradeOutputStage(t *testing.T) {
	dir := fixture(t, matrixOptions(format{"v0-gzip", 0, 1}))
	out := filepath.Join(t.TempDir(), "out")
	// Killed when the staging directory is complete, just before it is
	// renamed into place: that step and every later one fail.
	final := filepath.Join(out, filepath.Base(onlyPartition(t, dir)))
	var dead atomic.Bool
	restore := safefile.SetFaultHook(func(step safefile.Step, path string) error {
		if step == safefile.StepRename && path == final {
			dead.Store(true)
		}
		if dead.Load() {
			return safefile.ErrInjected
		}
		return nil
	})
	r := run(t, "upgrade", "--to-magic", "2", "--output", out, dir)
	restore()
	if r.code == 0 {
		t.Fatal("the injected fault did not stop upgrade")
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	stages := 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		stages++
		pd, err := layout.ParsePartitionDir(e.Name())
		if err != nil {
			t.Errorf("%s: a broker would refuse to start on this log directory: %v", e.Name(), err)
		} else if pd.Kind != layout.Delete {
			t.Errorf("%s: a staging directory a broker would load as a partition", e.Name())
		}
	}
	if stages == 0 {
		t.Fatal("no staging directory was left: the fault came too early or too late")
	}
	if r := run(t, "upgrade", "--to-magic", "2", "--output", out, dir); r.code != 0 {
		t.Fatalf("re-run: %v", r)
	}
	entries, _ = os.ReadDir(out)
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	if !slices.Equal(names, []string{filepath.Base(onlyPartition(t, dir))}) {
		t.Errorf("after the re-run the output holds %q", names)
	}
}

// TestSparseZeroTail: reindex --truncate-corrupt-tail cuts a zero tail,
// however long and sparse, without writing a backup of zeros; a tail that
// is not all zeros still gets its backup.
func TestSparseZeroTail(t *testing.T) {
	dir := fixture(t, matrixOptions(format{"v2-none", 2, 0}))
	part := onlyPartition(t, dir)
	segs := segments(t, part)
	log := segs[len(segs)-1].Log
	valid := int64(len(readFile(t, log)))
	const tail = 256 << 20
	if err := os.Truncate(log, valid+tail); err != nil {
		t.Fatal(err)
	}
	r := run(t, "--format", "json", "reindex", "--truncate-corrupt-tail", part)
	if r.code != 0 {
		t.Fatalf("%v", r)
	}
	if fi, err := os.Stat(log); err != nil || fi.Size() != valid {
		t.Fatalf("the .log was not cut to %d bytes: %v %v", valid, fi, err)
	}
	if backups, _ := filepath.Glob(log + ".truncated-*"); len(backups) > 0 {
		t.Errorf("a backup of zeros was written: %q", backups)
	}
	if !strings.Contains(r.stdout, fmt.Sprintf(`"zerosCut":%d`, tail)) || !strings.Contains(r.stdout, "all zeros") {
		t.Errorf("the length of the zero tail is not reported:\n%s", clip(r.stdout, 3000))
	}

	// A tail with a byte that is not zero is kept.
	b := append(readFile(t, log), make([]byte, 4096)...)
	b[len(b)-100] = 1
	replaceFile(t, log, b)
	if r := run(t, "reindex", "--truncate-corrupt-tail", part); r.code != 0 {
		t.Fatalf("%v", r)
	}
	backup := fmt.Sprintf("%s.truncated-%d", log, valid)
	if got := readFile(t, backup); len(got) != 4096 || got[4096-100] != 1 {
		t.Errorf("backup of a damaged tail: %d bytes", len(got))
	}
}
