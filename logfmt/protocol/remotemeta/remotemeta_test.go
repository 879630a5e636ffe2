package remotemeta

import (
	"errors"
	"testing"

	"github.com/logtool/logtool/logfmt/protocol/prototest"
)

// b builds inputs field by field.
type b = prototest.Wire

// frame is the metadata record frame: frame version 1, api key, version.
func frame(apiKey, version int) b { return b{}.Uv(1).Uv(apiKey).Uv(version) }

// tip is a TopicIdPartitionEntry: name, id, partition, no tagged fields.
func tip(x b) b { return x.CStr("orders").UUID(7).I32(3).Uv(0) }

// segID is a RemoteLogSegmentIdEntry.
func segID(x b) b { return tip(x).UUID(9).Uv(0) }

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
			segID(frame(0, 0)).I64(100).I64(199).I32(1).I64(1_700_000_000_000).I64(1_700_000_001_000).
				Uv(3).I32(5).I64(150).Uv(0).I32(4).I64(100).Uv(0).
				I32(4096).Uv(0).I8(0).
				Uv(1).Uv(0).Uv(1).I8(1),
			"RemoteLogSegmentMetadata{remoteLogSegmentId=" + segText + ", startOffset=100, endOffset=199, brokerId=1, maxTimestampMs=1700000000000, eventTimestampMs=1700000001000, segmentLeaderEpochs={4=100, 5=150}, segmentSizeInBytes=4096, customMetadata=Optional.empty, state=COPY_SEGMENT_STARTED, txnIdxEmpty=true}"},
		{"segment update, v1 with tagged fields, custom metadata",
			segID(frame(1, 1)).I32(2).I64(1_700_000_002_000).Uv(4).I8(1).I8(2).I8(3).I8(1).
				Uv(1).Uv(1).Uv(8).I64(199),
			"RemoteLogSegmentMetadataUpdate{remoteLogSegmentId=" + segText + ", customMetadata=Optional[CustomMetadata{3 bytes}], state=COPY_SEGMENT_FINISHED, eventTimestampMs=1700000002000, brokerId=2}"},
		{"partition delete",
			tip(frame(2, 0)).I32(3000).I64(1_700_000_003_000).I8(2).Uv(0),
			"RemotePartitionDeleteMetadata{topicPartition=" + topicID + ":orders-3, state=DELETE_PARTITION_FINISHED, eventTimestampMs=1700000003000, brokerId=3000}"},
		{"segment snapshot",
			frame(3, 0).UUID(9).I64(0).I64(99).I32(1).I64(5).I64(6).Uv(2).I32(8).I64(0).Uv(0).I32(8).Uv(1).I8(3).Uv(0),
			"RemoteLogSegmentMetadataSnapshot{segmentId=" + segUUID + ", startOffset=0, endOffset=99, maxTimestampMs=5, segmentLeaderEpochs={8=0}, segmentSizeInBytes=8, customMetadata=Optional[CustomMetadata{0 bytes}], state=DELETE_SEGMENT_FINISHED, txnIdxEmpty=false}"},
		// Kafka 4.0 on (KAFKA-16780) keeps txnIdxEmpty in the snapshot too.
		{"segment snapshot, txn index empty",
			frame(3, 0).UUID(9).I64(0).I64(99).I32(1).I64(5).I64(6).Uv(2).I32(8).I64(0).Uv(0).I32(8).Uv(0).I8(1).Uv(1).Uv(0).Uv(1).I8(1),
			"RemoteLogSegmentMetadataSnapshot{segmentId=" + segUUID + ", startOffset=0, endOffset=99, maxTimestampMs=5, segmentLeaderEpochs={8=0}, segmentSizeInBytes=8, customMetadata=Optional.empty, state=COPY_SEGMENT_FINISHED, txnIdxEmpty=true}"},
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
		// Kafka's own words, from the exceptions its constructors throw: a
		// state id it does not know is null to them, and a segment must have
		// leader epochs.
		{"unknown partition delete state", tip(frame(2, 0)).I32(1).I64(1).I8(9).Uv(0), "Error at offset 7, skipping. null"},
		{"unknown segment state", segID(frame(1, 0)).I32(2).I64(1).Uv(0).I8(4).Uv(0), "Error at offset 7, skipping. state can not be null"},
		{"segment without leader epochs, unknown state",
			segID(frame(0, 0)).I64(100).I64(199).I32(1).I64(1).I64(1).Uv(1).I32(4096).Uv(0).I8(9).Uv(0),
			"Error at offset 7, skipping. segmentLeaderEpochs can not be null or empty"},
		{"snapshot without leader epochs",
			frame(3, 0).UUID(9).I64(0).I64(99).I32(1).I64(5).I64(6).Uv(1).I32(8).Uv(1).I8(3).Uv(0),
			"Error at offset 7, skipping. segmentLeaderEpochs can not be null or empty"},
		{"snapshot without leader epochs, unknown state",
			frame(3, 0).UUID(9).I64(0).I64(99).I32(1).I64(5).I64(6).Uv(1).I32(8).Uv(1).I8(-1).Uv(0),
			"Error at offset 7, skipping. state can not be null"},
		{"garbage after", append(tip(frame(2, 0)).I32(1).I64(1).I8(0).Uv(0), 0), "Error at offset 7, skipping. Found 1 byte(s) of garbage after 2"},
		{"short", tip(frame(2, 0)).I32(1), "Error at offset 7, skipping. Failed to deserialize record with type 2"},
		{"frame version", b{}.Uv(2).Uv(0).Uv(0), "Error at offset 7, skipping. Could not deserialize metadata record due to unknown frame version 2(only frame version 1 is supported)"},
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
	f.Add([]byte(segID(frame(1, 1)).I32(2).I64(1).Uv(4).I8(1).I8(2).I8(3).I8(1).Uv(1).Uv(1).Uv(8).I64(199)))
	f.Add([]byte(tip(frame(2, 0)).I32(3).I64(1).I8(2).Uv(0)))
	f.Add([]byte(frame(3, 0).UUID(9).I64(0).I64(99).I32(1).I64(5).I64(6).Uv(2).I32(8).I64(2).Uv(0).I32(8).Uv(1).I8(3).Uv(0)))
	f.Fuzz(func(t *testing.T, value []byte) {
		s, err := Format(value, 1)
		if (err != nil) != (len(s) > 12 && s[:12] == "Error at off") {
			t.Fatalf("%q %v", s, err)
		}
	})
}
