package commands

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/logtool/logtool/internal/testkit/testutil"
)

var grepGoldenCases = []goldenCase{
	{name: "key", args: []string{"grep", "--key", "key-000007", sample + "/user-profiles-0"}},
	{name: "key-json", args: []string{"--format", "json", "grep", "--key-regex", "^key-00002[0-3]$", "--to-offset", "120", sample + "/payments.txn-0"}},
	{name: "key-hex-decoders", args: []string{"--format", "json", "grep", "--key-hex", "6b:65:79:2d:30:30:30:30:30:37", "--key-decoder", "string", "--value-decoder", "none", "--from-offset", "1300", sample + "/user-profiles-0"}},
	{name: "aborted", args: []string{"grep", "--key-regex", "^key-00000[0-4]$", "--width", "24", "--from-offset", "150", "--to-offset", "420", sample + "/payments.txn-0"}},
	{name: "value-header-range", args: []string{"grep", "--value-contains", "refund", "--header", "trace-id", "--from-time", "2024-01-01T00:05:00Z", "--to-time", "2024-01-01T00:07:00Z", sample + "/orders-0"}},
	{name: "legacy-segment", args: []string{"grep", "--key-regex", "^key-00000[0-2]$", "--width", "30", sample + "/legacy.events-v0-0/00000000000000000240.log", sample + "/legacy.events-v0-snappy-0", sample + "/clicks-v1-0"}},
	{name: "count", args: []string{"grep", "--key-regex", "^key-00001", "--count", sample}},
	{name: "count-json", args: []string{"--format", "json", "grep", "--header", "source=gen", "--count", "--topic", "orders", sample}},
	{name: "no-match", args: []string{"grep", "--key", "nobody", sample}},
	{name: "audit-key", args: []string{"grep", "--key", "key-000003", "--max-lag", "20m", "--now", "2024-01-01T00:40:00Z", "--width", "20", sample + "/user-profiles-0"}},
	{name: "audit-key-json", args: []string{"--format", "json", "grep", "--key-regex", "^key-00000[0-3]$", "--max-lag", "20m", "--now", "2024-01-01T00:40:00Z", "--delete-retention", "0", "--value-decoder", "none", "--from-offset", "1000", sample + "/user-profiles-0"}},
	{name: "audit-all", args: []string{"grep", "--max-lag", "1h", "--now", "2024-02-01T00:00:00Z", sample}},
	{name: "audit-all-json", args: []string{"--format", "json", "grep", "--max-lag", "1h", "--now", "2024-02-01T00:00:00Z", sample + "/user-profiles-0", sample + "/legacy.events-v0-0"}},
	{name: "audit-topic", args: []string{"grep", "--max-lag", "topic", "--now", "2024-01-02T00:30:00Z", sample}},
	{name: "audit-within", args: []string{"grep", "--max-lag", "30m", "--now", "2024-01-01T00:30:00Z", "--topic", "user-profiles", sample}},
	{name: "no-matcher", args: []string{"grep", sample}},
	{name: "bad-regex", args: []string{"grep", "--key-regex", "(unclosed", sample}},
}

func TestGrepGolden(t *testing.T) {
	for _, c := range grepGoldenCases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string{"logtool", "--no-progress"}, c.args...)
			var stdout, stderr bytes.Buffer
			code := Run(args, strings.NewReader(""), &stdout, &stderr)
			if slices.Contains(args, "json") {
				checkJSONLines(t, stdout.Bytes())
			}
			got := transcript(c.args, code, stdout.String(), stderr.String(), dir)
			checkGolden(t, filepath.Join("testdata", "golden", "grep", c.name+".golden"), got)
		})
	}
}

// TestGrepAuditCompact is the erasure audit as docs/commands/grep.md walks
// through it, on data gen writes: the audit finds versions past the
// deadline (exit 3), compact --max-lag with the same lag and clock removes
// them, and the same audit then passes (exit 0), with matchers and
// without; the matched key's latest version is still there.
func TestGrepAuditCompact(t *testing.T) {
	logs := filepath.Join(t.TempDir(), "logs")
	if code, _, stderr := runArgs("--quiet", "gen", "--out", logs, "--topics", "2", "--partitions", "2", "--records", "3000",
		"--keys", "500", "--tombstone-ratio", "0.1", "--transactional-ratio", "0.3", "--abort-ratio", "0.3",
		"--compression", "lz4", "--segment-bytes", "65536", "--start-time", "2024-03-01T00:00:00Z"); code != 0 {
		t.Fatalf("gen: exit %d: %s", code, stderr)
	}
	audit := []string{"--max-lag", "2h", "--now", "2024-03-01T12:00:00Z"}
	grep := func(args ...string) (int, string) {
		t.Helper()
		code, stdout, stderr := runArgs(append(append([]string{"--no-progress", "grep"}, audit...), append(args, logs)...)...)
		if code != ExitOK && code != ExitProblems {
			t.Fatalf("grep %v: exit %d: %s", args, code, stderr)
		}
		return code, stdout
	}
	for _, args := range [][]string{{"--key", "key-000042"}, {"--value-contains", "refund"}, nil} {
		if code, out := grep(args...); code != ExitProblems || !strings.Contains(out, "problem: ") {
			t.Fatalf("before compact, grep %v: exit %d\n%s", args, code, out)
		}
	}
	// gen wrote no topic configuration: compact every topic, as grep
	// audits every partition of a log dir without one.
	if code, stdout, stderr := runArgs(append(append([]string{"--no-progress", "compact", "--topic", ".*"}, audit...), logs)...); code != 0 {
		t.Fatalf("compact: exit %d: %s%s", code, stdout, stderr)
	}
	for _, args := range [][]string{{"--key", "key-000042"}, {"--value-contains", "refund"}, nil} {
		if code, out := grep(args...); code != ExitOK || strings.Contains(out, "problem: ") {
			t.Errorf("after compact, grep %v: exit %d\n%s", args, code, out)
		}
	}
	if _, out := grep("--key", "key-000042", "--count"); !strings.Contains(out, " latest") {
		t.Errorf("after compact the key's latest version is gone:\n%s", out)
	}
}

