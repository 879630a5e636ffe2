package commands

import (
	"bytes"
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

// upgradeSample copies the shipped sample log directory, keeping the
// segments' modification times (the default append time).
func upgradeSample(t *testing.T) string {
	t.Helper()
	const src = "../testdata/kafka-logs"
	dst := filepath.Join(t.TempDir(), "kafka-logs")
	testutil.CopyTree(t, src, dst)
	return dst
}

func upgradeRun(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Run(append([]string{"logtool"}, args...), strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

// upgradeDigest is the content of every file under dir.
func upgradeDigest(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == ".lock" {
			return err
		}
		data, err := os.ReadFile(path)
		fmt.Fprintf(&b, "%s %x\n", path, data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestUpgradeCommandText(t *testing.T) {
	dir := upgradeSample(t)
	code, out, errOut := upgradeRun(t, "upgrade", "--no-progress", dir)
	if code != ExitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"PARTITION", "legacy.events-v0-0", "3 of 3", "600",
		"upgraded 8 partition(s) to magic 1: 1000 message(s) in 4 of 28 segment(s)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if code, _, errOut := upgradeRun(t, "verify", "--deep", dir); code != ExitOK {
		t.Fatalf("verify after upgrade: exit %d: %s", code, errOut)
	}
	// Everything is at magic 1 now: a second run rewrites nothing.
	code, out, _ = upgradeRun(t, "upgrade", dir)
	if code != ExitOK || !strings.Contains(out, "0 message(s) in 0 of 28 segment(s)") {
		t.Fatalf("second run: exit %d\n%s", code, out)
	}
	if code, out, errOut := upgradeRun(t, "--quiet", "upgrade", "--to-magic", "2", dir); code != ExitOK || out != "" || errOut != "" {
		t.Fatalf("--quiet: exit %d, %q, %q", code, out, errOut)
	}
}

func TestUpgradeCommandJSON(t *testing.T) {
	dir := upgradeSample(t)
	before := upgradeDigest(t, dir)
	code, out, errOut := upgradeRun(t, "--format", "json", "upgrade", "--dry-run", "--to-magic", "2",
		"--timestamp-type", "log-append", "--append-time", "2017-03-01T00:00:00Z", dir)
	if code != ExitOK || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if upgradeDigest(t, dir) != before {
		t.Fatal("a dry run changed files")
	}
	types := map[string]int{}
	var converted int64
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var obj map[string]any
		if err := json.Unmarshal([]byte(line), &obj); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		typ, _ := obj["type"].(string)
		if file, _ := obj["file"].(string); typ == "" || file == "" {
			t.Fatalf("object without type or file: %s", line)
		}
		types[typ]++
		switch typ {
		case "upgrade":
			if obj["dryRun"] != true || obj["toMagic"] != 2.0 {
				t.Errorf("partition object %s", line)
			}
			converted += int64(obj["messagesConverted"].(float64))
		case "upgrade-segment":
			// Only magic-0 messages take the append time: 2017-03-01.
			if at, ok := obj["appendTime"].(float64); ok && at != 1488326400000 {
				t.Errorf("segment object %s", line)
			}
		}
	}
	// Every partition but the four at magic 2 has something to convert.
	if types["upgrade"] != 8 || types["upgrade-segment"] != 6 || converted != 1800 {
		t.Fatalf("objects %v, %d messages:\n%s", types, converted, out)
	}
}

func TestUpgradeCommandOutput(t *testing.T) {
	dir := upgradeSample(t)
	before := upgradeDigest(t, dir)
	out := filepath.Join(t.TempDir(), "converted")
	code, stdout, errOut := upgradeRun(t, "upgrade", "--to-magic", "2", "--output", out, dir)
	if code != ExitOK || errOut != "" || !strings.Contains(stdout, "into "+out) || !strings.Contains(stdout, "copied 6 root file(s)") {
		t.Fatalf("exit %d, stderr %q\n%s", code, errOut, stdout)
	}
	if upgradeDigest(t, dir) != before {
		t.Fatal("--output changed the source")
	}
	if code, _, errOut := upgradeRun(t, "verify", "--deep", out); code != ExitOK {
		t.Fatalf("verify of the output: exit %d: %s", code, errOut)
	}
	// Again into the same place: refused, nothing written.
	after := upgradeDigest(t, out)
	code, _, errOut = upgradeRun(t, "upgrade", "--output", out, filepath.Join(dir, "legacy.events-v0-0"))
	if code != ExitRefused || !strings.Contains(errOut, "already exists") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if upgradeDigest(t, out) != after {
		t.Fatal("a refused run changed the output")
	}
}

func TestUpgradeCommandUsage(t *testing.T) {
	dir := upgradeSample(t)
	part := filepath.Join(dir, "legacy.events-v0-0")
	for _, args := range [][]string{
		{"upgrade"},
		{"upgrade", "--to-magic", "3", dir},
		{"upgrade", "--to-magic", "0", dir},
		{"upgrade", "--timestamp-type", "now", dir},
		{"upgrade", "--append-time", "1000", dir},
		{"upgrade", "--timestamp-type", "log-append", "--append-time", "yesterday", dir},
		{"upgrade", "--compression", "brotli", dir},
		{"upgrade", "--compression", "zstd", dir},
		{"upgrade", "--no-such-flag", dir},
		{"upgrade", filepath.Join(part, "00000000000000000000.log")},
		{"upgrade", filepath.Join(dir, "missing-0")},
	} {
		before := upgradeDigest(t, dir)
		code, _, errOut := upgradeRun(t, args...)
		if code != ExitUsage || !strings.HasPrefix(errOut, "logtool: ") {
			t.Errorf("%v: exit %d, stderr %q; want 2", args[1:], code, errOut)
		}
		if upgradeDigest(t, dir) != before {
			t.Fatalf("%v changed files", args[1:])
		}
	}
	// zstd is fine for magic 2.
	if code, _, errOut := upgradeRun(t, "upgrade", "--dry-run", "--to-magic", "2", "--compression", "zstd", part); code != ExitOK {
		t.Fatalf("zstd to magic 2: exit %d: %s", code, errOut)
	}
}

// Corrupt input: exit 1, an error line with file and byte position and the
// count of failed partitions, the partition as it was.
func TestUpgradeCommandCorrupt(t *testing.T) {
	dir := upgradeSample(t)
	log := filepath.Join(dir, "legacy.events-v0-0", "00000000000000000240.log")
	testutil.FlipByte(t, log, 1000)
	before := upgradeDigest(t, dir)
	code, _, errOut := upgradeRun(t, "upgrade", "--workers", "1", filepath.Join(dir, "legacy.events-v0-0"))
	re := regexp.MustCompile(`^logtool: upgrade: ` + regexp.QuoteMeta(log) + `: checksum mismatch: .* \(at byte \d+\)\n` +
		`logtool: upgrade: 1 of 1 partition\(s\) failed\n$`)
	if code != ExitFailure || !re.MatchString(errOut) {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if upgradeDigest(t, dir) != before {
		t.Fatal("the corrupt partition changed")
	}
}

// A corrupt partition stops only itself: the partitions after it, here a
// legacy one that needs converting, are still planned and converted, the
// damaged one is named with file and position and left byte for byte, and
// the run exits 1.
func TestUpgradeCommandCorruptPartitionSkipped(t *testing.T) {
	dir := upgradeSample(t)
	bad := filepath.Join(dir, "legacy.events-v0-0")
	log := filepath.Join(bad, "00000000000000000240.log")
	testutil.FlipByte(t, log, 1000)
	before := upgradeDigest(t, bad)
	errLine := regexp.MustCompile(`(?m)^logtool: upgrade: ` + regexp.QuoteMeta(log) + `: checksum mismatch: .* \(at byte \d+\)$`)
	good := regexp.MustCompile(`(?m)^legacy\.events-v0-snappy-0 +1 of 1 +400 `)

	code, out, errOut := upgradeRun(t, "upgrade", "--no-progress", "--workers", "1", "--dry-run", dir)
	if code != ExitFailure || !errLine.MatchString(errOut) || !strings.Contains(errOut, "1 of 8 partition(s) failed") {
		t.Fatalf("dry run: exit %d, stderr %q", code, errOut)
	}
	if !good.MatchString(out) || !regexp.MustCompile(`(?m)^legacy\.events-v0-0 +failed +- +-`).MatchString(out) ||
		!strings.Contains(out, "would upgrade 7 partition(s) to magic 1: 400 message(s)") ||
		!strings.Contains(out, "; 1 partition(s) failed") {
		t.Fatalf("dry run: stdout\n%s", out)
	}

	code, out, errOut = upgradeRun(t, "--format", "json", "upgrade", "--no-progress", "--workers", "1", dir)
	if code != ExitFailure || !errLine.MatchString(errOut) || strings.Count(errOut, "\n") != 2 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	// The fields of an "upgrade" object this test reads.
	type partition struct {
		Type, File, Error                    string
		SegmentsRewritten, MessagesConverted int64
	}
	objs := map[string]partition{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var o partition
		if err := json.Unmarshal([]byte(line), &o); err != nil {
			t.Fatal(err)
		}
		if o.Type == "upgrade" {
			objs[filepath.Base(string(o.File))] = o
		}
	}
	if o := objs["legacy.events-v0-0"]; !strings.HasPrefix(o.Error, log+": checksum mismatch") || o.SegmentsRewritten != 0 {
		t.Errorf("damaged partition: %+v", o)
	}
	if o := objs["legacy.events-v0-snappy-0"]; o.Error != "" || o.SegmentsRewritten != 1 || o.MessagesConverted != 400 || len(objs) != 8 {
		t.Errorf("good partition: %+v (of %d)", o, len(objs))
	}
	if upgradeDigest(t, bad) != before {
		t.Fatal("the corrupt partition changed")
	}
	// Converted for real: nothing is left to convert there.
	code, out, errOut = upgradeRun(t, "upgrade", "--dry-run", filepath.Join(dir, "legacy.events-v0-snappy-0"))
	if code != ExitOK || !regexp.MustCompile(`(?m)^legacy\.events-v0-snappy-0 +0 of 1 +0 `).MatchString(out) {
		t.Fatalf("after: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
