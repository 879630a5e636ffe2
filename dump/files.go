package dump

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/logfmt/checkpoint"
	"github.com/logtool/logtool/logfmt/layout"
	"github.com/logtool/logtool/logfmt/protocol"
	"github.com/logtool/logtool/logfmt/snapshot"
)

// Kafka's DumpLogSegments prints producer snapshots; the other small files
// (checkpoints, partition.metadata, meta.properties, quorum-state) it
// cannot read at all. Their lines here follow the same "name: value" style.

// maxSmallFile bounds the files read whole. A producer snapshot holds 46
// bytes per producer; checkpoints a line per partition.
const maxSmallFile = 256 << 20

func (d *dumper) readSmall() ([]byte, bool) {
	f, err := safefile.Open(d.file)
	if err != nil {
		d.problemErr(err)
		return nil, false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxSmallFile+1))
	if err != nil {
		d.problemErr(err)
		return nil, false
	}
	if len(b) > maxSmallFile {
		d.problem(maxSmallFile, fmt.Sprintf("larger than %d bytes; not read", maxSmallFile))
		return nil, false
	}
	return b, true
}

// dumpProducerSnapshot prints a producer state snapshot as
// DumpLogSegments.dumpProducerIdSnapshot does: the batch metadata part only
// for producers that have some (a last offset of at least 0).
func (d *dumper) dumpProducerSnapshot() {
	entries, err := snapshot.Read(d.file, maxSmallFile)
	if errors.Is(err, snapshot.ErrTooLarge) {
		d.problem(maxSmallFile, fmt.Sprintf("larger than %d bytes; not read", maxSmallFile))
		return
	}
	if err != nil {
		d.problemErr(err)
		return
	}
	d.readable = true
	if !d.items() {
		return
	}
	for _, e := range entries {
		hasBatch := e.LastOffset >= 0
		firstSeq := decrementSequence(e.LastSequence, e.OffsetDelta)
		if d.o.JSON {
			l := d.objStart(d.s.buf(), "snapshot-entry")
			l = appendIntField(l, "producerId", e.ProducerID)
			l = appendIntField(l, "producerEpoch", int64(e.Epoch))
			l = appendIntField(l, "coordinatorEpoch", int64(e.CoordinatorEpoch))
			l = append(l, `,"currentTxnFirstOffset":`...)
			l = appendNullable(l, e.CurrentTxnFirstOffset, e.CurrentTxnFirstOffset >= 0)
			l = appendIntField(l, "lastTimestamp", e.Timestamp)
			if hasBatch {
				l = appendIntField(l, "firstSequence", int64(firstSeq))
				l = appendIntField(l, "lastSequence", int64(e.LastSequence))
				l = appendIntField(l, "lastOffset", e.LastOffset)
				l = appendIntField(l, "offsetDelta", int64(e.OffsetDelta))
				l = appendIntField(l, "timestamp", e.Timestamp)
			}
			d.s.set(append(l, "}\n"...))
			continue
		}
		l := append(d.s.buf(), "producerId: "...)
		l = strconv.AppendInt(l, e.ProducerID, 10)
		l = append(l, " producerEpoch: "...)
		l = strconv.AppendInt(l, int64(e.Epoch), 10)
		l = append(l, " coordinatorEpoch: "...)
		l = strconv.AppendInt(l, int64(e.CoordinatorEpoch), 10)
		l = append(l, " currentTxnFirstOffset: "...)
		l = appendOptionalLong(l, e.CurrentTxnFirstOffset, e.CurrentTxnFirstOffset >= 0)
		l = append(l, " lastTimestamp: "...)
		l = strconv.AppendInt(l, e.Timestamp, 10)
		if hasBatch {
			l = append(l, " firstSequence: "...)
			l = strconv.AppendInt(l, int64(firstSeq), 10)
			l = append(l, " lastSequence: "...)
			l = strconv.AppendInt(l, int64(e.LastSequence), 10)
			l = append(l, " lastOffset: "...)
			l = strconv.AppendInt(l, e.LastOffset, 10)
			l = append(l, " offsetDelta: "...)
			l = strconv.AppendInt(l, int64(e.OffsetDelta), 10)
			l = append(l, " timestamp: "...)
			l = strconv.AppendInt(l, e.Timestamp, 10)
		}
		d.s.set(append(l, '\n'))
	}
}

// decrementSequence is DefaultRecordBatch.decrementSequence: the first
// sequence of a batch from its last, wrapping below 0 to MaxInt32.
func decrementSequence(seq, delta int32) int32 {
	if seq < delta {
		return 1<<31 - 1 - (delta - seq) + 1
	}
	return seq - delta
}

func appendNullable(l []byte, v int64, ok bool) []byte {
	if !ok {
		return append(l, "null"...)
	}
	return strconv.AppendInt(l, v, 10)
}

