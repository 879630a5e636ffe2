// Package kraft decodes KRaft's __cluster_metadata records and the
// control records of the KRaft log, as kafka-dump-log.sh prints them.
//
// A metadata record's value is framed by Kafka's MetadataRecordSerde: an
// unsigned varint frame version (1), an unsigned varint record type (the
// apiKey of the record's schema) and an unsigned varint record version, then
// the record in that version of its schema; every metadata record is
// flexible. Format renders it as Kafka's --cluster-metadata-decoder does:
// {"type":"<TYPE_NAME>","version":<n>,"data":{...}}. Every type of Kafka 4.1
// is decoded field by field from schemas transcribed from Kafka's metadata
// message definitions.
//
// Control records (LeaderChange, SnapshotHeader, SnapshotFooter,
// KRaftVersion, KRaftVoters) are decoded by FormatControl.
package kraft

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/logtool/logtool/logfmt"

	p "github.com/logtool/logtool/logfmt/protocol"
)

func msg(name string, valid p.Versions, fields ...p.Field) *p.Message {
	return &p.Message{Name: name, Valid: valid, Flexible: p.Since(0), Struct: p.Struct{Fields: fields}}
}

var (
	v0 = p.Versions{}
	f  = p.F

	int32s = func(name string, r p.Versions) p.Field { return f(name, p.Int32, r).Arr() }

	endpoint = &p.Struct{Fields: []p.Field{
		f("name", p.String, p.Since(0)),
		f("host", p.String, p.Since(0)),
		f("port", p.Uint16, p.Since(0)),
		f("securityProtocol", p.Int16, p.Since(0)),
	}}
	feature = &p.Struct{Fields: []p.Field{
		f("name", p.String, p.Since(0)),
		f("minSupportedVersion", p.Int16, p.Since(0)),
		f("maxSupportedVersion", p.Int16, p.Since(0)),
	}}

	// schemas are the record types decoded field by field.
	schemas = map[Type]*p.Message{
		TypeRegisterBroker: msg("RegisterBrokerRecord", p.Versions{Min: 0, Max: 3},
			f("brokerId", p.Int32, p.Since(0)),
			f("isMigratingZkBroker", p.Bool, p.Since(2)),
			f("incarnationId", p.UUID, p.Since(0)),
			f("brokerEpoch", p.Int64, p.Since(0)),
			f("endPoints", p.Nested, p.Since(0)).Arr().Of(endpoint),
			f("features", p.Nested, p.Since(0)).Arr().Of(feature),
			f("rack", p.String, p.Since(0)).Null(p.Since(0)),
			f("fenced", p.Bool, p.Since(0)),
			f("inControlledShutdown", p.Bool, p.Since(1)),
			f("logDirs", p.UUID, p.Since(3)).Arr().TaggedAs(0, p.Since(3), 0),
		),
		TypeUnregisterBroker: msg("UnregisterBrokerRecord", v0,
			f("brokerId", p.Int32, p.Since(0)),
			f("brokerEpoch", p.Int64, p.Since(0)),
		),
		TypeTopic: msg("TopicRecord", v0,
			f("name", p.String, p.Since(0)),
			f("topicId", p.UUID, p.Since(0)),
		),
		// Versions 0-2 in Kafka 4.1; version 3 (creationTimeMs, tag 3) is
		// newer and Kafka 4.1 refuses it, so this does too.
		TypePartition: msg("PartitionRecord", p.Versions{Min: 0, Max: 2},
			f("partitionId", p.Int32, p.Since(0)),
			f("topicId", p.UUID, p.Since(0)),
			int32s("replicas", p.Since(0)),
			int32s("isr", p.Since(0)),
			int32s("removingReplicas", p.Since(0)),
			int32s("addingReplicas", p.Since(0)),
			f("leader", p.Int32, p.Since(0)),
			f("leaderRecoveryState", p.Int8, p.Since(0)).TaggedAs(0, p.Since(0), 0),
			f("leaderEpoch", p.Int32, p.Since(0)),
			f("partitionEpoch", p.Int32, p.Since(0)),
			f("directories", p.UUID, p.Since(1)).Arr(),
			int32s("eligibleLeaderReplicas", p.Since(2)).Null(p.Since(2)).TaggedAs(1, p.Since(2), 0).NullDefault(),
			int32s("lastKnownElr", p.Since(2)).Null(p.Since(2)).TaggedAs(2, p.Since(2), 0).NullDefault(),
		),
		TypeConfig: msg("ConfigRecord", v0,
			f("resourceType", p.Int8, p.Since(0)),
			f("resourceName", p.String, p.Since(0)),
			f("name", p.String, p.Since(0)),
			f("value", p.String, p.Since(0)).Null(p.Since(0)),
		),
		TypePartitionChange: msg("PartitionChangeRecord", p.Versions{Min: 0, Max: 2},
			f("partitionId", p.Int32, p.Since(0)),
			f("topicId", p.UUID, p.Since(0)),
			int32s("isr", p.Since(0)).Null(p.Since(0)).TaggedAs(0, p.Since(0), 0).NullDefault(),
			f("leader", p.Int32, p.Since(0)).TaggedAs(1, p.Since(0), -2),
			int32s("replicas", p.Since(0)).Null(p.Since(0)).TaggedAs(2, p.Since(0), 0).NullDefault(),
			int32s("removingReplicas", p.Since(0)).Null(p.Since(0)).TaggedAs(3, p.Since(0), 0).NullDefault(),
			int32s("addingReplicas", p.Since(0)).Null(p.Since(0)).TaggedAs(4, p.Since(0), 0).NullDefault(),
			f("leaderRecoveryState", p.Int8, p.Since(0)).TaggedAs(5, p.Since(0), -1),
			f("directories", p.UUID, p.Since(1)).Arr().Null(p.Since(1)).TaggedAs(8, p.Since(1), 0).NullDefault(),
			int32s("eligibleLeaderReplicas", p.Since(2)).Null(p.Since(2)).TaggedAs(6, p.Since(2), 0).NullDefault(),
			int32s("lastKnownElr", p.Since(2)).Null(p.Since(2)).TaggedAs(7, p.Since(2), 0).NullDefault(),
		),
		TypeFenceBroker: msg("FenceBrokerRecord", v0,
			f("id", p.Int32, p.Since(0)),
			f("epoch", p.Int64, p.Since(0)),
		),
		TypeUnfenceBroker: msg("UnfenceBrokerRecord", v0,
			f("id", p.Int32, p.Since(0)),
			f("epoch", p.Int64, p.Since(0)),
		),
		TypeRemoveTopic: msg("RemoveTopicRecord", v0,
			f("topicId", p.UUID, p.Since(0)),
		),
		TypeDelegationToken: msg("DelegationTokenRecord", v0,
			f("owner", p.String, p.Since(0)),
			f("requester", p.String, p.Since(0)),
			f("renewers", p.String, p.Since(0)).Arr(),
			f("issueTimestamp", p.Int64, p.Since(0)),
			f("maxTimestamp", p.Int64, p.Since(0)),
			f("expirationTimestamp", p.Int64, p.Since(0)),
			f("tokenId", p.String, p.Since(0)),
		),
		// The layout of Kafka 3.5 on (KIP-900): one mechanism per record,
		// the keys Kafka stores rather than a salted password.
		TypeUserScramCredential: msg("UserScramCredentialRecord", v0,
			f("name", p.String, p.Since(0)),
			f("mechanism", p.Int8, p.Since(0)),
			f("salt", p.Bytes, p.Since(0)),
			f("storedKey", p.Bytes, p.Since(0)),
			f("serverKey", p.Bytes, p.Since(0)),
			f("iterations", p.Int32, p.Since(0)),
		),
		TypeFeatureLevel: msg("FeatureLevelRecord", v0,
			f("name", p.String, p.Since(0)),
			f("featureLevel", p.Int16, p.Since(0)),
		),
		TypeClientQuota: msg("ClientQuotaRecord", v0,
			f("entity", p.Nested, p.Since(0)).Arr().Of(&p.Struct{Fields: []p.Field{
				f("entityType", p.String, p.Since(0)),
				f("entityName", p.String, p.Since(0)).Null(p.Since(0)),
			}}),
			f("key", p.String, p.Since(0)),
			f("value", p.Float64, p.Since(0)),
			f("remove", p.Bool, p.Since(0)),
		),
		TypeProducerIds: msg("ProducerIdsRecord", v0,
			f("brokerId", p.Int32, p.Since(0)),
			f("brokerEpoch", p.Int64, p.Since(0)),
			f("nextProducerId", p.Int64, p.Since(0)),
		),
		TypeBrokerRegistrationChange: msg("BrokerRegistrationChangeRecord", p.Versions{Min: 0, Max: 2},
			f("brokerId", p.Int32, p.Since(0)),
			f("brokerEpoch", p.Int64, p.Since(0)),
			f("fenced", p.Int8, p.Since(0)).TaggedAs(0, p.Since(0), 0),
			f("inControlledShutdown", p.Int8, p.Since(1)).TaggedAs(1, p.Since(1), 0),
			f("logDirs", p.UUID, p.Since(2)).Arr().TaggedAs(2, p.Since(2), 0),
		),
		TypeAccessControlEntry: msg("AccessControlEntryRecord", v0,
			f("id", p.UUID, p.Since(0)),
			f("resourceType", p.Int8, p.Since(0)),
			f("resourceName", p.String, p.Since(0)),
			f("patternType", p.Int8, p.Since(0)),
			f("principal", p.String, p.Since(0)),
			f("host", p.String, p.Since(0)),
			f("operation", p.Int8, p.Since(0)),
			f("permissionType", p.Int8, p.Since(0)),
		),
		TypeRemoveAccessControlEntry: msg("RemoveAccessControlEntryRecord", v0,
			f("id", p.UUID, p.Since(0)),
		),
		TypeNoOp: msg("NoOpRecord", v0),
		TypeZkMigrationState: msg("ZkMigrationStateRecord", v0,
			f("zkMigrationState", p.Int8, p.Since(0)),
		),
		TypeRemoveUserScramCredential: msg("RemoveUserScramCredentialRecord", v0,
			f("name", p.String, p.Since(0)),
			f("mechanism", p.Int8, p.Since(0)),
		),
		TypeBeginTransaction: msg("BeginTransactionRecord", v0,
			f("name", p.String, p.Since(0)).Null(p.Since(0)).TaggedAs(0, p.Since(0), 0).NullDefault(),
		),
		TypeEndTransaction: msg("EndTransactionRecord", v0),
		TypeAbortTransaction: msg("AbortTransactionRecord", v0,
			f("reason", p.String, p.Since(0)).Null(p.Since(0)).TaggedAs(0, p.Since(0), 0).NullDefault(),
		),
		TypeRemoveDelegationToken: msg("RemoveDelegationTokenRecord", v0,
			f("tokenId", p.String, p.Since(0)),
		),
		TypeRegisterController: msg("RegisterControllerRecord", v0,
			f("controllerId", p.Int32, p.Since(0)),
			f("incarnationId", p.UUID, p.Since(0)),
			f("zkMigrationReady", p.Bool, p.Since(0)),
			f("endPoints", p.Nested, p.Since(0)).Arr().Of(endpoint),
			f("features", p.Nested, p.Since(0)).Arr().Of(feature),
		),
		TypeClearElr: msg("ClearElrRecord", v0,
			f("topicName", p.String, p.Since(0)),
		),
	}
)

