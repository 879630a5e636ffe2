package index

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/logtool/logtool/logfmt"
)

// AbortedTxn is one .txnindex entry: a transaction that was aborted by the
// marker at LastOffset, which lies in the entry's segment. Only version 0
// exists.
type AbortedTxn struct {
	ProducerID       int64
	FirstOffset      int64 // first data offset of the transaction, maybe in an earlier segment
	LastOffset       int64 // offset of the ABORT marker
	LastStableOffset int64 // the partition's LSO when the marker was appended
}

// AppendAbortedTxn appends t as a version 0 .txnindex entry.
func AppendAbortedTxn(dst []byte, t AbortedTxn) []byte {
	dst = binary.BigEndian.AppendUint16(dst, 0)
	dst = binary.BigEndian.AppendUint64(dst, uint64(t.ProducerID))
	dst = binary.BigEndian.AppendUint64(dst, uint64(t.FirstOffset))
	dst = binary.BigEndian.AppendUint64(dst, uint64(t.LastOffset))
	return binary.BigEndian.AppendUint64(dst, uint64(t.LastStableOffset))
}

// TxnReader streams the entries of a .txnindex file. The file has no header
// and no preallocation; Kafka ignores a partial entry at its end, which
// TxnReader reports.
//
// Kafka reads only the first byte of the version field and fails on a value
// above 0, so such an entry, and everything after it, is unreadable to a
// broker: the reader stops there. Entries that Kafka reads but could not have
// written (lastOffset not increasing, firstOffset not below lastOffset, a
// negative producer id, a last stable offset outside [0, lastOffset+1], a
// version field other than 0) are returned with Problems.
type TxnReader struct {
	s        entryScanner
	file     string
	partial  int
	done     bool
	n        int // entries returned
	t        AbortedTxn
	problems []Problem
}

// NewTxnReader reads the size bytes of a .txnindex file from r. file names it
// in Problems and errors.
func NewTxnReader(r io.ReaderAt, size int64, file string) *TxnReader {
	return newTxnReader(fileScanner(r, size, TxnEntrySize), size, file)
}

func newTxnReader(s entryScanner, size int64, file string) *TxnReader {
	return &TxnReader{s: s, file: file, partial: int(max(size, 0) - s.size)}
}

// Next advances to the next entry that Kafka would read. It returns false at
// the end of them, after which Problems and Err tell what followed.
func (r *TxnReader) Next() bool {
	r.problems = r.problems[:0]
	if r.done {
		return false
	}
	b := r.s.next()
	if b == nil {
		r.done = true
		if r.s.err == nil && r.partial > 0 {
			r.report(r.s.size, fmt.Sprintf("%d bytes at the end do not make a whole entry of %d; Kafka ignores them",
				r.partial, TxnEntrySize))
		}
		return false
	}
	pos := r.s.pos - TxnEntrySize
	if v := int8(b[0]); v > 0 {
		r.done = true
		r.report(pos, fmt.Sprintf("version %d, which Kafka cannot read; it reads no entry from here on", v))
		return false
	}
	t := AbortedTxn{
		ProducerID:       int64(binary.BigEndian.Uint64(b[2:])),
		FirstOffset:      int64(binary.BigEndian.Uint64(b[10:])),
		LastOffset:       int64(binary.BigEndian.Uint64(b[18:])),
		LastStableOffset: int64(binary.BigEndian.Uint64(b[26:])),
	}
	if v := int16(binary.BigEndian.Uint16(b)); v != 0 {
		r.report(pos, fmt.Sprintf("version field %d is not 0; Kafka reads only its first byte", v))
	}
	if t.ProducerID < 0 {
		r.report(pos, fmt.Sprintf("negative producer id %d", t.ProducerID))
	}
	if t.FirstOffset >= t.LastOffset {
		r.report(pos, fmt.Sprintf("first offset %d is not below the marker's offset %d", t.FirstOffset, t.LastOffset))
	}
	// Compared as LSO-1 > lastOffset because lastOffset+1 may overflow.
	if t.LastStableOffset < 0 || t.LastStableOffset-1 > t.LastOffset {
		r.report(pos, fmt.Sprintf("last stable offset %d is outside [0, marker offset + 1]", t.LastStableOffset))
	}
	if r.n > 0 && t.LastOffset <= r.t.LastOffset {
		r.report(pos, fmt.Sprintf("marker offset %d is not above the previous entry's %d", t.LastOffset, r.t.LastOffset))
	}
	r.t = t
	r.n++
	return true
}

func (r *TxnReader) report(pos int64, msg string) {
	r.problems = append(r.problems, Problem{File: r.file, Pos: pos, Entry: int(pos / TxnEntrySize), Msg: msg})
}

// Txn returns the entry Next advanced to.
func (r *TxnReader) Txn() AbortedTxn { return r.t }

// Problems returns what the last call to Next found wrong with the entry it
// returned or, once it has returned false, with the end of the file. The slice
// is valid until the next call.
func (r *TxnReader) Problems() []Problem { return r.problems }

// Err returns the error that stopped the reader, if any: an I/O error, or a
// *logfmt.CorruptError when the file is shorter than the size given.
func (r *TxnReader) Err() error { return logfmt.WithFile(r.s.err, r.file, 0) }

// SanityCheckTxnIndex runs Kafka's TransactionIndex.sanityCheck on the size
// bytes of a .txnindex file read from r, for a segment starting at base: every
// entry's marker must lie in the segment. Unlike the offset and time checks,
// trunk Kafka still runs this one when it loads a segment. Like Kafka it stops
// at the first failure, which it returns as a *logfmt.CorruptError; reading an
// entry Kafka cannot read fails it too.
func SanityCheckTxnIndex(r io.ReaderAt, size, base int64, file string) error {
	s := fileScanner(r, size, TxnEntrySize)
	for b := s.next(); b != nil; b = s.next() {
		pos := s.pos - TxnEntrySize
		if v := int8(b[0]); v > 0 {
			return logfmt.Corruptf(file, pos, "version %d, which Kafka cannot read", v)
		}
		if last := int64(binary.BigEndian.Uint64(b[18:])); last < base {
			return logfmt.Corruptf(file, pos, "marker offset %d is below the segment's base offset %d (Kafka's index sanity check)", last, base)
		}
	}
	return logfmt.WithFile(s.err, file, 0)
}
