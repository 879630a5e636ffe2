package groupmeta

import (
	"errors"
	"fmt"
	"testing"

	"github.com/logtool/logtool/logfmt/protocol/prototest"

	"github.com/logtool/logtool/logfmt/protocol"
)

// b builds inputs field by field.
type b = prototest.Wire

func TestFormat(t *testing.T) {
	commitKey := b{}.I16(1).Str("g").Str("t").I32(2)
	member := func(version int16, sub, asg []byte) b {
		m := b{}.Str("m1")
		if version >= 3 {
			m = m.Str("static-1")
		}
		m = m.Str("c1").Str("/h")
		if version >= 1 {
			m = m.I32(300)
		}
		return m.I32(10).Bytes(sub).Bytes(asg)
	}
	group := func(version int16, protocolType string, members ...b) b {
		v := b{}.I16(version).Str(protocolType).I32(3).Str("range").Str("m1")
		if version >= 2 {
			v = v.I64(99)
		}
		v = v.I32(int32(len(members)))
		for _, m := range members {
			v = append(v, m...)
		}
		return v
	}
	sub := b{}.I16(0).I32(1).Str("t").I32(-1)
	asg := b{}.I16(0).I32(1).Str("t").I32(1).I32(2).I32(-1)
	prototest.CheckFormat(t, Format, []prototest.Case{
		{"offset commit v0", commitKey, b{}.I16(0).I64(5).Str("md").I64(1000),
			`{"type":"1","data":{"group":"g","topic":"t","partition":2}}`, `{"version":"0","data":{"offset":5,"metadata":"md","commitTimestamp":1000}}`},
		{"offset commit v1", b{}.I16(0).Str("g").Str("t").I32(2), b{}.I16(1).I64(5).Str("").I64(1000).I64(2000),
			`{"type":"0","data":{"group":"g","topic":"t","partition":2}}`, `{"version":"1","data":{"offset":5,"metadata":"","commitTimestamp":1000,"expireTimestamp":2000}}`},
		{"offset commit v2", commitKey, b{}.I16(2).I64(5).Str("").I64(1000),
			`{"type":"1","data":{"group":"g","topic":"t","partition":2}}`, `{"version":"2","data":{"offset":5,"metadata":"","commitTimestamp":1000}}`},
		{"offset commit v3", commitKey, b{}.I16(3).I64(5).I32(7).Str("").I64(1000),
			`{"type":"1","data":{"group":"g","topic":"t","partition":2}}`, `{"version":"3","data":{"offset":5,"leaderEpoch":7,"metadata":"","commitTimestamp":1000}}`},
		{"offset commit v4 flexible", commitKey, append(b{}.I16(4).I64(5).I32(7).CStr("x").I64(1000), 0),
			`{"type":"1","data":{"group":"g","topic":"t","partition":2}}`, `{"version":"4","data":{"offset":5,"leaderEpoch":7,"metadata":"x","commitTimestamp":1000}}`},
		{"group metadata v0", b{}.I16(2).Str("g"), group(0, "consumer", member(0, sub, asg)),
			`{"type":"2","data":{"group":"g"}}`,
			`{"version":"0","data":{"protocolType":"consumer","generation":3,"protocol":"range","leader":"m1","members":[{"memberId":"m1","clientId":"c1","clientHost":"/h","sessionTimeout":10,"subscription":{"topics":["t"],"userData":null},"assignment":{"assignedPartitions":[{"topic":"t","partitions":[2]}],"userData":null}}]}}`},
		{"group metadata v3, not consumer", b{}.I16(2).Str("g"), group(3, "connect", member(3, []byte{1}, nil)),
			`{"type":"2","data":{"group":"g"}}`,
			`{"version":"3","data":{"protocolType":"connect","generation":3,"protocol":"range","leader":"m1","currentStateTimestamp":99,"members":[{"memberId":"m1","groupInstanceId":"static-1","clientId":"c1","clientHost":"/h","rebalanceTimeout":300,"sessionTimeout":10,"subscription":"AQ==","assignment":""}]}}`},
		{"consumer bytes that do not decode stay base64", b{}.I16(2).Str("g"), group(1, "consumer", member(1, []byte{0, 1, 0}, nil)),
			`{"type":"2","data":{"group":"g"}}`,
			`{"version":"1","data":{"protocolType":"consumer","generation":3,"protocol":"range","leader":"m1","members":[{"memberId":"m1","clientId":"c1","clientHost":"/h","rebalanceTimeout":300,"sessionTimeout":10,"subscription":"AAEA","assignment":""}]}}`},
	})
}

