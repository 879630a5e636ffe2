package checkpoint

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestReadQuorumState(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want QuorumState
		pos  int64
		err  string
	}{
		{name: "version 0 as Kafka 3.7 writes it",
			in:   `{"clusterId":"","leaderId":2,"leaderEpoch":7,"votedId":-1,"appliedOffset":0,"currentVoters":[{"voterId":1},{"voterId":2},{"voterId":3}],"data_version":0}`,
			want: QuorumState{LeaderID: 2, LeaderEpoch: 7, VotedID: -1, CurrentVoters: []int32{1, 2, 3}}},
		{name: "version 1",
			in:   `{"leaderId":-1,"leaderEpoch":2,"votedId":1,"votedDirectoryId":"AQIDBAUGBwgJCgsMDQ4PEA","data_version":1}`,
			want: QuorumState{DataVersion: 1, LeaderID: -1, LeaderEpoch: 2, VotedID: 1, VotedDirectoryID: "AQIDBAUGBwgJCgsMDQ4PEA"}},
		{name: "null voters and a cluster id",
			in:   `{"clusterId":"abc","leaderId":3,"leaderEpoch":4,"votedId":3,"appliedOffset":99,"currentVoters":null,"data_version":0}`,
			want: QuorumState{ClusterID: "abc", LeaderID: 3, LeaderEpoch: 4, VotedID: 3, AppliedOffset: 99}},
		{name: "unknown fields kept, later lines ignored",
			in: " {\"leaderId\":1,\"leaderEpoch\":1,\"votedId\":1,\"data_version\":1,\"future\":{\"x\":[1]}}\ngarbage",
			want: QuorumState{DataVersion: 1, LeaderID: 1, LeaderEpoch: 1, VotedID: 1,
				Unknown: map[string]json.RawMessage{"future": json.RawMessage(`{"x":[1]}`)}}},

		{name: "empty", in: "", pos: 0, err: "empty, want a JSON object"},
		{name: "blank first line", in: "  \n{}", pos: 0, err: "empty"},
		{name: "null", in: "null", pos: 0, err: "not a JSON object"},
		{name: "array", in: " []", pos: 1, err: "not a JSON object"},
		{name: "truncated", in: `{"leaderId":1,`, pos: 14, err: "malformed JSON"},
		{name: "trailing bytes", in: `{"data_version":0} x`, pos: 20, err: "malformed JSON"},
		{name: "no data_version", in: `{"leaderId":1,"leaderEpoch":1,"votedId":1}`, pos: 0, err: `no "data_version" field`},
		{name: "data_version 2", in: `{"leaderId":1,"leaderEpoch":1,"votedId":1,"data_version":2}`, pos: 0, err: "data_version 2 is not 0 or 1"},
		{name: "data_version string", in: `{"data_version":"0"}`, pos: 0, err: `field "data_version" is "\"0\"", want an int16`},
		{name: "no votedId", in: `{"leaderId":1,"leaderEpoch":1,"data_version":1}`, pos: 0, err: `no "votedId" field`},
		{name: "fractional epoch", in: `{"leaderId":1,"leaderEpoch":1.5,"votedId":1,"data_version":1}`, pos: 0, err: `field "leaderEpoch" is "1.5", want an int32`},
		{name: "leaderId overflow", in: `{"leaderId":2147483648,"leaderEpoch":1,"votedId":1,"data_version":1}`, pos: 0, err: "want an int32"},
		{name: "clusterId number", in: `{"clusterId":1,"leaderId":1,"leaderEpoch":1,"votedId":1,"data_version":0}`, pos: 0, err: `field "clusterId" is "1", want a string`},
		{name: "bad voter", in: `{"leaderId":1,"leaderEpoch":1,"votedId":1,"currentVoters":[{"id":1}],"data_version":0}`, pos: 0, err: `field "currentVoters"`},
		{name: "voters not a list", in: `{"leaderId":1,"leaderEpoch":1,"votedId":1,"currentVoters":{},"data_version":0}`, pos: 0, err: `field "currentVoters"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadQuorumState([]byte(tt.in), "qs")
			if tt.err != "" {
				checkCorrupt(t, err, "qs", tt.pos, tt.err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}