// Record is a decoded metadata record.
type Record struct {
	Type    Type
	Name    string // the MetadataRecordType name
	Version int16
	Value   *p.Value
}

// ErrFrame is wrapped by errors about the frame around a record.
var ErrFrame = errors.New("bad metadata record frame")

// ParseFrame reads the frame of a metadata record: its type, its version and
// the length of the frame. The type may be one Decode does not know. Its
// errors carry, as protocol.KafkaError, what Kafka's AbstractApiMessageSerde
// throws, which kafka-dump-log.sh prints.
func ParseFrame(b []byte) (typ Type, version int16, n int, err error) {
	frame, n, err := uvarint(b)
	if err != nil {
		return 0, 0, 0, &p.KafkaError{Kafka: "Error while reading frame version", Err: fmt.Errorf("%w: frame version: %v", ErrFrame, err)}
	}
	if frame > 1<<15-1 {
		return 0, 0, 0, &p.KafkaError{Kafka: "Value for frame version was too large.", Err: fmt.Errorf("%w: unknown frame version %d", ErrFrame, frame)}
	}
	if frame != 1 {
		kafka := fmt.Sprintf("Could not deserialize metadata record due to unknown frame version %d(only frame version 1 is supported)", frame)
		if frame == 0 {
			kafka = "Could not deserialize metadata record with frame version 0. Note that upgrades from the preview release of KRaft in 2.8 to newer versions are not supported."
		}
		return 0, 0, 0, &p.KafkaError{Kafka: kafka, Err: fmt.Errorf("%w: unknown frame version %d", ErrFrame, frame)}
	}
	typ, m, err := uvarint(b[n:])
	if err != nil {
		return 0, 0, 0, &p.KafkaError{Kafka: "Error while reading type", Err: fmt.Errorf("%w: record type: %v", ErrFrame, err)}
	}
	if typ > 1<<15-1 {
		return 0, 0, 0, &p.KafkaError{Kafka: "Value for type was too large.", Err: fmt.Errorf("%w: record type %d", ErrFrame, typ)}
	}
	n += m
	ver, m, err := uvarint(b[n:])
	if err != nil {
		return 0, 0, 0, &p.KafkaError{Kafka: "Error while reading version", Err: fmt.Errorf("%w: record version: %v", ErrFrame, err)}
	}
	if ver > 1<<15-1 {
		return 0, 0, 0, &p.KafkaError{Kafka: "Value for version was too large.", Err: fmt.Errorf("%w: record version %d", ErrFrame, ver)}
	}
	return typ, int16(ver), n + m, nil
}

