package verify

import "strings"

// Code names a kind of finding for scripts, beside the prose of its
// message: one per kind, stable across releases, each listed in
// docs/commands/verify.md (a test holds the two to each other).
type Code string

// The log: damage the scan steps over (logfmt.Scan), then each batch.
const (
	CodeCRCMismatch      Code = "crc-mismatch"      // an entry frames, its checksum does not hold
	CodeDamagedRange     Code = "damaged-range"     // bytes that do not frame, sound batches after them
	CodeDamagedTail      Code = "damaged-tail"      // bytes that do not frame, nothing sound after them
	CodeTornTail         Code = "torn-tail"         // a last entry that runs past the end of the file
	CodeZeroTail         Code = "zero-tail"         // zeros after the last batch
	CodeBatchInvalid     Code = "batch-invalid"     // a header field no writer gets wrong, under a good checksum
	CodeRecordsInvalid   Code = "records-invalid"   // a record, inner message or control record (--deep)
	CodeOffsetBelowBase  Code = "offset-below-base" // a batch below its segment's base offset
	CodeOffsetOrder      Code = "offset-order"      // a batch not above the batch before it
	CodeOffsetOverflow   Code = "offset-overflow"   // a batch past the 2^31 offsets an index entry holds
	CodeOffsetNextBase   Code = "offset-past-next-segment"
	CodeLogLost          Code = "log-lost" // no .log left, yet other files say records were there
	CodeNoLog            Code = "no-log"   // no .log, and nothing says records were lost
	CodeLogStartUnknown  Code = "log-start-unknown"
	CodeSnapshotPastEnd  Code = "snapshot-past-end"
	CodeSnapshotTooLarge Code = "snapshot-too-large"
)

// The index files, as reindex judges them, and Kafka's sanity checks.
const (
	CodeIndexEntryMalformed     Code = "index-entry-malformed"
	CodeIndexEntryNotAtBatch    Code = "index-entry-not-at-batch"
	CodeIndexEntryOrder         Code = "index-entry-out-of-order"
	CodeIndexEntryBeyondBatches Code = "index-entry-beyond-batches"
	CodeIndexEntryPastEnd       Code = "index-entry-past-end"
	CodeIndexEntryUnsupported   Code = "index-entry-timestamp-unsupported"
	CodeIndexEntryLate          Code = "index-entry-too-late"
	CodeIndexEntryMissing       Code = "index-entry-missing"
	CodeIndexEntryExtra         Code = "index-entry-extra"
	CodeIndexEntryWrong         Code = "index-entry-wrong"
	CodeIndexMissing            Code = "index-missing"
	CodeIndexZeroTail           Code = "index-zero-tail"
	CodeIndexDiffers            Code = "index-differs"
	CodeIndexSanity             Code = "index-sanity"
	CodeTxnState                Code = "txn-state"
	CodeLogEnd                  Code = "log-end"
	CodeIndexNote               Code = "index-note"
)

// The other files of a partition and of a log directory.
const (
	CodeUnreadable         Code = "unreadable"       // a file that does not parse as Kafka writes it
	CodeTooLarge           Code = "too-large"        // a small file far larger than Kafka writes
	CodeNotRegular         Code = "not-regular-file" // a FIFO, socket, device or dangling link
	CodeSymlink            Code = "symlink"
	CodeBrokerRefusesName  Code = "broker-refuses-name"
	CodeLeftover           Code = "leftover" // .cleaned, .swap, .deleted
	CodeDeletedTopicDir    Code = "deleted-topic-dir"
	CodeDirInPartition     Code = "dir-in-partition"
	CodeNotPartitionDir    Code = "not-a-partition-dir"
	CodeTempFile           Code = "temp-file"
	CodeUnknownFile        Code = "unknown-file"
	CodeMarkerFile         Code = "marker-file"
	CodeEpochOrder         Code = "leader-epoch-order"
	CodeEpochMismatch      Code = "leader-epoch-mismatch"
	CodeEpochPastEnd       Code = "leader-epoch-past-end"
	CodeCleanerOutOfRange  Code = "cleaner-offset-out-of-range"
	CodeCheckpointTopic    Code = "checkpoint-bad-topic"
	CodeCheckpointPastEnd  Code = "checkpoint-past-end"
	CodeCheckpointBelow    Code = "checkpoint-below-start"
	CodeCheckpointNotEnd   Code = "checkpoint-not-log-end"
	CodeCheckpointRepeated Code = "checkpoint-repeated"
	CodeCheckpointMissing  Code = "checkpoint-missing-entry"
	CodeCheckpointUnknown  Code = "checkpoint-unknown-partitions"
	CodeNoMetaProperties   Code = "no-meta-properties"
	CodeNoCleanShutdown    Code = "no-clean-shutdown"
)

// Against the KRaft cluster metadata.
const (
	CodeMetadataUnreadable Code = "metadata-unreadable"
	CodeMetadataUnchecked  Code = "metadata-unchecked"
	CodeNoPartitionMeta    Code = "no-partition-metadata"
	CodeTopicIDDeleted     Code = "topic-id-deleted"
	CodeTopicIDUnknown     Code = "topic-id-unknown"
	CodeTopicIDOtherTopic  Code = "topic-id-other-topic"
	CodePartitionUnknown   Code = "partition-not-in-metadata"
	CodeStrayReplica       Code = "stray-replica"
)

// CodeMore is a finding that stands for problems not listed
// (Finding.More).
const CodeMore Code = "more-not-listed"

// reindexCode is the code of a finding of reindex's, by its group.
func reindexCode(group string, entry int) Code {
	switch group {
	case "format":
		return CodeIndexEntryMalformed
	case "boundary":
		return CodeIndexEntryNotAtBatch
	case "order":
		return CodeIndexEntryOrder
	case "beyond":
		return CodeIndexEntryBeyondBatches
	case "past":
		return CodeIndexEntryPastEnd
	case "unsupported":
		return CodeIndexEntryUnsupported
	case "late":
		return CodeIndexEntryLate
	case "extra":
		return CodeIndexEntryExtra
	case "wrong":
		return CodeIndexEntryWrong
	case "missing":
		if entry >= 0 {
			return CodeIndexEntryMissing
		}
		return CodeIndexMissing
	case "zerotail":
		return CodeIndexZeroTail
	case "txn":
		return CodeTxnState
	case "symlink":
		return CodeSymlink
	case "end":
		return CodeLogEnd
	}
	if strings.HasPrefix(group, "diff:") {
		return CodeIndexDiffers
	}
	return CodeIndexNote
}
