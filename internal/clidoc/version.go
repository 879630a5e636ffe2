package clidoc

import (
	"fmt"
	"runtime/debug"
	"strings"
)

// Version is what `logtool --version` prints, as `go version -m` shows
// the same facts: the version, the module, the VCS revision and its time.
type Version struct {
	Version  string // make build's version, else the module's ("(devel)" from a checkout)
	Module   string // module path and version
	Revision string // commit hash, "" when unknown
	Time     string
	Modified bool // built from a tree with uncommitted changes
	Go       string
}

// VersionOf combines what Go recorded in the binary with what make build
// stamped into it; Go's record wins where both have a fact.
func VersionOf(bi *debug.BuildInfo, stampedVersion, stampedRevision, stampedTime string) Version {
	v := Version{Version: stampedVersion, Revision: stampedRevision, Time: stampedTime}
	v.Modified = strings.HasSuffix(stampedVersion, "-dirty")
	if bi != nil {
		v.Module = strings.TrimSpace(bi.Main.Path + " " + bi.Main.Version)
		v.Go = bi.GoVersion
		if v.Version == "" {
			v.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Revision = s.Value
			case "vcs.time":
				v.Time = s.Value
			case "vcs.modified":
				v.Modified = s.Value == "true"
			}
		}
	}
	if v.Version == "" {
		v.Version = "(devel)"
	}
	// A version that says nothing of where it comes from gets the commit.
	if (v.Version == "(devel)" || v.Version == "(unknown)") && v.Revision != "" {
		v.Version += " " + v.Revision[:min(12, len(v.Revision))]
		if v.Modified {
			v.Version += "-dirty"
		}
	}
	return v
}

func (v Version) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "logtool version %s\n", v.Version)
	if v.Module != "" {
		fmt.Fprintf(&b, "  module    %s\n", v.Module)
	}
	switch {
	case v.Revision != "":
		rev := v.Revision
		if v.Modified {
			rev += " (modified)"
		}
		fmt.Fprintf(&b, "  revision  %s\n", rev)
	default:
		b.WriteString("  revision  unknown: built without VCS information (make build stamps it)\n")
	}
	if v.Time != "" {
		fmt.Fprintf(&b, "  time      %s\n", v.Time)
	}
	if v.Go != "" {
		fmt.Fprintf(&b, "  go        %s\n", v.Go)
	}
	return b.String()
}
