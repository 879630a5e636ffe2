package commands

import (
	"os"
	"path/filepath"
	"testing"
)

// A compacted transactional partition must verify clean: Kafka's cleaner
// keeps the .txnindex entry of an aborted transaction while it keeps the
// marker, even after removing the transaction's data, which a recovery
// rebuild would not index. That is a difference, not a problem.
func TestCompactedTransactionsVerifyClean(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "logs")
	if err := os.CopyFS(dir, os.DirFS("../testdata/kafka-logs")); err != nil {
		t.Fatal(err)
	}
	part := filepath.Join(dir, "payments.txn-0")
	if code, _, errOut := runLogtool(t, "compact", "--kafka-defaults", "--max-lag", "1h", "--now", "2024-02-01T00:00:00Z", part); code != ExitOK {
		t.Fatalf("compact: exit %d\n%s", code, errOut)
	}
	if code, out, _ := runLogtool(t, "verify", part); code != ExitOK {
		t.Errorf("verify after compact: exit %d\n%s", code, out)
	}
	if code, out, _ := runLogtool(t, "reindex", "--check", part); code != ExitOK {
		t.Errorf("reindex --check after compact: exit %d\n%s", code, out)
	}
}
