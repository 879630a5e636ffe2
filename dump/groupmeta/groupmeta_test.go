package groupmeta

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"testing"

	"github.com/logtool/logtool/dump/protocol"
)

type b []byte

func (x b) i16(v int16) b  { return binary.BigEndian.AppendUint16(x, uint16(v)) }
func (x b) i32(v int32) b  { return binary.BigEndian.AppendUint32(x, uint32(v)) }
func (x b) i64(v int64) b  { return binary.BigEndian.AppendUint64(x, uint64(v)) }
func (x b) str(s string) b { return append(x.i16(int16(len(s))), s...) }
func (x b) cstr(s string) b {
	return append(binary.AppendUvarint(x, uint64(len(s)+1)), s...)
}
func (x b) bytes(v []byte) b { return append(x.i32(int32(len(v))), v...) }

func TestFormat(t *testing.T) {
	commitKey := b{}.i16(1).str("g").str("t").i32(2)
	member := func(version int16, sub, asg []byte) b {
		m := b{}.str("m1")
		if version >= 3 {
			m = m.str("static-1")
		}
		m = m.str("c1").str("/h")
		if version >= 1 {
			m = m.i32(300)
		}
		return m.i32(10).bytes(sub).bytes(asg)
	}
	group := func(version int16, protocolType string, members ...b) b {
		v := b{}.i16(version).str(protocolType).i32(3).str("range").str("m1")
		if version >= 2 {
			v = v.i64(99)
		}
		v = v.i32(int32(len(members)))
		for _, m := range members {
			v = append(v, m...)
		}
		return v
	}
	sub := b{}.i16(0).i32(1).str("t").i32(-1)
	asg := b{}.i16(0).i32(1).str("t").i32(1).i32(2).i32(-1)
	for _, c := range []struct {
		name       string
		key, value []byte
		k, v       string
	}{
		{"offset commit v0", commitKey, b{}.i16(0).i64(5).str("md").i64(1000),
			`{"type":"1","data":{"group":"g","topic":"t","partition":2}}`, `{"version":"0","data":{"offset":5,"metadata":"md","commitTimestamp":1000}}`},
		{"offset commit v1", b{}.i16(0).str("g").str("t").i32(2), b{}.i16(1).i64(5).str("").i64(1000).i64(2000),
			`{"type":"0","data":{"group":"g","topic":"t","partition":2}}`, `{"version":"1","data":{"offset":5,"metadata":"","commitTimestamp":1000,"expireTimestamp":2000}}`},
		{"offset commit v2", commitKey, b{}.i16(2).i64(5).str("").i64(1000),
			`{"type":"1","data":{"group":"g","topic":"t","partition":2}}`, `{"version":"2","data":{"offset":5,"metadata":"","commitTimestamp":1000}}`},
		{"offset commit v3", commitKey, b{}.i16(3).i64(5).i32(7).str("").i64(1000),
			`{"type":"1","data":{"group":"g","topic":"t","partition":2}}`, `{"version":"3","data":{"offset":5,"leaderEpoch":7,"metadata":"","commitTimestamp":1000}}`},
		{"offset commit v4 flexible", commitKey, append(b{}.i16(4).i64(5).i32(7).cstr("x").i64(1000), 0),
			`{"type":"1","data":{"group":"g","topic":"t","partition":2}}`, `{"version":"4","data":{"offset":5,"leaderEpoch":7,"metadata":"x","commitTimestamp":1000}}`},
		{"group metadata v0", b{}.i16(2).str("g"), group(0, "consumer", member(0, sub, asg)),
			`{"type":"2","data":{"group":"g"}}`,
			`{"version":"0","data":{"protocolType":"consumer","generation":3,"protocol":"range","leader":"m1","members":[{"memberId":"m1","clientId":"c1","clientHost":"/h","sessionTimeout":10,"subscription":{"topics":["t"],"userData":null},"assignment":{"assignedPartitions":[{"topic":"t","partitions":[2]}],"userData":null}}]}}`},
		{"group metadata v3, not consumer", b{}.i16(2).str("g"), group(3, "connect", member(3, []byte{1}, nil)),
			`{"type":"2","data":{"group":"g"}}`,
			`{"version":"3","data":{"protocolType":"connect","generation":3,"protocol":"range","leader":"m1","currentStateTimestamp":99,"members":[{"memberId":"m1","groupInstanceId":"static-1","clientId":"c1","clientHost":"/h","rebalanceTimeout":300,"sessionTimeout":10,"subscription":"AQ==","assignment":""}]}}`},
		{"consumer bytes that do not decode stay base64", b{}.i16(2).str("g"), group(1, "consumer", member(1, []byte{0, 1, 0}, nil)),
			`{"type":"2","data":{"group":"g"}}`,
			`{"version":"1","data":{"protocolType":"consumer","generation":3,"protocol":"range","leader":"m1","members":[{"memberId":"m1","clientId":"c1","clientHost":"/h","rebalanceTimeout":300,"sessionTimeout":10,"subscription":"AAEA","assignment":""}]}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := Format(c.key, c.value, 0)
			if f.Err != nil {
				t.Fatal(f.Err)
			}
			if f.Key != c.k || f.Value != c.v || !f.HasValue {
				t.Fatalf("got  %s %s\nwant %s %s", f.Key, f.Value, c.k, c.v)
			}
			if !json.Valid([]byte(f.Key)) || !json.Valid([]byte(f.Value)) {
				t.Fatal("not JSON")
			}
		})
	}
}

// FuzzFormat: any key and value render without panicking, as JSON when
// they decode.
func FuzzFormat(f *testing.F) {
	f.Add([]byte(b{}.i16(1).str("g").str("t").i32(2)), []byte(b{}.i16(3).i64(5).i32(7).str("").i64(1000)))
	f.Add([]byte(b{}.i16(2).str("g")), []byte(b{}.i16(3).str("consumer").i32(3).str("range").str("m1").i64(99).i32(0)))
	f.Add([]byte(b{}.i16(5).str("g").str("m")), []byte(b{}.i16(0).uv(0).uv(0).cstr("c").cstr("h").uv(1).uv(0).i32(-1).uv(0).uv(1).uv(0).uv(6).i8(1).i32(1).uv(1).uv(0)))
	f.Add([]byte(b{}.i16(16).str("g").str("r")), []byte(b{}.i16(0).uv(2).cstr("t").i64(1).i64(2).uv(0)))
	f.Add([]byte{0}, []byte(nil))
	f.Fuzz(func(t *testing.T, key, value []byte) {
		r := Format(key, value, 1)
		if r.Err == nil && (!json.Valid([]byte(r.Key)) || (r.Value != "<DELETE>" && !json.Valid([]byte(r.Value)))) {
			t.Fatalf("%q %q", r.Key, r.Value)
		}
	})
}

func (x b) i8(v int8) b { return append(x, byte(v)) }
func (x b) uv(v int) b  { return binary.AppendUvarint(x, uint64(v)) }

// TestFormatConsumerGroupRecords decodes the KIP-848 records (types 3 to 8
// and 16), built field by field: compact strings and arrays carry length+1,
// every struct ends with its tagged fields.
func TestFormatConsumerGroupRecords(t *testing.T) {
	topicID := b(make([]byte, 16))
	topicID[0], topicID[15] = 0xfb, 1
	const topicIDJSON = `"-wAAAAAAAAAAAAAAAAAAAQ"`
	groupKey := func(typ int16) b { return b{}.i16(typ).str("g") }
	memberKey := func(typ int16) b { return b{}.i16(typ).str("g").str("m1") }
	for _, c := range []struct {
		name       string
		key, value []byte
		k, v       string
	}{
		{"group metadata, tagged fields at default", groupKey(3), b{}.i16(0).i32(5).uv(0),
			`{"type":"3","data":{"groupId":"g"}}`, `{"version":"0","data":{"epoch":5}}`},
		{"group metadata with metadata hash", groupKey(3), b{}.i16(0).i32(5).uv(1).uv(0).uv(8).i64(-3),
			`{"type":"3","data":{"groupId":"g"}}`, `{"version":"0","data":{"epoch":5,"metadataHash":-3}}`},
		{"partition metadata", groupKey(4),
			append(b{}.i16(0).uv(2), topicID...).cstr("t").i32(3).uv(2).i32(0).uv(3).cstr("r1").cstr("r2").uv(0).uv(0).uv(0).uv(0),
			`{"type":"4","data":{"groupId":"g"}}`,
			`{"version":"0","data":{"topics":[{"topicId":` + topicIDJSON + `,"topicName":"t","numPartitions":3,"partitionMetadata":[{"partition":0,"racks":["r1","r2"]}]}]}}`},
		{"member metadata, classic member metadata absent", memberKey(5),
			b{}.i16(0).uv(0).cstr("rack").cstr("c1").cstr("/10.0.0.1").uv(2).cstr("t").uv(0).i32(45000).cstr("uniform").uv(0),
			`{"type":"5","data":{"groupId":"g","memberId":"m1"}}`,
			`{"version":"0","data":{"instanceId":null,"rackId":"rack","clientId":"c1","clientHost":"/10.0.0.1","subscribedTopicNames":["t"],"subscribedTopicRegex":null,"rebalanceTimeoutMs":45000,"serverAssignor":"uniform"}}`},
		{"member metadata with classic member metadata", memberKey(5),
			// tag 0, size 16: marker 1, session timeout, one protocol
			// ("range", metadata 0x01), the protocol's and the struct's
			// empty tagged fields.
			b{}.i16(0).cstr("i1").uv(0).cstr("c1").cstr("/h").uv(1).cstr("^t.*").i32(-1).uv(0).
				uv(1).uv(0).uv(16).i8(1).i32(10000).uv(2).cstr("range").uv(2).i8(1).uv(0).uv(0),
			`{"type":"5","data":{"groupId":"g","memberId":"m1"}}`,
			`{"version":"0","data":{"instanceId":"i1","rackId":null,"clientId":"c1","clientHost":"/h","subscribedTopicNames":[],"subscribedTopicRegex":"^t.*","rebalanceTimeoutMs":-1,"serverAssignor":null,"classicMemberMetadata":{"sessionTimeoutMs":10000,"supportedProtocols":[{"name":"range","metadata":"AQ=="}]}}}`},
		{"target assignment metadata", groupKey(6), b{}.i16(0).i32(7).uv(0),
			`{"type":"6","data":{"groupId":"g"}}`, `{"version":"0","data":{"assignmentEpoch":7}}`},
		{"target assignment member", memberKey(7), append(b{}.i16(0).uv(2), topicID...).uv(3).i32(0).i32(2).uv(0).uv(0),
			`{"type":"7","data":{"groupId":"g","memberId":"m1"}}`,
			`{"version":"0","data":{"topicPartitions":[{"topicId":` + topicIDJSON + `,"partitions":[0,2]}]}}`},
		{"current member assignment", memberKey(8),
			append(append(b{}.i16(0).i32(8).i32(7).i8(0).uv(2), topicID...).uv(2).i32(1).uv(0).uv(2), topicID...).uv(2).i32(4).uv(0).uv(0),
			`{"type":"8","data":{"groupId":"g","memberId":"m1"}}`,
			`{"version":"0","data":{"memberEpoch":8,"previousMemberEpoch":7,"state":0,"assignedPartitions":[{"topicId":` + topicIDJSON + `,"partitions":[1]}],"partitionsPendingRevocation":[{"topicId":` + topicIDJSON + `,"partitions":[4]}]}}`},
		{"regular expression", b{}.i16(16).str("g").str("^t.*"), b{}.i16(0).uv(3).cstr("t1").cstr("t2").i64(12).i64(1700000000000).uv(0),
			`{"type":"16","data":{"groupId":"g","regularExpression":"^t.*"}}`,
			`{"version":"0","data":{"topics":["t1","t2"],"version":12,"timestamp":1700000000000}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := Format(c.key, c.value, 0)
			if f.Err != nil {
				t.Fatal(f.Err)
			}
			if f.Key != c.k || f.Value != c.v || !f.HasValue {
				t.Fatalf("got  %s %s\nwant %s %s", f.Key, f.Value, c.k, c.v)
			}
		})
	}
	// A tombstone of a new record type is <DELETE>, its key decoded.
	if f := Format(memberKey(8), nil, 0); f.Err != nil || f.Key != `{"type":"8","data":{"groupId":"g","memberId":"m1"}}` || f.Value != "<DELETE>" {
		t.Fatalf("tombstone: %+v", f)
	}
	// Share and streams group records stay raw; types past 24 are unknown.
	if f := Format(b{}.i16(9).str("g"), b{}.i16(0).i32(1), 0); f.Err != nil || f.Key != `{"type":"9","raw":"AAFn"}` {
		t.Fatalf("share group metadata: %+v", f)
	}
	if f := Format(b{}.i16(25).str("g"), nil, 4); !errors.Is(f.Err, protocol.ErrUnknownType) || f.Key != "Unknown record type 25 at offset 4, skipping." {
		t.Fatalf("type 25: %+v", f)
	}
}