// TestGrepTopicConfig: with the cluster metadata in the log dir, a topic
// not compacted is not audited, and a compacted one is audited with its
// own delete.retention.ms unless --delete-retention overrides it.
func TestGrepTopicConfig(t *testing.T) {
	logs := filepath.Join(t.TempDir(), "logs")
	if code, _, stderr := runArgs("--quiet", "gen", "--out", logs, "--kraft", "--topics", "2", "--records", "2000", "--keys", "100",
		"--tombstone-ratio", "0.2", "--config", "orders:cleanup.policy=compact", "--config", "orders:delete.retention.ms=60000",
		"--start-time", "2024-03-01T00:00:00Z"); code != 0 {
		t.Fatalf("gen: exit %d: %s", code, stderr)
	}
	audit := []string{"--no-progress", "grep", "--max-lag", "1h", "--now", "2024-03-01T02:00:00Z"}
	code, stdout, stderr := runArgs(append(audit, logs)...)
	if code != ExitProblems || !regexp.MustCompile(`(?m)^user-events-0 +not audited`).MatchString(stdout) ||
		!strings.Contains(stdout, "13 tombstones past their deadline") || !strings.Contains(stdout, "delete.retention.ms 1m;") ||
		!strings.Contains(stdout, "orders         delete.retention.ms    60000 (1m)    DYNAMIC_TOPIC_CONFIG") {
		t.Errorf("exit %d\n%s%s", code, stdout, stderr)
	}
	// Named, the partition not audited says why.
	_, _, stderr = runArgs(append(audit, filepath.Join(logs, "user-events-0"))...)
	if !strings.Contains(stderr, "user-events-0: not audited: cleanup.policy=delete: no erasure deadline applies") {
		t.Errorf("user-events-0 named: %s", stderr)
	}
	// A day's retention from the flag: no tombstone is due yet.
	_, stdout, _ = runArgs(append([]string{"--wide"}, append(audit, "--delete-retention", "1d", logs)...)...)
	if !regexp.MustCompile(`(?m)^orders-0 .* 1900 .* 13 +0 +0-1999$`).MatchString(stdout) {
		t.Errorf("with --delete-retention 1d:\n%s", stdout)
	}
}

// TestGrepLeftovers: a .log an interrupted deletion or swap left holds
// records grep does not search, and it says so.
func TestGrepLeftovers(t *testing.T) {
	part := filepath.Join(t.TempDir(), "orders-0")
	testutil.CopyTree(t, filepath.Join(sample, "orders-0"), part)
	seg := filepath.Join(part, "00000000000000000000.log")
	if err := os.Rename(seg, seg+".deleted"); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runArgs("grep", "--key", "key-000001", part)
	if code != ExitOK || !strings.Contains(stderr, part+": 1 leftover segment file(s)") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// TestGrepMaxRecordBytes: grep refuses a record of a compressed batch over
// --max-record-bytes, as every other reader does, naming the file: in the
// find and match passes, and in the key pass of an audit of every key.
func TestGrepMaxRecordBytes(t *testing.T) {
	for _, args := range [][]string{
		{"--value-contains", "refund", sample + "/orders-0"},
		{"--max-lag", "1h", "--now", "2024-02-01T00:00:00Z", sample + "/user-profiles-0"},
	} {
		code, _, stderr := runArgs(append([]string{"--no-progress", "--max-record-bytes", "50", "grep"}, args...)...)
		if code != ExitFailure || !strings.Contains(stderr, "-0/00000000000000000000.log: ") ||
			!strings.Contains(stderr, "over the size limit of 50 bytes") {
			t.Errorf("grep %v: exit %d, stderr %q", args, code, stderr)
		}
	}
}
