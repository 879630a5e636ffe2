// Package remotemeta decodes the records of __remote_log_metadata, the
// topic where tiered storage's TopicBasedRemoteLogMetadataManager (KIP-405)
// keeps the state of remote log segments, as kafka-dump-log.sh
// --remote-log-metadata-decoder prints them.
//
// Records have no key. A value is framed as a metadata record (an unsigned
// varint frame version 1, an unsigned varint api key, an unsigned varint
// version) and holds one of the flexible messages of Kafka's
// storage/src/main/resources/message: RemoteLogSegmentMetadataRecord (0),
// RemoteLogSegmentMetadataUpdateRecord (1),
// RemotePartitionDeleteMetadataRecord (2) or
// RemoteLogSegmentMetadataSnapshotRecord (3). Kafka prints the Java
// toString of the object each becomes (RemoteLogSegmentMetadata and its
// kin), not JSON; so does this package.
package remotemeta

import (
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/logtool/logtool/logfmt/kraft"
	p "github.com/logtool/logtool/logfmt/protocol"
)

var (
	topicIDPartition = &p.Struct{Fields: []p.Field{
		p.F("name", p.String, p.Since(0)),
		p.F("id", p.UUID, p.Since(0)),
		p.F("partition", p.Int32, p.Since(0)),
	}}
	segmentID = &p.Struct{Fields: []p.Field{
		p.F("topicIdPartition", p.Nested, p.Since(0)).Of(topicIDPartition),
		p.F("id", p.UUID, p.Since(0)),
	}}
	leaderEpochs = p.F("segmentLeaderEpochs", p.Nested, p.Since(0)).Arr().Of(&p.Struct{Fields: []p.Field{
		p.F("leaderEpoch", p.Int32, p.Since(0)),
		p.F("offset", p.Int64, p.Since(0)),
	}})
	customMetadata = p.F("customMetadata", p.Bytes, p.Since(0)).Null(p.Since(0))
	versions       = p.Versions{Min: 0, Max: 1}

	// segmentFields follow the segment's id in RemoteLogSegmentMetadataRecord
	// and RemoteLogSegmentMetadataSnapshotRecord alike.
	segmentFields = []p.Field{
		p.F("startOffset", p.Int64, p.Since(0)),
		p.F("endOffset", p.Int64, p.Since(0)),
		p.F("brokerId", p.Int32, p.Since(0)),
		p.F("maxTimestampMs", p.Int64, p.Since(0)),
		p.F("eventTimestampMs", p.Int64, p.Since(0)),
		leaderEpochs,
		p.F("segmentSizeInBytes", p.Int32, p.Since(0)),
		customMetadata,
		p.F("remoteLogSegmentState", p.Int8, p.Since(0)),
		p.F("txnIndexEmpty", p.Bool, p.Since(0)).TaggedAs(0, p.Since(0), 0),
		p.F("brokerLeaderEpoch", p.Int32, p.Since(1)).TaggedAs(1, p.Since(1), 0),
	}

	segmentMetadata = &p.Message{Name: "RemoteLogSegmentMetadataRecord", Valid: versions, Flexible: p.Since(0), Struct: p.Struct{
		Fields: append([]p.Field{p.F("remoteLogSegmentId", p.Nested, p.Since(0)).Of(segmentID)}, segmentFields...)}}

	segmentMetadataUpdate = &p.Message{Name: "RemoteLogSegmentMetadataUpdateRecord", Valid: versions, Flexible: p.Since(0), Struct: p.Struct{Fields: []p.Field{
		p.F("remoteLogSegmentId", p.Nested, p.Since(0)).Of(segmentID),
		p.F("brokerId", p.Int32, p.Since(0)),
		p.F("eventTimestampMs", p.Int64, p.Since(0)),
		customMetadata,
		p.F("remoteLogSegmentState", p.Int8, p.Since(0)),
		p.F("brokerLeaderEpoch", p.Int32, p.Since(1)).TaggedAs(0, p.Since(1), -1),
		p.F("endOffset", p.Int64, p.Since(1)).TaggedAs(1, p.Since(1), -1),
	}}}

	partitionDelete = &p.Message{Name: "RemotePartitionDeleteMetadataRecord", Valid: versions, Flexible: p.Since(0), Struct: p.Struct{Fields: []p.Field{
		p.F("topicIdPartition", p.Nested, p.Since(0)).Of(topicIDPartition),
		p.F("brokerId", p.Int32, p.Since(0)),
		p.F("eventTimestampMs", p.Int64, p.Since(0)),
		p.F("remotePartitionDeleteState", p.Int8, p.Since(0)),
		p.F("brokerLeaderEpoch", p.Int32, p.Since(1)).TaggedAs(0, p.Since(1), 0),
		p.F("endOffset", p.Int64, p.Since(1)).TaggedAs(1, p.Since(1), 0),
	}}}

	segmentSnapshot = &p.Message{Name: "RemoteLogSegmentMetadataSnapshotRecord", Valid: versions, Flexible: p.Since(0), Struct: p.Struct{
		Fields: append([]p.Field{p.F("segmentId", p.UUID, p.Since(0))}, segmentFields...)}}

	messages = map[uint32]*p.Message{0: segmentMetadata, 1: segmentMetadataUpdate, 2: partitionDelete, 3: segmentSnapshot}

	// The states by id, from RemoteLogSegmentState and
	// RemotePartitionDeleteState.
	segmentStates   = []string{"COPY_SEGMENT_STARTED", "COPY_SEGMENT_FINISHED", "DELETE_SEGMENT_STARTED", "DELETE_SEGMENT_FINISHED"}
	partitionStates = []string{"DELETE_PARTITION_MARKED", "DELETE_PARTITION_STARTED", "DELETE_PARTITION_FINISHED"}
)

