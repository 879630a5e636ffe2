// Package groupmeta decodes the records of __consumer_offsets, the group
// coordinator's log, as kafka-dump-log.sh --offsets-decoder prints them.
//
// A key starts with an int16 record type: 0 and 1 are offset commits (type
// 0 written by brokers before 0.10.1, type 1 since), 2 is classic group
// metadata. Values start with an int16 version: offset commit values have
// versions 0 to 4 (1 added expireTimestamp for one release, 3 leaderEpoch,
// 4 made the record flexible), group metadata values 0 to 4 (1
// rebalanceTimeout, 2 currentStateTimestamp, 3 groupInstanceId, 4
// flexible). The schemas follow Kafka's group-coordinator message
// definitions (OffsetCommitKey/Value.json, GroupMetadataKey/Value.json).
//
// Types 3 to 8 and 16 are the consumer group protocol of KIP-848 (group
// metadata, topic metadata, member metadata, target assignment metadata and
// members, current member assignments, resolved regular expressions), 10 to
// 15 share groups (KIP-932) and 17 and 19 to 23 streams groups (KIP-1071).
// Their values are flexible, version 0, with tagged fields added by later
// releases; tags this decoder does not know are skipped, as Kafka skips them.
// Types 9 and 18 (share and streams group partition metadata) were removed
// before Kafka 4.1, which reports them as unknown; so does this package.
package groupmeta

import (
	"encoding/binary"

	p "github.com/logtool/logtool/logfmt/protocol"
)

var (
	offsetCommitKey = &p.Message{Name: "OffsetCommitKey", Flexible: p.Never, Struct: p.Struct{Fields: []p.Field{
		p.F("group", p.String, p.Since(0)),
		p.F("topic", p.String, p.Since(0)),
		p.F("partition", p.Int32, p.Since(0)),
	}}}

	offsetCommitValue = &p.Message{Name: "OffsetCommitValue", Valid: p.Versions{Min: 0, Max: 4}, Flexible: p.Since(4), Struct: p.Struct{Fields: []p.Field{
		p.F("offset", p.Int64, p.Since(0)),
		p.F("leaderEpoch", p.Int32, p.Since(3)),
		p.F("metadata", p.String, p.Since(0)),
		p.F("commitTimestamp", p.Int64, p.Since(0)),
		p.F("expireTimestamp", p.Int64, p.Versions{Min: 1, Max: 1}),
	}}}

	groupMetadataKey = &p.Message{Name: "GroupMetadataKey", Flexible: p.Never, Struct: p.Struct{Fields: []p.Field{
		p.F("group", p.String, p.Since(0)),
	}}}

	memberMetadata = &p.Struct{Fields: []p.Field{
		p.F("memberId", p.String, p.Since(0)),
		p.F("groupInstanceId", p.String, p.Since(3)).Null(p.Since(3)),
		p.F("clientId", p.String, p.Since(0)),
		p.F("clientHost", p.String, p.Since(0)),
		p.F("rebalanceTimeout", p.Int32, p.Since(1)),
		p.F("sessionTimeout", p.Int32, p.Since(0)),
		p.F("subscription", p.Bytes, p.Since(0)),
		p.F("assignment", p.Bytes, p.Since(0)),
	}}

	groupMetadataValue = &p.Message{Name: "GroupMetadataValue", Valid: p.Versions{Min: 0, Max: 4}, Flexible: p.Since(4), Struct: p.Struct{Fields: []p.Field{
		p.F("protocolType", p.String, p.Since(0)),
		p.F("generation", p.Int32, p.Since(0)),
		p.F("protocol", p.String, p.Since(0)).Null(p.Since(0)),
		p.F("leader", p.String, p.Since(0)).Null(p.Since(0)),
		p.F("currentStateTimestamp", p.Int64, p.Since(2)),
		p.F("members", p.Nested, p.Since(0)).Arr().Of(memberMetadata),
	}}}

	topicPartition = func(since int16) *p.Struct {
		return &p.Struct{Fields: []p.Field{
			p.F("topic", p.String, p.Since(since)),
			p.F("partitions", p.Int32, p.Since(since)).Arr(),
		}}
	}

	// The consumer protocol's embedded messages. Kafka reads whatever
	// version the bytes declare with its current schema, so the valid range
	// is open-ended.
	subscription = &p.Message{Name: "ConsumerProtocolSubscription", Valid: p.Since(0), Flexible: p.Never, Struct: p.Struct{Fields: []p.Field{
		p.F("topics", p.String, p.Since(0)).Arr(),
		p.F("userData", p.Bytes, p.Since(0)).Null(p.Since(0)),
		p.F("ownedPartitions", p.Nested, p.Since(1)).Arr().Of(topicPartition(1)),
		p.F("generationId", p.Int32, p.Since(2)),
		p.F("rackId", p.String, p.Since(3)).Null(p.Since(3)),
	}}}

	assignment = &p.Message{Name: "ConsumerProtocolAssignment", Valid: p.Since(0), Flexible: p.Never, Struct: p.Struct{Fields: []p.Field{
		p.F("assignedPartitions", p.Nested, p.Since(0)).Arr().Of(topicPartition(0)),
		p.F("userData", p.Bytes, p.Since(0)).Null(p.Since(0)),
	}}}
)

