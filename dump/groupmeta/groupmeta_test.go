package groupmeta

import (
	"encoding/binary"
	"encoding/json"
	"testing"
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
	f.Add([]byte{0}, []byte(nil))
	f.Fuzz(func(t *testing.T, key, value []byte) {
		r := Format(key, value, 1)
		if r.Err == nil && (!json.Valid([]byte(r.Key)) || (r.Value != "<DELETE>" && !json.Valid([]byte(r.Value)))) {
			t.Fatalf("%q %q", r.Key, r.Value)
		}
	})
}
