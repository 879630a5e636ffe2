package commands

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnloadableNamed (issue 36, D): a partition holding an entry on which
// a broker's load fails, a .log whose name is no 64-bit offset or a
// directory named like an index, is named by every command that walks it,
// with what the broker does. Readers report it and exit 3, as for damage;
// writers, dry runs included, leave the partition unchanged and exit 1, as
// for a partition they could not work on.
func TestUnloadableNamed(t *testing.T) {
	entries := []struct {
		name string
		make func(t *testing.T, path string)
	}{
		{"99999999999999999999.log", func(t *testing.T, path string) {
			if err := os.WriteFile(path, nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"00000000000000000500.index", func(t *testing.T, path string) {
			if err := os.Mkdir(path, 0o755); err != nil {
				t.Fatal(err)
			}
		}},
	}
	const now = "2024-03-01T00:00:00Z"
	commands := []struct {
		name  string
		code  int
		args  func(logDir, part, scratch string) []string
		reads bool // a reader: the partition is read, and left as it is anyway
	}{
		{"verify", ExitProblems, func(l, p, _ string) []string { return []string{"verify", p} }, true},
		{"verify log dir", ExitProblems, func(l, p, _ string) []string { return []string{"verify", l} }, true},
		{"dump", ExitProblems, func(l, p, _ string) []string { return []string{"dump", p} }, true},
		{"find", ExitProblems, func(l, p, _ string) []string { return []string{"find", "--offset", "5", p} }, true},
		{"grep", ExitProblems, func(l, p, _ string) []string { return []string{"grep", "--key-regex", ".", "--count", p} }, true},
		{"export", ExitProblems, func(l, p, s string) []string { return []string{"export", "-o", filepath.Join(s, "out.jsonl"), p} }, true},
		{"reindex --check", ExitProblems, func(l, p, _ string) []string { return []string{"reindex", "--check", p} }, true},
		{"salvage", ExitProblems, func(l, p, s string) []string { return []string{"salvage", p, "--out", filepath.Join(s, "orders-0")} }, true},
		{"replicas", ExitProblems, func(l, p, s string) []string {
			// A second broker's log directory: a copy, without the entry, of
			// another node and disk.
			other := filepath.Join(s, "broker2")
			meta := filepath.Join(other, "meta.properties")
			b, err := os.ReadFile(filepath.Join(reindexSample, "meta.properties"))
			if err == nil {
				err = os.CopyFS(other, os.DirFS(reindexSample))
			}
			if err == nil {
				os.Remove(meta)
				err = os.WriteFile(meta, []byte(strings.NewReplacer("node.id=1", "node.id=2", "directory.id=lxy", "directory.id=mxy").Replace(string(b))), 0o644)
			}
			if err != nil {
				panic(err)
			}
			return []string{"replicas", l, other}
		}, true},
		{"digest", ExitProblems, func(l, p, s string) []string { return []string{"digest", "--out", filepath.Join(s, "d"), l} }, true},
		{"reindex", ExitFailure, func(l, p, _ string) []string { return []string{"reindex", p} }, false},
		{"reindex --dry-run", ExitFailure, func(l, p, _ string) []string { return []string{"reindex", "--dry-run", p} }, false},
		{"upgrade", ExitFailure, func(l, p, _ string) []string { return []string{"upgrade", "--to-magic", "2", p} }, false},
		{"compact", ExitFailure, func(l, p, _ string) []string {
			return []string{"compact", "--now", now, "--max-lag", "1ms", "--min-cleanable-ratio", "0", p}
		}, false},
		{"compact --dry-run", ExitFailure, func(l, p, _ string) []string { return []string{"compact", "--dry-run", "--now", now, p} }, false},
		{"retention", ExitFailure, func(l, p, _ string) []string { return []string{"retention", "--now", now, "--retention-ms", "1ms", p} }, false},
		{"retention --dry-run", ExitFailure, func(l, p, _ string) []string {
			return []string{"retention", "--dry-run", "--now", now, "--retention-ms", "1ms", p}
		}, false},
		{"migrate-checkpoints", ExitFailure, func(l, p, _ string) []string { return []string{"migrate-checkpoints", "--clean-time", "unknown", l} }, false},
	}
	for _, e := range entries {
		for _, c := range commands {
			t.Run(e.name+"/"+c.name, func(t *testing.T) {
				logDir := reindexCopy(t)
				part := filepath.Join(logDir, "orders-0")
				e.make(t, filepath.Join(part, e.name))
				before := treeFiles(t, part)
				code, out, errOut := runArgs(c.args(logDir, part, t.TempDir())...)
				if code != c.code {
					t.Errorf("exit %d, want %d\n%s%s", code, c.code, clip(out), clip(errOut))
				}
				if !strings.Contains(out+errOut, filepath.Join(part, e.name)) || !strings.Contains(out+errOut, "broker") {
					t.Errorf("%s and what a broker does are not named\n%s%s", e.name, clip(out), clip(errOut))
				}
				if after := treeFiles(t, part); !c.reads && !maps.Equal(before, after) {
					t.Errorf("the partition changed")
				}
			})
		}
	}
}

// treeFiles maps every entry under dir to its contents ("dir" for a
// directory).
func treeFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			out[path] = "dir"
			return err
		}
		b, err := os.ReadFile(path)
		out[path] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDuplicatePartitionRefused: a partition that two log directories of one
// broker both hold (a move between its disks that a failure interrupted)
// is one a broker does not start with: readers say so and exit 3, writers
// leave both copies as they are and exit 1. The same partition in another
// broker's log directory is a replica, and nothing is said.
func TestDuplicatePartitionRefused(t *testing.T) {
	const now = "2024-03-01T00:00:00Z"
	second := func(t *testing.T, node string) (a, b string) {
		return reindexCopy(t), otherDisk(t, node, "orders-0")
	}
	for _, c := range []struct {
		name string
		code int
		args []string
	}{
		{"verify", ExitProblems, []string{"verify"}},
		{"dump", ExitProblems, []string{"dump"}},
		{"retention", ExitFailure, []string{"retention", "--now", now, "--retention-ms", "1ms", "--kafka-defaults"}},
		{"compact", ExitFailure, []string{"compact", "--now", now, "--max-lag", "1ms", "--min-cleanable-ratio", "0", "--kafka-defaults"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, b := second(t, "1")
			before := [2]map[string]string{treeFiles(t, filepath.Join(a, "orders-0")), treeFiles(t, filepath.Join(b, "orders-0"))}
			code, out, errOut := runArgs(append(c.args, a, b)...)
			if code != c.code {
				t.Errorf("exit %d, want %d\n%s%s", code, c.code, clip(out), clip(errOut))
			}
			for _, d := range []string{a, b} {
				if !strings.Contains(errOut, filepath.Join(d, "orders-0")+": ") || !strings.Contains(errOut, "does not start") {
					t.Errorf("%s is not named as a copy a broker does not start with\n%s", filepath.Join(d, "orders-0"), clip(errOut))
				}
			}
			if c.code == ExitFailure {
				for i, d := range []string{a, b} {
					if !maps.Equal(before[i], treeFiles(t, filepath.Join(d, "orders-0"))) {
						t.Errorf("%s changed", filepath.Join(d, "orders-0"))
					}
				}
			}
		})
	}
	t.Run("another broker", func(t *testing.T) {
		a, b := second(t, "2")
		if code, out, errOut := runArgs("verify", a, b); code != ExitOK || strings.Contains(errOut, "does not start") {
			t.Errorf("exit %d\n%s%s", code, clip(out), clip(errOut))
		}
	})
}
