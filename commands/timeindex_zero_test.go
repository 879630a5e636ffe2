package commands

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logtool/logtool/logfmt"
)

// TestTimeIndexZeroEntry: upgrading a magic 1 message of timestamp 0 at the
// base offset to magic 2 writes the time index entry (0, base), twelve zero
// bytes, as Kafka would. dump and reindex --check take it for the entry it
// is, not for preallocated zeros.
func TestTimeIndexZeroEntry(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "logs")
	part := filepath.Join(dir, "t-0")
	if err := os.MkdirAll(part, 0o755); err != nil {
		t.Fatal(err)
	}
	seg := logfmt.AppendLegacyMessage(nil, 1, 0, 0, 0, nil, []byte("v"))
	if err := os.WriteFile(filepath.Join(part, "00000000000000000000.log"), seg, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := reindexCLI(t, "upgrade", "--no-progress", "--to-magic", "2", dir); code != ExitOK {
		t.Fatalf("upgrade: exit %d\n%s%s", code, out, errOut)
	}
	ti := filepath.Join(part, "00000000000000000000.timeindex")
	if b, err := os.ReadFile(ti); err != nil || string(b) != string(make([]byte, 12)) {
		t.Fatalf("want the entry (0, 0) in %s: % x %v", ti, b, err)
	}
	code, out, errOut := reindexCLI(t, "dump", ti)
	if code != ExitOK || !strings.Contains(out, "\ntimestamp: 0 offset: 0\n") || errOut != "" {
		t.Errorf("dump: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = reindexCLI(t, "reindex", "--check", dir)
	if code != ExitOK || !strings.Contains(out, "0 problem(s), 0 difference(s)") {
		t.Errorf("reindex --check: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = reindexCLI(t, "verify", "--strict", dir)
	if code != ExitOK {
		t.Errorf("verify --strict: exit %d\n%s%s", code, out, errOut)
	}
}
