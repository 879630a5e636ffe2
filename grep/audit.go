package grep

import (
	"fmt"
	"math"
	"strings"

	"github.com/logtool/logtool/compact"
	"github.com/logtool/logtool/internal/human"
)

// Audit is the erasure audit of one partition: whether every version that
// KIP-354 promises gone is gone (compact/deadline.go has the deadlines and
// why they are what they are).
type Audit struct {
	// Cleaner are the cleaner's settings for the partition's topic. Now,
	// MaxLag and DeleteRetention set the deadlines; with the rest, the
	// cleaner's own plan (compact.Plan) says where each finding lies.
	Cleaner compact.Options
}

// NoDeadline is the deadline of a version whose newer version, or of a
// tombstone that, carries no time (magic 0): none.
const NoDeadline = math.MaxInt64

// Finding is a version still on disk past its deadline.
type Finding struct {
	Offset int64
	Status Status // Superseded, Deleted or Tombstone
	// By is the first newer version's offset, -1 for a tombstone.
	By int64
	// Written is when that newer version, or the tombstone, was written:
	// its batch's max timestamp.
	Written  int64
	Deadline int64
	Past     int64 // ms past the deadline
	// Segment and Position locate the version's batch: the .log's name
	// and the batch's byte position in it.
	Segment  string
	Position int64
	// Count is how many findings this one stands for: an audit without
	// matchers reports the oldest of each kind.
	Count int64

	maxLag, deleteRetention int64
	where                   string
	batchTime               int64 // the max timestamp of the batch at Segment, Position
}

// Message says what the finding is, for a problem line.
func (f *Finding) Message() string {
	var b strings.Builder
	if f.Count > 1 {
		kind := "superseded or deleted versions"
		if f.Status == Tombstone {
			kind = "tombstones"
		}
		fmt.Fprintf(&b, "%d %s past their deadline, the oldest: ", f.Count, kind)
	}
	if f.Status == Tombstone {
		fmt.Fprintf(&b, "tombstone at offset %d is %s past its deadline: written %s (its batch's max timestamp), max.compaction.lag.ms %s + delete.retention.ms %s",
			f.Offset, human.Duration(f.Past), human.Time(f.Written), human.Duration(f.maxLag), human.Duration(f.deleteRetention))
	} else {
		fmt.Fprintf(&b, "%s version at offset %d is %s past its deadline: offset %d superseded it at %s (its batch's max timestamp), max.compaction.lag.ms %s",
			f.Status, f.Offset, human.Duration(f.Past), f.By, human.Time(f.Written), human.Duration(f.maxLag))
	}
	if f.where != "" {
		b.WriteString("; ")
		b.WriteString(f.where)
	}
	return b.String()
}

// where says why the cleaner has not removed a version superseded at
// offset x, or a tombstone at x, from its plan for the partition.
func where(pl *compact.Result, x int64, tombstone bool) string {
	switch {
	case pl == nil:
		return ""
	case x < pl.FirstDirtyOffset && tombstone:
		return fmt.Sprintf("it was cleaned (it is below the first dirty offset %d) and kept until its delete horizon", pl.FirstDirtyOffset)
	case x < pl.FirstDirtyOffset:
		return fmt.Sprintf("offset %d is below the first dirty offset %d: the cleaner checkpoint says it was cleaned, yet the older version is still there", x, pl.FirstDirtyOffset)
	case x >= pl.LastStableOffset && pl.LastStableOffset < pl.LogEndOffset:
		return fmt.Sprintf("offset %d is at or past the last stable offset %d, which the cleaner never passes (an open transaction, or the high watermark)", x, pl.LastStableOffset)
	case x >= pl.FirstUncleanableOffset:
		return fmt.Sprintf("offset %d is at or past the first uncleanable offset %d", x, pl.FirstUncleanableOffset)
	}
	return fmt.Sprintf("offset %d is in the cleanable range [%d, %d), which compact cleans under the same max lag", x, pl.FirstDirtyOffset, pl.FirstUncleanableOffset)
}
