package commands

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/logtool/logtool/internal/testkit/testutil"
)

// damagedMiddleAndTail copies the sample's orders-0 into dir/orders-0 with
// the length field of a batch in the middle of its first segment damaged
// (valid batches follow it) and the last batch of its last segment torn.
func damagedMiddleAndTail(t *testing.T, dir string) {
	part := filepath.Join(dir, "orders-0")
	testutil.CopyTree(t, filepath.Join(sample, "orders-0"), part)
	// The batch in the middle then declares 16 MiB more than it holds.
	first := filepath.Join(part, "00000000000000000000.log")
	bs := testutil.Batches(t, first)
	testutil.FlipByte(t, first, int(bs[len(bs)/2].Pos)+9)
	last := filepath.Join(part, "00000000000000001458.log")
	b, err := os.ReadFile(last)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(last, b[:len(b)-100], 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestVerifyGolden(t *testing.T) {
	runGolden(t, "verify", []goldenCase{
		{name: "damaged", args: []string{"verify", "--no-progress", "$DIR/orders-0"}, setup: damagedMiddleAndTail},
		{name: "damaged-verbose", args: []string{"verify", "--no-progress", "--verbose", "$DIR/orders-0"}, setup: damagedMiddleAndTail},
	})
	// verify's JSON does not carry topic and partition yet (issue 38), which
	// runGolden's checkJSONLines requires: each line is only held to be JSON.
	args := []string{"--format", "json", "verify", "--no-progress", "$DIR/orders-0"}
	dir := t.TempDir()
	damagedMiddleAndTail(t, dir)
	code, out, errOut := runArgs(strings.Fields(strings.ReplaceAll(strings.Join(args, " "), "$DIR", dir))...)
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if !json.Valid([]byte(line)) {
			t.Fatalf("not JSON: %s", line)
		}
	}
	checkGolden(t, filepath.Join("testdata", "golden", "verify", "damaged-json.golden"), transcript(args, code, out, errOut, dir))
}

// TestVerifyCountsWhatItPrints holds the summary's count of problems to the
// problem lines printed: each is one problem, or says how many more it
// stands for; with --verbose each is one. Before, problems reindex left out
// were counted and never shown.
func TestVerifyCountsWhatItPrints(t *testing.T) {
	dir := t.TempDir()
	damagedMiddleAndTail(t, dir)
	more := regexp.MustCompile(`: (\d+) more problems like the above are not listed \(--verbose lists them\)`)
	total := regexp.MustCompile(`: (\d+) problem\(s\)`)
	for _, verbose := range []bool{false, true} {
		args := []string{"verify", filepath.Join(dir, "orders-0")}
		if verbose {
			args = []string{"verify", "--verbose", filepath.Join(dir, "orders-0")}
		}
		code, out, _ := verifyRun(t, args...)
		printed, lines := 0, strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		for _, l := range lines {
			if !strings.HasPrefix(l, "problem: ") {
				continue
			}
			if m := more.FindStringSubmatch(l); m != nil && !verbose {
				n, _ := strconv.Atoi(m[1])
				printed += n
			} else {
				printed++
			}
		}
		m := total.FindStringSubmatch(lines[len(lines)-1])
		if code != ExitProblems || m == nil || m[1] != strconv.Itoa(printed) {
			t.Errorf("verbose %v: exit %d, %d problems printed, summary %q", verbose, code, printed, lines[len(lines)-1])
		}
	}
}
