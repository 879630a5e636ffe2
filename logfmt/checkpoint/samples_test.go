package checkpoint

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/logtool/logtool/internal/testkit/kafkasamples"
	"github.com/logtool/logtool/logfmt/layout"
)

var samples = kafkasamples.Dir("logdirs")

// sampleFiles returns the files under the broker samples with one of names,
// or skips the test when the samples are absent.
func sampleFiles(t *testing.T, names ...string) map[string][]string {
	t.Helper()
	if _, err := os.Stat(samples); err != nil {
		kafkasamples.Skip(t, err)
	}
	found := make(map[string][]string)
	err := filepath.WalkDir(samples, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		for _, n := range names {
			if d.Name() == n {
				found[n] = append(found[n], path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// Every root offset checkpoint a broker wrote parses, and writing the entries
// back gives the same bytes: line order is kept.
func TestSampleOffsetCheckpoints(t *testing.T) {
	found := sampleFiles(t, layout.RecoveryPointCheckpointFile, layout.LogStartOffsetCheckpointFile, layout.ReplicationOffsetCheckpointFile, layout.CleanerOffsetCheckpointFile)
	total, entries := 0, 0
	for _, paths := range found {
		for _, path := range paths {
			total++
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ReadOffsetsFile(path)
			if err != nil {
				t.Errorf("%s: %v", path, err)
				continue
			}
			entries += len(got)
			// An empty file (created by the CheckpointFile constructor) has no
			// written form; everything else must round-trip exactly.
			if len(raw) > 0 && !bytes.Equal(AppendOffsets(nil, got), raw) {
				t.Errorf("%s: AppendOffsets does not reproduce the file", path)
			}
		}
	}
	if total < 20 || entries < 500 {
		t.Fatalf("found %d checkpoint files with %d entries, want the samples' 23 files", total, entries)
	}
}

func TestSampleLeaderEpochCheckpoints(t *testing.T) {
	paths := sampleFiles(t, layout.LeaderEpochCheckpointFile)[layout.LeaderEpochCheckpointFile]
	if len(paths) < 30 {
		t.Fatalf("found %d leader-epoch-checkpoint files, want the samples' 40", len(paths))
	}
	multi := false
	for _, path := range paths {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ReadLeaderEpochs(bytes.NewReader(raw), path)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		multi = multi || len(got) > 1
		if len(raw) > 0 && !bytes.Equal(AppendLeaderEpochs(nil, got), raw) {
			t.Errorf("%s: AppendLeaderEpochs does not reproduce the file", path)
		}
	}
	if !multi {
		t.Error("no sample had more than one epoch; the KRaft samples have")
	}
}

func TestSamplePartitionMetadata(t *testing.T) {
	paths := sampleFiles(t, layout.PartitionMetadataFile)[layout.PartitionMetadataFile]
	if len(paths) < 10 {
		t.Fatalf("found %d partition.metadata files, want the samples' 12", len(paths))
	}
	for _, path := range paths {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		m, err := ReadPartitionMetadata(raw, path)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		if got := AppendPartitionMetadata(nil, m); !bytes.Equal(got, raw) {
			t.Errorf("%s: AppendPartitionMetadata = %q, file has %q", path, got, raw)
		}
	}
}

// meta.properties is written in hash order by older JVMs, so its bytes are
// not reproducible; its content must survive a write and a read.
func TestSampleMetaProperties(t *testing.T) {
	paths := sampleFiles(t, layout.MetaPropertiesFile)[layout.MetaPropertiesFile]
	if len(paths) != 7 {
		t.Fatalf("found %d meta.properties files, want the samples' 7", len(paths))
	}
	want := map[string]MetaProperties{
		"ldi-poc_kafka-3.7.0-kraft": {Version: 1, BrokerID: -1, NodeID: 1,
			ClusterID: "q1w2e3r4t5y6u7i8o9p0", DirectoryID: "XHhkr4tkSsD900pOQ8pPfg"},
		"yashasvi960_kafka-4.1-kraft-streams-config": {Version: 1, BrokerID: -1, NodeID: 1,
			ClusterID: "4L6g3nShT-eMCtK--X86sw", DirectoryID: "97sZV1BcxYDCm4AqFPBXQw"},
		"volodymyrzee_kafka-2.x-zk":      {Version: 0, BrokerID: 0, NodeID: -1, ClusterID: "lRaQCIBoRh2xRKLuP9CAQg"},
		"mscaldas2012_cp-5.1.2-lz4":      {Version: 0, BrokerID: 1001, NodeID: -1},
		"xpxwo100_kafka-0.10.1.0-magic1": {Version: 0, BrokerID: 0, NodeID: -1},
	}
	for _, path := range paths {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		m, err := ReadMetaProperties(raw, path)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		if w, ok := want[filepath.Base(filepath.Dir(path))]; ok && !reflect.DeepEqual(m, w) {
			t.Errorf("%s: got %+v, want %+v", path, m, w)
		}
		written := AppendMetaProperties(nil, m, time.Now())
		again, err := ReadMetaProperties(written, path)
		if err != nil || !reflect.DeepEqual(again, m) {
			t.Errorf("%s: round trip gave %+v, %v; want %+v", path, again, err, m)
		}
		// Same lines as the broker's file, in sorted order, after the same
		// two comment lines.
		if !sameLines(raw, written) {
			t.Errorf("%s: rewritten as\n%s\nfrom\n%s", path, written, raw)
		}
	}
}

// sameLines reports whether a and b hold the same property lines, in any
// order, and both start with "#\n#".
func sameLines(a, b []byte) bool {
	props := func(x []byte) []string {
		var lines []string
		for _, l := range strings.Split(string(x), "\n") {
			if l != "" && l[0] != '#' {
				lines = append(lines, l)
			}
		}
		return lines
	}
	pa, pb := props(a), props(b)
	if !bytes.HasPrefix(a, []byte("#\n#")) || !bytes.HasPrefix(b, []byte("#\n#")) || len(pa) != len(pb) {
		return false
	}
	seen := make(map[string]bool)
	for _, l := range pa {
		seen[l] = true
	}
	for _, l := range pb {
		if !seen[l] {
			return false
		}
	}
	return true
}

func TestSampleQuorumState(t *testing.T) {
	paths := sampleFiles(t, layout.QuorumStateFile)[layout.QuorumStateFile]
	epochs := map[string]int32{"ldi-poc_kafka-3.7.0-kraft": 1, "itumelengmogase_kraft-ksqldb-txn": 25, "yashasvi960_kafka-4.1-kraft-streams-config": 2}
	if len(paths) != len(epochs) {
		t.Fatalf("found %d quorum-state files, want the samples' %d", len(paths), len(epochs))
	}
	for _, path := range paths {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		q, err := ReadQuorumState(raw, path)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		logdir := filepath.Base(filepath.Dir(filepath.Dir(path)))
		want := QuorumState{LeaderID: 1, LeaderEpoch: epochs[logdir], VotedID: -1, CurrentVoters: []int32{1}}
		if !reflect.DeepEqual(q, want) {
			t.Errorf("%s: got %+v, want %+v", path, q, want)
		}
	}
}
