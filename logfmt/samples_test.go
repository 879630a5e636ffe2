package logfmt

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logtool/logtool/internal/testkit/codectest"
	"github.com/logtool/logtool/internal/testkit/kafkasamples"
	"github.com/logtool/logtool/logfmt/codec"
)

// samplesDir holds segments written by real brokers (Kafka 0.8.2 to 3.7),
// kept outside the repository and read by path.
var samplesDir = kafkasamples.Dir()

func needSamples(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(samplesDir); err != nil {
		kafkasamples.Skip(t, err)
	}
}

type fileStats struct {
	batches, records int
	values           [][]byte
	keys             [][]byte
	badCRC           int
}

// readFile deep-reads a segment-shaped file, collecting CRC failures rather
// than stopping, so the one damaged sample can be told apart.
func readFile(t *testing.T, path string) fileStats {
	t.Helper()
	seg, err := OpenSegment(path)
	if err != nil {
		t.Fatal(err)
	}
	defer seg.Close()
	var st fileStats
	var it RecordIter
	it.File = path
	for seg.Next() {
		b := seg.Batch()
		st.batches++
		if err := b.Validate(); err != nil {
			st.badCRC++
			continue
		}
		if err := it.Reset(b); err != nil {
			t.Fatalf("%v", err)
		}
		for it.Next() {
			r := it.Record()
			if !r.CRCValid {
				st.badCRC++
			}
			st.records++
			st.values = append(st.values, clone(r.Value))
			st.keys = append(st.keys, clone(r.Key))
		}
		if err := it.Err(); err != nil {
			t.Fatalf("%v", err)
		}
	}
	if err := seg.Err(); err != nil {
		t.Fatalf("%v", err)
	}
	if seg.End() != EndClean {
		t.Fatalf("%s: ends with %v: %s", path, seg.End(), seg.EndDetail())
	}
	return st
}

func TestRealLogDirSegments(t *testing.T) {
	needSamples(t)
	var paths []string
	filepath.WalkDir(filepath.Join(samplesDir, "logdirs"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".log") || strings.HasSuffix(p, ".checkpoint") && !strings.Contains(filepath.Base(p), "offset") && !strings.Contains(filepath.Base(p), "epoch")) {
			paths = append(paths, p)
		}
		return nil
	})
	if len(paths) < 40 {
		t.Fatalf("found only %d segment files", len(paths))
	}
	total := 0
	for _, p := range paths {
		st := readFile(t, p)
		if st.badCRC != 0 {
			t.Errorf("%s: %d CRC failures", p, st.badCRC)
		}
		total += st.records
	}
	t.Logf("%d files, %d records", len(paths), total)
	// Spot checks of what the samples README states.
	st := readFile(t, filepath.Join(samplesDir, "logdirs/xpxwo100_kafka-0.10.1.0-magic1/TEST-TOPIC-0/00000000000000000000.log"))
	if st.records != 21211 {
		t.Errorf("TEST-TOPIC-0: %d messages, want 21211", st.records)
	}
	st = readFile(t, filepath.Join(samplesDir, "logdirs/seanorth_kafka-server-snappy/some-topic-0/00000000000000000000.log"))
	if st.batches != 9 || st.records != 9 {
		t.Errorf("some-topic-0: %d batches %d records, want 9 and 9", st.batches, st.records)
	}
}

func TestRealRecordSets(t *testing.T) {
	needSamples(t)
	dir := filepath.Join(samplesDir, "record-sets/kafka-rust")
	lines := func(name string) []string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	}
	want1 := lines("expected_values_fetch1.txt")
	for _, f := range []string{"nocompression.kafka.0821", "gzip.kafka.0821", "snappy.kafka.0821", "snappy.kafka.0822"} {
		st := readFile(t, filepath.Join(dir, "fetch1.mytopic.1p."+f+".records"))
		if st.badCRC != 0 || st.records != len(want1) {
			t.Errorf("%s: %d records (%d bad CRC), want %d", f, st.records, st.badCRC, len(want1))
			continue
		}
		for i, v := range st.values {
			if string(v) != want1[i] {
				t.Errorf("%s: value %d = %.40q, want %.40q", f, i, v, want1[i])
			}
		}
	}
	st := readFile(t, filepath.Join(dir, "fetch2.mytopic.nocompression.kafka.0900.records"))
	if want := lines("expected_values_fetch2.txt"); st.records != 1 || st.badCRC != 0 || string(st.values[0]) != want[0] {
		t.Errorf("fetch2: %d records, %d bad", st.records, st.badCRC)
	}
	st = readFile(t, filepath.Join(dir, "fetch2.mytopic.nocompression.invalid_crc.kafka.0900.records"))
	if st.badCRC == 0 {
		t.Error("the damaged fetch2 sample passed its CRC check")
	}

	// kafka-go captures: keys alpha..theta in the order the name gives.
	kg := filepath.Join(samplesDir, "record-sets/kafka-go")
	entries, err := os.ReadDir(kg)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"}
	for _, e := range entries {
		st := readFile(t, filepath.Join(kg, e.Name()))
		if st.badCRC != 0 || st.records == 0 {
			t.Errorf("%s: %d records, %d bad CRC", e.Name(), st.records, st.badCRC)
		}
		for i, k := range st.keys {
			if !bytes.Contains([]byte(strings.Join(names, " ")), k) || len(k) == 0 {
				t.Errorf("%s: record %d key %q", e.Name(), i, k)
			}
			if !bytes.HasPrefix(st.values[i], []byte(`{"count":`)) {
				t.Errorf("%s: record %d value %q", e.Name(), i, st.values[i])
			}
		}
		if e.Name() == "kafkago_v1-v1.records" && fmt.Sprintf("%s", st.keys) != "[alpha beta gamma delta]" {
			t.Errorf("v1-v1 keys %s", st.keys)
		}
		if e.Name() == "kafkago_v2b-v1.records" && fmt.Sprintf("%s", st.keys) != "[alpha beta alpha beta]" {
			t.Errorf("v2b-v1 keys %s", st.keys)
		}
	}
}

// Java's producers compress LZ4 and xerial snappy deterministically, and so
// does codec.Compress: recompressing a broker-written payload must give back
// the very bytes on disk.
func TestRealPayloadsRecompressIdentically(t *testing.T) {
	needSamples(t)
	checked := map[codec.Type]int{}
	for _, dir := range []string{"logdirs/mscaldas2012_cp-5.1.2-lz4", "logdirs/seanorth_kafka-server-snappy"} {
		filepath.WalkDir(filepath.Join(samplesDir, dir), func(p string, d os.DirEntry, err error) error {
			if err != nil || !strings.HasSuffix(p, ".log") {
				return err
			}
			seg, err := OpenSegment(p)
			if err != nil {
				t.Fatal(err)
			}
			defer seg.Close()
			for seg.Next() {
				b := seg.Batch()
				c := b.Compression()
				if b.Magic() != 2 || (c != codec.LZ4 && c != codec.Snappy) {
					continue
				}
				area := b.Data[V2HeaderSize:]
				raw, err := codectest.Decompress(nil, c, area, 2, 0)
				if err != nil {
					t.Fatalf("%s at %d: %v", p, b.Pos, err)
				}
				again, err := codectest.Compress(nil, c, raw, 2)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(again, area) {
					t.Errorf("%s at %d: %s recompression differs from the broker's bytes", p, b.Pos, c)
				}
				checked[c]++
			}
			return nil
		})
	}
	if checked[codec.LZ4] == 0 || checked[codec.Snappy] == 0 {
		t.Fatalf("checked %v", checked)
	}
	t.Logf("recompressed %v batches identically", checked)
}
