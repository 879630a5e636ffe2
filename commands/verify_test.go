package commands

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/internal/testkit/kafkasamples"
	"github.com/logtool/logtool/logfmt/codec"
)

func verifyRun(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Run(append([]string{"logtool", "--no-progress"}, args...), strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

// verifyFixture generates a log directory and returns it and the first
// segment of its partition.
func verifyFixture(t *testing.T) (dir, log string) {
	t.Helper()
	dir = t.TempDir()
	parts, err := gen.Generate(gen.Options{Out: dir, Topics: []string{"orders"}, Records: 200, Magic: 2, Compression: codec.LZ4, SegmentBytes: 4096, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	return dir, filepath.Join(parts[0].Dir, "00000000000000000000.log")
}

func TestVerifyClean(t *testing.T) {
	for _, args := range [][]string{
		{"verify", "../testdata/kafka-logs"},
		{"verify", "--deep", "--strict", "../testdata/kafka-logs/payments.txn-0", "../testdata/kafka-logs/clicks-v1-0"},
		{"verify", "../testdata/kafka-logs/orders-0/00000000000000000712.log"},
	} {
		code, out, errOut := verifyRun(t, args...)
		if code != ExitOK || errOut != "" || !regexp.MustCompile(`^verified \d+ partition\(s\).*: no problems\n$`).MatchString(out) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 0 and one summary line", args, code, out, errOut)
		}
	}
}

func TestVerifyRecordSet(t *testing.T) {
	path := kafkasamples.Dir("record-sets", "kafka-rust", "fetch2.mytopic.nocompression.invalid_crc.kafka.0900.records")
	if _, err := os.Stat(path); err != nil {
		kafkasamples.Skip(t, err)
	}
	code, out, errOut := verifyRun(t, "verify", path)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != ExitProblems || len(lines) != 2 ||
		!regexp.MustCompile(`^problem: `+regexp.QuoteMeta(path)+`: checksum mismatch: stored \d+, computed \d+; no valid batch follows it \(at byte 0\)$`).MatchString(lines[0]) ||
		!strings.HasSuffix(lines[1], ": 1 problem(s)") || errOut != "logtool: verify: 1 problem(s) found\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestVerifyJSON(t *testing.T) {
	dir, log := verifyFixture(t)
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	b[17] ^= 1 // the first batch's CRC
	if err := os.WriteFile(log, b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := verifyRun(t, "--format", "json", "verify", "--verbose", dir)
	if code != ExitProblems {
		t.Errorf("exit %d, want %d", code, ExitProblems)
	}
	var problem, summary map[string]any
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		var obj map[string]any
		if err := json.Unmarshal([]byte(line), &obj); err != nil {
			t.Fatalf("not JSON: %q", line)
		}
		if _, ok := obj["file"].(string); !ok || obj["type"] == nil {
			t.Errorf("no type and file: %q", line)
		}
		switch obj["type"] {
		case "problem":
			if problem == nil {
				problem = obj
			}
		case "summary":
			summary = obj
		}
	}
	if problem == nil || problem["file"] != log || problem["position"] != float64(0) || !strings.Contains(problem["message"].(string), "checksum") ||
		problem["code"] != "crc-mismatch" {
		t.Errorf("first problem %v, want the checksum (code crc-mismatch) of %s at position 0", problem, log)
	}
	if summary == nil || summary["problems"].(float64) < 1 || summary["clean"] != false || summary["file"] != dir {
		t.Errorf("summary %v", summary)
	}
}

func TestVerifyVerbose(t *testing.T) {
	dir, _ := verifyFixture(t)
	if err := os.Remove(filepath.Join(dir, "orders-0", "00000000000000000000.index")); err != nil {
		t.Fatal(err)
	}
	code, out, _ := verifyRun(t, "verify", dir)
	if code != ExitOK || strings.Contains(out, "info:") || !strings.Contains(out, "1 information finding(s) (--verbose lists them)") {
		t.Errorf("exit %d, stdout %q", code, out)
	}
	code, out, _ = verifyRun(t, "verify", "--verbose", dir)
	if code != ExitOK || !strings.Contains(out, "info: "+filepath.Join(dir, "orders-0", "00000000000000000000.index")+": absent") {
		t.Errorf("--verbose: exit %d, stdout %q", code, out)
	}
	if code, out, _ = verifyRun(t, "verify", "--strict", dir); code != ExitProblems {
		t.Errorf("--strict: exit %d, stdout %q", code, out)
	}
}

func TestVerifyUsage(t *testing.T) {
	for _, args := range [][]string{
		{"verify"},
		{"verify", filepath.Join(t.TempDir(), "absent")},
		{"verify", t.TempDir()},
		{"verify", "--no-such-flag", "../testdata/kafka-logs"},
	} {
		if code, _, errOut := verifyRun(t, args...); code != ExitUsage || !strings.HasPrefix(errOut, "logtool: verify: ") {
			t.Errorf("%q: exit %d, stderr %q; want %d", args, code, errOut, ExitUsage)
		}
	}
}

// TestVerifyWholeMessages: a finding with nothing to expect says only what
// was found: an index entry that goes back printed "(expected , found ...)".
func TestVerifyWholeMessages(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "orders-1")
	if err := os.CopyFS(dir, os.DirFS(sample+"/orders-1")); err != nil {
		t.Fatal(err)
	}
	ix := filepath.Join(dir, "00000000000000000000.index")
	b, err := os.ReadFile(ix)
	if err != nil {
		t.Fatal(err)
	}
	b[8], b[9], b[10], b[11] = 0, 0, 0, 1 // the second entry's relative offset: below the first's
	if err := os.WriteFile(ix, b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := verifyRun(t, "verify", dir)
	want := "problem: " + ix + ": entry 1: offset 1 is not above the previous entry's 56 (found relative offset 1 at byte 8640) (at byte 8)\n"
	if code != ExitProblems || !strings.HasPrefix(out, want) {
		t.Errorf("exit %d:\n%s\nwant first line\n%s", code, out, want)
	}
}

// TestVerifyFolderOfLogDirs: a folder holding several log directories (each
// with its meta.properties) is each of them, not one log directory whose
// "partitions" are the log directories: verifying the folder of real broker
// log dirs checks what verifying each one checks.
func TestVerifyFolderOfLogDirs(t *testing.T) {
	root := kafkasamples.Dir("logdirs")
	dirs, _ := filepath.Glob(filepath.Join(root, "*", "meta.properties"))
	if len(dirs) < 2 {
		kafkasamples.Skip(t, fmt.Errorf("no Kafka sample log directories under %s", root))
	}
	summary := regexp.MustCompile(`verified (\d+) partition\(s\), (\d+) segment\(s\), (\d+) batch\(es\)`)
	counts := func(path string) [3]int {
		t.Helper()
		_, out, errOut := verifyRun(t, "verify", path)
		m := summary.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("%s: no summary line\n%s%s", path, out, errOut)
		}
		var c [3]int
		for i := range c {
			c[i], _ = strconv.Atoi(m[i+1])
		}
		return c
	}
	var want [3]int
	for _, mp := range dirs {
		c := counts(filepath.Dir(mp))
		for i := range want {
			want[i] += c[i]
		}
	}
	if got := counts(root); got != want || got[2] == 0 {
		t.Errorf("the folder: %d partitions, %d segments, %d batches; its log dirs one by one: %v", got[0], got[1], got[2], want)
	}
}
