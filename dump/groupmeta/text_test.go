package groupmeta

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestFormatText: Kafka 3.7's lines, as in Strimzi's transcripts of
// kafka-dump-log.sh ("key: offset_commit::group=my-group,partition=my-topic-0
// payload: offset=1") and GroupMetadataManager.parseGroupMetadata.
func TestFormatText(t *testing.T) {
	asg := func(userData []byte) b {
		a := b{}.i16(1).i32(2).str("orders").i32(2).i32(0).i32(3).str("clicks").i32(1).i32(7)
		if userData == nil {
			return a.i32(-1)
		}
		return a.bytes(userData)
	}
	member := func(id string, assignment []byte) b {
		return b{}.str(id).str("c1").str("/h").i32(300).i32(10).bytes(b{}.i16(0).i32(0).i32(-1)).bytes(assignment)
	}
	group := func(protocolType string, protocol *string, members ...b) b {
		v := b{}.i16(2).str(protocolType).i32(7)
		if protocol == nil {
			v = v.i16(-1)
		} else {
			v = v.str(*protocol)
		}
		v = v.str("m1").i64(99).i32(int32(len(members)))
		for _, m := range members {
			v = append(v, m...)
		}
		return v
	}
	rangeProto := "range"
	for _, c := range []struct {
		name       string
		key, value []byte
		wantKey    string
		want       string
	}{
		{"commit", b{}.i16(1).str("my-group").str("my-topic").i32(0), b{}.i16(3).i64(1).i32(5).str("").i64(1),
			"offset_commit::group=my-group,partition=my-topic-0", "offset=1"},
		{"commit with metadata, v0 key", b{}.i16(0).str("g").str("t").i32(12), b{}.i16(1).i64(42).str("meta").i64(1).i64(2),
			"offset_commit::group=g,partition=t-12", "offset=42,metadata=meta"},
		{"commit tombstone", b{}.i16(1).str("g").str("t").i32(0), nil, "offset_commit::group=g,partition=t-0", "<DELETE>"},
		{"consumer group", b{}.i16(2).str("g"), group("consumer", &rangeProto, member("m1", asg(nil)), member("m2", asg([]byte{0, 0x0a, 0xff}))),
			"group_metadata::group=g",
			`{"protocolType":"consumer","protocol":"range","generationId":7,"assignment":"{m1=[orders-0, orders-3, clicks-7],m2=[orders-0, orders-3, clicks-7]:AFF}"}`},
		{"other protocol, no protocol", b{}.i16(2).str("g"), group("connect", nil, member("w1", []byte{0, 1, 0xab})),
			"group_metadata::group=g", `{"protocolType":"connect","protocol":null,"generationId":7,"assignment":"{w1=1AB}"}`},
		{"group tombstone", b{}.i16(2).str("g"), nil, "group_metadata::group=g", "<DELETE>"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := FormatText(c.key, c.value, 0)
			if f.Err != nil || f.Key != c.wantKey || f.Value != c.want || !f.HasValue {
				t.Fatalf("got  %q %q %v\nwant %q %q", f.Key, f.Value, f.Err, c.wantKey, c.want)
			}
		})
	}
	// 3.7 knows types 0 to 2 only.
	if f := FormatText(b{}.i16(3).str("g"), b{}.i16(0), 0); f.Key != "unknown::version=3" || f.HasValue || f.Err != nil {
		t.Errorf("type 3: %+v", f)
	}
	bad := b{}.i16(2).str("g")
	if f := FormatText(bad, group("consumer", &rangeProto, member("m1", []byte{0})), 9); f.Err == nil || !strings.HasPrefix(f.Key, "Error at offset 9, skipping. ") {
		t.Errorf("bad assignment: %+v", f)
	}
}

func FuzzFormatText(f *testing.F) {
	f.Add([]byte(b{}.i16(1).str("g").str("t").i32(0)), []byte(b{}.i16(3).i64(1).i32(5).str("").i64(1)))
	f.Add([]byte(b{}.i16(2).str("g")), []byte(b{}.i16(0).str("consumer").i32(1).str("range").str("m").i32(1).
		str("m").str("c").str("/h").i32(10).bytes(nil).bytes(b{}.i16(0).i32(1).str("t").i32(1).i32(0).i32(-1))))
	f.Fuzz(func(t *testing.T, key, value []byte) {
		r := FormatText(key, value, 1)
		if r.Err == nil && r.HasValue && r.Value != "<DELETE>" && !strings.HasPrefix(r.Value, "offset=") &&
			!json.Valid([]byte(r.Value)) {
			t.Fatalf("%q %q", r.Key, r.Value)
		}
	})
}