// The consumer group records (KIP-848), from the group coordinator's
// ConsumerGroup*Key/Value.json. Keys are non-flexible; values are version
// 0, flexible.
var (
	groupKey = func(name string) *p.Message {
		return &p.Message{Name: name, Flexible: p.Never, Struct: p.Struct{Fields: []p.Field{
			p.F("groupId", p.String, p.Since(0)),
		}}}
	}
	memberKey = func(name string) *p.Message {
		return &p.Message{Name: name, Flexible: p.Never, Struct: p.Struct{Fields: []p.Field{
			p.F("groupId", p.String, p.Since(0)),
			p.F("memberId", p.String, p.Since(0)),
		}}}
	}
	value = func(name string, fields ...p.Field) *p.Message {
		return &p.Message{Name: name, Flexible: p.Since(0), Struct: p.Struct{Fields: fields}}
	}

	consumerGroupMetadataValue = value("ConsumerGroupMetadataValue",
		p.F("epoch", p.Int32, p.Since(0)),
		p.F("metadataHash", p.Int64, p.Since(0)).TaggedAs(0, p.Since(0), 0),
		p.F("creationTimeMs", p.Int64, p.Since(0)).TaggedAs(1, p.Since(0), -1),
	)

	consumerGroupPartitionMetadataValue = value("ConsumerGroupPartitionMetadataValue",
		p.F("topics", p.Nested, p.Since(0)).Arr().Of(&p.Struct{Fields: []p.Field{
			p.F("topicId", p.UUID, p.Since(0)),
			p.F("topicName", p.String, p.Since(0)),
			p.F("numPartitions", p.Int32, p.Since(0)),
			p.F("partitionMetadata", p.Nested, p.Since(0)).Arr().Of(&p.Struct{Fields: []p.Field{
				p.F("partition", p.Int32, p.Since(0)),
				p.F("racks", p.String, p.Since(0)).Arr(),
			}}),
		}}),
	)

	consumerGroupMemberMetadataValue = value("ConsumerGroupMemberMetadataValue",
		p.F("instanceId", p.String, p.Since(0)).Null(p.Since(0)),
		p.F("rackId", p.String, p.Since(0)).Null(p.Since(0)),
		p.F("clientId", p.String, p.Since(0)),
		p.F("clientHost", p.String, p.Since(0)),
		p.F("subscribedTopicNames", p.String, p.Since(0)).Arr(),
		p.F("subscribedTopicRegex", p.String, p.Since(0)).Null(p.Since(0)),
		p.F("rebalanceTimeoutMs", p.Int32, p.Since(0)),
		p.F("serverAssignor", p.String, p.Since(0)).Null(p.Since(0)),
		p.F("classicMemberMetadata", p.Nested, p.Since(0)).Null(p.Since(0)).TaggedAs(0, p.Since(0), 0).NullDefault().Of(&p.Struct{Fields: []p.Field{
			p.F("sessionTimeoutMs", p.Int32, p.Since(0)),
			p.F("supportedProtocols", p.Nested, p.Since(0)).Arr().Of(&p.Struct{Fields: []p.Field{
				p.F("name", p.String, p.Since(0)),
				p.F("metadata", p.Bytes, p.Since(0)),
			}}),
		}}),
	)

	consumerGroupTargetAssignmentMetadataValue = value("ConsumerGroupTargetAssignmentMetadataValue",
		p.F("assignmentEpoch", p.Int32, p.Since(0)),
		p.F("assignmentTimestamp", p.Int64, p.Since(0)).TaggedAs(0, p.Since(0), 0),
	)

	consumerGroupTargetAssignmentMemberValue = value("ConsumerGroupTargetAssignmentMemberValue",
		p.F("topicPartitions", p.Nested, p.Since(0)).Arr().Of(topicPartitions),
	)

	assignedTopicPartitions = &p.Struct{Fields: []p.Field{
		p.F("topicId", p.UUID, p.Since(0)),
		p.F("partitions", p.Int32, p.Since(0)).Arr(),
		p.F("assignmentEpochs", p.Int32, p.Since(0)).Arr().Null(p.Since(0)).TaggedAs(0, p.Since(0), 0).NullDefault(),
	}}

	consumerGroupCurrentMemberAssignmentValue = value("ConsumerGroupCurrentMemberAssignmentValue",
		p.F("memberEpoch", p.Int32, p.Since(0)),
		p.F("previousMemberEpoch", p.Int32, p.Since(0)),
		p.F("state", p.Int8, p.Since(0)),
		p.F("assignedPartitions", p.Nested, p.Since(0)).Arr().Of(assignedTopicPartitions),
		p.F("partitionsPendingRevocation", p.Nested, p.Since(0)).Arr().Of(assignedTopicPartitions),
	)

	consumerGroupRegularExpressionKey = &p.Message{Name: "ConsumerGroupRegularExpressionKey", Flexible: p.Never, Struct: p.Struct{Fields: []p.Field{
		p.F("groupId", p.String, p.Since(0)),
		p.F("regularExpression", p.String, p.Since(0)),
	}}}

	consumerGroupRegularExpressionValue = value("ConsumerGroupRegularExpressionValue",
		p.F("topics", p.String, p.Since(0)).Arr(),
		p.F("version", p.Int64, p.Since(0)),
		p.F("timestamp", p.Int64, p.Since(0)),
	)
)

