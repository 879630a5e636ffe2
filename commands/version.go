package commands

import (
	"fmt"
	"runtime/debug"

	"github.com/urfave/cli/v2"

	"github.com/logtool/logtool/internal/clidoc"
)

// Set by `make build` (-ldflags -X) from git, for builds that Go cannot
// stamp itself: from a git worktree, or with -buildvcs=false.
var (
	buildVersion  string // git describe --tags --always --dirty
	buildRevision string // the commit hash
	buildTime     string // its commit time, RFC 3339 in UTC
)

func buildInfo() clidoc.Version {
	bi, _ := debug.ReadBuildInfo()
	return clidoc.VersionOf(bi, buildVersion, buildRevision, buildTime)
}

func init() {
	cli.VersionPrinter = func(c *cli.Context) {
		fmt.Fprint(c.App.Writer, buildInfo())
	}
}
