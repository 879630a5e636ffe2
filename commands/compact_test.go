package commands

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/logtool/logtool/internal/testutil"
)

// compactSample copies the shipped sample log directory, which the test
// may then change; modification times are kept, as upgradeSample does.
func compactSample(t *testing.T) string {
	t.Helper()
	return upgradeSample(t)
}

func compactRun(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Run(append([]string{"logtool"}, args...), strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

func compactDigest(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == ".lock" {
			return err
		}
		b, err := os.ReadFile(path)
		fmt.Fprintf(h, "%s\n", path)
		h.Write(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// The sample's records are from 2024-01-01; a week's max lag is long past.
const compactNow = "2024-03-01T00:00:00Z"

func TestCompactText(t *testing.T) {
	dir := compactSample(t)
	code, out, errOut := compactRun(t, "compact", "--max-lag", "7d", "--now", compactNow, dir)
	if code != ExitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 9 || !strings.HasPrefix(lines[0], "PARTITION") || !strings.Contains(lines[0], "PAST MAX LAG") {
		t.Fatalf("output:\n%s", out)
	}
	for _, want := range []string{"orders-0 ", "payments.txn-0 ", "user-profiles-0 ", "clicks-v1-0 ", "legacy.events-v0-0 "} {
		if !strings.Contains(out, want) {
			t.Errorf("no row for %s:\n%s", want, out)
		}
	}
	if !strings.Contains(lines[len(lines)-1], "compacted 6 of 7 partition(s)") {
		t.Errorf("summary %q", lines[len(lines)-1])
	}
	// The same clock again: nothing left to do, not a byte changed.
	sum := compactDigest(t, dir)
	code, out, _ = compactRun(t, "compact", "--max-lag", "7d", "--now", compactNow, dir)
	if code != ExitOK || !strings.Contains(out, "compacted 0 of 7") || compactDigest(t, dir) != sum {
		t.Errorf("second run: exit %d\n%s", code, out)
	}
}

func TestCompactJSON(t *testing.T) {
	dir := compactSample(t)
	sum := compactDigest(t, dir)
	code, out, errOut := compactRun(t, "--format", "json", "compact", "--dry-run", "--max-lag", "7d", "--now", compactNow, "--topic", "orders|payments.*", dir)
	if code != ExitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if compactDigest(t, dir) != sum {
		t.Error("--dry-run changed the log directory")
	}
	var parts []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var obj map[string]any
		if err := json.Unmarshal([]byte(line), &obj); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		for _, f := range []string{"type", "file", "partition", "eligible", "reason", "firstDirtyOffset", "firstUncleanableOffset",
			"segmentsBefore", "segmentsAfter", "bytesBefore", "bytesAfter", "recordsBefore", "recordsAfter", "tombstonesRemoved", "maxLagExceededByMs"} {
			if _, ok := obj[f]; !ok {
				t.Errorf("%s: no %q", line, f)
			}
		}
		if obj["type"] != "compaction" || obj["eligible"] != true || obj["maxLagExceededByMs"].(float64) <= 0 {
			t.Errorf("%s", line)
		}
		parts = append(parts, obj["partition"].(string))
	}
	if got := strings.Join(parts, " "); got != "orders-0 orders-1 payments.txn-0" {
		t.Errorf("--topic selected %s", got)
	}
}

func TestCompactPartitionDir(t *testing.T) {
	dir := compactSample(t)
	part := filepath.Join(dir, "user-profiles-0")
	code, out, errOut := compactRun(t, "--format", "json", "compact", "--max-lag", "1h", "--now", compactNow, part)
	if code != ExitOK {
		t.Fatalf("exit %d, %s", code, errOut)
	}
	var r struct {
		Eligible          bool
		TombstonesRemoved int64
		SegmentsAfter     int
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || !r.Eligible || r.SegmentsAfter != 1 {
		t.Fatalf("%s (%v)", out, err)
	}
	if b, err := os.ReadFile(filepath.Join(part, "cleaner-checkpoint")); err != nil || !strings.HasPrefix(string(b), "1\n1500 ") {
		t.Errorf("cleaner-checkpoint %q, %v", b, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "cleaner-offset-checkpoint")); !strings.Contains(string(b), "user-profiles 0 1500\n") {
		t.Errorf("root checkpoint not updated:\n%s", b)
	}
}

func TestCompactUsage(t *testing.T) {
	dir := compactSample(t)
	for _, args := range [][]string{
		{"compact"},
		{"compact", "--max-lag", "1h", "--min-lag", "2h", dir},
		{"compact", "--offset-map-memory", "12MB", dir},
		{"compact", "--max-lag", "soon", dir},
		{"compact", "--min-cleanable-ratio", "2", dir},
		{"compact", "--topic", "(", dir},
		{"compact", filepath.Join(dir, "orders-0", "00000000000000000000.log")},
		{"compact", filepath.Join(dir, "missing")},
	} {
		if code, _, errOut := compactRun(t, args...); code != ExitUsage || !strings.HasPrefix(errOut, "logtool: compact: ") {
			t.Errorf("%v: exit %d, stderr %q; want a usage error", args, code, errOut)
		}
	}
}

// A damaged partition is reported as failed, in its row, its JSON object and
// the summary, never as compacted; the others are compacted, and it is left
// byte for byte.
func TestCompactCorruptPartition(t *testing.T) {
	dir := compactSample(t)
	bad := filepath.Join(dir, "orders-0")
	log := filepath.Join(bad, "00000000000000000712.log")
	testutil.FlipByte(t, log, 5000)
	sum := compactDigest(t, bad)
	errLine := regexp.MustCompile(`(?m)^logtool: compact: ` + regexp.QuoteMeta(log) + `: checksum mismatch: .* \(at byte \d+\)$`)
	row := regexp.MustCompile(`(?m)^orders-0 +failed( +-){7} +00000000000000000712\.log: checksum mismatch: .* \(at byte \d+\)$`)
	for _, tc := range []struct {
		args    []string
		summary string
	}{
		{[]string{"--dry-run"}, "would compact (first pass) 5 of 7 partition(s): "},
		{nil, "compacted 5 of 7 partition(s): "},
	} {
		args := append(append([]string{"compact", "--max-lag", "7d", "--now", compactNow}, tc.args...), dir)
		code, out, errOut := compactRun(t, args...)
		if code != ExitFailure || !errLine.MatchString(errOut) || !strings.Contains(errOut, "1 of 7 partition(s) failed") {
			t.Fatalf("%v: exit %d, stderr %q", tc.args, code, errOut)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if !row.MatchString(out) || !strings.HasPrefix(lines[len(lines)-1], tc.summary) || !strings.HasSuffix(lines[len(lines)-1], "; 1 failed") {
			t.Fatalf("%v: stdout\n%s", tc.args, out)
		}
		if compactDigest(t, bad) != sum {
			t.Fatalf("%v: the damaged partition changed", tc.args)
		}
	}

	code, out, _ := compactRun(t, "--format", "json", "compact", "--dry-run", bad)
	var obj map[string]any
	if err := json.Unmarshal([]byte(out), &obj); code != ExitFailure || err != nil {
		t.Fatalf("exit %d, %v: %q", code, err, out)
	}
	for _, f := range []string{"type", "file", "partition", "eligible", "reason", "firstDirtyOffset", "firstUncleanableOffset",
		"segmentsBefore", "segmentsAfter", "bytesBefore", "bytesAfter", "recordsBefore", "recordsAfter", "tombstonesRemoved", "maxLagExceededByMs"} {
		if _, ok := obj[f]; !ok {
			t.Errorf("no %q in %s", f, out)
		}
	}
	if e, _ := obj["error"].(string); !strings.HasPrefix(e, log+": checksum mismatch") || obj["partition"] != "orders-0" {
		t.Errorf("%s", out)
	}
}