// ReadFramed reads the message of type typ and version ver that follows a
// frame and fills the whole of b, with the errors Kafka's
// AbstractApiMessageSerde throws, naming the type by its number.
func ReadFramed(dec *p.Decoder, m *p.Message, typ Type, ver int16, b []byte) (*p.Value, error) {
	v, used, err := dec.Decode(m, ver, b)
	if err != nil {
		return nil, &p.KafkaError{Kafka: fmt.Sprintf("Failed to deserialize record with type %d", typ), Err: err}
	}
	if used != len(b) {
		return nil, &p.KafkaError{Kafka: fmt.Sprintf("Found %d byte(s) of garbage after %d", len(b)-used, typ),
			Err: fmt.Errorf("found %d byte(s) of garbage after %s", len(b)-used, m.Name)}
	}
	return v, nil
}

// Decode reads a framed metadata record.
func Decode(b []byte) (*Record, error) {
	return (&Decoder{}).Decode(b)
}

// Decoder decodes records into memory it reuses: a record it returns is
// valid until its next Decode. Replaying a metadata log uses one.
type Decoder struct {
	p   p.Decoder
	rec Record
}

// Decode is the package's Decode, into the decoder's memory.
func (d *Decoder) Decode(b []byte) (*Record, error) {
	typ, ver, n, err := ParseFrame(b)
	if err != nil {
		return nil, err
	}
	b = b[n:]
	m, ok := schemas[typ]
	if !ok {
		// MetadataRecordType.fromId's exception, wrapped whole.
		return nil, &p.KafkaError{Kafka: fmt.Sprintf("org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id %d", typ),
			Err: fmt.Errorf("unknown metadata record type %d", typ)}
	}
	d.rec = Record{Type: typ, Name: TypeNames[typ], Version: ver}
	v, err := ReadFramed(&d.p, m, typ, ver, b)
	if err != nil {
		return nil, err
	}
	d.rec.Value = v
	return &d.rec, nil
}

