package metadata

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/logtool/logtool/logfmt"
)

type b []byte

func (x b) i8(v int8) b     { return append(x, byte(v)) }
func (x b) i16(v int16) b   { return binary.BigEndian.AppendUint16(x, uint16(v)) }
func (x b) i32(v int32) b   { return binary.BigEndian.AppendUint32(x, uint32(v)) }
func (x b) i64(v int64) b   { return binary.BigEndian.AppendUint64(x, uint64(v)) }
func (x b) uv(v int) b      { return binary.AppendUvarint(x, uint64(v)) }
func (x b) cstr(s string) b { return append(x.uv(len(s)+1), s...) }
func (x b) uuid(c byte) b   { return append(x, strings.Repeat(string(c), 16)...) }
func (x b) f64(v float64) b { return x.i64(int64(math.Float64bits(v))) }

func framed(apiKey, version int, body b) []byte {
	return append(b{}.uv(1).uv(apiKey).uv(version), body...)
}

func TestFormat(t *testing.T) {
	for _, c := range []struct {
		name  string
		value []byte
		want  string
	}{
		// Kafka's own example (Strimzi blog), byte for byte.
		{"topic", framed(2, 0, b{}.cstr("my-topic").uuid(0).uv(0)),
			`{"type":"TOPIC_RECORD","version":0,"data":{"name":"my-topic","topicId":"AAAAAAAAAAAAAAAAAAAAAA"}}`},
		{"partition v1 with directories", framed(3, 1, b{}.i32(2).uuid(1).uv(3).i32(1).i32(2).uv(2).i32(1).uv(1).uv(1).i32(1).i32(4).i32(5).uv(3).uuid(2).uuid(3).uv(0)),
			`{"type":"PARTITION_RECORD","version":1,"data":{"partitionId":2,"topicId":"AQEBAQEBAQEBAQEBAQEBAQ","replicas":[1,2],"isr":[1],"removingReplicas":[],"addingReplicas":[],"leader":1,"leaderEpoch":4,"partitionEpoch":5,"directories":["AgICAgICAgICAgICAgICAg","AwMDAwMDAwMDAwMDAwMDAw"]}}`},
		{"partition v2 with ELR", framed(3, 2, b{}.i32(0).uuid(1).uv(1).uv(1).uv(1).uv(1).i32(-1).i32(0).i32(0).uv(1).uv(1).uv(2).uv(5).uv(2).i32(3)),
			`{"type":"PARTITION_RECORD","version":2,"data":{"partitionId":0,"topicId":"AQEBAQEBAQEBAQEBAQEBAQ","replicas":[],"isr":[],"removingReplicas":[],"addingReplicas":[],"leader":-1,"leaderEpoch":0,"partitionEpoch":0,"directories":[],"lastKnownElr":[3]}}`},
		{"partition change, ISR and leader", framed(5, 0, b{}.i32(0).uuid(1).uv(2).uv(0).uv(9).uv(3).i32(1).i32(2).uv(1).uv(4).i32(2)),
			`{"type":"PARTITION_CHANGE_RECORD","version":0,"data":{"partitionId":0,"topicId":"AQEBAQEBAQEBAQEBAQEBAQ","isr":[1,2],"leader":2}}`},
		{"register broker v0", framed(0, 0, b{}.i32(1).uuid(1).i64(7).uv(2).cstr("PLAINTEXT").cstr("h").i16(9092).i16(0).uv(0).uv(1).uv(0).i8(1).uv(0)),
			`{"type":"REGISTER_BROKER_RECORD","version":0,"data":{"brokerId":1,"incarnationId":"AQEBAQEBAQEBAQEBAQEBAQ","brokerEpoch":7,"endPoints":[{"name":"PLAINTEXT","host":"h","port":9092,"securityProtocol":0}],"features":[],"rack":null,"fenced":true}}`},
		{"broker registration change", framed(17, 1, b{}.i32(1).i64(8).uv(1).uv(0).uv(1).i8(-1)),
			`{"type":"BROKER_REGISTRATION_CHANGE_RECORD","version":1,"data":{"brokerId":1,"brokerEpoch":8,"fenced":-1}}`},
		{"fence", framed(7, 0, b{}.i32(1).i64(2).uv(0)), `{"type":"FENCE_BROKER_RECORD","version":0,"data":{"id":1,"epoch":2}}`},
		{"unfence", framed(8, 0, b{}.i32(1).i64(2).uv(0)), `{"type":"UNFENCE_BROKER_RECORD","version":0,"data":{"id":1,"epoch":2}}`},
		{"remove topic", framed(9, 0, b{}.uuid(4).uv(0)), `{"type":"REMOVE_TOPIC_RECORD","version":0,"data":{"topicId":"BAQEBAQEBAQEBAQEBAQEBA"}}`},
		{"config", framed(4, 0, b{}.i8(4).cstr("").cstr("log.retention.ms").cstr("1000").uv(0)),
			`{"type":"CONFIG_RECORD","version":0,"data":{"resourceType":4,"resourceName":"","name":"log.retention.ms","value":"1000"}}`},
		{"feature level", framed(12, 0, b{}.cstr("metadata.version").i16(21).uv(0)),
			`{"type":"FEATURE_LEVEL_RECORD","version":0,"data":{"name":"metadata.version","featureLevel":21}}`},
		{"producer ids", framed(15, 0, b{}.i32(1).i64(2).i64(3000).uv(0)),
			`{"type":"PRODUCER_IDS_RECORD","version":0,"data":{"brokerId":1,"brokerEpoch":2,"nextProducerId":3000}}`},
		{"no-op", framed(20, 0, b{}.uv(0)), `{"type":"NO_OP_RECORD","version":0,"data":{}}`},
		{"delegation token", framed(10, 0, b{}.cstr("User:alice").cstr("User:admin").uv(3).cstr("User:bob").cstr("User:carol").i64(1000).i64(9000).i64(5000).cstr("tok-1").uv(0)),
			`{"type":"DELEGATION_TOKEN_RECORD","version":0,"data":{"owner":"User:alice","requester":"User:admin","renewers":["User:bob","User:carol"],"issueTimestamp":1000,"maxTimestamp":9000,"expirationTimestamp":5000,"tokenId":"tok-1"}}`},
		{"remove delegation token", framed(26, 0, b{}.cstr("tok-1").uv(0)),
			`{"type":"REMOVE_DELEGATION_TOKEN_RECORD","version":0,"data":{"tokenId":"tok-1"}}`},
		// Secrets print as Kafka's JSON converter prints bytes: padded base64.
		{"user scram credential", framed(11, 0, b{}.cstr("alice").i8(2).cstr("\x01\x02\x03").cstr("\xff").cstr("").i32(4096).uv(0)),
			`{"type":"USER_SCRAM_CREDENTIAL_RECORD","version":0,"data":{"name":"alice","mechanism":2,"salt":"AQID","storedKey":"/w==","serverKey":"","iterations":4096}}`},
		{"remove user scram credential", framed(22, 0, b{}.cstr("alice").i8(1).uv(0)),
			`{"type":"REMOVE_USER_SCRAM_CREDENTIAL_RECORD","version":0,"data":{"name":"alice","mechanism":1}}`},
		{"client quota, default client-id of a user", framed(14, 0, b{}.uv(3).cstr("user").cstr("alice").uv(0).cstr("client-id").uv(0).uv(0).cstr("producer_byte_rate").f64(1048576).i8(0).uv(0)),
			`{"type":"CLIENT_QUOTA_RECORD","version":0,"data":{"entity":[{"entityType":"user","entityName":"alice"},{"entityType":"client-id","entityName":null}],"key":"producer_byte_rate","value":1048576.0,"remove":false}}`},
		{"client quota, removed, large value", framed(14, 0, b{}.uv(1).cstr("cst").i64(0x4202a05f20000000).i8(1).uv(0)),
			`{"type":"CLIENT_QUOTA_RECORD","version":0,"data":{"entity":[],"key":"cst","value":1.0E10,"remove":true}}`},
		{"access control entry", framed(18, 0, b{}.uuid(5).i8(2).cstr("orders").i8(3).cstr("User:alice").cstr("*").i8(3).i8(3).uv(0)),
			`{"type":"ACCESS_CONTROL_ENTRY_RECORD","version":0,"data":{"id":"BQUFBQUFBQUFBQUFBQUFBQ","resourceType":2,"resourceName":"orders","patternType":3,"principal":"User:alice","host":"*","operation":3,"permissionType":3}}`},
		{"remove access control entry", framed(19, 0, b{}.uuid(5).uv(0)),
			`{"type":"REMOVE_ACCESS_CONTROL_ENTRY_RECORD","version":0,"data":{"id":"BQUFBQUFBQUFBQUFBQUFBQ"}}`},
		{"zk migration state", framed(21, 0, b{}.i8(2).uv(0)), `{"type":"ZK_MIGRATION_STATE_RECORD","version":0,"data":{"zkMigrationState":2}}`},
		{"begin transaction, named", framed(23, 0, b{}.uv(1).uv(0).uv(5).cstr("move")),
			`{"type":"BEGIN_TRANSACTION_RECORD","version":0,"data":{"name":"move"}}`},
		{"end transaction", framed(24, 0, b{}.uv(0)), `{"type":"END_TRANSACTION_RECORD","version":0,"data":{}}`},
		{"abort transaction", framed(25, 0, b{}.uv(1).uv(0).uv(4).cstr("bad")),
			`{"type":"ABORT_TRANSACTION_RECORD","version":0,"data":{"reason":"bad"}}`},
		{"register controller", framed(27, 0, b{}.i32(3000).uuid(6).i8(0).uv(2).cstr("CONTROLLER").cstr("c").i16(9093).i16(0).uv(0).uv(2).cstr("kraft.version").i16(0).i16(1).uv(0).uv(0)),
			`{"type":"REGISTER_CONTROLLER_RECORD","version":0,"data":{"controllerId":3000,"incarnationId":"BgYGBgYGBgYGBgYGBgYGBg","zkMigrationReady":false,"endPoints":[{"name":"CONTROLLER","host":"c","port":9093,"securityProtocol":0}],"features":[{"name":"kraft.version","minSupportedVersion":0,"maxSupportedVersion":1}]}}`},
		{"clear elr", framed(28, 0, b{}.cstr("orders").uv(0)), `{"type":"CLEAR_ELR_RECORD","version":0,"data":{"topicName":"orders"}}`},
		{"unregister broker", framed(1, 0, b{}.i32(2).i64(9).uv(0)), `{"type":"UNREGISTER_BROKER_RECORD","version":0,"data":{"brokerId":2,"brokerEpoch":9}}`},
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
		framed(3, 2, b{}.i32(0).uuid(1).uv(4).i32(1).i32(2).i32(3).uv(2).i32(1).uv(1).uv(1).i32(1).i32(0).i32(0).uv(4).uuid(2).uuid(3).uuid(4).uv(0)),
		framed(4, 0, b{}.i8(2).cstr("t").cstr("cleanup.policy").cstr("compact,delete").uv(0)),
		framed(4, 0, b{}.i8(2).cstr("t").cstr("retention.ms").uv(0).uv(0)),
		framed(2, 0, b{}.cstr("my-topic").uuid(7).uv(0)),
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
	typ, ver, n, err := ParseFrame(b{}.uv(1).uv(300).uv(2).i8(9))
	if err != nil || typ != 300 || ver != 2 || n != 4 {
		t.Fatalf("ParseFrame = %d %d %d %v, want 300 2 4", typ, ver, n, err)
	}
	for _, in := range [][]byte{nil, b{}.uv(2).uv(2).uv(0), b{}.uv(1), b{}.uv(1).uv(2), b{}.uv(1).uv(2).uv(1 << 15)} {
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

func TestFormatErrors(t *testing.T) {
	for _, c := range []struct {
		value []byte
		want  string
	}{
		{nil, "Error at 5, skipping. bad metadata record frame: frame version"},
		{b{}.uv(0).uv(2).uv(0), "unknown frame version 0"},
		{framed(13, 0, nil), "unknown metadata record type 13"},
		{framed(2, 1, b{}.cstr("t").uuid(0).uv(0)), "unsupported TopicRecord version 1"},
		{framed(2, 0, b{}.cstr("t").uuid(0).uv(0).i8(0)), "found 1 byte(s) of garbage after TopicRecord"},
		{framed(2, 0, b{}.cstr("t")), "input ends inside a field"},
	} {
		got, err := Format(c.value, 5)
		if err == nil || !strings.Contains(got, c.want) || !strings.HasPrefix(got, "Error at 5, skipping. ") {
			t.Errorf("Format(%x) = %q, %v; want %q", c.value, got, err, c.want)
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
		{logfmt.ControlSnapshotHeader, b{}.i16(0).i64(10000).uv(0), "SnapshotHeader", `{"version":0,"lastContainedLogTimestamp":10000}`},
		{logfmt.ControlKRaftVersion, b{}.i16(0).i16(1).uv(0), "KRaftVersion", `{"version":0,"kRaftVersion":1}`},
		{logfmt.ControlSnapshotFooter, b{}.i16(0).uv(0), "SnapshotFooter", `{"version":0}`},
		{logfmt.ControlLeaderChange, b{}.i16(0).i32(1).uv(2).i32(1).uv(0).uv(1).uv(0), "LeaderChange:", `{"version":0,"leaderId":1,"voters":[{"voterId":1}],"grantingVoters":[]}`},
		{logfmt.ControlKRaftVoters, b{}.i16(0).uv(2).i32(1).uuid(1).uv(1).i16(0).i16(1).uv(0).uv(0).uv(0), "KRaftVoters",
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
	if _, _, err := FormatControl(logfmt.ControlSnapshotHeader, b{}.i16(0)); err == nil {
		t.Error("truncated header: want an error")
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(framed(3, 2, b{}.i32(0).uuid(1).uv(1).uv(1).uv(1).uv(1).i32(-1).i32(0).i32(0).uv(1).uv(1).uv(2).uv(5).uv(2).i32(3)))
	f.Add(framed(0, 0, b{}.i32(1).uuid(1).i64(7).uv(2).cstr("PLAINTEXT").cstr("h").i16(9092).i16(0).uv(0).uv(1).uv(0).i8(1).uv(0)))
	f.Add(framed(5, 0, b{}.i32(0).uuid(1).uv(2).uv(0).uv(9).uv(3).i32(1).i32(2).uv(1).uv(4).i32(2)))
	f.Add(framed(14, 0, b{}.uv(2).cstr("user").uv(0).cstr("k").f64(1.5).i8(1).uv(0)))
	f.Add(framed(11, 0, b{}.cstr("alice").i8(2).cstr("s").cstr("k").cstr("k").i32(4096).uv(0)))
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
	f.Add(uint8(6), []byte(b{}.i16(0).uv(2).i32(1).uuid(1).uv(1).i16(0).i16(1).uv(0).uv(0).uv(0)))
	f.Add(uint8(2), []byte(b{}.i16(0).i32(1).uv(2).i32(1).uv(0).uv(1).uv(0)))
	f.Fuzz(func(t *testing.T, typ uint8, value []byte) {
		ct := logfmt.ControlType(2 + typ%5)
		if _, js, err := FormatControl(ct, value); err == nil && !json.Valid(js) {
			t.Fatalf("invalid JSON %s", js)
		}
	})
}
