package kraft

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/logtool/logtool/logfmt/protocol/prototest"

	"github.com/logtool/logtool/logfmt"
)

// b builds inputs field by field.
type b = prototest.Wire

func framed(apiKey, version int, body b) []byte {
	return append(b{}.Uv(1).Uv(apiKey).Uv(version), body...)
}

func TestFormat(t *testing.T) {
	for _, c := range []struct {
		name  string
		value []byte
		want  string
	}{
		// Kafka's own example (Strimzi blog), byte for byte.
		{"topic", framed(2, 0, b{}.CStr("my-topic").UUID(0).Uv(0)),
			`{"type":"TOPIC_RECORD","version":0,"data":{"name":"my-topic","topicId":"AAAAAAAAAAAAAAAAAAAAAA"}}`},
		{"partition v1 with directories", framed(3, 1, b{}.I32(2).UUID(1).Uv(3).I32(1).I32(2).Uv(2).I32(1).Uv(1).Uv(1).I32(1).I32(4).I32(5).Uv(3).UUID(2).UUID(3).Uv(0)),
			`{"type":"PARTITION_RECORD","version":1,"data":{"partitionId":2,"topicId":"AQEBAQEBAQEBAQEBAQEBAQ","replicas":[1,2],"isr":[1],"removingReplicas":[],"addingReplicas":[],"leader":1,"leaderEpoch":4,"partitionEpoch":5,"directories":["AgICAgICAgICAgICAgICAg","AwMDAwMDAwMDAwMDAwMDAw"]}}`},
		{"partition v2 with ELR", framed(3, 2, b{}.I32(0).UUID(1).Uv(1).Uv(1).Uv(1).Uv(1).I32(-1).I32(0).I32(0).Uv(1).Uv(1).Uv(2).Uv(5).Uv(2).I32(3)),
			`{"type":"PARTITION_RECORD","version":2,"data":{"partitionId":0,"topicId":"AQEBAQEBAQEBAQEBAQEBAQ","replicas":[],"isr":[],"removingReplicas":[],"addingReplicas":[],"leader":-1,"leaderEpoch":0,"partitionEpoch":0,"directories":[],"lastKnownElr":[3]}}`},
		{"partition change, ISR and leader", framed(5, 0, b{}.I32(0).UUID(1).Uv(2).Uv(0).Uv(9).Uv(3).I32(1).I32(2).Uv(1).Uv(4).I32(2)),
			`{"type":"PARTITION_CHANGE_RECORD","version":0,"data":{"partitionId":0,"topicId":"AQEBAQEBAQEBAQEBAQEBAQ","isr":[1,2],"leader":2}}`},
		{"register broker v0", framed(0, 0, b{}.I32(1).UUID(1).I64(7).Uv(2).CStr("PLAINTEXT").CStr("h").I16(9092).I16(0).Uv(0).Uv(1).Uv(0).I8(1).Uv(0)),
			`{"type":"REGISTER_BROKER_RECORD","version":0,"data":{"brokerId":1,"incarnationId":"AQEBAQEBAQEBAQEBAQEBAQ","brokerEpoch":7,"endPoints":[{"name":"PLAINTEXT","host":"h","port":9092,"securityProtocol":0}],"features":[],"rack":null,"fenced":true}}`},
		{"broker registration change", framed(17, 1, b{}.I32(1).I64(8).Uv(1).Uv(0).Uv(1).I8(-1)),
			`{"type":"BROKER_REGISTRATION_CHANGE_RECORD","version":1,"data":{"brokerId":1,"brokerEpoch":8,"fenced":-1}}`},
		{"fence", framed(7, 0, b{}.I32(1).I64(2).Uv(0)), `{"type":"FENCE_BROKER_RECORD","version":0,"data":{"id":1,"epoch":2}}`},
		{"unfence", framed(8, 0, b{}.I32(1).I64(2).Uv(0)), `{"type":"UNFENCE_BROKER_RECORD","version":0,"data":{"id":1,"epoch":2}}`},
		{"remove topic", framed(9, 0, b{}.UUID(4).Uv(0)), `{"type":"REMOVE_TOPIC_RECORD","version":0,"data":{"topicId":"BAQEBAQEBAQEBAQEBAQEBA"}}`},
		{"config", framed(4, 0, b{}.I8(4).CStr("").CStr("log.retention.ms").CStr("1000").Uv(0)),
			`{"type":"CONFIG_RECORD","version":0,"data":{"resourceType":4,"resourceName":"","name":"log.retention.ms","value":"1000"}}`},
		{"feature level", framed(12, 0, b{}.CStr("metadata.version").I16(21).Uv(0)),
			`{"type":"FEATURE_LEVEL_RECORD","version":0,"data":{"name":"metadata.version","featureLevel":21}}`},
		{"producer ids", framed(15, 0, b{}.I32(1).I64(2).I64(3000).Uv(0)),
			`{"type":"PRODUCER_IDS_RECORD","version":0,"data":{"brokerId":1,"brokerEpoch":2,"nextProducerId":3000}}`},
		{"no-op", framed(20, 0, b{}.Uv(0)), `{"type":"NO_OP_RECORD","version":0,"data":{}}`},
		{"delegation token", framed(10, 0, b{}.CStr("User:alice").CStr("User:admin").Uv(3).CStr("User:bob").CStr("User:carol").I64(1000).I64(9000).I64(5000).CStr("tok-1").Uv(0)),
			`{"type":"DELEGATION_TOKEN_RECORD","version":0,"data":{"owner":"User:alice","requester":"User:admin","renewers":["User:bob","User:carol"],"issueTimestamp":1000,"maxTimestamp":9000,"expirationTimestamp":5000,"tokenId":"tok-1"}}`},
		{"remove delegation token", framed(26, 0, b{}.CStr("tok-1").Uv(0)),
			`{"type":"REMOVE_DELEGATION_TOKEN_RECORD","version":0,"data":{"tokenId":"tok-1"}}`},
		// Secrets print as Kafka's JSON converter prints bytes: padded base64.
		// Field order as UserScramCredentialRecord.json has it since
		// KAFKA-14881 (Kafka 3.5): name, mechanism, salt, storedKey,
		// serverKey, iterations; each bytes field differs, so a swap fails.
		{"user scram credential", framed(11, 0, b{}.CStr("alice").I8(2).CStr("\x01\x02\x03").CStr("\xff").CStr("").I32(4096).Uv(0)),
			`{"type":"USER_SCRAM_CREDENTIAL_RECORD","version":0,"data":{"name":"alice","mechanism":2,"salt":"AQID","storedKey":"/w==","serverKey":"","iterations":4096}}`},
		{"remove user scram credential", framed(22, 0, b{}.CStr("alice").I8(1).Uv(0)),
			`{"type":"REMOVE_USER_SCRAM_CREDENTIAL_RECORD","version":0,"data":{"name":"alice","mechanism":1}}`},
		{"client quota, default client-id of a user", framed(14, 0, b{}.Uv(3).CStr("user").CStr("alice").Uv(0).CStr("client-id").Uv(0).Uv(0).CStr("producer_byte_rate").F64(1048576).I8(0).Uv(0)),
			`{"type":"CLIENT_QUOTA_RECORD","version":0,"data":{"entity":[{"entityType":"user","entityName":"alice"},{"entityType":"client-id","entityName":null}],"key":"producer_byte_rate","value":1048576.0,"remove":false}}`},
		{"client quota, removed, large value", framed(14, 0, b{}.Uv(1).CStr("cst").I64(0x4202a05f20000000).I8(1).Uv(0)),
			`{"type":"CLIENT_QUOTA_RECORD","version":0,"data":{"entity":[],"key":"cst","value":1.0E10,"remove":true}}`},
		{"access control entry", framed(18, 0, b{}.UUID(5).I8(2).CStr("orders").I8(3).CStr("User:alice").CStr("*").I8(3).I8(3).Uv(0)),
			`{"type":"ACCESS_CONTROL_ENTRY_RECORD","version":0,"data":{"id":"BQUFBQUFBQUFBQUFBQUFBQ","resourceType":2,"resourceName":"orders","patternType":3,"principal":"User:alice","host":"*","operation":3,"permissionType":3}}`},
		{"remove access control entry", framed(19, 0, b{}.UUID(5).Uv(0)),
			`{"type":"REMOVE_ACCESS_CONTROL_ENTRY_RECORD","version":0,"data":{"id":"BQUFBQUFBQUFBQUFBQUFBQ"}}`},
		{"zk migration state", framed(21, 0, b{}.I8(2).Uv(0)), `{"type":"ZK_MIGRATION_STATE_RECORD","version":0,"data":{"zkMigrationState":2}}`},
		{"begin transaction, named", framed(23, 0, b{}.Uv(1).Uv(0).Uv(5).CStr("move")),
			`{"type":"BEGIN_TRANSACTION_RECORD","version":0,"data":{"name":"move"}}`},
		{"end transaction", framed(24, 0, b{}.Uv(0)), `{"type":"END_TRANSACTION_RECORD","version":0,"data":{}}`},
		{"abort transaction", framed(25, 0, b{}.Uv(1).Uv(0).Uv(4).CStr("bad")),
			`{"type":"ABORT_TRANSACTION_RECORD","version":0,"data":{"reason":"bad"}}`},
		{"register controller", framed(27, 0, b{}.I32(3000).UUID(6).I8(0).Uv(2).CStr("CONTROLLER").CStr("c").I16(9093).I16(0).Uv(0).Uv(2).CStr("kraft.version").I16(0).I16(1).Uv(0).Uv(0)),
			`{"type":"REGISTER_CONTROLLER_RECORD","version":0,"data":{"controllerId":3000,"incarnationId":"BgYGBgYGBgYGBgYGBgYGBg","zkMigrationReady":false,"endPoints":[{"name":"CONTROLLER","host":"c","port":9093,"securityProtocol":0}],"features":[{"name":"kraft.version","minSupportedVersion":0,"maxSupportedVersion":1}]}}`},
		{"clear elr", framed(28, 0, b{}.CStr("orders").Uv(0)), `{"type":"CLEAR_ELR_RECORD","version":0,"data":{"topicName":"orders"}}`},
		{"unregister broker", framed(1, 0, b{}.I32(2).I64(9).Uv(0)), `{"type":"UNREGISTER_BROKER_RECORD","version":0,"data":{"brokerId":2,"brokerEpoch":9}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Format(c.value, 0)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Fatalf("got  %s\nwant %s", got, c.want)
			}
			if !json.Valid([]byte(got)) {
				t.Fatal("not JSON")
			}
		})
	}
}

// One Decoder decoding record after record gives each record as a fresh
// decode does: replay relies on it.
func TestDecoderReuse(t *testing.T) {
	values := [][]byte{
		framed(3, 2, b{}.I32(0).UUID(1).Uv(4).I32(1).I32(2).I32(3).Uv(2).I32(1).Uv(1).Uv(1).I32(1).I32(0).I32(0).Uv(4).UUID(2).UUID(3).UUID(4).Uv(0)),
		framed(4, 0, b{}.I8(2).CStr("t").CStr("cleanup.policy").CStr("compact,delete").Uv(0)),
		framed(4, 0, b{}.I8(2).CStr("t").CStr("retention.ms").Uv(0).Uv(0)),
		framed(2, 0, b{}.CStr("my-topic").UUID(7).Uv(0)),
	}
	var d Decoder
	for _, v := range values {
		want, err := Decode(v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := d.Decode(v)
		if err != nil {
			t.Fatal(err)
		}
		if g, w := got.AppendJSON(nil), want.AppendJSON(nil); string(g) != string(w) {
			t.Fatalf("reused: %s\nfresh: %s", g, w)
		}
	}
}

func TestParseFrame(t *testing.T) {
	typ, ver, n, err := ParseFrame(b{}.Uv(1).Uv(300).Uv(2).I8(9))
	if err != nil || typ != 300 || ver != 2 || n != 4 {
		t.Fatalf("ParseFrame = %d %d %d %v, want 300 2 4", typ, ver, n, err)
	}
	for _, in := range [][]byte{nil, b{}.Uv(2).Uv(2).Uv(0), b{}.Uv(1), b{}.Uv(1).Uv(2), b{}.Uv(1).Uv(2).Uv(1 << 15)} {
		if _, _, _, err := ParseFrame(in); !errors.Is(err, ErrFrame) {
			t.Errorf("ParseFrame(%x) = %v, want ErrFrame", in, err)
		}
	}
}

func TestFieldIndex(t *testing.T) {
	if i := FieldIndex(4, "value"); schemas[4].Fields[i].Name != "value" {
		t.Fatalf("FieldIndex(4, value) = %d", i)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("no panic for a field the schema lacks")
		}
	}()
	FieldIndex(4, "nope")
}

// The skipping line holds what Kafka's MetadataRecordSerde throws; the error
// (stderr) says more.
func TestFormatErrors(t *testing.T) {
	for _, c := range []struct {
		value    []byte
		line     string
		errorHas string
	}{
		{nil, "Error while reading frame version", "frame version"},
		{b{}.Uv(0).Uv(2).Uv(0), "Could not deserialize metadata record with frame version 0. Note that upgrades from the preview release of KRaft in 2.8 to newer versions are not supported.", "unknown frame version 0"},
		{b{}.Uv(3).Uv(2).Uv(0), "Could not deserialize metadata record due to unknown frame version 3(only frame version 1 is supported)", "unknown frame version 3"},
		{b{}.Uv(1).Uv(2).Uv(1 << 15), "Value for version was too large.", "record version 32768"},
		{b{}.Uv(1 << 15).Uv(2).Uv(0), "Value for frame version was too large.", "unknown frame version 32768"},
		{b{}.Uv(1).Uv(1 << 15).Uv(0), "Value for type was too large.", "record type 32768"},
		{framed(13, 0, nil), "org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id 13", "unknown metadata record type 13"},
		{framed(2, 1, b{}.CStr("t").UUID(0).Uv(0)), "Failed to deserialize record with type 2", "Can't read version 1 of TopicRecord"},
		{framed(2, 0, b{}.CStr("t").UUID(0).Uv(0).I8(0)), "Found 1 byte(s) of garbage after 2", "found 1 byte(s) of garbage after TopicRecord"},
		{framed(2, 0, b{}.CStr("t")), "Failed to deserialize record with type 2", "input ends inside a field"},
	} {
		got, err := Format(c.value, 5)
		if err == nil || got != "Error at 5, skipping. "+c.line || !strings.Contains(err.Error(), c.errorHas) {
			t.Errorf("Format(%x) = %q, %v; want %q and an error saying %q", c.value, got, err, c.line, c.errorHas)
		}
	}
}

func TestFormatControl(t *testing.T) {
	for _, c := range []struct {
		t     logfmt.ControlType
		value []byte
		label string
		want  string
	}{
		// The examples of Kafka's DumpLogSegments (PR #12084, #19729).
		{logfmt.ControlSnapshotHeader, b{}.I16(0).I64(10000).Uv(0), "SnapshotHeader", `{"version":0,"lastContainedLogTimestamp":10000}`},
		{logfmt.ControlKRaftVersion, b{}.I16(0).I16(1).Uv(0), "KRaftVersion", `{"version":0,"kRaftVersion":1}`},
		{logfmt.ControlSnapshotFooter, b{}.I16(0).Uv(0), "SnapshotFooter", `{"version":0}`},
		{logfmt.ControlLeaderChange, b{}.I16(0).I32(1).Uv(2).I32(1).Uv(0).Uv(1).Uv(0), "LeaderChange:", `{"version":0,"leaderId":1,"voters":[{"voterId":1}],"grantingVoters":[]}`},
		{logfmt.ControlKRaftVoters, b{}.I16(0).Uv(2).I32(1).UUID(1).Uv(1).I16(0).I16(1).Uv(0).Uv(0).Uv(0), "KRaftVoters",
			`{"version":0,"voters":[{"voterId":1,"voterDirectoryId":"AQEBAQEBAQEBAQEBAQEBAQ","endpoints":[],"kRaftVersionFeature":{"minSupportedVersion":0,"maxSupportedVersion":1}}]}`},
	} {
		label, js, err := FormatControl(c.t, c.value)
		if err != nil || label != c.label || string(js) != c.want {
			t.Errorf("%s: got %q %s %v, want %q %s", c.t, label, js, err, c.label, c.want)
		}
	}
	if _, _, err := FormatControl(logfmt.ControlCommit, nil); err == nil {
		t.Error("COMMIT has no KRaft schema; want an error")
	}
	if _, _, err := FormatControl(logfmt.ControlSnapshotHeader, b{}.I16(0)); err == nil {
		t.Error("truncated header: want an error")
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(framed(3, 2, b{}.I32(0).UUID(1).Uv(1).Uv(1).Uv(1).Uv(1).I32(-1).I32(0).I32(0).Uv(1).Uv(1).Uv(2).Uv(5).Uv(2).I32(3)))
	f.Add(framed(0, 0, b{}.I32(1).UUID(1).I64(7).Uv(2).CStr("PLAINTEXT").CStr("h").I16(9092).I16(0).Uv(0).Uv(1).Uv(0).I8(1).Uv(0)))
	f.Add(framed(5, 0, b{}.I32(0).UUID(1).Uv(2).Uv(0).Uv(9).Uv(3).I32(1).I32(2).Uv(1).Uv(4).I32(2)))
	f.Add(framed(14, 0, b{}.Uv(2).CStr("user").Uv(0).CStr("k").F64(1.5).I8(1).Uv(0)))
	f.Add(framed(11, 0, b{}.CStr("alice").I8(2).CStr("s").CStr("k").CStr("k").I32(4096).Uv(0)))
	f.Fuzz(func(t *testing.T, value []byte) {
		r, err := Decode(value)
		if err != nil {
			return
		}
		if out := r.AppendJSON(nil); !json.Valid(out) {
			t.Fatalf("invalid JSON %s", out)
		}
	})
}

func FuzzFormatControl(f *testing.F) {
	f.Add(uint8(6), []byte(b{}.I16(0).Uv(2).I32(1).UUID(1).Uv(1).I16(0).I16(1).Uv(0).Uv(0).Uv(0)))
	f.Add(uint8(2), []byte(b{}.I16(0).I32(1).Uv(2).I32(1).Uv(0).Uv(1).Uv(0)))
	f.Fuzz(func(t *testing.T, typ uint8, value []byte) {
		ct := logfmt.ControlType(2 + typ%5)
		if _, js, err := FormatControl(ct, value); err == nil && !json.Valid(js) {
			t.Fatalf("invalid JSON %s", js)
		}
	})
}
