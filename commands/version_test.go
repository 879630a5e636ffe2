package commands

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestMakeBuildVersion: the binary make build writes knows its commit, even
// from a git worktree, where Go does not stamp it.
func TestMakeBuildVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	for _, tool := range []string{"make", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	rev, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not in a git checkout: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "logtool")
	if out, err := exec.Command("make", "-s", "-C", "..", "build", "BIN="+bin).CombinedOutput(); err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`^logtool version \S+\n(.*\n)?  revision  ` + strings.TrimSpace(string(rev)) + `( \(modified\))?\n  time      \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\n`)
	if !want.Match(out) || strings.HasPrefix(string(out), "logtool version (devel)\n") {
		t.Errorf("--version of make build:\n%s", out)
	}
}
