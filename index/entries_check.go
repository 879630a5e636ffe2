package index

import (
	"encoding/binary"
	"io"

	"github.com/logtool/logtool/logfmt"
)

// SanityCheckOffsetIndex runs Kafka's OffsetIndex.sanityCheck on the size
// bytes of an .index file read from r. Like Kafka it counts every whole entry,
// preallocated zeros included, and stops at the first failure, which it returns
// as a *logfmt.CorruptError; other errors are I/O errors.
//
// Kafka's own loader no longer runs this check (LogSegment.sanityCheck checks
// only the transaction index), so failing it is not fatal to a broker.
func SanityCheckOffsetIndex(r io.ReaderAt, size, base int64, file string) error {
	if n := size / OffsetEntrySize; n > 0 {
		var b [OffsetEntrySize]byte
		pos := (n - 1) * OffsetEntrySize
		if err := readFull(r, b[:], pos, size, file); err != nil {
			return err
		}
		// Java's long addition wraps the same way as Go's.
		if last := base + int64(int32(binary.BigEndian.Uint32(b[:]))); last < base {
			return logfmt.Corruptf(file, pos, "last offset %d is below the base offset %d (Kafka's index sanity check)", last, base)
		}
	}
	return checkLength(size, OffsetEntrySize, file)
}

// SanityCheckTimeIndex runs Kafka's TimeIndex.sanityCheck on the size bytes of
// a .timeindex file read from r, as SanityCheckOffsetIndex does. A preallocated
// file with entries fails it: its last slot holds timestamp 0.
func SanityCheckTimeIndex(r io.ReaderAt, size, base int64, file string) error {
	if n := size / TimeEntrySize; n > 0 {
		var first, last [TimeEntrySize]byte
		pos := (n - 1) * TimeEntrySize
		if err := readFull(r, first[:], 0, size, file); err != nil {
			return err
		}
		if err := readFull(r, last[:], pos, size, file); err != nil {
			return err
		}
		firstTs := int64(binary.BigEndian.Uint64(first[:]))
		lastTs := int64(binary.BigEndian.Uint64(last[:]))
		if lastTs < firstTs {
			return logfmt.Corruptf(file, pos, "last timestamp %d is below the first timestamp %d (Kafka's index sanity check)", lastTs, firstTs)
		}
		if lastOff := base + int64(int32(binary.BigEndian.Uint32(last[8:]))); lastOff < base {
			return logfmt.Corruptf(file, pos, "last offset %d is below the base offset %d (Kafka's index sanity check)", lastOff, base)
		}
	}
	return checkLength(size, TimeEntrySize, file)
}

func checkLength(size int64, esize int, file string) error {
	if rest := size % int64(esize); rest != 0 {
		return logfmt.Corruptf(file, size-rest, "length %d is not a multiple of %d (Kafka's index sanity check)", size, esize)
	}
	return nil
}

// readFull reads len(b) bytes at pos of a file said to be size bytes long. A
// short read means the file is shorter than that, which is as much a fact
// about the file as bad bytes are.
func readFull(r io.ReaderAt, b []byte, pos, size int64, file string) error {
	n, err := r.ReadAt(b, pos)
	if n == len(b) {
		return nil
	}
	if err == nil || err == io.EOF {
		return logfmt.Corruptf(file, pos, "file is shorter than the %d bytes given", size)
	}
	return err
}
