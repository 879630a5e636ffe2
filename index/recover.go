package index

// Recovery rebuilds a segment's offset and time index entries exactly as
// Kafka's LogSegment.recover does, one shallow batch at a time. Feed it every
// valid batch in file order with Add, then call Finish.
//
// The rules: an offset entry (batch last offset, batch start position) when
// more than IntervalBytes were read since the last entry; a time entry (max
// timestamp so far, the last offset of the batch that set it) alongside,
// only when that timestamp is newer than the last time entry; one more time
// entry at the end. Live brokers write different (equally valid) indexes:
// see the reindex --check documentation.
type Recovery struct {
	Base          int64
	IntervalBytes int64
	Offsets       []OffsetEntry
	Times         []TimeEntry

	validBytes     int64
	lastIndexEntry int64
	maxTS          int64
	maxTSOffset    int64
}

// DefaultIntervalBytes is Kafka's index.interval.bytes default.
const DefaultIntervalBytes = 4096

// NewRecovery starts a rebuild for the segment whose file name says base.
func NewRecovery(base int64, intervalBytes int64) *Recovery {
	return &Recovery{Base: base, IntervalBytes: intervalBytes, maxTS: -1, maxTSOffset: base}
}

// Add accounts for one shallow batch of size bytes (log overhead included).
// maxTimestamp is -1 for magic 0, which never produces a time entry.
func (r *Recovery) Add(lastOffset, maxTimestamp int64, size int) {
	if maxTimestamp > r.maxTS {
		r.maxTS, r.maxTSOffset = maxTimestamp, lastOffset
	}
	if r.validBytes-r.lastIndexEntry > r.IntervalBytes {
		r.Offsets = append(r.Offsets, OffsetEntry{Offset: lastOffset, Position: int32(r.validBytes)})
		r.maybeAppendTime()
		r.lastIndexEntry = r.validBytes
	}
	r.validBytes += int64(size)
}

// ValidBytes is the number of bytes accounted for so far.
func (r *Recovery) ValidBytes() int64 { return r.validBytes }

// Finish appends the final time entry, as recover does after its loop.
func (r *Recovery) Finish() { r.maybeAppendTime() }

// maybeAppendTime is TimeIndex.maybeAppend: only a strictly newer timestamp
// is written; an empty index compares against timestamp -1.
func (r *Recovery) maybeAppendTime() {
	last := int64(-1)
	if n := len(r.Times); n > 0 {
		last = r.Times[n-1].Timestamp
	}
	if r.maxTS > last {
		r.Times = append(r.Times, TimeEntry{Timestamp: r.maxTS, Offset: r.maxTSOffset})
	}
}