// readText parses the file with one of logfmt/checkpoint's text readers,
// reporting a failure as the file's problem.
func readText[T any](d *dumper, read func(io.Reader, string) (T, error)) (T, bool) {
	var v T
	f, err := safefile.Open(d.file)
	if err != nil {
		d.problemErr(err)
		return v, false
	}
	defer f.Close()
	if v, err = read(f, d.file); err != nil {
		d.problemErr(err)
		return v, false
	}
	d.readable = true
	return v, true
}

// dumpOffsetCheckpoint prints a root offset checkpoint: one line per entry,
// as it is read, since the file may hold millions. A malformed file has its
// entries up to the problem printed, then the problem, as a segment has.
func (d *dumper) dumpOffsetCheckpoint() {
	f, err := safefile.Open(d.file)
	if err != nil {
		d.problemErr(err)
		return
	}
	defer f.Close()
	err = checkpoint.ScanOffsets(f, d.file, func(e checkpoint.OffsetEntry) error {
		d.checkpointEntry(e.Topic, e.Partition, e.Offset, false, 0)
		return nil
	})
	if err != nil {
		d.problemErr(err)
		return
	}
	d.readable = true
}

func (d *dumper) checkpointEntry(topic string, partition int32, offset int64, cleaner bool, cleanTime int64) {
	if !d.items() {
		return
	}
	if d.o.JSON {
		l := d.objStart(d.s.buf(), "checkpoint-entry")
		if !d.inPartition { // else the file's own fields name the partition
			l = append(l, `,"topic":`...)
			l = protocol.AppendString(l, topic)
			l = appendIntField(l, "partition", int64(partition))
		}
		l = appendIntField(l, "offset", offset)
		if cleaner {
			l = appendIntField(l, "cleanTimeMs", cleanTime)
		}
		d.s.set(append(l, "}\n"...))
		return
	}
	l := append(d.s.buf(), "topic: "...)
	l = append(l, topic...)
	l = append(l, " partition: "...)
	l = strconv.AppendInt(l, int64(partition), 10)
	l = append(l, " offset: "...)
	l = strconv.AppendInt(l, offset, 10)
	if cleaner {
		l = append(l, " lastCleanTimeMs: "...)
		l = strconv.AppendInt(l, cleanTime, 10)
	}
	d.s.set(append(l, '\n'))
}

// dumpLeaderEpochs prints a leader-epoch-checkpoint.
func (d *dumper) dumpLeaderEpochs() {
	entries, ok := readText(d, checkpoint.ReadLeaderEpochs)
	if !ok {
		return
	}
	if !d.items() {
		return
	}
	for _, e := range entries {
		if d.o.JSON {
			l := d.objStart(d.s.buf(), "leader-epoch-entry")
			l = appendIntField(l, "epoch", int64(e.Epoch))
			l = appendIntField(l, "startOffset", e.StartOffset)
			d.s.set(append(l, "}\n"...))
			continue
		}
		l := append(d.s.buf(), "epoch: "...)
		l = strconv.AppendInt(l, int64(e.Epoch), 10)
		l = append(l, " startOffset: "...)
		l = strconv.AppendInt(l, e.StartOffset, 10)
		d.s.set(append(l, '\n'))
	}
}

// dumpCleanerCheckpoint prints logtool's per-partition cleaner checkpoint,
// naming the partition from its directory.
func (d *dumper) dumpCleanerCheckpoint() {
	c, ok := readText(d, checkpoint.ReadCleaner)
	if !ok {
		return
	}
	pd, err := layout.ParsePartitionDir(filepath.Base(filepath.Dir(d.abs)))
	if err != nil {
		pd.Partition = -1
	}
	d.checkpointEntry(pd.Topic, pd.Partition, c.FirstDirtyOffset, true, c.LastCleanTimeMs)
}

// dumpPartitionMetadata prints partition.metadata.
func (d *dumper) dumpPartitionMetadata() {
	b, ok := d.readSmall()
	if !ok {
		return
	}
	m, err := checkpoint.ReadPartitionMetadata(b, d.file)
	if err != nil {
		d.problemErr(err)
		return
	}
	d.readable = true
	if d.o.JSON {
		if d.items() {
			l := d.objStart(d.s.buf(), "partition-metadata")
			l = appendIntField(l, "version", int64(m.Version))
			l = append(l, `,"topicId":"`...)
			l = append(l, m.TopicID.String()...)
			d.s.set(append(l, "\"}\n"...))
		}
		return
	}
	d.textLine("version: ", strconv.Itoa(m.Version), " topicId: ", m.TopicID.String())
}