// errNoEpochs is what Kafka's RemoteLogSegmentMetadata and
// RemoteLogSegmentMetadataSnapshot constructors throw for a segment without
// leader epochs.
var errNoEpochs = errors.New("segmentLeaderEpochs can not be null or empty")

// ErrUnknownType is wrapped by errors for an api key this package does not
// know, which a newer broker may have written.
var ErrUnknownType = errors.New("unknown remote log metadata record type")

// Format renders a __remote_log_metadata record value as kafka-dump-log.sh
// --remote-log-metadata-decoder does; a record that does not decode gives
// Kafka's "Error at offset <offset>, skipping. <why>" text and the error.
func Format(value []byte, offset int64) (string, error) {
	s, err := format(value)
	if err != nil {
		return "Error at offset " + strconv.FormatInt(offset, 10) + ", skipping. " + p.KafkaText(err), err
	}
	return s, nil
}

func format(value []byte) (string, error) {
	if value == nil {
		return "", errors.New("the record has no value")
	}
	typ, version, n, err := kraft.ParseFrame(value)
	if err != nil {
		return "", err
	}
	m, ok := messages[typ]
	if !ok {
		return "", fmt.Errorf("%w: %d", ErrUnknownType, typ)
	}
	v, err := kraft.ReadFramed(&p.Decoder{}, m, typ, version, value[n:])
	if err != nil {
		return "", err
	}
	b := []byte(nil)
	switch typ {
	case 0:
		// Kafka builds the segment (which needs leader epochs) before it
		// looks its state up.
		if len(v.Field("segmentLeaderEpochs").Items) == 0 {
			return "", errNoEpochs
		}
		state, err := stateName(segmentStates, v.Field("remoteLogSegmentState"), "state can not be null")
		if err != nil {
			return "", err
		}
		b = append(b, "RemoteLogSegmentMetadata{remoteLogSegmentId="...)
		b = appendSegmentID(b, v.Field("remoteLogSegmentId"))
		b = appendInt(b, ", startOffset=", v.Field("startOffset"))
		b = appendInt(b, ", endOffset=", v.Field("endOffset"))
		b = appendInt(b, ", brokerId=", v.Field("brokerId"))
		b = appendInt(b, ", maxTimestampMs=", v.Field("maxTimestampMs"))
		b = appendInt(b, ", eventTimestampMs=", v.Field("eventTimestampMs"))
		b = appendEpochs(append(b, ", segmentLeaderEpochs="...), v.Field("segmentLeaderEpochs"))
		b = appendInt(b, ", segmentSizeInBytes=", v.Field("segmentSizeInBytes"))
		b = appendCustom(append(b, ", customMetadata="...), v.Field("customMetadata"))
		b = append(append(b, ", state="...), state...)
		b = append(b, ", txnIdxEmpty="...)
		b = strconv.AppendBool(b, v.Field("txnIndexEmpty").Int != 0)
	case 1:
		state, err := stateName(segmentStates, v.Field("remoteLogSegmentState"), "state can not be null")
		if err != nil {
			return "", err
		}
		b = append(b, "RemoteLogSegmentMetadataUpdate{remoteLogSegmentId="...)
		b = appendSegmentID(b, v.Field("remoteLogSegmentId"))
		b = appendCustom(append(b, ", customMetadata="...), v.Field("customMetadata"))
		b = append(append(b, ", state="...), state...)
		b = appendInt(b, ", eventTimestampMs=", v.Field("eventTimestampMs"))
		b = appendInt(b, ", brokerId=", v.Field("brokerId"))
	case 2:
		// RemotePartitionDeleteMetadata's null check has no message.
		state, err := stateName(partitionStates, v.Field("remotePartitionDeleteState"), "null")
		if err != nil {
			return "", err
		}
		b = append(b, "RemotePartitionDeleteMetadata{topicPartition="...)
		b = appendTopicIDPartition(b, v.Field("topicIdPartition"))
		b = append(append(b, ", state="...), state...)
		b = appendInt(b, ", eventTimestampMs=", v.Field("eventTimestampMs"))
		b = appendInt(b, ", brokerId=", v.Field("brokerId"))
	case 3:
		// The snapshot's constructor checks the state before the epochs.
		state, err := stateName(segmentStates, v.Field("remoteLogSegmentState"), "state can not be null")
		if err != nil {
			return "", err
		}
		if len(v.Field("segmentLeaderEpochs").Items) == 0 {
			return "", errNoEpochs
		}
		b = append(b, "RemoteLogSegmentMetadataSnapshot{segmentId="...)
		b = appendUUID(b, v.Field("segmentId"))
		b = appendInt(b, ", startOffset=", v.Field("startOffset"))
		b = appendInt(b, ", endOffset=", v.Field("endOffset"))
		b = appendInt(b, ", maxTimestampMs=", v.Field("maxTimestampMs"))
		b = appendEpochs(append(b, ", segmentLeaderEpochs="...), v.Field("segmentLeaderEpochs"))
		b = appendInt(b, ", segmentSizeInBytes=", v.Field("segmentSizeInBytes"))
		b = appendCustom(append(b, ", customMetadata="...), v.Field("customMetadata"))
		b = append(append(b, ", state="...), state...)
		b = append(b, ", txnIdxEmpty="...)
		b = strconv.AppendBool(b, v.Field("txnIndexEmpty").Int != 0)
	}
	return string(append(b, '}')), nil
}

