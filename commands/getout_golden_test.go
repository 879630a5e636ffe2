package commands

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/logtool/logtool/internal/testkit/testutil"
)

// damagedOrders copies the sample's orders-0 into dir/logs and damages a
// batch in the middle of its first segment.
func damagedOrders(t *testing.T, dir string) {
	part := filepath.Join(dir, "logs", "orders-0")
	testutil.CopyTree(t, filepath.Join(sample, "orders-0"), part)
	testutil.FlipByte(t, filepath.Join(part, "00000000000000000000.log"), 20000)
}

var getoutGoldenCases = []goldenCase{
	{name: "export-lines", args: []string{"export", "--to-offset", "3", "--encoding", "utf8", sample + "/payments.txn-0"}},
	{name: "export-uncommitted", args: []string{"export", "--isolation", "read_uncommitted", "--from-offset", "1188", "--to-offset", "1191", sample + "/payments.txn-0"}},
	{name: "export-file-summary", args: []string{"export", "-o", "$DIR/out.jsonl", sample}},
	{name: "export-file-json", args: []string{"--format", "json", "export", "-o", "$DIR/out.jsonl.zst", "--topic", "orders", sample}},
	{name: "export-kcat", args: []string{"export", "--format", "kcat", "--isolation", "read_uncommitted", "--from-offset", "1188", "--to-offset", "1191", sample + "/payments.txn-0"}},
	{name: "export-kcat-legacy", args: []string{"export", "--format", "kcat", "--to-offset", "1", "-o", "-", sample + "/legacy.events-v0-0"}},
	{name: "export-kcat-file", args: []string{"export", "--format", "kcat", "-o", "$DIR/out.jsonl", sample + "/orders-0"}},
	{name: "export-format-text", args: []string{"--format", "text", "export", sample + "/orders-0"}},
	{name: "dump-format-kcat", args: []string{"--format", "kcat", "dump", sample + "/orders-0"}},
	{name: "salvage-damaged", args: []string{"salvage", "$DIR/logs/orders-0", "--out", "$DIR/out/orders-0"}, setup: damagedOrders},
	{name: "salvage-damaged-json", args: []string{"--format", "json", "salvage", "$DIR/logs/orders-0", "--out", "$DIR/out/orders-0"}, setup: damagedOrders},
	{name: "salvage-exists", args: []string{"salvage", sample + "/orders-0", "--out", "$DIR"}},
	{name: "replay-dry-run", args: []string{"replay", "--dry-run", "--topic-map", "orders=restored", sample}},
	{name: "replay-dry-run-json", args: []string{"--format", "json", "replay", "--dry-run", "--from-offset", "1000", sample + "/payments.txn-0"}},
	{name: "replay-no-server", args: []string{"replay", sample + "/orders-0"}},
}

func TestGetoutGolden(t *testing.T) {
	for _, c := range getoutGoldenCases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if c.setup != nil {
				c.setup(t, dir)
			}
			args := []string{"logtool", "--no-progress"}
			for _, a := range c.args {
				args = append(args, strings.ReplaceAll(a, "$DIR", dir))
			}
			var stdout, stderr bytes.Buffer
			code := Run(args, strings.NewReader(""), &stdout, &stderr)
			if slices.Contains(args, "json") {
				checkJSONLines(t, stdout.Bytes())
			}
			got := transcript(c.args, code, stdout.String(), stderr.String(), dir)
			checkGolden(t, filepath.Join("testdata", "golden", "getout", c.name+".golden"), got)
		})
	}
	// The salvaged directory verifies clean.
	dir := t.TempDir()
	damagedOrders(t, dir)
	out := filepath.Join(dir, "out", "orders-0")
	if code, _, stderr := runArgs("salvage", filepath.Join(dir, "logs", "orders-0"), "--out", out); code != 0 {
		t.Fatalf("salvage: exit %d: %s", code, stderr)
	}
	if code, stdout, _ := runArgs("verify", "--deep", "--strict", out); code != 0 {
		t.Errorf("verify of the output: exit %d\n%s", code, stdout)
	}
	if _, err := os.Stat(out); err != nil {
		t.Fatal(err)
	}
}