// FuzzFormat: any key and value render without panicking, as JSON when
// they decode, and print the same when written back from what was decoded.
func FuzzFormat(f *testing.F) {
	f.Add([]byte(b{}.I16(1).Str("g").Str("t").I32(2)), []byte(b{}.I16(3).I64(5).I32(7).Str("").I64(1000)))
	f.Add([]byte(b{}.I16(2).Str("g")), []byte(b{}.I16(3).Str("consumer").I32(3).Str("range").Str("m1").I64(99).I32(0)))
	f.Add([]byte(b{}.I16(5).Str("g").Str("m")), []byte(b{}.I16(0).Uv(0).Uv(0).CStr("c").CStr("h").Uv(1).Uv(0).I32(-1).Uv(0).Uv(1).Uv(0).Uv(6).I8(1).I32(1).Uv(1).Uv(0)))
	f.Add([]byte(b{}.I16(16).Str("g").Str("r")), []byte(b{}.I16(0).Uv(2).CStr("t").I64(1).I64(2).Uv(0)))
	f.Add([]byte(b{}.I16(15).Str("g")), []byte(append(b{}.I16(0).Uv(2), make([]byte, 16)...).CStr("t").Uv(2).I32(0).I64(1).Uv(0).Uv(1).Uv(1).Uv(0)))
	f.Add([]byte(b{}.I16(19).Str("g").Str("m")), []byte(b{}.I16(0).Uv(0).Uv(0).CStr("c").CStr("h").I32(1).I32(1).CStr("p").I8(1).CStr("h").I16(80).Uv(0).Uv(1).Uv(0)))
	f.Add([]byte(b{}.I16(23).Str("g")), []byte(b{}.I16(0).I32(1).Uv(2).CStr("0").Uv(1).Uv(1).Uv(1).Uv(1).Uv(1).Uv(2).Uv(1).Uv(1).Uv(1).Uv(0).Uv(0).Uv(0)))
	f.Add([]byte{0}, []byte(nil))
	prototest.Fuzz(f, records)
}

// The topic id of the group records' tests, and its JSON.
var topicID = append(b{0xfb}, make([]byte, 14)...).I8(1)

const topicIDJSON = `"-wAAAAAAAAAAAAAAAAAAAQ"`

// gKey and mKey are the keys of group and member records of group "g" and
// member "m1".
func gKey(typ int16) b { return b{}.I16(typ).Str("g") }
func mKey(typ int16) b { return b{}.I16(typ).Str("g").Str("m1") }

