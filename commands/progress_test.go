package commands

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/logtool/logtool/internal/meter"
	"github.com/logtool/logtool/internal/testkit/testutil"
)

// progressRuns are runs over the sample of every command that can draw a
// progress bar, with the bar's description.
func progressRuns(sample string) []struct {
	desc string
	args []string
} {
	const now = "2024-02-01T00:00:00Z"
	return []struct {
		desc string
		args []string
	}{
		{"dump", []string{"dump", sample}},
		{"verify", []string{"verify", "--deep", sample}},
		{"reindex", []string{"reindex", "--check", sample}},
		{"reindex", []string{"reindex", sample}},
		{"upgrading", []string{"upgrade", "--dry-run", "--to-magic", "2", sample}},
		{"planning", []string{"compact", "--dry-run", "--max-lag", "1h", "--now", now, sample}},
		{"retention", []string{"retention", "--dry-run", "--retention-ms", "1h", "--now", now, sample}},
		{"grep", []string{"grep", "--key", "key-000007", "--max-lag", "60d", "--now", now, sample}},
		// $NEW: a new directory each run, since gen never writes a
		// partition twice.
		{"gen", []string{"gen", "--out", "$NEW", "--records", "20000", "--partitions", "2"}},
		{"digest", []string{"digest", "--out", "$NEW", sample}},
		// $BROKERS: two brokers holding copies of the sample.
		{"replicas", []string{"replicas", "$BROKERS"}},
	}
}

// newDirs replaces "$NEW" in args with a new directory, and "$BROKERS"
// with two brokers' copies of the shipped sample.
func newDirs(t *testing.T, args []string) []string {
	var out []string
	for _, a := range args {
		switch a {
		case "$NEW":
			out = append(out, filepath.Join(t.TempDir(), "new"))
		case "$BROKERS":
			out = append(out, testutil.Brokers(t, sample, 2)...)
		default:
			out = append(out, a)
		}
	}
	return out
}

// setProgressDelay makes every run long enough for a bar, or none.
func setProgressDelay(d time.Duration) func() {
	saved := meter.Delay
	meter.Delay = d
	return func() { meter.Delay = saved }
}

// TestNoProgressOffTerminal: with stderr a file rather than a terminal no
// command draws a bar, however long it runs, and on the healthy sample none
// has anything else to say there either.
func TestNoProgressOffTerminal(t *testing.T) {
	defer setProgressDelay(0)()
	s := usageSample(t)
	runs := [][]string{
		{"find", "--offset", "700", filepath.Join(s, "orders-0")},
		{"migrate-checkpoints", "--dry-run", s},
	}
	for _, r := range progressRuns(s) {
		runs = append(runs, r.args)
	}
	for _, args := range runs {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			stderr, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
			if err != nil {
				t.Fatal(err)
			}
			defer stderr.Close()
			var stdout bytes.Buffer
			code := Run(append([]string{"logtool"}, newDirs(t, args)...), strings.NewReader(""), &stdout, stderr)
			got, err := os.ReadFile(stderr.Name())
			if err != nil {
				t.Fatal(err)
			}
			if code != ExitOK || len(got) > 0 {
				t.Errorf("exit %d, stderr %q", code, got)
			}
		})
	}
}

func TestProgressNil(t *testing.T) {
	var buf bytes.Buffer
	for _, g := range []Global{
		{Stderr: &buf},
		{Stderr: os.Stderr, Quiet: true},
		{Stderr: os.Stderr, NoProgress: true},
	} {
		if p := newProgress(g, "x", 10, false); p != nil {
			t.Errorf("%+v: a progress bar", g)
		}
	}
}
