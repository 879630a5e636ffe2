package dump

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/logtool/logtool/internal/testkit/testutil"
)

// TestPartitionVanished: a partition that vanishes between the resolving of
// the paths and its dump is its own problem, counted as failed; the other
// partitions are dumped whole.
func TestPartitionVanished(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "kafka-logs")
	testutil.CopyTree(t, "../testdata/kafka-logs", dir)
	set := resolve(t, dir)
	gone := filepath.Join(dir, "orders-0")
	if err := os.RemoveAll(gone); err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	o.Summary = true
	res, objs := runJSONSet(t, o, set)
	if res.Failed != 1 {
		t.Errorf("Failed = %d, want 1", res.Failed)
	}
	problems := ofType(objs, "problem")
	if len(problems) != 1 || problems[0].str("file") != gone || problems[0].str("message") != "cannot be listed: no such file or directory" ||
		problems[0].str("topic") != "orders" {
		t.Errorf("problems: %v", problems)
	}
	summaries := map[string]object{}
	for _, s := range ofType(objs, "summary") {
		summaries[filepath.Base(s.str("file"))] = s
	}
	if s := summaries["orders-1"]; s.num("records") != 1500 || s.num("problems") != 0 {
		t.Errorf("orders-1 was not dumped whole: %v", s)
	}
	if s := summaries["orders-0"]; s.num("problems") != 1 {
		t.Errorf("orders-0: %v", s)
	}
}
