package commands

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionOf(t *testing.T) {
	vcs := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/logtool/logtool", Version: "(devel)"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "2b2b76354168cc7d12cfef029944f53384210cea"},
			{Key: "vcs.time", Value: "2026-12-01T16:37:33Z"}, {Key: "vcs.modified", Value: "true"}}}
	bare := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/logtool/logtool", Version: "(devel)"}}
	released := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/logtool/logtool", Version: "v1.2.3"}}
	for _, tc := range []struct {
		name  string
		bi    *debug.BuildInfo
		stamp [3]string
		want  string
	}{
		// go build in a clone: Go's own VCS stamp.
		{"go build", vcs, [3]string{}, "logtool version (devel) 2b2b76354168-dirty\n" +
			"  module    github.com/logtool/logtool (devel)\n" +
			"  revision  2b2b76354168cc7d12cfef029944f53384210cea (modified)\n" +
			"  time      2026-12-01T16:37:33Z\n  go        go1.26.8\n"},
		// make build in a worktree, where Go stamps nothing.
		{"make build", bare, [3]string{"v0.3.0-4-g2b2b763", "2b2b76354168cc7d12cfef029944f53384210cea", "2026-12-01T16:37:33Z"},
			"logtool version v0.3.0-4-g2b2b763\n" +
				"  module    github.com/logtool/logtool (devel)\n" +
				"  revision  2b2b76354168cc7d12cfef029944f53384210cea\n" +
				"  time      2026-12-01T16:37:33Z\n  go        go1.26.8\n"},
		// go install module@version.
		{"go install", released, [3]string{}, "logtool version v1.2.3\n" +
			"  module    github.com/logtool/logtool v1.2.3\n" +
			"  revision  unknown: built without VCS information (make build stamps it)\n  go        go1.26.8\n"},
	} {
		if got := versionOf(tc.bi, tc.stamp[0], tc.stamp[1], tc.stamp[2]).String(); got != tc.want {
			t.Errorf("%s:\n%s\nwant\n%s", tc.name, got, tc.want)
		}
	}
}

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
