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
		a := b{}.I16(1).I32(2).Str("orders").I32(2).I32(0).I32(3).Str("clicks").I32(1).I32(7)
		if userData == nil {
			return a.I32(-1)
		}
		return a.Bytes(userData)
	}
	member := func(id string, assignment []byte) b {
		return b{}.Str(id).Str("c1").Str("/h").I32(300).I32(10).Bytes(b{}.I16(0).I32(0).I32(-1)).Bytes(assignment)
	}
	group := func(protocolType string, protocol *string, members ...b) b {
		v := b{}.I16(2).Str(protocolType).I32(7)
		if protocol == nil {
			v = v.I16(-1)
		} else {
			v = v.Str(*protocol)
		}
		v = v.Str("m1").I64(99).I32(int32(len(members)))
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
		{"commit", b{}.I16(1).Str("my-group").Str("my-topic").I32(0), b{}.I16(3).I64(1).I32(5).Str("").I64(1),
			"offset_commit::group=my-group,partition=my-topic-0", "offset=1"},
		{"commit with metadata, v0 key", b{}.I16(0).Str("g").Str("t").I32(12), b{}.I16(1).I64(42).Str("meta").I64(1).I64(2),
			"offset_commit::group=g,partition=t-12", "offset=42,metadata=meta"},
		{"commit tombstone", b{}.I16(1).Str("g").Str("t").I32(0), nil, "offset_commit::group=g,partition=t-0", "<DELETE>"},
		{"consumer group", b{}.I16(2).Str("g"), group("consumer", &rangeProto, member("m1", asg(nil)), member("m2", asg([]byte{0, 0x0a, 0xff}))),
			"group_metadata::group=g",
			`{"protocolType":"consumer","protocol":"range","generationId":7,"assignment":"{m1=[orders-0, orders-3, clicks-7],m2=[orders-0, orders-3, clicks-7]:AFF}"}`},
		{"other protocol, no protocol", b{}.I16(2).Str("g"), group("connect", nil, member("w1", []byte{0, 1, 0xab})),
			"group_metadata::group=g", `{"protocolType":"connect","protocol":null,"generationId":7,"assignment":"{w1=1AB}"}`},
		{"group tombstone", b{}.I16(2).Str("g"), nil, "group_metadata::group=g", "<DELETE>"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := FormatText(c.key, c.value, 0)
			if f.Err != nil || f.Key != c.wantKey || f.Value != c.want || !f.HasValue {
				t.Fatalf("got  %q %q %v\nwant %q %q", f.Key, f.Value, f.Err, c.wantKey, c.want)
			}
		})
	}
	// 3.7 knows types 0 to 2 only.
	if f := FormatText(b{}.I16(3).Str("g"), b{}.I16(0), 0); f.Key != "unknown::version=3" || f.HasValue || f.Err != nil {
		t.Errorf("type 3: %+v", f)
	}
	bad := b{}.I16(2).Str("g")
	if f := FormatText(bad, group("consumer", &rangeProto, member("m1", []byte{0})), 9); f.Err == nil || !strings.HasPrefix(f.Key, "Error at offset 9, skipping. ") {
		t.Errorf("bad assignment: %+v", f)
	}
}

func FuzzFormatText(f *testing.F) {
	f.Add([]byte(b{}.I16(1).Str("g").Str("t").I32(0)), []byte(b{}.I16(3).I64(1).I32(5).Str("").I64(1)))
	f.Add([]byte(b{}.I16(2).Str("g")), []byte(b{}.I16(0).Str("consumer").I32(1).Str("range").Str("m").I32(1).
		Str("m").Str("c").Str("/h").I32(10).Bytes(nil).Bytes(b{}.I16(0).I32(1).Str("t").I32(1).I32(0).I32(-1))))
	f.Fuzz(func(t *testing.T, key, value []byte) {
		r := FormatText(key, value, 1)
		if r.Err == nil && r.HasValue && r.Value != "<DELETE>" && !strings.HasPrefix(r.Value, "offset=") &&
			!json.Valid([]byte(r.Value)) {
			t.Fatalf("%q %q", r.Key, r.Value)
		}
	})
}
