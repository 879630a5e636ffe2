// Package sharestate decodes the records of __share_group_state, the share
// coordinator's log (KIP-932), as kafka-dump-log.sh
// --share-group-state-decoder prints them (Kafka 4.1 and later).
//
// A key is an int16 record type, 0 for a ShareSnapshot and 1 for a
// ShareUpdate, then the share-partition: group id, topic id and partition.
// A value is an int16 version (0) and the flexible snapshot or update. The
// schemas follow Kafka's share-coordinator message definitions
// (ShareSnapshotKey/Value.json, ShareUpdateKey/Value.json); the tagged
// deliveryCompleteCount came with Kafka 4.2 and is shown only when set.
package sharestate

import p "github.com/logtool/logtool/logfmt/protocol"

var (
	key = func(name string) *p.Message {
		return &p.Message{Name: name, Flexible: p.Never, Struct: p.Struct{Fields: []p.Field{
			p.F("groupId", p.String, p.Since(0)),
			p.F("topicId", p.UUID, p.Since(0)),
			p.F("partition", p.Int32, p.Since(0)),
		}}}
	}

	stateBatch = &p.Struct{Fields: []p.Field{
		p.F("firstOffset", p.Int64, p.Since(0)),
		p.F("lastOffset", p.Int64, p.Since(0)),
		p.F("deliveryState", p.Int8, p.Since(0)),
		p.F("deliveryCount", p.Int16, p.Since(0)),
	}}

	deliveryCompleteCount = p.F("deliveryCompleteCount", p.Int32, p.Since(0)).TaggedAs(0, p.Since(0), -1)

	snapshotValue = &p.Message{Name: "ShareSnapshotValue", Flexible: p.Since(0), Struct: p.Struct{Fields: []p.Field{
		p.F("snapshotEpoch", p.Int32, p.Since(0)),
		p.F("stateEpoch", p.Int32, p.Since(0)),
		p.F("leaderEpoch", p.Int32, p.Since(0)),
		p.F("startOffset", p.Int64, p.Since(0)),
		deliveryCompleteCount,
		p.F("createTimestamp", p.Int64, p.Since(0)),
		p.F("writeTimestamp", p.Int64, p.Since(0)),
		p.F("stateBatches", p.Nested, p.Since(0)).Arr().Of(stateBatch),
	}}}

	updateValue = &p.Message{Name: "ShareUpdateValue", Flexible: p.Since(0), Struct: p.Struct{Fields: []p.Field{
		p.F("snapshotEpoch", p.Int32, p.Since(0)),
		p.F("leaderEpoch", p.Int32, p.Since(0)),
		p.F("startOffset", p.Int64, p.Since(0)),
		deliveryCompleteCount,
		p.F("stateBatches", p.Nested, p.Since(0)).Arr().Of(stateBatch),
	}}}

	records = p.Coordinator{
		0: {Key: key("ShareSnapshotKey"), Value: snapshotValue},
		1: {Key: key("ShareUpdateKey"), Value: updateValue},
	}
)

// Format renders a __share_group_state record's key and value.
func Format(k, v []byte, offset int64) p.Formatted {
	return records.Format(k, v, offset)
}
