package commands

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRootTempsOfOthersKept: at the root of a log directory a writer
// removes only its own leftovers; a segment's or a cleaner-checkpoint's
// "<name>.tmp" there was never logtool's (a user's copy, say) and keeps
// every byte.
func TestRootTempsOfOthersKept(t *testing.T) {
	for _, args := range [][]string{
		{"reindex"},
		{"retention", "--kafka-defaults", "--now", "2024-03-01T00:00:00Z", "--retention-ms", "-1", "--topic", "orders"},
		{"migrate-checkpoints"},
	} {
		dir := usageSample(t)
		keep := []string{"00000000000000000000.log.tmp", "00000000000000000000.index.tmp", "cleaner-checkpoint.tmp", "cleaner-offset-checkpoint.tmp"}
		for _, n := range keep {
			if err := os.WriteFile(filepath.Join(dir, n), []byte("a user's "+n), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		own := filepath.Join(dir, "log-start-offset-checkpoint.logtool.tmp")
		if err := os.WriteFile(own, []byte("0\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := runArgs(append(args, dir)...)
		if code != ExitOK {
			t.Fatalf("%q: exit %d: %s", args, code, stderr)
		}
		for _, n := range keep {
			if b, err := os.ReadFile(filepath.Join(dir, n)); err != nil || string(b) != "a user's "+n {
				t.Errorf("%q: %s: %q, %v", args, n, b, err)
			}
		}
		if _, err := os.Lstat(own); !os.IsNotExist(err) {
			t.Errorf("%q: logtool's own leftover %s not removed: %v", args, own, err)
		}
	}
}
