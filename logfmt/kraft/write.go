package kraft

import (
	"encoding/binary"

	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/checkpoint"
)

// The writers below append framed metadata records, byte for byte as
// Kafka's MetadataRecordSerde writes them (frame version 1, record type,
// record version, then the record in its flexible encoding). They serve
// logtool gen and the tests; records are checked against this package's decoder and
// against records written by real brokers.

// AppendTopicRecord appends a TopicRecord (version 0).
func AppendTopicRecord(dst []byte, name string, id checkpoint.TopicID) []byte {
	dst = AppendFrame(dst, TypeTopic, 0)
	dst = appendString(dst, name)
	dst = append(dst, id[:]...)
	return append(dst, 0) // no tagged fields
}

// PartitionSpec is what AppendPartitionRecord writes.
type PartitionSpec struct {
	Topic          checkpoint.TopicID
	Partition      int32
	Replicas, ISR  []int32
	Leader         int32
	LeaderEpoch    int32
	PartitionEpoch int32
	// Directories, one per replica, are written from version 1 on; version 2
	// adds only tagged fields (eligible leader replicas) this writer leaves
	// at their defaults.
	Directories []checkpoint.TopicID
	Version     int16 // 0, 1 or 2
}

// AppendPartitionRecord appends a PartitionRecord.
func AppendPartitionRecord(dst []byte, s PartitionSpec) []byte {
	dst = AppendFrame(dst, TypePartition, s.Version)
	dst = binary.BigEndian.AppendUint32(dst, uint32(s.Partition))
	dst = append(dst, s.Topic[:]...)
	dst = appendInt32s(dst, s.Replicas)
	dst = appendInt32s(dst, s.ISR)
	dst = appendInt32s(dst, nil) // removingReplicas
	dst = appendInt32s(dst, nil) // addingReplicas
	dst = binary.BigEndian.AppendUint32(dst, uint32(s.Leader))
	dst = binary.BigEndian.AppendUint32(dst, uint32(s.LeaderEpoch))
	dst = binary.BigEndian.AppendUint32(dst, uint32(s.PartitionEpoch))
	if s.Version >= 1 {
		dst = appendUuids(dst, s.Directories)
	}
	return append(dst, 0) // leaderRecoveryState and the ELR lists keep their defaults
}

// AppendConfigRecord appends a ConfigRecord (version 0): resource type
// ResourceTopic or ResourceBroker; a nil value deletes the config.
func AppendConfigRecord(dst []byte, resourceType int8, resourceName, name string, value *string) []byte {
	dst = AppendFrame(dst, TypeConfig, 0)
	dst = append(dst, byte(resourceType))
	dst = appendString(dst, resourceName)
	dst = appendString(dst, name)
	if value == nil {
		dst = append(dst, 0)
	} else {
		dst = appendString(dst, *value)
	}
	return append(dst, 0)
}

// ChangeSpec is what AppendPartitionChangeRecord writes; nil lists and
// leader -2 are "unchanged" and are left out.
type ChangeSpec struct {
	Topic     checkpoint.TopicID
	Partition int32
	Leader    int32
	ISR       []int32
	Replicas  []int32
	// Directories is written from version 1 on.
	Directories []checkpoint.TopicID
	Version     int16 // 0, 1 or 2
}

// AppendPartitionChangeRecord appends a PartitionChangeRecord, whose
// changes all travel as tagged fields, in tag order.
func AppendPartitionChangeRecord(dst []byte, s ChangeSpec) []byte {
	dst = AppendFrame(dst, TypePartitionChange, s.Version)
	dst = binary.BigEndian.AppendUint32(dst, uint32(s.Partition))
	dst = append(dst, s.Topic[:]...)
	type tagged struct {
		tag  int
		data []byte
	}
	var tags []tagged
	if s.ISR != nil {
		tags = append(tags, tagged{0, appendInt32s(nil, s.ISR)})
	}
	if s.Leader != -2 {
		tags = append(tags, tagged{1, binary.BigEndian.AppendUint32(nil, uint32(s.Leader))})
	}
	if s.Replicas != nil {
		tags = append(tags, tagged{2, appendInt32s(nil, s.Replicas)})
	}
	if s.Directories != nil && s.Version >= 1 {
		tags = append(tags, tagged{8, appendUuids(nil, s.Directories)})
	}
	dst = binary.AppendUvarint(dst, uint64(len(tags)))
	for _, t := range tags {
		dst = binary.AppendUvarint(dst, uint64(t.tag))
		dst = binary.AppendUvarint(dst, uint64(len(t.data)))
		dst = append(dst, t.data...)
	}
	return dst
}

