package commands

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logtool/logtool/internal/human"
)

// TestTextOutput pins the conventions every command's text output shares:
// borderless tables naming partitions (not paths), times in RFC 3339 UTC
// with milliseconds when there are some, durations in days, hours, minutes
// and seconds, sizes in binary units. Each step runs on the same copy of
// the sample, in order; want lists line prefixes that must appear.
func TestTextOutput(t *testing.T) {
	s := usageSample(t)
	gen := filepath.Join(t.TempDir(), "gen")
	steps := []struct {
		args  []string
		setup func(t *testing.T)
		want  []string
	}{
		{
			args: []string{"compact", "--kafka-defaults", "--dry-run", "--max-lag", "1h", "--now", "2024-03-01T00:00:00Z", filepath.Join(s, "user-profiles-0")},
			want: []string{
				"PARTITION        ELIGIBLE  CLEANABLE OFFSETS  SIZE                  PAST MAX LAG  REASON\n",
				"user-profiles-0  yes       0-1499             103.1 KiB -> 3.6 KiB  59d22h59m55s  dirty ratio 1.00 > 0.50\n",
				"user-profiles-0: idle active segment cleaned as rolled\n",
				"would compact (first pass) 1 of 1 partition(s): 103.1 KiB -> 3.6 KiB, 1500 -> 39 records, 158 tombstone(s) removed\n",
				"TOPIC          CONFIG                 VALUE             SOURCE\n",
				"(every topic)  max.compaction.lag.ms  3600000 (1h)      COMMAND_LINE\n",
				"user-profiles  segment.bytes          32768 (32.0 KiB)  DYNAMIC_TOPIC_CONFIG\n",
			},
		},
		{
			args: []string{"upgrade", "--dry-run", filepath.Join(s, "legacy.events-v0-0")},
			want: []string{
				"PARTITION           SEGMENTS REWRITTEN  MESSAGES CONVERTED  SIZE\n",
				"legacy.events-v0-0  3 of 3              600                 79.7 KiB -> 84.4 KiB\n",
			},
		},
		{
			args: []string{"reindex", "--dry-run", filepath.Join(s, "orders-0")},
			want: []string{
				"SEGMENT                            BATCHES  VALID     .index        .timeindex    .txnindex\n",
				"orders-0/00000000000000000000.log  145      63.5 KiB  14 unchanged  15 unchanged  0 none\n",
			},
		},
		{
			args: []string{"retention", "--kafka-defaults", "--dry-run", "--retention-ms", "1h", "--now", "2024-01-02T00:00:00Z", filepath.Join(s, "orders-1")},
			want: []string{
				"PARTITION  DELETED  FREED      KEPT     LOG START  OLDEST REMAINING\n",
				"orders-1   3        129.4 KiB  1 (0 B)  0 -> 1500  -\n",
				"PARTITION  BASE OFFSET  SIZE      RULE          LARGEST TIMESTAMP                     AGE\n",
				"orders-1   0            63.5 KiB  retention-ms  2024-01-01T00:12:17.891Z (timeindex)  23h47m42s\n",
				"(every topic)  retention.ms  3600000 (1h)  COMMAND_LINE\n",
			},
		},
		{
			args: []string{"find", "--timestamp", "2024-01-01T00:10:00Z", filepath.Join(s, "payments.txn-0")},
			want: []string{
				"target     timestamp 1704067800000 (2024-01-01T00:10:00Z)\n",
				"timeindex  entry: timestamp 1704067776680 (2024-01-01T00:09:36.680Z) at offset 578\n",
				"scan       from byte 13231 to byte 17659: read 5 batch(es), 4.3 KiB in all\n",
				"batch      at byte 16250, size 1.4 KiB: offsets 595 to 604",
			},
		},
		{
			args: []string{"migrate-checkpoints", "--dry-run", "--clean-time", "1704067200123", s},
			setup: func(t *testing.T) {
				if err := os.WriteFile(filepath.Join(s, "cleaner-offset-checkpoint"), []byte("0\n1\norders 0 700\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			},
			want: []string{
				"PARTITION  OFFSET  CLEAN TIME                ACTION  FROM                         TO\n",
				"orders-0   700     2024-01-01T00:00:00.123Z  write   cleaner-offset-checkpoint:3  orders-0/cleaner-checkpoint\n",
			},
		},
		{
			args: []string{"gen", "--out", gen, "--records", "10", "--partitions", "2"},
			want: []string{
				"PARTITION  SEGMENTS  RECORDS  LOG END OFFSET\n",
				"orders-0   1         10       10\n",
				"orders-1   1         10       10\n",
				"wrote 20 record(s) in 2 partition(s) into " + gen + "\n",
			},
		},
		{
			args: []string{"dump", s},
			want: []string{
				"PARTITION                  POLICY   SIZE       RECORDS  FIRST OFFSET  LAST OFFSET  LAST TIMESTAMP            PROBLEMS\n",
				"orders-0                   delete   130.8 KiB  1500     0             1499         2024-01-01T00:25:01.685Z  0\n",
				"TOTAL                               701.6 KiB  7613                                                          0\n",
			},
		},
	}
	for _, st := range steps {
		t.Run(st.args[0], func(t *testing.T) {
			if st.setup != nil {
				st.setup(t)
			}
			code, stdout, stderr := runArgs(st.args...)
			if code != ExitOK || stderr != "" {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			lines := strings.SplitAfter(stdout, "\n")
			for _, w := range st.want {
				found := false
				for _, l := range lines {
					found = found || strings.HasPrefix(l, w)
				}
				if !found {
					t.Errorf("no line starts with %q in\n%s", w, stdout)
				}
			}
			for _, l := range lines {
				if strings.ContainsAny(l, "│┌└─") || strings.HasSuffix(l, " \n") {
					t.Errorf("not a plain table line: %q", l)
				}
			}
			// Tables name partitions, not paths: the copy's path shows only
			// in a last line naming the directory given, in the line saying
			// where the topic configuration comes from, and in find's
			// answer, which names the segment file to open.
			var table []string
			for _, l := range lines[:len(lines)-2] {
				if !strings.HasPrefix(l, "Topic configuration: ") {
					table = append(table, l)
				}
			}
			if st.args[0] != "gen" && st.args[0] != "find" && strings.Contains(strings.Join(table, ""), s) {
				t.Errorf("a table shows the path %s:\n%s", s, stdout)
			}
		})
	}
}

// TestDurationsReadBack: a duration logtool prints is one its duration
// flags accept, so a lag can be pasted back; likewise a time.
func TestDurationsReadBack(t *testing.T) {
	for _, ms := range []int64{0, 1500, 59_000, 3_600_000 + 5_000, 742*3_600_000 + 59*60_000 + 55_000, 7 * 86_400_000, 1<<40 + 1} {
		rounded := ms
		if ms >= 1000 {
			rounded = (ms + 500) / 1000 * 1000
		}
		s := human.Duration(ms)
		got, err := durationArg("max-lag", s, 0, noMax)
		if err != nil || got != rounded {
			t.Errorf("Duration(%d) = %q reads back as %d, %v; want %d", ms, s, got, err, rounded)
		}
	}
	for _, ms := range []int64{0, 1704067776680, 1704067800000} {
		s := human.Time(ms)
		if got, err := timeArg("now", s, 0); err != nil || got != ms {
			t.Errorf("Time(%d) = %q reads back as %d, %v", ms, s, got, err)
		}
	}
}

// TestQuietDryRunPrintsPlan: --quiet drops a writing command's report, but
// a dry run's plan is all it does, so the plan is printed.
func TestQuietDryRunPrintsPlan(t *testing.T) {
	s := usageSample(t)
	for _, args := range [][]string{
		{"reindex", "--dry-run", s},
		{"upgrade", "--dry-run", s},
		{"migrate-checkpoints", "--dry-run", s},
		{"compact", "--kafka-defaults", "--dry-run", "--max-lag", "1h", "--now", "2024-03-01T00:00:00Z", s},
		{"retention", "--kafka-defaults", "--dry-run", "--retention-ms", "1h", "--now", "2024-03-01T00:00:00Z", s},
	} {
		want := "orders-0"
		if args[0] == "migrate-checkpoints" {
			want = "would be renamed" // the sample's root checkpoint has no entries
		}
		code, stdout, stderr := runArgs(append([]string{"--quiet"}, args...)...)
		if code != ExitOK || stderr != "" || !strings.Contains(stdout, want) {
			t.Errorf("%s --quiet --dry-run: exit %d, stderr %q, stdout %q; want the plan", args[0], code, stderr, stdout)
		}
	}
}
