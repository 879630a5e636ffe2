//go:build unix

package campaign

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/logtool/logtool/internal/lockfile/locktest"
)

func TestBrokerLock(t *testing.T) {
	o := matrixOptions(format{"v0-gzip", 0, 1})
	o.Topics, o.Partitions = []string{"events"}, 2
	dir := fixture(t, o)
	part := filepath.Join(dir, "events-1")
	// Work for every writer: stale indexes, a root cleaner checkpoint to
	// migrate, and old magic to upgrade; compact and retention have dirty
	// and expired segments.
	writeFile(t, segments(t, part)[0].Index, nil)
	writeFile(t, filepath.Join(dir, "cleaner-offset-checkpoint"), []byte("0\n1\nevents 1 5\n"))
	locktest.Hold(t, dir)
	before := digest(t, dir)

	writers := [][]string{
		{"reindex"},
		{"upgrade", "--to-magic", "2"},
		{"compact", "--now", compactNow, "--max-lag", "1h"},
		{"retention", "--now", "2030-01-01T00:00:00Z", "--retention-ms", "1h"},
	}
	for _, path := range []string{dir, part} {
		for _, w := range writers {
			r := run(t, append(w, path)...)
			if r.code != 4 || !strings.Contains(r.stderr, "locked") {
				t.Errorf("%s %s: %v; want exit 4", w[0], path, r)
			}
		}
	}
	// migrate-checkpoints takes log directories only.
	if r := run(t, "migrate-checkpoints", dir); r.code != 4 || !strings.Contains(r.stderr, "locked") {
		t.Errorf("migrate-checkpoints: %v; want exit 4", r)
	}
	if d := diff(before, digest(t, dir), nil); len(d) > 0 {
		t.Errorf("writers changed %v under a broker's lock", d)
	}

	// events-0 is untouched: reading it must succeed.
	clean := filepath.Join(dir, "events-0")
	for _, args := range [][]string{
		{"dump", dir},
		{"dump", "--deep-iteration", clean},
		{"verify", "--deep", clean},
		{"find", "--offset", "10", clean},
	} {
		r := run(t, args...)
		if r.code != 0 || !strings.Contains(r.stderr, "warning") || !strings.Contains(r.stderr, "locked") {
			t.Errorf("%s: %v; want a warning and exit 0", strings.Join(args, " "), r)
		}
	}
	if d := diff(before, digest(t, dir), nil); len(d) > 0 {
		t.Errorf("read-only commands changed %v", d)
	}
}