// AppendRemoveTopicRecord appends a RemoveTopicRecord (version 0).
func AppendRemoveTopicRecord(dst []byte, id checkpoint.TopicID) []byte {
	dst = AppendFrame(dst, TypeRemoveTopic, 0)
	dst = append(dst, id[:]...)
	return append(dst, 0)
}

// AppendBeginTransactionRecord appends a BeginTransactionRecord (version
// 0) with its name, a tagged field.
func AppendBeginTransactionRecord(dst []byte, name string) []byte {
	dst = AppendFrame(dst, TypeBeginTransaction, 0)
	s := appendString(nil, name)
	dst = append(dst, 1, 0) // one tagged field, tag 0
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// AppendEndTransactionRecord appends an EndTransactionRecord (version 0).
func AppendEndTransactionRecord(dst []byte) []byte {
	return append(AppendFrame(dst, TypeEndTransaction, 0), 0)
}

// AppendFeatureLevelRecord appends a FeatureLevelRecord (version 0).
func AppendFeatureLevelRecord(dst []byte, name string, level int16) []byte {
	dst = AppendFrame(dst, TypeFeatureLevel, 0)
	dst = appendString(dst, name)
	dst = binary.BigEndian.AppendUint16(dst, uint16(level))
	return append(dst, 0)
}

// AppendFrame appends the frame MetadataRecordSerde puts before a record:
// frame version 1, the record type, the record version.
func AppendFrame(dst []byte, typ uint32, version int16) []byte {
	dst = append(dst, 1)
	dst = binary.AppendUvarint(dst, uint64(typ))
	return binary.AppendUvarint(dst, uint64(version))
}

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s))+1)
	return append(dst, s...)
}

func appendInt32s(dst []byte, v []int32) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(v))+1)
	for _, x := range v {
		dst = binary.BigEndian.AppendUint32(dst, uint32(x))
	}
	return dst
}

func appendUuids(dst []byte, v []checkpoint.TopicID) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(v))+1)
	for _, x := range v {
		dst = append(dst, x[:]...)
	}
	return dst
}

// Control record values (KRaft's control schemas, version 0, flexible).

// AppendLeaderChange appends a LeaderChangeMessage value: the leader and the
// voters that granted it.
func AppendLeaderChange(dst []byte, leader int32, voters []int32) []byte {
	dst = binary.BigEndian.AppendUint16(dst, 0)
	dst = binary.BigEndian.AppendUint32(dst, uint32(leader))
	for range 2 { // voters, then grantingVoters
		dst = binary.AppendUvarint(dst, uint64(len(voters))+1)
		for _, v := range voters {
			dst = binary.BigEndian.AppendUint32(dst, uint32(v))
			dst = append(dst, 0)
		}
	}
	return append(dst, 0)
}

// AppendBatch appends a batch of framed metadata records (or, with control,
// of control record values of type ct) as KRaft's BatchAccumulator writes
// it: magic 2, uncompressed, no producer, the leader epoch as partition
// leader epoch, every record at the append time.
func AppendBatch(dst []byte, baseOffset int64, epoch int32, appendTime int64, control bool, ct logfmt.ControlType, values ...[]byte) ([]byte, error) {
	recs := make([]logfmt.Record, len(values))
	for i, v := range values {
		recs[i] = logfmt.Record{Offset: baseOffset + int64(i), Timestamp: appendTime, Value: v}
		if control {
			recs[i].Key = logfmt.ControlKey(ct)
		}
	}
	o := logfmt.DefaultBatchOptions(baseOffset)
	o.PartitionLeaderEpoch, o.Control = epoch, control
	return logfmt.AppendBatch(dst, o, recs)
}