// FieldIndex is the position in Value.Fields of the named field of record
// type typ's schema. It panics for a name the schema lacks: callers look
// their fields up once, at start.
func FieldIndex(typ Type, name string) int {
	if m := schemas[typ]; m != nil {
		for i := range m.Fields {
			if m.Fields[i].Name == name {
				return i
			}
		}
	}
	panic(fmt.Sprintf("metadata record type %d has no field %q", typ, name))
}

// AppendJSON appends r as {"type":"TOPIC_RECORD","version":0,"data":{...}}.
func (r *Record) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"type":"`...)
	dst = append(dst, r.Name...)
	dst = append(dst, `","version":`...)
	dst = strconv.AppendInt(dst, int64(r.Version), 10)
	dst = append(dst, `,"data":`...)
	dst = p.AppendJSON(dst, r.Value)
	return append(dst, '}')
}

// Format renders a metadata record value as kafka-dump-log.sh
// --cluster-metadata-decoder does; a record that does not decode gives
// Kafka's "Error at <offset>, skipping. <why>" text and the error.
func Format(value []byte, offset int64) (string, error) {
	r, err := Decode(value)
	if err != nil {
		return "Error at " + strconv.FormatInt(offset, 10) + ", skipping. " + p.KafkaText(err), err
	}
	return string(r.AppendJSON(nil)), nil
}

