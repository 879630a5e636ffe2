package clidoc

import (
	"runtime/debug"
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
		if got := VersionOf(tc.bi, tc.stamp[0], tc.stamp[1], tc.stamp[2]).String(); got != tc.want {
			t.Errorf("%s:\n%s\nwant\n%s", tc.name, got, tc.want)
		}
	}
}
