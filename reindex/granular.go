package reindex

import (
	"github.com/logtool/logtool/index"
	"github.com/logtool/logtool/logfmt"
)

// GranularTime builds a coarse time index: one entry per bucket of Width
// milliseconds of record time, (start of the bucket, offset of the first
// record whose timestamp falls in it or a later bucket), then the final
// entry recovery writes, (largest timestamp, last offset of the first batch
// that holds it), so that a broker reading the file still learns the
// segment's largest timestamp from its last entry. Buckets are entered in
// increasing order only: a record whose timestamp goes back to an earlier
// bucket adds nothing, as the time index requires increasing timestamps.
//
// Every entry (T, O) keeps the property lookups rely on: no record before O
// has a timestamp of T or more.
type GranularTime struct {
	Base  int64
	Width int64 // bucket width in milliseconds, > 0
	Times []index.TimeEntry

	bucket      int64 // highest bucket entered, -1 before the first
	maxTS       int64
	maxTSOffset int64
}

// NewGranularTime starts a coarse time index for the segment based at base.
func NewGranularTime(base, width int64) *GranularTime {
	return &GranularTime{Base: base, Width: width, bucket: -1, maxTS: -1, maxTSOffset: base}
}

// NeedsRecords reports whether a batch whose largest timestamp is maxTS may
// hold a record that enters a new bucket. Only those batches need their
// records read, which spares decompressing most of a segment.
func (g *GranularTime) NeedsRecords(maxTS int64) bool {
	return maxTS >= 0 && maxTS/g.Width > g.bucket
}

// Record accounts for one record, in offset order. Records without a
// timestamp (magic 0, or -1) are ignored.
func (g *GranularTime) Record(offset, ts int64) {
	if ts < 0 {
		return
	}
	if b := ts / g.Width; b > g.bucket {
		g.bucket = b
		g.Times = append(g.Times, index.TimeEntry{Timestamp: b * g.Width, Offset: offset})
	}
}

// Batch accounts for a batch after its records, tracking what the final
// entry will be exactly as recovery does.
func (g *GranularTime) Batch(lastOffset, maxTS int64) {
	if maxTS > g.maxTS {
		g.maxTS, g.maxTSOffset = maxTS, lastOffset
	}
}

// Finish appends the final entry when it is newer than the last bucket and
// does not point before it. The second condition only fails for a batch
// whose header claims a larger timestamp than any of its records.
func (g *GranularTime) Finish() {
	n := len(g.Times)
	if n == 0 || g.maxTS > g.Times[n-1].Timestamp && g.maxTSOffset >= g.Times[n-1].Offset {
		if g.maxTS >= 0 {
			g.Times = append(g.Times, index.TimeEntry{Timestamp: g.maxTS, Offset: g.maxTSOffset})
		}
	}
}

// addBatch feeds one valid batch to g, reading its records with it when
// they may enter a new bucket. Records that cannot be read (a compressed
// payload the checksum vouches for but that does not decompress) are
// accounted for at batch level: the bucket of the batch's largest timestamp
// starts at the batch's first offset (or the last entry's, if records read
// before the failure entered one), which keeps the lookup property. The
// error is returned for reporting; g is consistent either way.
func (g *GranularTime) addBatch(b *logfmt.Batch, firstOffset int64, it *logfmt.RecordIter) error {
	maxTS := b.MaxTimestamp()
	var err error
	if g.NeedsRecords(maxTS) {
		if err = it.Reset(b); err == nil {
			for it.Next() {
				r := it.Record()
				g.Record(r.Offset, r.Timestamp)
			}
			err = it.Err()
		}
		if err != nil {
			if n := len(g.Times); n > 0 {
				firstOffset = max(firstOffset, g.Times[n-1].Offset)
			}
			g.Record(firstOffset, maxTS)
		}
	}
	g.Batch(b.LastOffset(), maxTS)
	return err
}
