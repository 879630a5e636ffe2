package logfmt

import (
	"encoding/binary"
	"fmt"
)

// ControlType is the type in a control record's key (ControlRecordType).
type ControlType int16

const (
	ControlAbort          ControlType = 0
	ControlCommit         ControlType = 1
	ControlLeaderChange   ControlType = 2 // KRaft
	ControlSnapshotHeader ControlType = 3 // KRaft
	ControlSnapshotFooter ControlType = 4 // KRaft
	ControlKRaftVersion   ControlType = 5 // KRaft
	ControlKRaftVoters    ControlType = 6 // KRaft
)

func (t ControlType) String() string {
	switch t {
	case ControlAbort:
		return "ABORT"
	case ControlCommit:
		return "COMMIT"
	case ControlLeaderChange:
		return "LEADER_CHANGE"
	case ControlSnapshotHeader:
		return "SNAPSHOT_HEADER"
	case ControlSnapshotFooter:
		return "SNAPSHOT_FOOTER"
	case ControlKRaftVersion:
		return "KRAFT_VERSION"
	case ControlKRaftVoters:
		return "KRAFT_VOTERS"
	}
	return "UNKNOWN"
}

// IsTxnMarker is true for ABORT and COMMIT.
func (t ControlType) IsTxnMarker() bool { return t == ControlAbort || t == ControlCommit }

// ParseControlKey reads the int16 version and int16 type of a control key.
func ParseControlKey(key []byte) (version int16, t ControlType, err error) {
	if len(key) < 4 {
		return 0, 0, fmt.Errorf("control record key has %d bytes, needs 4", len(key))
	}
	return int16(binary.BigEndian.Uint16(key)), ControlType(binary.BigEndian.Uint16(key[2:])), nil
}

// ControlKey is the key Kafka writes for a control record of type t.
func ControlKey(t ControlType) []byte {
	return binary.BigEndian.AppendUint16([]byte{0, 0}, uint16(t))
}

// EndTxnMarker is the value of an ABORT or COMMIT control record.
type EndTxnMarker struct {
	Version          int16
	CoordinatorEpoch int32
}

// ParseEndTxnMarker reads a marker value (EndTxnMarker.json, version 0).
func ParseEndTxnMarker(v []byte) (EndTxnMarker, error) {
	if len(v) < 6 {
		return EndTxnMarker{}, fmt.Errorf("end transaction marker value has %d bytes, needs 6", len(v))
	}
	return EndTxnMarker{Version: int16(binary.BigEndian.Uint16(v)), CoordinatorEpoch: int32(binary.BigEndian.Uint32(v[2:]))}, nil
}

// AppendEndTxnMarker appends a version-0 marker value.
func AppendEndTxnMarker(dst []byte, m EndTxnMarker) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(m.Version))
	return binary.BigEndian.AppendUint32(dst, uint32(m.CoordinatorEpoch))
}