// dumpMetaProperties prints meta.properties.
func (d *dumper) dumpMetaProperties() {
	b, ok := d.readSmall()
	if !ok {
		return
	}
	m, err := checkpoint.ReadMetaProperties(b, d.file)
	if err != nil {
		d.problemErr(err)
		return
	}
	d.readable = true
	others := make([]string, 0, len(m.Other))
	for k := range m.Other {
		others = append(others, k)
	}
	slices.Sort(others)
	if d.o.JSON {
		if !d.items() {
			return
		}
		l := d.objStart(d.s.buf(), "meta-properties")
		l = appendIntField(l, "version", int64(m.Version))
		if m.Version == 0 {
			l = append(l, `,"brokerId":`...)
			l = appendNullable(l, int64(m.BrokerID), m.BrokerID >= 0)
		} else {
			l = appendIntField(l, "nodeId", int64(m.NodeID))
		}
		l = appendStringField(l, "clusterId", m.ClusterID)
		l = appendStringField(l, "directoryId", m.DirectoryID)
		l = append(l, `,"other":{`...)
		for i, k := range others {
			if i > 0 {
				l = append(l, ',')
			}
			l = protocol.AppendString(l, k)
			l = append(l, ':')
			l = protocol.AppendString(l, m.Other[k])
		}
		d.s.set(append(l, "}}\n"...))
		return
	}
	line := "version: " + strconv.Itoa(m.Version)
	if m.Version == 0 {
		line += " broker.id: " + strconv.Itoa(int(m.BrokerID))
	} else {
		line += " node.id: " + strconv.Itoa(int(m.NodeID))
	}
	if m.ClusterID != "" {
		line += " cluster.id: " + m.ClusterID
	}
	if m.DirectoryID != "" {
		line += " directory.id: " + m.DirectoryID
	}
	for _, k := range others {
		line += " " + k + ": " + m.Other[k]
	}
	d.textLine(line)
}

// appendStringField appends "name":"v", or null when v is empty.
func appendStringField(l []byte, name, v string) []byte {
	l = append(l, ',', '"')
	l = append(l, name...)
	l = append(l, '"', ':')
	if v == "" {
		return append(l, "null"...)
	}
	return protocol.AppendString(l, v)
}

// dumpQuorumState prints KRaft's quorum-state.
func (d *dumper) dumpQuorumState() {
	b, ok := d.readSmall()
	if !ok {
		return
	}
	q, err := checkpoint.ReadQuorumState(b, d.file)
	if err != nil {
		d.problemErr(err)
		return
	}
	d.readable = true
	voters := "["
	for i, v := range q.CurrentVoters {
		if i > 0 {
			voters += ","
		}
		voters += strconv.Itoa(int(v))
	}
	voters += "]"
	if d.o.JSON {
		if !d.items() {
			return
		}
		l := d.objStart(d.s.buf(), "quorum-state")
		l = appendIntField(l, "dataVersion", int64(q.DataVersion))
		l = appendIntField(l, "leaderId", int64(q.LeaderID))
		l = appendIntField(l, "leaderEpoch", int64(q.LeaderEpoch))
		l = appendIntField(l, "votedId", int64(q.VotedID))
		if q.DataVersion == 0 {
			l = appendStringField(l, "clusterId", q.ClusterID)
			l = appendIntField(l, "appliedOffset", q.AppliedOffset)
			l = append(l, `,"currentVoters":`...)
			if q.CurrentVoters == nil {
				l = append(l, "null"...)
			} else {
				l = append(l, voters...)
			}
		} else {
			l = appendStringField(l, "votedDirectoryId", q.VotedDirectoryID)
		}
		d.s.set(append(l, "}\n"...))
		return
	}
	line := fmt.Sprintf("dataVersion: %d leaderId: %d leaderEpoch: %d votedId: %d", q.DataVersion, q.LeaderID, q.LeaderEpoch, q.VotedID)
	if q.DataVersion == 0 {
		line += fmt.Sprintf(" clusterId: %s appliedOffset: %d currentVoters: %s", q.ClusterID, q.AppliedOffset, voters)
	} else if q.VotedDirectoryID != "" {
		line += " votedDirectoryId: " + q.VotedDirectoryID
	}
	d.textLine(line)
}

// dumpCleanShutdown prints a .kafka_cleanshutdown marker: the broker epoch
// Kafka 3.7 and later record in it, or that it is the empty marker of older
// versions.
func (d *dumper) dumpCleanShutdown() {
	b, ok := d.readSmall()
	if !ok {
		return
	}
	c, err := checkpoint.ReadCleanShutdown(b, d.file)
	if err != nil {
		d.problemErr(err)
		return
	}
	d.readable = true
	if d.o.JSON {
		if !d.items() {
			return
		}
		l := d.objStart(d.s.buf(), "clean-shutdown")
		l = append(l, `,"version":`...)
		l = appendNullable(l, int64(c.Version), !c.Empty)
		l = append(l, `,"brokerEpoch":`...)
		l = appendNullable(l, c.BrokerEpoch, !c.Empty)
		d.s.set(append(l, "}\n"...))
		return
	}
	if c.Empty {
		d.textLine("empty: a clean shutdown marker without a broker epoch, as Kafka before 3.7 writes it")
		return
	}
	d.textLine(fmt.Sprintf("version: %d brokerEpoch: %d", c.Version, c.BrokerEpoch))
}
