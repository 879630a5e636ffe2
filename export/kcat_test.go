package export

import (
	"encoding/json"
	"testing"

	"github.com/logtool/logtool/fetch"
	"github.com/logtool/logtool/logfmt"
)

// TestKcatLines: each record as kcat -J prints it (kcat's json.c): tstype
// and ts only with a timestamp, headers only when there are some, as a flat
// list, null key and payload as null; bytes that are not UTF-8 are marked
// base64 where kcat would write an invalid line; control records, which no
// consumer sees, write nothing.
func TestKcatLines(t *testing.T) {
	rec := func(r logfmt.Record) *fetch.Record {
		return &fetch.Record{Record: &r, ProducerID: -1, ProducerEpoch: -1, LeaderEpoch: 0, CoordinatorEpoch: -1}
	}
	for _, tc := range []struct {
		r    *fetch.Record
		want string
	}{
		{rec(logfmt.Record{Offset: 7, Timestamp: 1700000000000, TimestampType: logfmt.CreateTime, Key: []byte("k"), Value: []byte("v")}),
			`{"topic":"orders","partition":3,"offset":7,"tstype":"create","ts":1700000000000,"broker":-1,"key":"k","payload":"v"}`},
		{rec(logfmt.Record{Offset: 8, Timestamp: 1700000000001, TimestampType: logfmt.LogAppendTime, Value: []byte{0xff, 0x00},
			Headers: []logfmt.Header{{Key: []byte("trace"), Value: []byte("a\"b")}, {Key: []byte("empty"), Value: nil}}}),
			`{"topic":"orders","partition":3,"offset":8,"tstype":"logappend","ts":1700000000001,"broker":-1,"headers":["trace","a\"b","empty",null],"key":null,"payload":{"base64":"/wA="}}`},
		{rec(logfmt.Record{Offset: 9, Timestamp: -1, TimestampType: logfmt.NoTimestampType, Key: []byte("k")}),
			`{"topic":"orders","partition":3,"offset":9,"broker":-1,"key":"k","payload":null}`},
		{&fetch.Record{Record: &logfmt.Record{Offset: 10, TimestampType: logfmt.CreateTime, Key: []byte{0, 0, 0, 1}, Value: []byte{0, 0, 0, 0, 0, 0}},
			Control: true, ControlType: logfmt.ControlCommit}, ``},
	} {
		enc := NewEncoder("orders", 3, Kcat, UTF8, fetch.ReadUncommitted)
		got := string(enc.Append(nil, tc.r))
		want := tc.want
		if want != "" {
			want += "\n"
			if !json.Valid([]byte(tc.want)) {
				t.Fatalf("bad want %s", tc.want)
			}
		}
		if got != want {
			t.Errorf("offset %d:\n got %s\nwant %s", tc.r.Offset, got, want)
		}
	}
}
