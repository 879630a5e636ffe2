package compact

import "math"

// The deadlines of KIP-354's promise, which compact keeps and grep's audit
// checks.
//
// A record is written when its batch is appended, after every record in it
// was created, so a batch's max timestamp is when its records were written:
// LogAppendTime stamps each record of a batch with it, and Kafka itself
// times a segment by its first batch's max timestamp, both for rolling it
// (LogSegment.timeWaitedForRoll) and for the max lag
// (LogCleanerManager.maxCompactionDelay, through
// LogSegment.getFirstBatchTimestamp). Timestamps of 0 or less mean no time
// (magic 0 has none), as there.
//
// An older version of a key may go from the moment a newer one exists in a
// cleanable segment: a pass puts the newer one in the offset map, and
// Cleaner.shouldRetainRecord drops every record of that key below it. The
// max lag bounds how long that newer record can wait in the dirty section,
// so the older version must be gone max.compaction.lag.ms after the first
// newer version was written; later versions only come later. Aborted
// records never count as versions, as buildOffsetMap skips them. A
// tombstone's own first pass must come within the max lag too; it sets the
// delete horizon delete.retention.ms later (KIP-534), after which the
// tombstone goes.

// VersionDeadline is when a version must be gone whose first newer version
// was written at w: w + maxLag; math.MaxInt64 when w carries no time or
// the lag is unlimited.
func VersionDeadline(w, maxLag int64) int64 {
	if w <= 0 || maxLag == Unlimited {
		return math.MaxInt64
	}
	return satAdd(w, maxLag)
}

// TombstoneDeadline is when a tombstone written at w must be gone:
// w + maxLag + deleteRetention; math.MaxInt64 when w carries no time or
// the lag is unlimited.
func TombstoneDeadline(w, maxLag, deleteRetention int64) int64 {
	if w <= 0 || maxLag == Unlimited {
		return math.MaxInt64
	}
	return satAdd(satAdd(w, maxLag), deleteRetention)
}

// tombstoneDue tells whether the tombstones of a batch written at w are
// past their deadline.
func (o *Options) tombstoneDue(w int64) bool {
	return TombstoneDeadline(w, o.MaxLag, o.DeleteRetention) < o.Now
}