// The share group records (KIP-932), from ShareGroup*Key/Value.json as
// Kafka 4.1 has them: the group metadata carries a non-tagged metadataHash
// there, and the partition metadata record (type 9) is gone.
var (
	topicPartitions = &p.Struct{Fields: []p.Field{
		p.F("topicId", p.UUID, p.Since(0)),
		p.F("partitions", p.Int32, p.Since(0)).Arr(),
	}}

	shareGroupMemberMetadataValue = value("ShareGroupMemberMetadataValue",
		p.F("rackId", p.String, p.Since(0)).Null(p.Since(0)),
		p.F("clientId", p.String, p.Since(0)),
		p.F("clientHost", p.String, p.Since(0)),
		p.F("subscribedTopicNames", p.String, p.Since(0)).Arr(),
	)

	shareGroupMetadataValue = value("ShareGroupMetadataValue",
		p.F("epoch", p.Int32, p.Since(0)),
		p.F("metadataHash", p.Int64, p.Since(0)),
	)

	shareGroupTargetAssignmentMemberValue = value("ShareGroupTargetAssignmentMemberValue",
		p.F("topicPartitions", p.Nested, p.Since(0)).Arr().Of(topicPartitions),
	)

	shareGroupCurrentMemberAssignmentValue = value("ShareGroupCurrentMemberAssignmentValue",
		p.F("memberEpoch", p.Int32, p.Since(0)),
		p.F("previousMemberEpoch", p.Int32, p.Since(0)),
		p.F("state", p.Int8, p.Since(0)),
		p.F("assignedPartitions", p.Nested, p.Since(0)).Arr().Of(topicPartitions),
	)

	shareGroupStatePartitionMetadataValue = value("ShareGroupStatePartitionMetadataValue",
		p.F("initializingTopics", p.Nested, p.Since(0)).Arr().Of(topicPartitionsInfo),
		p.F("initializedTopics", p.Nested, p.Since(0)).Arr().Of(topicPartitionsInfo),
		p.F("deletingTopics", p.Nested, p.Since(0)).Arr().Of(&p.Struct{Fields: []p.Field{
			p.F("topicId", p.UUID, p.Since(0)),
			p.F("topicName", p.String, p.Since(0)),
		}}),
	)
	topicPartitionsInfo = &p.Struct{Fields: []p.Field{
		p.F("topicId", p.UUID, p.Since(0)),
		p.F("topicName", p.String, p.Since(0)),
		p.F("partitions", p.Int32, p.Since(0)).Arr(),
		p.F("createTimestamp", p.Int64, p.Since(0)),
	}}

	// assignmentEpoch is the whole value of the share and streams groups'
	// target assignment metadata in Kafka 4.1.
	assignmentEpochValue = func(name string) *p.Message {
		return value(name, p.F("assignmentEpoch", p.Int32, p.Since(0)))
	}
)

