package faulttest

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logtool/logtool/internal/testkit/testutil"
)

// fileDamage damages one file other than a .log; it returns the file, or ""
// when the format has no such file.
type fileDamage struct {
	name  string
	index bool // an index file, which reindex rebuilds
	apply func(t testing.TB, dir, part string) string
}

func flipIn(t testing.TB, path string, i int, x byte) string {
	b, err := os.ReadFile(path)
	if err != nil || len(b) <= i {
		return ""
	}
	b[i] ^= x
	writeFile(t, path, b)
	return path
}

// replaceLast replaces the last occurrence of old in the file.
func replaceLast(t testing.TB, path, old, new string) string {
	b := readFile(t, path)
	i := bytes.LastIndex(b, []byte(old))
	if i < 0 {
		t.Fatalf("%s: no %q in %q", path, old, b)
	}
	writeFile(t, path, append(append(b[:i:i], new...), b[i+len(old):]...))
	return path
}

var fileDamages = []fileDamage{
	{"index-position", true, func(t testing.TB, _, part string) string {
		return flipIn(t, segments(t, part)[0].Index, 7, 0x10)
	}},
	{"index-offset", true, func(t testing.TB, _, part string) string {
		return flipIn(t, segments(t, part)[0].Index, 3, 0x01)
	}},
	{"timeindex-timestamp", true, func(t testing.TB, _, part string) string {
		return flipIn(t, segments(t, part)[0].TimeIndex, 7, 0x01)
	}},
	{"timeindex-offset", true, func(t testing.TB, _, part string) string {
		return flipIn(t, segments(t, part)[0].TimeIndex, 11, 0x01)
	}},
	{"txnindex-entry", true, func(t testing.TB, _, part string) string {
		for _, s := range segments(t, part) {
			if s.TxnIndex != "" {
				return flipIn(t, s.TxnIndex, 17, 0x01) // first offset's low byte
			}
		}
		return ""
	}},
	{"recovery-point-offset", false, func(t testing.TB, dir, _ string) string {
		return replaceLast(t, filepath.Join(dir, "recovery-point-offset-checkpoint"), "\n", "x\n")
	}},
	{"replication-count", false, func(t testing.TB, dir, _ string) string {
		return replaceLast(t, filepath.Join(dir, "replication-offset-checkpoint"), "0\n1\n", "0\n2\n")
	}},
	{"log-start-version", false, func(t testing.TB, dir, _ string) string {
		path := filepath.Join(dir, "log-start-offset-checkpoint")
		b := readFile(t, path)
		b[0] = '7'
		writeFile(t, path, b)
		return path
	}},
	{"cleaner-partition", false, func(t testing.TB, dir, part string) string {
		path := filepath.Join(dir, "cleaner-offset-checkpoint")
		writeFile(t, path, []byte("0\n1\n"+filepath.Base(part)[:len(filepath.Base(part))-2]+" 0x 5\n"))
		return path
	}},
	{"leader-epoch-checkpoint", false, func(t testing.TB, _, part string) string {
		return replaceLast(t, filepath.Join(part, "leader-epoch-checkpoint"), "0 0\n", "0 -x\n")
	}},
}

// TestFileDamages damages index files and checkpoints: verify finds each,
// dump reports without failing on the others, reindex rebuilds a damaged
// index into one verify accepts, and a writing command that fails leaves
// everything as it was.
func TestFileDamages(t *testing.T) {
	formats := allFormats()
	for _, f := range []format{formats[0], formats[5], formats[len(formats)-2]} {
		for _, d := range fileDamages {
			t.Run(f.name+"/"+d.name, func(t *testing.T) {
				dir := fixture(t, matrixOptions(f))
				part := onlyPartition(t, dir)
				path := d.apply(t, dir, part)
				if path == "" {
					t.Skipf("%s has no such file", f.name)
				}
				name := filepath.Base(path)
				before := digest(t, dir)
				if r := run(t, "verify", "--deep", "--strict", dir); r.code != 3 || !strings.Contains(r.stdout, name) {
					t.Errorf("verify --deep --strict: %v; want exit 3 and a problem in %s\n%s", r, name, clip(r.stdout, 2000))
				}
				// Exit 0 too: an entry a live broker could have written
				// is only a note, and a .txnindex is not checked against
				// the log (verify and reindex --check do).
				if r := run(t, "dump", path); r.code == exitPanic || r.code == 2 || r.code > 3 {
					t.Errorf("dump %s: %v", name, r)
				}
				if d.index {
					if r := run(t, "reindex", dir); r.code != 0 {
						t.Errorf("reindex: %v", r)
					}
					if r := run(t, "verify", "--deep", "--strict", dir); r.code != 0 {
						t.Errorf("verify after reindex: %v\n%s", r, r.stdout)
					}
					return
				}
				pristine := filepath.Join(t.TempDir(), "pristine")
				testutil.CopyTree(t, dir, pristine)
				for _, args := range [][]string{
					{"compact", "--topic", ".*", "--now", compactNow, dir},
					{"retention", "--topic", ".*", "--now", compactNow, "--retention-ms", "-1", dir},
					{"migrate-checkpoints", dir},
				} {
					r := run(t, args...)
					if r.code == exitPanic {
						continue
					}
					if r.code != 0 && r.code != 1 {
						t.Errorf("%s: %v", args[0], r)
					}
					if r.code == 1 {
						if !strings.Contains(r.stderr, name) {
							t.Errorf("%s: %v; want %s named", args[0], r, name)
						}
						if d := diff(before, digest(t, dir), nil); len(d) > 0 {
							t.Errorf("%s failed and changed %v", args[0], d)
						}
					}
					restore(t, dir, pristine)
				}
			})
		}
	}
}
