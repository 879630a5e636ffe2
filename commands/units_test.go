package commands

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestUnitFlags: every flag taking a size, a duration or a time reads the
// same syntax, and a value out of the flag's range is refused with one
// message naming the flag.
func TestUnitFlags(t *testing.T) {
	s := usageSample(t)
	part := filepath.Join(s, "orders-0")
	out := filepath.Join(t.TempDir(), "gen")
	const now = "--now=2024-03-01T00:00:00Z"
	for _, tc := range []struct {
		args []string
		want string // the error line; "" for success
	}{
		// One size syntax: binary units everywhere, decimal ones refused.
		{[]string{"gen", "--out", out, "--records", "10", "--segment-bytes", "64MiB", "--value-bytes", "1K"}, ""},
		{[]string{"compact", "--kafka-defaults", "--dry-run", now, "--segment-bytes", "1GiB", "--offset-map-memory", "16M", part}, ""},
		{[]string{"retention", "--kafka-defaults", "--dry-run", now, "--retention-bytes", "64KiB", "--retention-ms", "-1", part}, ""},
		{[]string{"dump", "--max-bytes", "1K", "--max-message-size", "1MiB", part}, ""},
		{[]string{"reindex", "--check", "--interval-bytes", "4KiB", part}, ""},
		{[]string{"retention", "--kafka-defaults", "--dry-run", "--retention-bytes", "64KB", part},
			`logtool: retention: --retention-bytes: "64KB": KB is ambiguous (powers of ten or of two): write 64KiB for binary units, or the number of bytes`},
		{[]string{"compact", "--kafka-defaults", "--dry-run", "--offset-map-memory", "12MB", part}, `--offset-map-memory: "12MB": MB is ambiguous`},
		{[]string{"gen", "--out", out, "--segment-bytes", "1.5G"}, `logtool: gen: --segment-bytes: "1.5G" is not a size: want bytes, or a whole number with a binary unit`},

		// Ranges, with the flag's name.
		{[]string{"gen", "--out", out, "--segment-bytes", "0"}, "logtool: gen: --segment-bytes: must be at least 1024 bytes, got 0"},
		{[]string{"gen", "--out", out, "--value-bytes", "0"}, "logtool: gen: --value-bytes: must be positive, got 0"},
		{[]string{"gen", "--out", out, "--time-step", "0s"}, "logtool: gen: --time-step: must be positive, got 0s"},
		{[]string{"compact", "--kafka-defaults", "--dry-run", "--segment-bytes", "0", part}, "logtool: compact: --segment-bytes: must be at least 14 bytes, got 0"},
		{[]string{"compact", "--kafka-defaults", "--dry-run", "--segment-bytes", "2GiB", part}, "logtool: compact: --segment-bytes: must be at most 2147483647 bytes, got 2GiB"},
		{[]string{"compact", "--kafka-defaults", "--dry-run", "--max-lag", "-1h", part}, "logtool: compact: --max-lag: must be positive, got -1h"},
		{[]string{"compact", "--kafka-defaults", "--dry-run", "--min-lag", "-5m", part}, "logtool: compact: --min-lag: must not be negative, got -5m"},
		{[]string{"retention", "--kafka-defaults", "--dry-run", "--retention-ms", "-2", part}, "logtool: retention: --retention-ms: must not be negative, got -2"},
		{[]string{"retention", "--kafka-defaults", "--dry-run", "--retention-bytes", "-1K", part}, "logtool: retention: --retention-bytes: must not be negative, got -1K"},
		{[]string{"dump", "--max-bytes", "-5", part}, "logtool: dump: --max-bytes: must not be negative, got -5"},
		{[]string{"reindex", "--granularity", "-1m", part}, "logtool: reindex: --granularity: must be positive, got -1m"},
		{[]string{"reindex", "--granularity", "1500us", part}, `logtool: reindex: --granularity: "1500us" is not a whole number of milliseconds`},
		{[]string{"find", "--timestamp", "-5", part}, "logtool: find: --timestamp: must not be before 1970-01-01T00:00:00Z, got -5"},

		// One duration and time syntax.
		{[]string{"compact", "--kafka-defaults", "--dry-run", now, "--max-lag", "7d", "--min-lag", "90000", "--delete-retention", "1d12h", part}, ""},
		{[]string{"compact", "--kafka-defaults", "--dry-run", "--max-lag", "soon", part},
			`logtool: compact: --max-lag: "soon" is not a duration: want milliseconds, or Go's syntax with d for days, as in 90s, 36h, 7d, 1d12h`},
		{[]string{"gen", "--out", out, "--start-time", "yesterday"},
			`logtool: gen: --start-time: "yesterday" is not a time: want milliseconds since the epoch, or RFC 3339, as in 2024-01-01T00:00:00Z`},
		{[]string{"dump", "--from-time", "1704067200000", part}, ""},
		{[]string{"find", "--timestamp", "2024-01-01T00:10:00Z", part}, ""},
	} {
		code, _, stderr := runArgs(tc.args...)
		line := strings.TrimSuffix(stderr, "\n")
		switch {
		case tc.want == "" && code != ExitOK:
			t.Errorf("%q: exit %d, stderr %q", tc.args, code, stderr)
		case tc.want != "" && (code != ExitUsage || strings.Count(stderr, "\n") != 1 || !strings.Contains(line, tc.want)):
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}