// TestFormatConsumerGroupRecords decodes the KIP-848 records (types 3 to 8
// and 16), built field by field: compact strings and arrays carry length+1,
// every struct ends with its tagged fields.
func TestFormatConsumerGroupRecords(t *testing.T) {
	prototest.CheckFormat(t, Format, []prototest.Case{
		{"group metadata, tagged fields at default", gKey(3), b{}.I16(0).I32(5).Uv(0),
			`{"type":"3","data":{"groupId":"g"}}`, `{"version":"0","data":{"epoch":5}}`},
		{"group metadata with metadata hash", gKey(3), b{}.I16(0).I32(5).Uv(1).Uv(0).Uv(8).I64(-3),
			`{"type":"3","data":{"groupId":"g"}}`, `{"version":"0","data":{"epoch":5,"metadataHash":-3}}`},
		{"partition metadata", gKey(4),
			append(b{}.I16(0).Uv(2), topicID...).CStr("t").I32(3).Uv(2).I32(0).Uv(3).CStr("r1").CStr("r2").Uv(0).Uv(0).Uv(0).Uv(0),
			`{"type":"4","data":{"groupId":"g"}}`,
			`{"version":"0","data":{"topics":[{"topicId":` + topicIDJSON + `,"topicName":"t","numPartitions":3,"partitionMetadata":[{"partition":0,"racks":["r1","r2"]}]}]}}`},
		{"member metadata, classic member metadata absent", mKey(5),
			b{}.I16(0).Uv(0).CStr("rack").CStr("c1").CStr("/10.0.0.1").Uv(2).CStr("t").Uv(0).I32(45000).CStr("uniform").Uv(0),
			`{"type":"5","data":{"groupId":"g","memberId":"m1"}}`,
			`{"version":"0","data":{"instanceId":null,"rackId":"rack","clientId":"c1","clientHost":"/10.0.0.1","subscribedTopicNames":["t"],"subscribedTopicRegex":null,"rebalanceTimeoutMs":45000,"serverAssignor":"uniform"}}`},
		{"member metadata with classic member metadata", mKey(5),
			// tag 0, size 16: marker 1, session timeout, one protocol
			// ("range", metadata 0x01), the protocol's and the struct's
			// empty tagged fields.
			b{}.I16(0).CStr("i1").Uv(0).CStr("c1").CStr("/h").Uv(1).CStr("^t.*").I32(-1).Uv(0).
				Uv(1).Uv(0).Uv(16).I8(1).I32(10000).Uv(2).CStr("range").Uv(2).I8(1).Uv(0).Uv(0),
			`{"type":"5","data":{"groupId":"g","memberId":"m1"}}`,
			`{"version":"0","data":{"instanceId":"i1","rackId":null,"clientId":"c1","clientHost":"/h","subscribedTopicNames":[],"subscribedTopicRegex":"^t.*","rebalanceTimeoutMs":-1,"serverAssignor":null,"classicMemberMetadata":{"sessionTimeoutMs":10000,"supportedProtocols":[{"name":"range","metadata":"AQ=="}]}}}`},
		{"target assignment metadata", gKey(6), b{}.I16(0).I32(7).Uv(0),
			`{"type":"6","data":{"groupId":"g"}}`, `{"version":"0","data":{"assignmentEpoch":7}}`},
		{"target assignment member", mKey(7), append(b{}.I16(0).Uv(2), topicID...).Uv(3).I32(0).I32(2).Uv(0).Uv(0),
			`{"type":"7","data":{"groupId":"g","memberId":"m1"}}`,
			`{"version":"0","data":{"topicPartitions":[{"topicId":` + topicIDJSON + `,"partitions":[0,2]}]}}`},
		{"current member assignment", mKey(8),
			append(append(b{}.I16(0).I32(8).I32(7).I8(0).Uv(2), topicID...).Uv(2).I32(1).Uv(0).Uv(2), topicID...).Uv(2).I32(4).Uv(0).Uv(0),
			`{"type":"8","data":{"groupId":"g","memberId":"m1"}}`,
			`{"version":"0","data":{"memberEpoch":8,"previousMemberEpoch":7,"state":0,"assignedPartitions":[{"topicId":` + topicIDJSON + `,"partitions":[1]}],"partitionsPendingRevocation":[{"topicId":` + topicIDJSON + `,"partitions":[4]}]}}`},
		{"regular expression", b{}.I16(16).Str("g").Str("^t.*"), b{}.I16(0).Uv(3).CStr("t1").CStr("t2").I64(12).I64(1700000000000).Uv(0),
			`{"type":"16","data":{"groupId":"g","regularExpression":"^t.*"}}`,
			`{"version":"0","data":{"topics":["t1","t2"],"version":12,"timestamp":1700000000000}}`},
	})
	// A tombstone of a new record type is <DELETE>, its key decoded.
	if f := Format(mKey(8), nil, 0); f.Err != nil || f.Key != `{"type":"8","data":{"groupId":"g","memberId":"m1"}}` || f.Value != "<DELETE>" {
		t.Fatalf("tombstone: %+v", f)
	}
}

