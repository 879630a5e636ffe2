package commands

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestUnreadSegmentSaid: a segment under a FIFO's name or a link is left
// out of what export, grep and find read; each says so, as for a link,
// so that their output is not taken for the whole partition.
func TestUnreadSegmentSaid(t *testing.T) {
	for _, kind := range []string{"fifo", "symlink"} {
		dir := usageSample(t)
		part := filepath.Join(dir, "orders-0")
		seg := filepath.Join(part, "00000000000000000712.log")
		if err := os.Rename(seg, seg+".moved"); err != nil {
			t.Fatal(err)
		}
		var err error
		if kind == "fifo" {
			err = syscall.Mkfifo(seg, 0o644)
		} else {
			err = os.Symlink(seg+".moved", seg)
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{
			{"export", "-o", filepath.Join(t.TempDir(), "out.jsonl"), part},
			{"grep", "--key", "key-000001", part},
			{"find", "--offset", "800", part},
		} {
			_, stdout, stderr := runArgs(args...)
			if !strings.Contains(stdout+stderr, seg+": ") || !strings.Contains(stdout+stderr, "skipped") {
				t.Errorf("%s: %q does not say %s was skipped\nstdout:\n%s\nstderr:\n%s", kind, args, seg, stdout, stderr)
			}
		}
	}
}
