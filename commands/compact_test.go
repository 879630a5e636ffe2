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

	"github.com/logtool/logtool/internal/testkit/testutil"
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

// summaryLine returns the line of out that starts with prefix.
func summaryLine(out, prefix string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

// TestCompactText: on the sample, a KRaft node's log dir, only the topics
// whose cleanup.policy is compact are compacted; the keyless delete-policy
// clicks-v1 keeps every record.
func TestCompactText(t *testing.T) {
	dir := compactSample(t)
	clicks := compactDigest(t, filepath.Join(dir, "clicks-v1-0"))
	code, out, errOut := compactRun(t, "compact", "--kafka-defaults", "--max-lag", "7d", "--now", compactNow, dir)
	if code != ExitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	lines := strings.Split(out, "\n")
	if !strings.HasPrefix(lines[0], "PARTITION") || !strings.Contains(lines[0], "PAST MAX LAG") {
		t.Fatalf("output:\n%s", out)
	}
	for _, want := range []string{"orders-0 ", "payments.txn-0 ", "clicks-v1-0 ", "legacy.events-v0-snappy-0 "} {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(want) + ` *no +- +- +- +cleanup\.policy=delete$`).MatchString(out) {
			t.Errorf("no row for %s not eligible by its policy:\n%s", want, out)
		}
	}
	for _, want := range []string{"user-profiles-0 ", "legacy.events-v0-0 "} {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(want) + ` *yes `).MatchString(out) {
			t.Errorf("no row for %s compacted:\n%s", want, out)
		}
	}
	if l := summaryLine(out, "compacted "); !strings.HasPrefix(l, "compacted 2 of 7 partition(s)") {
		t.Errorf("summary %q", l)
	}
	if compactDigest(t, filepath.Join(dir, "clicks-v1-0")) != clicks {
		t.Error("the delete-policy clicks-v1-0 changed")
	}
	// The same clock again: nothing left to do, not a byte changed.
	sum := compactDigest(t, dir)
	code, out, _ = compactRun(t, "compact", "--kafka-defaults", "--max-lag", "7d", "--now", compactNow, dir)
	if code != ExitOK || !strings.Contains(out, "compacted 0 of 7") || compactDigest(t, dir) != sum {
		t.Errorf("second run: exit %d\n%s", code, out)
	}
}

// TestCompactJSON: naming delete-policy topics does not make them
// compacted; --cleanup-policy does. Each object carries the configuration
// it used, with sources.
func TestCompactJSON(t *testing.T) {
	dir := compactSample(t)
	sum := compactDigest(t, dir)
	for _, tc := range []struct {
		policy   []string
		eligible bool
		source   string
	}{{nil, false, "DEFAULT_CONFIG"}, {[]string{"--cleanup-policy", "compact"}, true, "COMMAND_LINE"}} {
		args := append([]string{"--format", "json", "compact", "--kafka-defaults", "--dry-run", "--max-lag", "7d", "--now", compactNow, "--topic", "orders|payments.*"}, tc.policy...)
		code, out, errOut := compactRun(t, append(args, dir)...)
		if code != ExitOK || errOut != "" {
			t.Fatalf("%v: exit %d, stderr %q", tc.policy, code, errOut)
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
			for _, f := range []string{"type", "file", "topic", "partition", "eligible", "reason", "firstDirtyOffset", "firstUncleanableOffset",
				"segmentsBefore", "segmentsAfter", "bytesBefore", "bytesAfter", "recordsBefore", "recordsAfter", "tombstonesRemoved", "maxLagExceededByMs", "config"} {
				if _, ok := obj[f]; !ok {
					t.Errorf("%s: no %q", line, f)
				}
			}
			cfg, _ := obj["config"].(map[string]any)
			policy, _ := cfg["cleanup.policy"].(map[string]any)
			maxLag, _ := cfg["max.compaction.lag.ms"].(map[string]any)
			if obj["type"] != "compaction" || obj["eligible"] != tc.eligible || (obj["maxLagExceededByMs"].(float64) > 0) != tc.eligible ||
				policy["source"] != tc.source || maxLag["value"] != "604800000" || maxLag["source"] != "COMMAND_LINE" || len(cfg) != 8 {
				t.Errorf("%v: %s", tc.policy, line)
			}
			if !tc.eligible && obj["reason"] != "cleanup.policy=delete" {
				t.Errorf("%s", line)
			}
			parts = append(parts, fmt.Sprintf("%s-%v", obj["topic"], obj["partition"]))
		}
		if got := strings.Join(parts, " "); got != "orders-0 orders-1 payments.txn-0" {
			t.Errorf("--topic selected %s", got)
		}
	}
}

