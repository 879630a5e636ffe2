package grep

import (
	"fmt"
	"iter"

	"github.com/logtool/logtool/compact"
)

// Status is what a stored record is to its key.
type Status uint8

const (
	// Latest is the newest version of its key: no later record of the key
	// that is committed or outside any transaction. A keyless record, which
	// nothing can supersede, is Latest too.
	Latest Status = iota
	// Superseded is an older version of a key whose newest version has a
	// value.
	Superseded
	// Tombstone is a null value that is the newest version of its key.
	Tombstone
	// Deleted is an older version of a key whose newest version is a
	// tombstone.
	Deleted
	// Aborted is a record of an aborted transaction: no consumer reading
	// committed data sees it, and it supersedes nothing.
	Aborted
	// Ongoing is a record of a transaction with no marker in the log: not
	// yet decided, so it supersedes nothing yet.
	Ongoing

	numStatus
)

var statusNames = [numStatus]string{"latest", "superseded", "tombstone", "deleted", "aborted", "ongoing"}

func (s Status) String() string { return statusNames[s] }

// Statuses yields every status, in order.
func Statuses() iter.Seq[Status] {
	return func(yield func(Status) bool) {
		for s := range numStatus {
			if !yield(s) {
				return
			}
		}
	}
}

// Counts are matches by status.
type Counts [numStatus]int64

// All yields each status and its count, in order.
func (c *Counts) All() iter.Seq2[Status, int64] {
	return func(yield func(Status, int64) bool) {
		for s := range numStatus {
			if !yield(s, c[s]) {
				return
			}
		}
	}
}

// Total is every match.
func (c *Counts) Total() int64 {
	var n int64
	for _, v := range c {
		n += v
	}
	return n
}

// The key map holds, per key, the offset of its newest version and two
// bits: whether that version is a tombstone, and whether that tombstone is
// past its deadline (known only in an audit).
const (
	tombBit = 1 << iota
	dueBit
	valueShift = iota
)

// maxOffset is the largest offset the key map's values hold. Kafka's
// offsets never come near it; a larger one is corruption.
const maxOffset = compact.MaxKeyValue >> valueShift

func keyValue(offset int64, tomb, due bool) int64 {
	v := offset << valueShift
	if tomb {
		v |= tombBit
	}
	if due {
		v |= dueBit
	}
	return v
}

func splitValue(v int64) (offset int64, tomb, due bool) {
	return v >> valueShift, v&tombBit != 0, v&dueBit != 0
}

// statusOf decides the status of a decided keyed record at offset from its
// key's newest version. An error means the newest version is not later:
// the key pass saw another log.
func statusOf(offset int64, tombstone bool, newest int64, newestTomb bool) (Status, error) {
	switch {
	case newest == offset && tombstone:
		return Tombstone, nil
	case newest == offset:
		return Latest, nil
	case newest > offset && newestTomb:
		return Deleted, nil
	case newest > offset:
		return Superseded, nil
	}
	return 0, fmt.Errorf("offset %d is past its key's newest version %d: the log changed while it was read", offset, newest)
}