func appendInt(b []byte, label string, v *p.Value) []byte {
	return strconv.AppendInt(append(b, label...), v.Int, 10)
}

// appendUUID writes a Uuid as Kafka's Uuid.toString: URL-safe base64
// without padding.
func appendUUID(b []byte, v *p.Value) []byte { return base64.RawURLEncoding.AppendEncode(b, v.Raw) }

// appendTopicIDPartition writes TopicIdPartition.toString: id:topic-partition.
func appendTopicIDPartition(b []byte, v *p.Value) []byte {
	b = append(appendUUID(b, v.Field("id")), ':')
	b = append(b, p.ValidUTF8(nil, v.Field("name").Raw)...)
	return appendInt(b, "-", v.Field("partition"))
}

func appendSegmentID(b []byte, v *p.Value) []byte {
	b = appendTopicIDPartition(append(b, "RemoteLogSegmentId{topicIdPartition="...), v.Field("topicIdPartition"))
	return append(appendUUID(append(b, ", id="...), v.Field("id")), '}')
}

// appendEpochs writes the leader epochs as the TreeMap Kafka builds of
// them prints: {epoch=offset, ...} by epoch, a repeated epoch keeping its
// last offset.
func appendEpochs(b []byte, v *p.Value) []byte {
	type entry struct{ epoch, offset int64 }
	var es []entry
	for i := range v.Items {
		e := entry{v.Items[i].Field("leaderEpoch").Int, v.Items[i].Field("offset").Int}
		if j := slices.IndexFunc(es, func(x entry) bool { return x.epoch == e.epoch }); j >= 0 {
			es[j] = e
		} else {
			es = append(es, e)
		}
	}
	slices.SortFunc(es, func(x, y entry) int { return int(x.epoch - y.epoch) })
	b = append(b, '{')
	for i, e := range es {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = strconv.AppendInt(b, e.epoch, 10)
		b = strconv.AppendInt(append(b, '='), e.offset, 10)
	}
	return append(b, '}')
}

// appendCustom writes the Optional<CustomMetadata> Kafka prints.
func appendCustom(b []byte, v *p.Value) []byte {
	if v.Null {
		return append(b, "Optional.empty"...)
	}
	b = strconv.AppendInt(append(b, "Optional[CustomMetadata{"...), int64(len(v.Raw)), 10)
	return append(b, " bytes}]"...)
}

// stateName is the name of state id v; for an id it does not know, Kafka's
// forId gives null and the constructor's null check throws with message
// kafka.
func stateName(names []string, v *p.Value, kafka string) (string, error) {
	if v.Int < 0 || v.Int >= int64(len(names)) {
		return "", &p.KafkaError{Kafka: kafka, Err: fmt.Errorf("unknown state id %d", v.Int)}
	}
	return names[v.Int], nil
}
