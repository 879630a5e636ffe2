//go:build unix

package commands

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logtool/logtool/internal/lockfile"
	"github.com/logtool/logtool/internal/testkit/locktest"
)

// outputLogDir generates a log directory D with the partition orders-0.
func outputLogDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "D")
	if code, _, errOut := runLogtool(t, "gen", "--out", dir, "--topic", "orders", "--records", "50"); code != ExitOK {
		t.Fatalf("gen: exit %d: %s", code, errOut)
	}
	return dir
}

// TestOutputFileRefused: the file export -o and replay --resume write is
// never in a log or partition directory, nor a directory (exit 2, nothing
// written), and a broker holding the log directory makes it exit 4.
func TestOutputFileRefused(t *testing.T) {
	dir := outputLogDir(t)
	part := filepath.Join(dir, "orders-0")
	before := upgradeDigest(t, dir)
	files := []string{
		filepath.Join(part, "00000000000000000000.log"),
		filepath.Join(dir, "meta.properties"),
		filepath.Join(dir, "cleaner-offset-checkpoint"),
		filepath.Join(dir, "export.jsonl"),
		filepath.Join(dir, "new", "export.jsonl"),
		filepath.Join(part, "sub", "export.jsonl"),
	}
	run := func(file string) [][]string {
		return [][]string{
			{"export", "-o", file, part},
			{"replay", "--dry-run", "--resume", file, part},
		}
	}
	check := func(want int, why string, file string) {
		t.Helper()
		for _, args := range run(file) {
			code, _, errOut := runLogtool(t, args...)
			if code != want || !strings.Contains(errOut, why) {
				t.Errorf("%v: exit %d, stderr %q; want exit %d saying %q", args, code, errOut, want, why)
			}
		}
	}
	for _, f := range files {
		check(ExitUsage, "write it outside every log directory", f)
	}
	check(ExitUsage, "is a directory", part)
	check(ExitUsage, "named as a Kafka", filepath.Join(t.TempDir(), "meta.properties"))
	if upgradeDigest(t, dir) != before {
		t.Error("the log directory changed")
	}
	if left, _ := filepath.Glob(part + "*.tmp"); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
	locktest.Hold(t, dir)
	for _, f := range files {
		check(ExitRefused, "locked by a running broker", f)
	}
	if upgradeDigest(t, dir) != before {
		t.Error("the locked log directory changed")
	}
	// Outside every log directory the file is written.
	out := filepath.Join(t.TempDir(), "orders.jsonl")
	if code, _, errOut := runLogtool(t, "--quiet", "export", "-o", out, part); code != ExitOK {
		t.Fatalf("export -o %s: exit %d: %s", out, code, errOut)
	}
	if _, err := os.Stat(out); err != nil {
		t.Error(err)
	}
}

// TestOutputDirInsideSource: upgrade --output and salvage --out never put a
// directory a broker refuses to load into a log or partition directory of
// the paths; salvage may add a partition-named directory to the log
// directory, and locks the directory it writes into, as upgrade --output
// does, leaving the .lock behind unlocked.
func TestOutputDirInsideSource(t *testing.T) {
	dir := outputLogDir(t)
	part := filepath.Join(dir, "orders-0")
	before := upgradeDigest(t, dir)
	for _, args := range [][]string{
		{"upgrade", "--to-magic", "2", "--output", filepath.Join(dir, "converted"), dir},
		{"upgrade", "--to-magic", "2", "--output", filepath.Join(dir, "converted"), part},
		{"upgrade", "--to-magic", "2", "--output", dir, part},
		{"upgrade", "--to-magic", "2", "--output", part, dir},
		{"salvage", part, "--out", filepath.Join(part, "orders-0")},
		{"salvage", part, "--out", filepath.Join(dir, "rescued")},
	} {
		if code, _, errOut := runLogtool(t, args...); code != ExitUsage || !strings.Contains(errOut, "write it outside") {
			t.Errorf("%v: exit %d, stderr %q; want exit 2", args, code, errOut)
		}
	}
	if upgradeDigest(t, dir) != before {
		t.Error("the log directory changed")
	}
	if code, _, errOut := runLogtool(t, "salvage", part, "--out", filepath.Join(dir, "orders-7")); code != ExitOK {
		t.Errorf("salvage into the log directory as orders-7: exit %d: %s", code, errOut)
	}
	plain := t.TempDir()
	if err := os.Mkdir(filepath.Join(plain, "other-1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runLogtool(t, "salvage", part, "--out", filepath.Join(plain, "orders-0")); code != ExitOK {
		t.Fatalf("salvage: exit %d: %s", code, errOut)
	}
	if _, err := os.Lstat(filepath.Join(plain, lockfile.FileName)); err != nil {
		t.Errorf("salvage did not lock its output's parent: %v", err)
	}
	if h, err := lockfile.Held(plain); err != nil || h != nil {
		t.Errorf("salvage left its output's parent locked: %v, %v", h, err)
	}
}