// The streams group records (KIP-1071), from StreamsGroup*Key/Value.json as
// Kafka 4.1 has them; the partition metadata record (type 18) is gone.
var (
	streamsGroupMetadataValue = value("StreamsGroupMetadataValue",
		p.F("epoch", p.Int32, p.Since(0)),
		p.F("metadataHash", p.Int64, p.Since(0)),
		// Added by KAFKA-19661 after 4.1.0, tagged: older brokers skip it.
		p.F("validatedTopologyEpoch", p.Int32, p.Since(0)).TaggedAs(0, p.Since(0), -1),
	)

	keyValue = &p.Struct{Fields: []p.Field{
		p.F("key", p.String, p.Since(0)),
		p.F("value", p.String, p.Since(0)),
	}}

	streamsGroupMemberMetadataValue = value("StreamsGroupMemberMetadataValue",
		p.F("instanceId", p.String, p.Since(0)).Null(p.Since(0)),
		p.F("rackId", p.String, p.Since(0)).Null(p.Since(0)),
		p.F("clientId", p.String, p.Since(0)),
		p.F("clientHost", p.String, p.Since(0)),
		p.F("rebalanceTimeoutMs", p.Int32, p.Since(0)),
		p.F("topologyEpoch", p.Int32, p.Since(0)),
		p.F("processId", p.String, p.Since(0)),
		p.F("userEndpoint", p.Nested, p.Since(0)).Null(p.Since(0)).Of(&p.Struct{Fields: []p.Field{
			p.F("host", p.String, p.Since(0)),
			p.F("port", p.Uint16, p.Since(0)),
		}}),
		p.F("clientTags", p.Nested, p.Since(0)).Arr().Of(keyValue),
	)

	taskIDs = func(name string) p.Field {
		return p.F(name, p.Nested, p.Since(0)).Arr().Of(&p.Struct{Fields: []p.Field{
			p.F("subtopologyId", p.String, p.Since(0)),
			p.F("partitions", p.Int32, p.Since(0)).Arr(),
		}})
	}

	streamsGroupTargetAssignmentMemberValue = value("StreamsGroupTargetAssignmentMemberValue",
		taskIDs("activeTasks"), taskIDs("standbyTasks"), taskIDs("warmupTasks"),
	)

	streamsGroupCurrentMemberAssignmentValue = value("StreamsGroupCurrentMemberAssignmentValue",
		p.F("memberEpoch", p.Int32, p.Since(0)),
		p.F("previousMemberEpoch", p.Int32, p.Since(0)),
		p.F("state", p.Int8, p.Since(0)),
		taskIDs("activeTasks"), taskIDs("standbyTasks"), taskIDs("warmupTasks"),
		taskIDs("activeTasksPendingRevocation"), taskIDs("standbyTasksPendingRevocation"), taskIDs("warmupTasksPendingRevocation"),
	)

	topicInfo = &p.Struct{Fields: []p.Field{
		p.F("name", p.String, p.Since(0)),
		p.F("partitions", p.Int32, p.Since(0)),
		p.F("replicationFactor", p.Int16, p.Since(0)),
		p.F("topicConfigs", p.Nested, p.Since(0)).Arr().Of(keyValue),
	}}

	streamsGroupTopologyValue = value("StreamsGroupTopologyValue",
		p.F("epoch", p.Int32, p.Since(0)),
		p.F("subtopologies", p.Nested, p.Since(0)).Arr().Of(&p.Struct{Fields: []p.Field{
			p.F("subtopologyId", p.String, p.Since(0)),
			p.F("sourceTopics", p.String, p.Since(0)).Arr(),
			p.F("sourceTopicRegex", p.String, p.Since(0)).Arr(),
			p.F("stateChangelogTopics", p.Nested, p.Since(0)).Arr().Of(topicInfo),
			p.F("repartitionSinkTopics", p.String, p.Since(0)).Arr(),
			p.F("repartitionSourceTopics", p.Nested, p.Since(0)).Arr().Of(topicInfo),
			p.F("copartitionGroups", p.Nested, p.Since(0)).Arr().Of(&p.Struct{Fields: []p.Field{
				p.F("sourceTopics", p.Int16, p.Since(0)).Arr(),
				p.F("sourceTopicRegex", p.Int16, p.Since(0)).Arr(),
				p.F("repartitionSourceTopics", p.Int16, p.Since(0)).Arr(),
			}}),
		}}),
	)
)

