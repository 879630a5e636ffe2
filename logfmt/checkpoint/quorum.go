package checkpoint

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/logtool/logtool/logfmt"
)

// QuorumState is the content of a KRaft quorum-state file: the JSON form of
// Kafka's QuorumStateData plus a data_version field (FileQuorumStateStore).
// Version 0 carries clusterId, appliedOffset and currentVoters; version 1
// drops them and adds votedDirectoryId.
type QuorumState struct {
	DataVersion      int16
	ClusterID        string // version 0
	LeaderID         int32  // -1 when no leader is known
	LeaderEpoch      int32
	VotedID          int32  // -1 when no vote was cast
	VotedDirectoryID string // version 1; "" if absent
	AppliedOffset    int64  // version 0
	CurrentVoters    []int32
	// Unknown holds the fields this package does not name, verbatim, so that
	// a newer broker's file loses nothing when shown.
	Unknown map[string]json.RawMessage
}

// ReadQuorumState parses a quorum-state file. Like Kafka it reads the first
// line only, which must be a JSON object with a data_version of 0 or 1 and
// the leaderId, leaderEpoch and votedId every version has. Other known fields
// are checked for type when present. Kafka's JSON reader ignores anything
// after the object on that line; this one rejects it.
func ReadQuorumState(b []byte, file string) (QuorumState, error) {
	var q QuorumState
	line, _ := nextLine(b, 0)
	fields, err := jsonFields(line, file)
	if err != nil {
		return QuorumState{}, err
	}

	// Each known field is removed from fields once decoded; what is left is
	// Unknown.
	bad := func(name, want string) error {
		return logfmt.Corruptf(file, 0, "field %q is %s, want %s", name, excerpt(fields[name]), want)
	}
	intField := func(name string, bits uint, required bool) (int64, error) {
		raw, ok := fields[name]
		if !ok {
			if required {
				return 0, logfmt.Corruptf(file, 0, "no %q field", name)
			}
			return 0, nil
		}
		v, ok := parseInt(raw, bits)
		if !ok {
			return 0, bad(name, fmt.Sprintf("an int%d", bits))
		}
		delete(fields, name)
		return v, nil
	}
	stringField := func(name string) (string, error) {
		raw, ok := fields[name]
		if !ok {
			return "", nil
		}
		var s string
		if raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
			return "", bad(name, "a string")
		}
		delete(fields, name)
		return s, nil
	}

	v, err := intField("data_version", 16, true)
	if err != nil {
		return QuorumState{}, err
	}
	if v < 0 || v > 1 {
		return QuorumState{}, logfmt.Corruptf(file, 0, "data_version %d is not 0 or 1", v)
	}
	q.DataVersion = int16(v)
	for _, f := range []struct {
		name string
		dst  *int32
	}{{"leaderId", &q.LeaderID}, {"leaderEpoch", &q.LeaderEpoch}, {"votedId", &q.VotedID}} {
		v, err := intField(f.name, 32, true)
		if err != nil {
			return QuorumState{}, err
		}
		*f.dst = int32(v)
	}
	if q.AppliedOffset, err = intField("appliedOffset", 64, false); err != nil {
		return QuorumState{}, err
	}
	if q.ClusterID, err = stringField("clusterId"); err != nil {
		return QuorumState{}, err
	}
	if q.VotedDirectoryID, err = stringField("votedDirectoryId"); err != nil {
		return QuorumState{}, err
	}
	if raw, ok := fields["currentVoters"]; ok {
		if q.CurrentVoters, err = parseVoters(raw); err != nil {
			return QuorumState{}, bad("currentVoters", "null or a list of {\"voterId\": int32}")
		}
		delete(fields, "currentVoters")
	}
	if len(fields) > 0 {
		q.Unknown = fields
	}
	return q, nil
}

func parseVoters(raw json.RawMessage) ([]int32, error) {
	var voters []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &voters); err != nil {
		return nil, err
	}
	ids := make([]int32, 0, len(voters))
	for _, v := range voters {
		id, ok := parseInt(v["voterId"], 32)
		if !ok {
			return nil, errors.New("bad voter")
		}
		ids = append(ids, int32(id))
	}
	if voters == nil {
		return nil, nil
	}
	return ids, nil
}

// jsonFields parses b, one JSON object and nothing else but white space,
// into its fields.
func jsonFields(b []byte, file string) (map[string]json.RawMessage, error) {
	if i := skipJSONSpace(b); i == len(b) {
		return nil, logfmt.Corruptf(file, 0, "empty, want a JSON object")
	} else if b[i] != '{' {
		return nil, logfmt.Corruptf(file, int64(i), "not a JSON object")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		pos := int64(-1)
		var se *json.SyntaxError
		if errors.As(err, &se) {
			pos = se.Offset
		}
		return nil, &logfmt.CorruptError{File: file, Pos: pos, Msg: "malformed JSON", Err: err}
	}
	return fields, nil
}

// skipJSONSpace returns the index of the first byte of b that is not JSON
// white space, or len(b).
func skipJSONSpace(b []byte) int {
	for i, c := range b {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return i
		}
	}
	return len(b)
}
