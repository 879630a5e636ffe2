package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The layers of docs/architecture.md, lowest first. A package imports its
// own layer and those below, never one above; a feature imports another
// feature only along the edges listed in featureEdges.
var layers = [][]string{
	{"internal/clidoc", "internal/crc32c", "internal/extsort", "internal/fielderr", "internal/freelist", "internal/hugemem", "internal/human",
		"internal/javaprops", "internal/jsonbytes", "internal/lockfile", "internal/meter", "internal/parallel",
		"internal/refuse", "internal/safefile", "internal/table"},
	{"logfmt", "logfmt/codec", "logfmt/checkpoint", "logfmt/layout", "logfmt/snapshot", "logfmt/kraft", "logfmt/protocol",
		"logfmt/protocol/groupmeta", "logfmt/protocol/remotemeta", "logfmt/protocol/sharestate", "logfmt/protocol/txnlog",
		"index", "internal/textdec"},
	{"logfmt/logseg", "internal/segswap", "internal/target", "clustermeta", "topicconfig"},
	{"dump", "verify", "find", "reindex", "migrate/checkpoints", "migrate/upgrade", "compact", "retention", "fetch",
		"export", "replay", "salvage", "replicas", "grep", "internal/gen"},
	{"commands"},
	{""}, // main
}

// featureEdges are the features built on others: a read_committed fetch on
// find's lookups, export, replay and grep on the fetch, grep's audit on the
// cleaner's rules, verify's index checks on reindex's.
var featureEdges = map[string][]string{
	"fetch": {"find"}, "export": {"fetch"}, "replay": {"fetch"}, "grep": {"fetch", "find", "compact"}, "verify": {"reindex"},
}

// Test helpers: imported by tests only (and by one another).
func testOnly(p string) bool {
	return strings.HasPrefix(p, "internal/testkit/") || p == "logfmt/protocol/prototest" || p == "scripts/floor"
}

// TestLayers holds the package graph to the architecture: go list's imports
// of every package's non-test files against the table above.
func TestLayers(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}|{{join .Imports " "}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const mod = "github.com/logtool/logtool"
	layer := func(p string) int {
		for i, l := range layers {
			if slices.Contains(l, p) {
				return i
			}
		}
		return -1
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, "|")
		pkg = strings.TrimPrefix(strings.TrimPrefix(pkg, mod), "/")
		if testOnly(pkg) {
			continue
		}
		from := layer(pkg)
		if from < 0 {
			t.Errorf("%s is in no layer: add it to layers_test.go and docs/architecture.md", pkg)
			continue
		}
		for _, imp := range strings.Fields(imports) {
			if imp != mod && !strings.HasPrefix(imp, mod+"/") {
				continue
			}
			imp = strings.TrimPrefix(strings.TrimPrefix(imp, mod), "/")
			to := layer(imp)
			switch {
			case testOnly(imp):
				t.Errorf("%s imports %s, a test helper", pkg, imp)
			case to > from:
				t.Errorf("%s (layer %d) imports %s (layer %d), a layer above it", pkg, from, imp, to)
			case to == 3 && from == 3 && !slices.Contains(featureEdges[pkg], imp):
				t.Errorf("feature %s imports feature %s: not an edge of featureEdges", pkg, imp)
			}
		}
	}
}