// records are the record types of Kafka 4.1's group coordinator; any other
// type is unknown, as it is to Kafka 4.1.
var records = p.Coordinator{
	0:  {Key: offsetCommitKey, Value: offsetCommitValue},
	1:  {Key: offsetCommitKey, Value: offsetCommitValue},
	2:  {Key: groupMetadataKey, Value: groupMetadataValue, Fix: expandConsumerProtocol},
	3:  {Key: groupKey("ConsumerGroupMetadataKey"), Value: consumerGroupMetadataValue},
	4:  {Key: groupKey("ConsumerGroupPartitionMetadataKey"), Value: consumerGroupPartitionMetadataValue},
	5:  {Key: memberKey("ConsumerGroupMemberMetadataKey"), Value: consumerGroupMemberMetadataValue},
	6:  {Key: groupKey("ConsumerGroupTargetAssignmentMetadataKey"), Value: consumerGroupTargetAssignmentMetadataValue},
	7:  {Key: memberKey("ConsumerGroupTargetAssignmentMemberKey"), Value: consumerGroupTargetAssignmentMemberValue},
	8:  {Key: memberKey("ConsumerGroupCurrentMemberAssignmentKey"), Value: consumerGroupCurrentMemberAssignmentValue},
	10: {Key: memberKey("ShareGroupMemberMetadataKey"), Value: shareGroupMemberMetadataValue},
	11: {Key: groupKey("ShareGroupMetadataKey"), Value: shareGroupMetadataValue},
	12: {Key: groupKey("ShareGroupTargetAssignmentMetadataKey"), Value: assignmentEpochValue("ShareGroupTargetAssignmentMetadataValue")},
	13: {Key: memberKey("ShareGroupTargetAssignmentMemberKey"), Value: shareGroupTargetAssignmentMemberValue},
	14: {Key: memberKey("ShareGroupCurrentMemberAssignmentKey"), Value: shareGroupCurrentMemberAssignmentValue},
	15: {Key: groupKey("ShareGroupStatePartitionMetadataKey"), Value: shareGroupStatePartitionMetadataValue},
	16: {Key: consumerGroupRegularExpressionKey, Value: consumerGroupRegularExpressionValue},
	17: {Key: groupKey("StreamsGroupMetadataKey"), Value: streamsGroupMetadataValue},
	19: {Key: memberKey("StreamsGroupMemberMetadataKey"), Value: streamsGroupMemberMetadataValue},
	20: {Key: groupKey("StreamsGroupTargetAssignmentMetadataKey"), Value: assignmentEpochValue("StreamsGroupTargetAssignmentMetadataValue")},
	21: {Key: memberKey("StreamsGroupTargetAssignmentMemberKey"), Value: streamsGroupTargetAssignmentMemberValue},
	22: {Key: memberKey("StreamsGroupCurrentMemberAssignmentKey"), Value: streamsGroupCurrentMemberAssignmentValue},
	23: {Key: groupKey("StreamsGroupTopologyKey"), Value: streamsGroupTopologyValue},
}

// Format renders a __consumer_offsets record's key and value.
func Format(key, value []byte, offset int64) p.Formatted {
	return records.Format(key, value, offset)
}

// expandConsumerProtocol replaces the subscription and assignment bytes of
// a "consumer" group's members with their decoded JSON, as Kafka 3.8's
// DumpLogSegments does. Bytes that do not decode are left as base64.
func expandConsumerProtocol(v *p.Value) {
	pt := v.Field("protocolType")
	if pt == nil || pt.Null || string(pt.Raw) != "consumer" {
		return
	}
	members := v.Field("members")
	if members == nil {
		return
	}
	for i := range members.Items {
		m := &members.Items[i]
		expand(m.Field("subscription"), subscription)
		expand(m.Field("assignment"), assignment)
	}
}

func expand(f *p.Value, m *p.Message) {
	if f == nil || f.Null || len(f.Raw) < 2 {
		return
	}
	version := int16(binary.BigEndian.Uint16(f.Raw))
	v, _, err := p.Decode(m, version, f.Raw[2:])
	if err != nil {
		return
	}
	f.JSON = p.AppendJSON(nil, v)
}
