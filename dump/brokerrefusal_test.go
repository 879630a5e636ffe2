package dump

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logtool/logtool/internal/testkit/testutil"
)

// TestNamesABrokerCannotLoad: a .log whose name is no 64-bit offset and a
// directory named like an index are problems of the partition, saying what
// a broker does, where they were notes before.
func TestNamesABrokerCannotLoad(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "kafka-logs")
	testutil.CopyTree(t, "../testdata/kafka-logs", dir)
	part := filepath.Join(dir, "orders-0")
	b, err := os.ReadFile(filepath.Join(part, "00000000000000000000.log"))
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(part, "99999999999999999999.log")
	if err := os.WriteFile(bad, b, 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(part, "00000000000000000500.index")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	_, objs := runJSONSet(t, DefaultOptions(), resolve(t, part))
	want := map[string]string{bad: "NumberFormatException", sub: "IOException"}
	for _, p := range ofType(objs, "problem") {
		if w, ok := want[p.str("file")]; ok && strings.Contains(p.str("message"), w) {
			delete(want, p.str("file"))
		}
	}
	if len(want) != 0 {
		t.Errorf("no problem for %v", want)
	}
}
