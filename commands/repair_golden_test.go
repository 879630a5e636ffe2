package commands

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/logtool/logtool/internal/testkit/testutil"
)

// copiedSample copies the shipped sample to dir/logs, for the commands
// that write.
func copiedSample(t *testing.T, dir string) {
	testutil.CopyTree(t, sample, filepath.Join(dir, "logs"))
}

// staleIndex is copiedSample with orders-0's first offset index cut short
// and payments.txn-0's last time index gone.
func staleIndex(t *testing.T, dir string) {
	copiedSample(t, dir)
	if err := os.Truncate(filepath.Join(dir, "logs", "orders-0", "00000000000000000000.index"), 16); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "logs", "payments.txn-0", "00000000000000001190.timeindex")); err != nil {
		t.Fatal(err)
	}
}

// withCleanerCheckpoint is copiedSample with a per-disk cleaner checkpoint
// for the two compacted topics, as a broker leaves it.
func withCleanerCheckpoint(t *testing.T, dir string) {
	copiedSample(t, dir)
	b := []byte("0\n2\nuser-profiles 0 1389\nlegacy.events-v0 0 480\n")
	if err := os.WriteFile(filepath.Join(dir, "logs", "cleaner-offset-checkpoint"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

var repairGoldenCases = []goldenCase{
	{name: "reindex-check", args: []string{"reindex", "--check", "$DIR/logs"}, setup: staleIndex},
	{name: "reindex-dry-run", args: []string{"reindex", "--dry-run", "$DIR/logs"}, setup: staleIndex},
	{name: "reindex", args: []string{"reindex", "$DIR/logs/orders-0", "$DIR/logs/payments.txn-0"}, setup: staleIndex},
	{name: "upgrade-dry-run", args: []string{"upgrade", "--dry-run", "$DIR/logs"}, setup: copiedSample},
	{name: "upgrade", args: []string{"upgrade", "--to-magic", "2", "$DIR/logs/legacy.events-v0-0"}, setup: copiedSample},
	{name: "migrate-checkpoints-dry-run", args: []string{"migrate-checkpoints", "--dry-run", "--clean-time", "2024-01-02T00:00:00Z", "$DIR/logs"}, setup: withCleanerCheckpoint},
	{name: "migrate-checkpoints", args: []string{"migrate-checkpoints", "--clean-time", "2024-01-02T00:00:00Z", "$DIR/logs"}, setup: withCleanerCheckpoint},
	{name: "migrate-checkpoints-json", args: []string{"--format", "json", "migrate-checkpoints", "--clean-time", "2024-01-02T00:00:00Z", "$DIR/logs"}, setup: withCleanerCheckpoint},
	{name: "gen", args: []string{"gen", "--out", "$DIR/new", "--topic", "t", "--partitions", "2", "--records", "50", "--keys", "5", "--seed", "1"}},
	{name: "gen-json", args: []string{"--format", "json", "gen", "--out", "$DIR/new", "--topic", "t", "--records", "20", "--seed", "1"}},
}

// TestRepairGolden pins the transcripts of the commands that write and have
// no golden files of their own elsewhere.
func TestRepairGolden(t *testing.T) { runGolden(t, "repair", repairGoldenCases) }