// TestCompactPartitionDir: the topic's segment.bytes (32 KiB) groups the
// cleaned segments as a broker would, and --segment-bytes overrides it.
func TestCompactPartitionDir(t *testing.T) {
	for _, tc := range []struct {
		flags    []string
		segments int
	}{{nil, 4}, {[]string{"--segment-bytes", "1GiB"}, 1}} {
		dir := compactSample(t)
		part := filepath.Join(dir, "user-profiles-0")
		args := append([]string{"--format", "json", "compact", "--kafka-defaults", "--max-lag", "1h", "--now", compactNow}, tc.flags...)
		code, out, errOut := compactRun(t, append(args, part)...)
		if code != ExitOK {
			t.Fatalf("exit %d, %s", code, errOut)
		}
		var r struct {
			Eligible          bool
			TombstonesRemoved int64
			SegmentsAfter     int
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil || !r.Eligible || r.SegmentsAfter != tc.segments {
			t.Fatalf("%v: %s (%v); want %d segments", tc.flags, out, err, tc.segments)
		}
		if b, err := os.ReadFile(filepath.Join(part, "cleaner-checkpoint")); err != nil || !strings.HasPrefix(string(b), "1\n1500 ") {
			t.Errorf("cleaner-checkpoint %q, %v", b, err)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "cleaner-offset-checkpoint")); !strings.Contains(string(b), "user-profiles 0 1500\n") {
			t.Errorf("root checkpoint not updated:\n%s", b)
		}
	}
}

func TestCompactUsage(t *testing.T) {
	dir := compactSample(t)
	for _, args := range [][]string{
		{"compact"},
		{"compact", "--kafka-defaults", "--max-lag", "1h", "--min-lag", "2h", dir},
		{"compact", "--kafka-defaults", "--offset-map-memory", "12MB", dir},
		{"compact", "--kafka-defaults", "--max-lag", "soon", dir},
		{"compact", "--kafka-defaults", "--min-cleanable-ratio", "2", dir},
		{"compact", "--kafka-defaults", "--topic", "(", dir},
		{"compact", "--kafka-defaults", filepath.Join(dir, "orders-0", "00000000000000000000.log")},
		{"compact", "--kafka-defaults", filepath.Join(dir, "missing")},
	} {
		if code, _, errOut := compactRun(t, args...); code != ExitUsage || !strings.HasPrefix(errOut, "logtool: compact: ") {
			t.Errorf("%v: exit %d, stderr %q; want a usage error", args, code, errOut)
		}
	}
}

// A damaged partition is reported as failed, in its row, a note, its JSON
// object and the summary, never as compacted; the others are compacted, and
// it is left byte for byte.
func TestCompactCorruptPartition(t *testing.T) {
	dir := compactSample(t)
	bad := filepath.Join(dir, "user-profiles-0")
	log := filepath.Join(bad, "00000000000000000466.log")
	testutil.FlipByte(t, log, 5200)
	sum := compactDigest(t, bad)
	errLine := regexp.MustCompile(`(?m)^logtool: compact: ` + regexp.QuoteMeta(log) + `: checksum mismatch: .* \(at byte \d+\)$`)
	row := regexp.MustCompile(`(?m)^user-profiles-0 +failed( +-){3} +failed: see below$`)
	note := regexp.MustCompile(`(?m)^user-profiles-0: failed: 00000000000000000466\.log: checksum mismatch: .* \(at byte \d+\)$`)
	for _, tc := range []struct {
		args    []string
		summary string
	}{
		{[]string{"--dry-run"}, "would compact (first pass) 1 of 7 partition(s): "},
		{nil, "compacted 1 of 7 partition(s): "},
	} {
		args := append(append([]string{"compact", "--kafka-defaults", "--max-lag", "7d", "--now", compactNow}, tc.args...), dir)
		code, out, errOut := compactRun(t, args...)
		if code != ExitFailure || !errLine.MatchString(errOut) || !strings.Contains(errOut, "1 of 7 partition(s) failed") {
			t.Fatalf("%v: exit %d, stderr %q", tc.args, code, errOut)
		}
		l := summaryLine(out, strings.Fields(tc.summary)[0])
		if !row.MatchString(out) || !note.MatchString(out) || !strings.HasPrefix(l, tc.summary) || !strings.HasSuffix(l, "; 1 failed") {
			t.Fatalf("%v: stdout\n%s", tc.args, out)
		}
		if compactDigest(t, bad) != sum {
			t.Fatalf("%v: the damaged partition changed", tc.args)
		}
	}

	code, out, _ := compactRun(t, "--format", "json", "compact", "--kafka-defaults", "--dry-run", bad)
	var obj map[string]any
	if err := json.Unmarshal([]byte(out), &obj); code != ExitFailure || err != nil {
		t.Fatalf("exit %d, %v: %q", code, err, out)
	}
	for _, f := range []string{"type", "file", "topic", "partition", "eligible", "reason", "firstDirtyOffset", "firstUncleanableOffset",
		"segmentsBefore", "segmentsAfter", "bytesBefore", "bytesAfter", "recordsBefore", "recordsAfter", "tombstonesRemoved", "maxLagExceededByMs"} {
		if _, ok := obj[f]; !ok {
			t.Errorf("no %q in %s", f, out)
		}
	}
	if e, _ := obj["error"].(string); !strings.HasPrefix(e, log+": checksum mismatch") || obj["topic"] != "user-profiles" || obj["partition"] != 0.0 {
		t.Errorf("%s", out)
	}
}
