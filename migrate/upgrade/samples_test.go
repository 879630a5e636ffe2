package upgrade

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/logtool/logtool/internal/testkit/kafkasamples"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/layout"
)

// upgradeSamples holds data written by real brokers, outside the repository.
// The tests copy what they convert into temporary directories.
var upgradeSamples = kafkasamples.Dir()

func upgradeNeedSamples(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(upgradeSamples); err != nil {
		kafkasamples.Skip(t, err)
	}
}

// upgradeSampleSegment copies a record set served by a Kafka 0.8/0.9
// broker (laid out as in a .log) into a new partition directory.
func upgradeSampleSegment(t *testing.T, name string) (dir, log string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(upgradeSamples, "record-sets", "kafka-rust", name))
	if err != nil {
		t.Fatal(err)
	}
	return upgradeWritePartition(t, 0, b)
}

// Magic-0 data from Kafka 0.8.2 and 0.9 brokers, uncompressed, gzip and
// xerial snappy, converted to both targets: the 42 values in order, offsets
// kept, indexes as recovery builds them.
func TestUpgradeKafka08Samples(t *testing.T) {
	upgradeNeedSamples(t)
	t.Parallel()
	lines, err := os.ReadFile(filepath.Join(upgradeSamples, "record-sets", "kafka-rust", "expected_values_fetch1.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(strings.TrimSuffix(string(lines), "\n"), "\n")
	for _, name := range []string{"fetch1.mytopic.1p.nocompression.kafka.0821.records", "fetch1.mytopic.1p.gzip.kafka.0821.records",
		"fetch1.mytopic.1p.snappy.kafka.0821.records", "fetch1.mytopic.1p.snappy.kafka.0822.records"} {
		for _, to := range []int8{1, 2} {
			dir, log := upgradeSampleSegment(t, name)
			before := upgradeReadSegment(t, log)
			rep, err := Run(Options{Targets: upgradeTargets(t, dir), ToMagic: to})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			after := upgradeReadSegment(t, log)
			if !slices.Equal(after, upgradeExpect(before, to, logfmt.CreateTime, nil)) {
				t.Fatalf("%s to v%d: records differ", name, to)
			}
			var values []string
			for i, r := range after {
				if r.Offset != int64(i) || r.Magic != to {
					t.Fatalf("%s to v%d: record %d: %+v", name, to, i, r)
				}
				values = append(values, r.Value)
			}
			if !slices.Equal(values, want) {
				t.Fatalf("%s to v%d: values differ from the broker's", name, to)
			}
			if got := rep.Partitions[0].MessagesConverted; got != 42 {
				t.Fatalf("%s: %d messages converted", name, got)
			}
			p, err := layout.ReadPartition(dir)
			if err != nil {
				t.Fatal(err)
			}
			upgradeCheckIndexes(t, p.Segments[0])
			upgradeCheckIndependently(t, log, to)
		}
	}
}

// The damaged sample stops the upgrade with its position, untouched.
func TestUpgradeKafka09BadCRCSample(t *testing.T) {
	upgradeNeedSamples(t)
	t.Parallel()
	dir, log := upgradeSampleSegment(t, "fetch2.mytopic.nocompression.invalid_crc.kafka.0900.records")
	orig, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(Options{Targets: upgradeTargets(t, dir)})
	if ce, ok := logfmt.AsCorrupt(err); !ok || ce.File != log || ce.Pos != 0 || !strings.Contains(ce.Msg, "checksum") {
		t.Fatalf("got %v", err)
	}
	if now, _ := os.ReadFile(log); !slices.Equal(now, orig) {
		t.Fatal("the damaged segment was changed")
	}
}

// A Kafka 0.10.1 log directory (magic 1, timestamps -1 then CreateTime,
// a compacted __consumer_offsets) is already at magic 1 and converts to
// magic 2 with every timestamp kept, in place and into --output.
func TestUpgradeKafka010Sample(t *testing.T) {
	upgradeNeedSamples(t)
	t.Parallel()
	src := filepath.Join(upgradeSamples, "logdirs", "xpxwo100_kafka-0.10.1.0-magic1")
	logDir := filepath.Join(t.TempDir(), "logs")
	if err := os.CopyFS(logDir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	ld, err := layout.ReadLogDir(logDir)
	if err != nil {
		t.Fatal(err)
	}
	before := map[string][]upgradeRecord{}
	for _, p := range ld.Partitions {
		before[p.Dir.Name] = upgradeReadPartition(t, p.Path)
	}
	if n := len(before["TEST-TOPIC-0"]); n != 21211 {
		t.Fatalf("TEST-TOPIC-0 has %d records", n)
	}
	snap := upgradeSnapshot(t, logDir)
	rep, err := Run(Options{Targets: upgradeTargets(t, logDir)})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range rep.Partitions {
		if p.SegmentsRewritten != 0 {
			t.Fatalf("%s: rewritten though at magic 1", p.Dir)
		}
	}
	upgradeSameSnapshot(t, "magic-1 data upgraded to magic 1", upgradeSnapshot(t, logDir), snap)

	out := filepath.Join(t.TempDir(), "v2")
	if _, err := Run(Options{Targets: upgradeTargets(t, logDir), ToMagic: 2, Output: out}); err != nil {
		t.Fatal(err)
	}
	upgradeSameSnapshot(t, "source of --output", upgradeSnapshot(t, logDir), snap)
	if _, err := Run(Options{Targets: upgradeTargets(t, logDir), ToMagic: 2, TimestampType: logfmt.LogAppendTime}); err != nil {
		t.Fatal(err)
	}
	for _, root := range []string{logDir, out} {
		for name, recs := range before {
			dir := filepath.Join(root, name)
			// No magic-0 records: the timestamp type option changes nothing.
			if got := upgradeReadPartition(t, dir); !slices.Equal(got, upgradeExpect(recs, 2, logfmt.CreateTime, nil)) {
				t.Fatalf("%s: records differ", dir)
			}
			p, err := layout.ReadPartition(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range p.Segments {
				upgradeCheckIndexes(t, s)
				upgradeCheckIndependently(t, s.Log, 2)
			}
		}
	}
}
