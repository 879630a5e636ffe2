// Package replicas compares the replicas of a partition held by several
// brokers, offline: whether they hold the same batches at the same offsets,
// where they part when they do not, and what Kafka's follower truncation would
// remove from each when one of them leads again.
//
// A replica is read from a broker's log directories (OpenLogDirs) or from a digest a
// broker's machine wrote (Digest), into the same Partition: the comparison
// cannot tell which it was given, so both give the same verdict.
package replicas

import (
	"cmp"

	"github.com/logtool/logtool/logfmt/checkpoint"
)

// Batch is what a replica holds of one batch: the header fields Kafka's
// cleaner keeps (offsets, leader epoch, producer, flags) and those it changes
// when it rewrites a batch (CRC, size, count, max timestamp).
type Batch struct {
	Base, Last   int64
	Epoch        int32
	CRC          uint32
	Size         int32
	MaxTimestamp int64
	Count        int32
	ProducerID   int64
	BaseSequence int32
	Flags        Flags
	// Records are the record hashes, in offset order, of a batch of a
	// compacted replica (Partition.Hashed); nil otherwise.
	Records []Record
}

// Flags are what a batch is.
type Flags uint8

const (
	Cleaned       Flags = 1 << iota // rewritten by a cleaner (see cleaned)
	Control                         // a control batch
	Transactional                   // written in a transaction
	AbortMarker                     // a control batch holding an ABORT marker
	Legacy                          // a magic 0 or 1 entry
)

// Record is one record of a hashed batch. Key hashes the key alone, so that a
// later version of a key can be found; Sum hashes key, value and headers.
type Record struct {
	Offset    int64
	Key, Sum  uint64
	Tombstone bool // a null value
}

// Damage is a range of a replica's log that could not be read: the batches
// between From and To (offsets, To -1 when the log ends there) are unknown,
// and nothing there is compared.
type Damage struct {
	File     string
	Pos      int64
	Msg      string
	From, To int64
}

// Partition is one broker's replica of a partition.
type Partition struct {
	// Source is where it was read: its partition directory, or the digest.
	Source     string
	Topic      string
	Partition  int32
	TopicID    checkpoint.TopicID
	HasTopicID bool
	// LogStartOffset is the greater of the log-start-offset-checkpoint
	// entry and the first segment's base offset, as Kafka's loader has it.
	LogStartOffset int64
	LogEndOffset   int64
	// HighWatermark is the replication-offset-checkpoint entry, 0 when
	// there is none, kept within the log's range as Kafka's
	// UnifiedLog.updateHighWatermark keeps it; HighWatermarkKnown says
	// whether there was an entry.
	HighWatermark      int64
	HighWatermarkKnown bool
	// Epochs is the leader epoch cache as Kafka loads it: the
	// leader-epoch-checkpoint without the entries at or past the log end
	// offset (LeaderEpochFileCache.truncateFromEnd).
	Epochs  []checkpoint.EpochEntry
	Batches []Batch
	Damage  []Damage
	// Compacted is set when a cleaner has been over the replica's log: a
	// cleaned batch, or a gap between batches, which only a cleaner leaves.
	Compacted bool
	// Hashed is set when every batch carries its record hashes: the
	// replica is compacted, or every record was asked for.
	Hashed bool
}

// Key orders partitions as every source yields them.
func (p *Partition) Key() PartitionKey { return PartitionKey{p.Topic, p.Partition} }

// PartitionKey names a partition.
type PartitionKey struct {
	Topic     string
	Partition int32
}

// Compare orders keys by topic, then partition number.
func (k PartitionKey) Compare(o PartitionKey) int {
	return cmp.Or(cmp.Compare(k.Topic, o.Topic), cmp.Compare(k.Partition, o.Partition))
}

// LatestEpoch is the last epoch of the cache, or else the greatest epoch of a
// batch; -1 when neither has one.
func (p *Partition) LatestEpoch() int32 {
	if n := len(p.Epochs); n > 0 {
		return p.Epochs[n-1].Epoch
	}
	e := int32(-1)
	for i := range p.Batches {
		e = max(e, p.Batches[i].Epoch)
	}
	return e
}

// cleaned tells from a magic-2 header whether a cleaner rewrote the batch
// (MemoryRecords.filterTo): it drops records but keeps the batch's last offset
// delta, so fewer records than offsets remain; it sets the delete horizon
// (attributes bit 6) on batches with tombstones or markers; and a batch left
// with no record keeps only its header, with a count of 0. A producer writes
// neither: its batches hold one record per offset, without a horizon.
func cleaned(count, lastOffsetDelta int32, deleteHorizon bool) bool {
	return deleteHorizon || count != lastOffsetDelta+1
}