func uvarint(b []byte) (uint32, int, error) {
	var v uint32
	for i := 0; i < 5; i++ {
		if i >= len(b) {
			return 0, 0, p.ErrShort
		}
		v |= uint32(b[i]&0x7f) << (7 * i)
		if b[i] < 0x80 {
			return v, i + 1, nil
		}
	}
	return 0, 0, errors.New("unsigned varint longer than 5 bytes")
}

// Control record schemas (clients/src/main/resources/common/message).
var (
	voter = &p.Struct{Fields: []p.Field{f("voterId", p.Int32, p.Since(0))}}

	controlSchemas = map[logfmt.ControlType]*p.Message{
		logfmt.ControlLeaderChange: msg("LeaderChangeMessage", v0,
			f("version", p.Int16, p.Since(0)),
			f("leaderId", p.Int32, p.Since(0)),
			f("voters", p.Nested, p.Since(0)).Arr().Of(voter),
			f("grantingVoters", p.Nested, p.Since(0)).Arr().Of(voter),
		),
		logfmt.ControlSnapshotHeader: msg("SnapshotHeaderRecord", v0,
			f("version", p.Int16, p.Since(0)),
			f("lastContainedLogTimestamp", p.Int64, p.Since(0)),
		),
		logfmt.ControlSnapshotFooter: msg("SnapshotFooterRecord", v0,
			f("version", p.Int16, p.Since(0)),
		),
		logfmt.ControlKRaftVersion: msg("KRaftVersionRecord", v0,
			f("version", p.Int16, p.Since(0)),
			f("kRaftVersion", p.Int16, p.Since(0)),
		),
		logfmt.ControlKRaftVoters: msg("VotersRecord", v0,
			f("version", p.Int16, p.Since(0)),
			f("voters", p.Nested, p.Since(0)).Arr().Of(&p.Struct{Fields: []p.Field{
				f("voterId", p.Int32, p.Since(0)),
				f("voterDirectoryId", p.UUID, p.Since(0)),
				f("endpoints", p.Nested, p.Since(0)).Arr().Of(&p.Struct{Fields: []p.Field{
					f("name", p.String, p.Since(0)),
					f("host", p.String, p.Since(0)),
					f("port", p.Uint16, p.Since(0)),
				}}),
				f("kRaftVersionFeature", p.Nested, p.Since(0)).Of(&p.Struct{Fields: []p.Field{
					f("minSupportedVersion", p.Int16, p.Since(0)),
					f("maxSupportedVersion", p.Int16, p.Since(0)),
				}}),
			}}),
		),
	}

	// controlLabels is what DumpLogSegments prints before each type's JSON.
	controlLabels = map[logfmt.ControlType]string{
		logfmt.ControlLeaderChange:   "LeaderChange:",
		logfmt.ControlSnapshotHeader: "SnapshotHeader",
		logfmt.ControlSnapshotFooter: "SnapshotFooter",
		logfmt.ControlKRaftVersion:   "KRaftVersion",
		logfmt.ControlKRaftVoters:    "KRaftVoters",
	}
)

// IsKRaftControl reports whether FormatControl decodes control type t.
func IsKRaftControl(t logfmt.ControlType) bool { return controlSchemas[t] != nil }

// FormatControl decodes the value of a KRaft control record of type t and
// returns Kafka's label for it ("LeaderChange:", "SnapshotHeader", ...) and
// the record as JSON. Kafka reads these values with version 0 of their
// schema whatever their version field says; so does FormatControl.
func FormatControl(t logfmt.ControlType, value []byte) (label string, json []byte, err error) {
	m := controlSchemas[t]
	if m == nil {
		return "", nil, fmt.Errorf("control type %s has no schema", t)
	}
	v, _, err := p.Decode(m, 0, value)
	if err != nil {
		return controlLabels[t], nil, err
	}
	return controlLabels[t], p.AppendJSON(nil, v), nil
}
