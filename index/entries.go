// Package index reads and writes the index files that sit next to a Kafka log
// segment: the offset index (.index), the time index (.timeindex) and the
// transaction index (.txnindex).
//
// Offsets inside .index and .timeindex are stored relative to the segment's
// base offset, the number in the file name. Callers pass that base in; every
// offset this package hands out or takes in is absolute.
package index

import (
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"math"
	"sort"
)

// Entry sizes in bytes.
const (
	OffsetEntrySize = 8  // int32 relative offset, int32 position
	TimeEntrySize   = 12 // int64 timestamp, int32 relative offset
	TxnEntrySize    = 34 // int16 version, int64 producer id, first, last and last stable offset
)

// OffsetEntry is one .index entry: the batch holding Offset starts at byte
// Position of the .log.
type OffsetEntry struct {
	Offset   int64 // absolute
	Position int32
}

// TimeEntry is one .timeindex entry: no record before Offset has a timestamp
// above Timestamp.
type TimeEntry struct {
	Timestamp int64
	Offset    int64 // absolute
}

// Problem is something wrong in an index file that does not stop it being
// read. Readers keep going after one, so a caller can report them all.
type Problem struct {
	File  string // as given to the parser or reader
	Pos   int64  // byte position in the file
	Entry int    // entry number from 0, counted in whole entries from the file start
	Msg   string
}

// Layout tells how an .index or .timeindex file divides up. Kafka takes every
// whole entry of a file as valid, but the active segment's files are
// preallocated with zeros, so an offline reader has to find where the real
// entries end.
type Layout struct {
	ValidBytes  int64 // bytes of the valid prefix, the entries returned
	ZeroTail    int64 // bytes of all-zero entries after the prefix: preallocation, not damage
	PartialTail int   // bytes after the last whole entry; Kafka never leaves any
}

// OffsetIndex is a parsed .index file.
type OffsetIndex struct {
	Entries []OffsetEntry // the valid prefix
	Layout
}

// TimeIndex is a parsed .timeindex file.
type TimeIndex struct {
	Entries []TimeEntry // the valid prefix
	Layout
}

// ErrOffsetRange means an offset does not fit the four bytes an index entry has
// for it. Kafka splits such a segment (KAFKA-6264) rather than index it.
var ErrOffsetRange = errors.New("offset outside the segment's relative range [0, 2147483647]")

// offsetFields decodes the relative offset and position of the .index entry
// at the start of b.
func offsetFields(b []byte) (rel, pos int32) {
	return int32(binary.BigEndian.Uint32(b)), int32(binary.BigEndian.Uint32(b[4:]))
}

// Entries yields the whole .index entries in b, of a segment whose base
// offset is base, unchecked.
func Entries(b []byte, base int64) iter.Seq[OffsetEntry] {
	return func(yield func(OffsetEntry) bool) {
		for ; len(b) >= OffsetEntrySize; b = b[OffsetEntrySize:] {
			rel, pos := offsetFields(b)
			if !yield(OffsetEntry{Offset: base + int64(rel), Position: pos}) {
				return
			}
		}
	}
}

// timeFields decodes the timestamp and relative offset of the .timeindex entry
// at the start of b.
func timeFields(b []byte) (ts int64, rel int32) {
	return int64(binary.BigEndian.Uint64(b)), int32(binary.BigEndian.Uint32(b[8:]))
}

// Lookup returns the entry with the greatest offset not above offset, as
// Kafka's OffsetIndex.lookup does; a reader then scans the .log forward from
// its position. It reports false when every entry is above offset, where
// Kafka would start from the segment's first byte.
func (ix OffsetIndex) Lookup(offset int64) (OffsetEntry, bool) {
	i := sort.Search(len(ix.Entries), func(i int) bool { return ix.Entries[i].Offset > offset })
	if i == 0 {
		return OffsetEntry{}, false
	}
	return ix.Entries[i-1], true
}

// Lookup returns the entry with the greatest timestamp not above ts, as
// Kafka's TimeIndex.lookup does. It reports false when every entry is above
// ts, where Kafka would start from the segment's base offset.
func (ix TimeIndex) Lookup(ts int64) (TimeEntry, bool) {
	i := sort.Search(len(ix.Entries), func(i int) bool { return ix.Entries[i].Timestamp > ts })
	if i == 0 {
		return TimeEntry{}, false
	}
	return ix.Entries[i-1], true
}

// AppendOffsetEntry appends e as an .index entry of a segment starting at
// base. It refuses an offset outside the relative range (ErrOffsetRange) and a
// position that is not positive: Kafka indexes a batch only after more than
// index.interval.bytes of log, so it never writes position 0, and readers take
// one as the end of the entries.
func AppendOffsetEntry(dst []byte, base int64, e OffsetEntry) ([]byte, error) {
	rel, err := relativeOffset(base, e.Offset)
	if err != nil {
		return dst, err
	}
	if e.Position <= 0 {
		return dst, fmt.Errorf("index: position %d of offset %d is not positive", e.Position, e.Offset)
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(rel))
	return binary.BigEndian.AppendUint32(dst, uint32(e.Position)), nil
}

// AppendTimeEntry appends e as a .timeindex entry of a segment starting at
// base. It refuses an offset outside the relative range (ErrOffsetRange) and a
// negative timestamp, which Kafka never indexes (it appends only timestamps
// above the previous entry's, starting from -1).
func AppendTimeEntry(dst []byte, base int64, e TimeEntry) ([]byte, error) {
	rel, err := relativeOffset(base, e.Offset)
	if err != nil {
		return dst, err
	}
	if e.Timestamp < 0 {
		return dst, fmt.Errorf("index: negative timestamp %d for offset %d", e.Timestamp, e.Offset)
	}
	dst = binary.BigEndian.AppendUint64(dst, uint64(e.Timestamp))
	return binary.BigEndian.AppendUint32(dst, uint32(rel)), nil
}

func relativeOffset(base, offset int64) (int32, error) {
	// Unsigned subtraction gives the exact distance even when offset-base
	// overflows int64.
	if offset < base || uint64(offset)-uint64(base) > math.MaxInt32 {
		return 0, fmt.Errorf("index: offset %d with base offset %d: %w", offset, base, ErrOffsetRange)
	}
	return int32(offset - base), nil
}
