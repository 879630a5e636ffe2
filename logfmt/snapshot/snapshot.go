// Package snapshot reads and writes Kafka's producer state snapshots, the
// <offset>.snapshot files of a partition directory (ProducerStateManager).
//
// Layout, big-endian, as the protocol schema PID_SNAPSHOT_MAP_SCHEMA lays it
// out:
//
//	version  int16   always 1
//	crc      uint32  CRC-32C of bytes [6, EOF)
//	count    int32   number of entries
//	entries  count × 46 bytes:
//	    producerId int64, epoch int16, lastSequence int32, lastOffset int64,
//	    offsetDelta int32, timestamp int64, coordinatorEpoch int32,
//	    currentTxnFirstOffset int64
//
// Kafka writes the file in place without truncating it, so a snapshot shorter
// than the file it overwrote leaves stale bytes behind; the CRC covers them
// and the file then fails to load. Parse also insists that the entries fill
// the file exactly.
package snapshot

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"strconv"
	"strings"

	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/layout"
)

const (
	// Version is the only snapshot version Kafka has written.
	Version = 1

	headerSize = 10 // version, crc, count
	crcStart   = 6  // the CRC covers the count and the entries
	entrySize  = 46
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Entry is one producer's state.
type Entry struct {
	ProducerID            int64
	Epoch                 int16
	LastSequence          int32
	LastOffset            int64 // -1 when the producer has no batch metadata
	OffsetDelta           int32 // last minus first offset of the producer's last batch
	Timestamp             int64
	CoordinatorEpoch      int32
	CurrentTxnFirstOffset int64 // -1 when no transaction is open
}

// ErrTooLarge is wrapped by Read's error for a snapshot, sound by its
// header, that is larger than the caller reads.
var ErrTooLarge = errors.New("larger than the limit")

// window is how much of a file Read holds at a time.
const window = 64 << 10

// Parse decodes a snapshot file. It checks, in order, the header length, the
// version, the CRC and that the count of entries fills the rest of the file
// exactly, and reports the first failure as a *logfmt.CorruptError.
func Parse(b []byte, file string) ([]Entry, error) {
	at := func(off, n int64) ([]byte, error) { return b[off : off+n], nil }
	return parse(at, int64(len(b)), file, int64(len(b)))
}

// Read reads and decodes the snapshot file path as Parse decodes its bytes,
// without trusting its size: the header is checked from the first bytes,
// then the CRC a window at a time, and the entries are allocated and decoded
// only once both hold. A file that is not a snapshot thus costs a window of
// memory, however large, and a snapshot its entries. A file of more than
// limit bytes whose header is sound is not read past it; the error wraps
// ErrTooLarge.
func Read(path string, limit int64) ([]Entry, error) {
	f, size, err := safefile.OpenSized(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var buf []byte
	at := func(off, n int64) ([]byte, error) {
		if int64(cap(buf)) < n {
			buf = make([]byte, n)
		}
		got, err := f.ReadAt(buf[:n], off)
		if int64(got) < n {
			// Shorter than when it was opened: another process cut it.
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, fmt.Errorf("%s: reading %d bytes at byte %d of %d: %w", path, n, off, size, err)
		}
		return buf[:n], nil
	}
	return parse(at, size, path, limit)
}

// parse is Parse over a file of size bytes that at reads n bytes of at a
// time, never more than a window.
func parse(at func(off, n int64) ([]byte, error), size int64, file string, limit int64) ([]Entry, error) {
	if size < headerSize {
		return nil, logfmt.Corruptf(file, 0, "%d bytes, shorter than the %d-byte header", size, headerSize)
	}
	h, err := at(0, headerSize)
	if err != nil {
		return nil, err
	}
	if v := int16(binary.BigEndian.Uint16(h)); v != Version {
		return nil, logfmt.Corruptf(file, 0, "unknown snapshot version %d", v)
	}
	if size > limit {
		return nil, fmt.Errorf("%s: %d bytes: %w of %d bytes", file, size, ErrTooLarge, limit)
	}
	stored := binary.BigEndian.Uint32(h[2:])
	count := int32(binary.BigEndian.Uint32(h[crcStart:]))
	var sum uint32
	for off := int64(crcStart); off < size; {
		n := min(window, size-off)
		b, err := at(off, n)
		if err != nil {
			return nil, err
		}
		sum = crc32.Update(sum, castagnoli, b)
		off += n
	}
	if sum != stored {
		return nil, logfmt.Corruptf(file, 2, "CRC mismatch: stored %#08x, computed %#08x", stored, sum)
	}
	if count < 0 {
		return nil, logfmt.Corruptf(file, crcStart, "negative entry count %d", count)
	}
	// Checked before allocating, so the count cannot size memory by itself.
	body := size - headerSize
	if have := body / entrySize; int64(count) != have || body%entrySize != 0 {
		// Point at the first byte that does not fit the declared count.
		pos := headerSize + min(int64(count), have)*entrySize
		return nil, logfmt.Corruptf(file, pos, "%d entries declared, but %d bytes follow the header (%d per entry)",
			count, body, entrySize)
	}
	entries := make([]Entry, count)
	const perWindow = window / entrySize
	for i := 0; i < len(entries); i += perWindow {
		k := min(perWindow, len(entries)-i)
		b, err := at(headerSize+int64(i)*entrySize, int64(k)*entrySize)
		if err != nil {
			return nil, err
		}
		for j := range k {
			entries[i+j] = decode(b[j*entrySize:])
		}
	}
	return entries, nil
}

func decode(e []byte) Entry {
	return Entry{
		ProducerID:            int64(binary.BigEndian.Uint64(e[0:])),
		Epoch:                 int16(binary.BigEndian.Uint16(e[8:])),
		LastSequence:          int32(binary.BigEndian.Uint32(e[10:])),
		LastOffset:            int64(binary.BigEndian.Uint64(e[14:])),
		OffsetDelta:           int32(binary.BigEndian.Uint32(e[22:])),
		Timestamp:             int64(binary.BigEndian.Uint64(e[26:])),
		CoordinatorEpoch:      int32(binary.BigEndian.Uint32(e[34:])),
		CurrentTxnFirstOffset: int64(binary.BigEndian.Uint64(e[38:])),
	}
}

// Append appends the snapshot Kafka writes for entries, in their order.
func Append(dst []byte, entries []Entry) []byte {
	start := len(dst)
	dst = binary.BigEndian.AppendUint16(dst, Version)
	dst = binary.BigEndian.AppendUint32(dst, 0) // CRC, filled in below
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(entries)))
	for _, e := range entries {
		dst = binary.BigEndian.AppendUint64(dst, uint64(e.ProducerID))
		dst = binary.BigEndian.AppendUint16(dst, uint16(e.Epoch))
		dst = binary.BigEndian.AppendUint32(dst, uint32(e.LastSequence))
		dst = binary.BigEndian.AppendUint64(dst, uint64(e.LastOffset))
		dst = binary.BigEndian.AppendUint32(dst, uint32(e.OffsetDelta))
		dst = binary.BigEndian.AppendUint64(dst, uint64(e.Timestamp))
		dst = binary.BigEndian.AppendUint32(dst, uint32(e.CoordinatorEpoch))
		dst = binary.BigEndian.AppendUint64(dst, uint64(e.CurrentTxnFirstOffset))
	}
	binary.BigEndian.PutUint32(dst[start+2:], crc32.Checksum(dst[start+crcStart:], castagnoli))
	return dst
}

// OffsetFromName returns the offset in a snapshot file name such as
// "00000000000000000014.snapshot": the map end offset the snapshot was taken
// at. Kafka writes twenty digits; any run of decimal digits that fits an
// int64 is accepted, as Kafka's Long.parseLong would.
func OffsetFromName(name string) (int64, bool) {
	digits, ok := strings.CutSuffix(name, layout.SnapshotExt)
	if !ok || digits == "" || strings.TrimLeft(digits, "0123456789") != "" {
		return 0, false
	}
	off, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return 0, false
	}
	return off, true
}
