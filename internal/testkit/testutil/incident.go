package testutil

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/checkpoint"
	"github.com/logtool/logtool/logfmt/codec"
	"github.com/logtool/logtool/logfmt/layout"
)

// The helpers below make brokers' replicas of one partition out of one log
// directory gen wrote, and change them the way incidents change a replica
// (a truncation, a new leader's appends, its epochs, its checkpoints): the
// fixtures of replicas and digest.

// Brokers copies the log directory base to n brokers under a new directory,
// named b1..bn with node ids 1..n in one cluster, and returns them.
func Brokers(t testing.TB, base string, n int) []string {
	t.Helper()
	root := t.TempDir()
	var dirs []string
	for i := 1; i <= n; i++ {
		d := filepath.Join(root, fmt.Sprintf("b%d", i))
		CopyTree(t, base, d)
		os.Remove(filepath.Join(d, layout.LockFile))
		SetNode(t, d, int32(i))
		dirs = append(dirs, d)
	}
	return dirs
}

// SetNode makes a log directory a KRaft broker's with the given node id.
func SetNode(t testing.TB, logDir string, id int32) {
	t.Helper()
	m := checkpoint.MetaProperties{Version: 1, BrokerID: -1, NodeID: id, ClusterID: "fixture-cluster-000000"}
	writeFile(t, filepath.Join(logDir, layout.MetaPropertiesFile), checkpoint.AppendMetaProperties(nil, m, time.Unix(0, 0).UTC()))
}

func writeFile(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// SegmentBatch is a batch of a partition: its segment, position and offsets.
type SegmentBatch struct {
	Segment    string
	Pos        int64
	Base, Last int64
	Control    bool
}

// PartitionBatches lists a partition directory's batches.
func PartitionBatches(t testing.TB, partDir string) []SegmentBatch {
	t.Helper()
	p, err := layout.ReadPartition(partDir)
	if err != nil {
		t.Fatal(err)
	}
	var out []SegmentBatch
	for _, s := range p.Segments {
		f, err := logfmt.OpenSegment(s.Log)
		if err != nil {
			t.Fatal(err)
		}
		for f.Next() {
			b := f.Batch()
			out = append(out, SegmentBatch{s.Log, b.Pos, b.EntryOffset(), b.LastOffset(), b.IsControl()})
		}
		f.Close()
	}
	return out
}

// TruncateReplica cuts a partition's log at its first batch starting at or
// past off, as a broker's truncation does, and removes the segments after.
func TruncateReplica(t testing.TB, partDir string, off int64) {
	t.Helper()
	for _, b := range PartitionBatches(t, partDir) {
		if b.Base < off {
			continue
		}
		if err := os.Truncate(b.Segment, b.Pos); err != nil {
			t.Fatal(err)
		}
		p, err := layout.ReadPartition(partDir)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range p.Segments {
			if s.Log > b.Segment {
				for _, f := range []string{s.Log, s.Index, s.TimeIndex, s.TxnIndex} {
					if f != "" {
						os.Remove(f)
					}
				}
			}
		}
		break
	}
	dropIndexes(t, partDir)
}

// dropIndexes removes the index files and producer snapshots a change left
// stale: a broker rebuilds them.
func dropIndexes(t testing.TB, partDir string) {
	t.Helper()
	p, err := layout.ReadPartition(partDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range p.Segments {
		for _, f := range []string{s.Index, s.TimeIndex} {
			if f != "" {
				os.Remove(f)
			}
		}
	}
	for _, f := range p.Snapshots {
		os.Remove(f)
	}
}

// AppendRecords writes n uncompressed batches of 5 records from the log end,
// in leader epoch epoch, with values tag, as a leader of that epoch appends
// them.
func AppendRecords(t testing.TB, partDir string, epoch int32, n int, tag string) {
	t.Helper()
	bs := PartitionBatches(t, partDir)
	next := bs[len(bs)-1].Last + 1
	var buf []byte
	ts := time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	for range n {
		o := logfmt.DefaultBatchOptions(next)
		o.PartitionLeaderEpoch, o.Compression = epoch, codec.None
		var recs []logfmt.Record
		for k := range 5 {
			recs = append(recs, logfmt.Record{Offset: next, Timestamp: ts + next, Key: []byte{'k', byte('a' + k)}, Value: []byte(tag)})
			next++
		}
		var err error
		if buf, err = logfmt.AppendBatch(buf, o, recs); err != nil {
			t.Fatal(err)
		}
	}
	AppendLog(t, partDir, buf)
}

// AppendLog appends bytes to a partition's last segment.
func AppendLog(t testing.TB, partDir string, b []byte) {
	t.Helper()
	bs := PartitionBatches(t, partDir)
	AppendBytes(t, bs[len(bs)-1].Segment, b)
	dropIndexes(t, partDir)
}

// SetEpochs writes a partition's leader-epoch-checkpoint.
func SetEpochs(t testing.TB, partDir string, es ...checkpoint.EpochEntry) {
	t.Helper()
	writeFile(t, filepath.Join(partDir, layout.LeaderEpochCheckpointFile), checkpoint.AppendLeaderEpochs(nil, es))
}

// SetRootOffset sets the partition's entry of a log directory's root offset
// checkpoint name, keeping the other partitions' entries.
func SetRootOffset(t testing.TB, logDir, name, topic string, partition int32, off int64) {
	t.Helper()
	path := filepath.Join(logDir, name)
	es, err := checkpoint.ReadOffsetsFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	es = slices.DeleteFunc(es, func(e checkpoint.OffsetEntry) bool { return e.Topic == topic && e.Partition == partition })
	es = append(es, checkpoint.OffsetEntry{Topic: topic, Partition: partition, Offset: off})
	writeFile(t, path, checkpoint.AppendOffsets(nil, es))
}
