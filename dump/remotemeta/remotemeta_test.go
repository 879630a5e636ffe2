package remotemeta

import (
	"encoding/binary"
	"errors"
	"testing"
)

type b []byte

func (x b) i8(v int8) b   { return append(x, byte(v)) }
func (x b) i32(v int32) b { return binary.BigEndian.AppendUint32(x, uint32(v)) }
func (x b) i64(v int64) b { return binary.BigEndian.AppendUint64(x, uint64(v)) }
func (x b) uv(v int) b    { return binary.AppendUvarint(x, uint64(v)) }
func (x b) cstr(s string) b {
	return append(x.uv(len(s)+1), s...)
}
func (x b) uuid(c byte) b {
	for range 16 {
		x = append(x, c)
	}
	return x
}

// frame is the metadata record frame: frame version 1, api key, version.
func frame(apiKey, version int) b { return b{}.uv(1).uv(apiKey).uv(version) }

// tip is a TopicIdPartitionEntry: name, id, partition, no tagged fields.
func tip(x b) b { return x.cstr("orders").uuid(7).i32(3).uv(0) }

// segID is a RemoteLogSegmentIdEntry.
func segID(x b) b { return tip(x).uuid(9).uv(0) }

const (
	topicID = "BwcHBwcHBwcHBwcHBwcHBw" // 16 bytes of 7, as Kafka's Uuid.toString
	segUUID = "CQkJCQkJCQkJCQkJCQkJCQ" // 16 bytes of 9
	segText = "RemoteLogSegmentId{topicIdPartition=" + topicID + ":orders-3, id=" + segUUID + "}"
)

func TestFormat(t *testing.T) {
	for _, c := range []struct {
		name  string
		value []byte
		want  string
	}{
		{"segment metadata, v0, epochs out of order, txn index empty",
			segID(frame(0, 0)).i64(100).i64(199).i32(1).i64(1_700_000_000_000).i64(1_700_000_001_000).
				uv(3).i32(5).i64(150).uv(0).i32(4).i64(100).uv(0).
				i32(4096).uv(0).i8(0).
				uv(1).uv(0).uv(1).i8(1),
			"RemoteLogSegmentMetadata{remoteLogSegmentId=" + segText + ", startOffset=100, endOffset=199, brokerId=1, maxTimestampMs=1700000000000, eventTimestampMs=1700000001000, segmentLeaderEpochs={4=100, 5=150}, segmentSizeInBytes=4096, customMetadata=Optional.empty, state=COPY_SEGMENT_STARTED, txnIdxEmpty=true}"},
		{"segment update, v1 with tagged fields, custom metadata",
			segID(frame(1, 1)).i32(2).i64(1_700_000_002_000).uv(4).i8(1).i8(2).i8(3).i8(1).
				uv(1).uv(1).uv(8).i64(199),
			"RemoteLogSegmentMetadataUpdate{remoteLogSegmentId=" + segText + ", customMetadata=Optional[CustomMetadata{3 bytes}], state=COPY_SEGMENT_FINISHED, eventTimestampMs=1700000002000, brokerId=2}"},
		{"partition delete",
			tip(frame(2, 0)).i32(3000).i64(1_700_000_003_000).i8(2).uv(0),
			"RemotePartitionDeleteMetadata{topicPartition=" + topicID + ":orders-3, state=DELETE_PARTITION_FINISHED, eventTimestampMs=1700000003000, brokerId=3000}"},
		{"segment snapshot",
			frame(3, 0).uuid(9).i64(0).i64(99).i32(1).i64(5).i64(6).uv(1).i32(8).uv(1).i8(3).uv(0),
			"RemoteLogSegmentMetadataSnapshot{segmentId=" + segUUID + ", startOffset=0, endOffset=99, maxTimestampMs=5, segmentLeaderEpochs={}, segmentSizeInBytes=8, customMetadata=Optional[CustomMetadata{0 bytes}], state=DELETE_SEGMENT_FINISHED}"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Format(c.value, 0)
			if err != nil || got != c.want {
				t.Fatalf("got  %s (%v)\nwant %s", got, err, c.want)
			}
		})
	}
	for _, c := range []struct {
		name  string
		value []byte
		want  string
	}{
		{"unknown api key", frame(4, 0), "Error at offset 7, skipping. unknown remote log metadata record type: 4"},
		{"unknown state", tip(frame(2, 0)).i32(1).i64(1).i8(9).uv(0), "Error at offset 7, skipping. unknown state id 9"},
		{"garbage after", append(tip(frame(2, 0)).i32(1).i64(1).i8(0).uv(0), 0), "Error at offset 7, skipping. found 1 byte(s) of garbage after RemotePartitionDeleteMetadataRecord"},
		{"no value", nil, "Error at offset 7, skipping. the record has no value"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Format(c.value, 7)
			if err == nil || got != c.want {
				t.Fatalf("got %q (%v), want %q", got, err, c.want)
			}
		})
	}
	if _, err := Format(frame(4, 0), 0); !errors.Is(err, ErrUnknownType) {
		t.Fatalf("unknown type: %v", err)
	}
}

// FuzzFormat: any value renders without panicking, and an error always
// comes with Kafka's skipping text.
func FuzzFormat(f *testing.F) {
	f.Add([]byte(segID(frame(1, 1)).i32(2).i64(1).uv(4).i8(1).i8(2).i8(3).i8(1).uv(1).uv(1).uv(8).i64(199)))
	f.Add([]byte(tip(frame(2, 0)).i32(3).i64(1).i8(2).uv(0)))
	f.Add([]byte(frame(3, 0).uuid(9).i64(0).i64(99).i32(1).i64(5).i64(6).uv(2).i32(8).i64(2).uv(0).i32(8).uv(1).i8(3).uv(0)))
	f.Fuzz(func(t *testing.T, value []byte) {
		s, err := Format(value, 1)
		if (err != nil) != (len(s) > 12 && s[:12] == "Error at off") {
			t.Fatalf("%q %v", s, err)
		}
	})
}