// TestFormatShareAndStreamsGroupRecords decodes the share group (types 10
// to 15) and streams group (17, 19 to 23) records of Kafka 4.1, built field
// by field from their schema files.
func TestFormatShareAndStreamsGroupRecords(t *testing.T) {
	// tasks is one TaskIds array: subtopology "0" with partitions 1 and 2.
	tasks := func(x b) b { return x.Uv(2).CStr("0").Uv(3).I32(1).I32(2).Uv(0) }
	const tasksJSON = `[{"subtopologyId":"0","partitions":[1,2]}]`
	// topicInfo is one TopicInfo: name, partitions, replication factor and
	// one topic config, each struct ending in its empty tagged fields.
	topicInfo := func(x b) b {
		return x.CStr("app-store-changelog").I32(0).I16(3).Uv(2).CStr("cleanup.policy").CStr("compact").Uv(0).Uv(0)
	}
	const topicInfoJSON = `{"name":"app-store-changelog","partitions":0,"replicationFactor":3,"topicConfigs":[{"key":"cleanup.policy","value":"compact"}]}`
	prototest.CheckFormat(t, Format, []prototest.Case{
		{"share member metadata", mKey(10), b{}.I16(0).Uv(0).CStr("c1").CStr("/h").Uv(3).CStr("t1").CStr("t2").Uv(0),
			`{"type":"10","data":{"groupId":"g","memberId":"m1"}}`,
			`{"version":"0","data":{"rackId":null,"clientId":"c1","clientHost":"/h","subscribedTopicNames":["t1","t2"]}}`},
		// metadataHash is not tagged in ShareGroupMetadataValue.
		{"share group metadata", gKey(11), b{}.I16(0).I32(3).I64(-5).Uv(0),
			`{"type":"11","data":{"groupId":"g"}}`, `{"version":"0","data":{"epoch":3,"metadataHash":-5}}`},
		{"share target assignment metadata", gKey(12), b{}.I16(0).I32(4).Uv(0),
			`{"type":"12","data":{"groupId":"g"}}`, `{"version":"0","data":{"assignmentEpoch":4}}`},
		{"share target assignment member", mKey(13), append(b{}.I16(0).Uv(2), topicID...).Uv(2).I32(7).Uv(0).Uv(0),
			`{"type":"13","data":{"groupId":"g","memberId":"m1"}}`,
			`{"version":"0","data":{"topicPartitions":[{"topicId":` + topicIDJSON + `,"partitions":[7]}]}}`},
		{"share current member assignment", mKey(14), append(b{}.I16(0).I32(5).I32(4).I8(0).Uv(2), topicID...).Uv(1).Uv(0).Uv(0),
			`{"type":"14","data":{"groupId":"g","memberId":"m1"}}`,
			`{"version":"0","data":{"memberEpoch":5,"previousMemberEpoch":4,"state":0,"assignedPartitions":[{"topicId":` + topicIDJSON + `,"partitions":[]}]}}`},
		{"share state partition metadata", gKey(15),
			append(append(b{}.I16(0).Uv(2), topicID...).CStr("t1").Uv(2).I32(0).I64(1700000000000).Uv(0).Uv(1).Uv(2), topicID...).CStr("t0").Uv(0).Uv(0),
			`{"type":"15","data":{"groupId":"g"}}`,
			`{"version":"0","data":{"initializingTopics":[{"topicId":` + topicIDJSON + `,"topicName":"t1","partitions":[0],"createTimestamp":1700000000000}],"initializedTopics":[],"deletingTopics":[{"topicId":` + topicIDJSON + `,"topicName":"t0"}]}}`},
		{"streams group metadata", gKey(17), b{}.I16(0).I32(6).I64(42).Uv(0),
			`{"type":"17","data":{"groupId":"g"}}`, `{"version":"0","data":{"epoch":6,"metadataHash":42}}`},
		{"streams group metadata, validated topology epoch", gKey(17), b{}.I16(0).I32(6).I64(42).Uv(1).Uv(0).Uv(4).I32(2),
			`{"type":"17","data":{"groupId":"g"}}`, `{"version":"0","data":{"epoch":6,"metadataHash":42,"validatedTopologyEpoch":2}}`},
		// userEndpoint is a nullable struct: a marker byte, then the
		// struct; clientTags one key/value.
		{"streams member metadata", mKey(19),
			b{}.I16(0).Uv(0).CStr("r1").CStr("c1").CStr("/h").I32(30000).I32(1).CStr("p1").I8(1).CStr("host").I16(8080).Uv(0).Uv(2).CStr("az").CStr("a").Uv(0).Uv(0),
			`{"type":"19","data":{"groupId":"g","memberId":"m1"}}`,
			`{"version":"0","data":{"instanceId":null,"rackId":"r1","clientId":"c1","clientHost":"/h","rebalanceTimeoutMs":30000,"topologyEpoch":1,"processId":"p1","userEndpoint":{"host":"host","port":8080},"clientTags":[{"key":"az","value":"a"}]}}`},
		{"streams member metadata, no endpoint", mKey(19),
			b{}.I16(0).CStr("i1").Uv(0).CStr("c1").CStr("/h").I32(-1).I32(0).CStr("p1").I8(-1).Uv(1).Uv(0),
			`{"type":"19","data":{"groupId":"g","memberId":"m1"}}`,
			`{"version":"0","data":{"instanceId":"i1","rackId":null,"clientId":"c1","clientHost":"/h","rebalanceTimeoutMs":-1,"topologyEpoch":0,"processId":"p1","userEndpoint":null,"clientTags":[]}}`},
		{"streams target assignment metadata", gKey(20), b{}.I16(0).I32(9).Uv(0),
			`{"type":"20","data":{"groupId":"g"}}`, `{"version":"0","data":{"assignmentEpoch":9}}`},
		{"streams target assignment member", mKey(21), tasks(b{}.I16(0)).Uv(1).Uv(1).Uv(0),
			`{"type":"21","data":{"groupId":"g","memberId":"m1"}}`,
			`{"version":"0","data":{"activeTasks":` + tasksJSON + `,"standbyTasks":[],"warmupTasks":[]}}`},
		{"streams current member assignment", mKey(22),
			tasks(b{}.I16(0).I32(8).I32(7).I8(1)).Uv(1).Uv(1).Uv(1).Uv(1).Uv(1).Uv(0),
			`{"type":"22","data":{"groupId":"g","memberId":"m1"}}`,
			`{"version":"0","data":{"memberEpoch":8,"previousMemberEpoch":7,"state":1,"activeTasks":` + tasksJSON + `,"standbyTasks":[],"warmupTasks":[],"activeTasksPendingRevocation":[],"standbyTasksPendingRevocation":[],"warmupTasksPendingRevocation":[]}}`},
		{"streams topology", gKey(23),
			// one subtopology: source topic, no regex, one changelog,
			// no sinks or repartition sources, one copartition group.
			topicInfo(b{}.I16(0).I32(1).Uv(2).CStr("0").Uv(2).CStr("in").Uv(1).Uv(2)).Uv(1).Uv(1).Uv(2).Uv(2).I16(0).Uv(1).Uv(1).Uv(0).Uv(0).Uv(0),
			`{"type":"23","data":{"groupId":"g"}}`,
			`{"version":"0","data":{"epoch":1,"subtopologies":[{"subtopologyId":"0","sourceTopics":["in"],"sourceTopicRegex":[],"stateChangelogTopics":[` + topicInfoJSON + `],"repartitionSinkTopics":[],"repartitionSourceTopics":[],"copartitionGroups":[{"sourceTopics":[0],"sourceTopicRegex":[],"repartitionSourceTopics":[]}]}]}}`},
	})
	if f := Format(mKey(22), nil, 0); f.Err != nil || f.Key != `{"type":"22","data":{"groupId":"g","memberId":"m1"}}` || f.Value != "<DELETE>" {
		t.Fatalf("tombstone: %+v", f)
	}
	// Kafka 4.1 has no record types 9 and 18 (the share and streams
	// groups' partition metadata, removed before it) nor 24 and up.
	for _, typ := range []int16{9, 18, 24, 25} {
		f := Format(b{}.I16(typ).Str("g"), b{}.I16(0).I32(1), 4)
		if want := fmt.Sprintf("Unknown record type %d at offset 4, skipping.", typ); !errors.Is(f.Err, protocol.ErrUnknownType) || f.Key != want {
			t.Fatalf("type %d: %+v", typ, f)
		}
	}
}
