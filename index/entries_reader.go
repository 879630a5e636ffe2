package index

import (
	"fmt"
	"io"
	"math"

	"github.com/logtool/logtool/logfmt"
)

// chunkEntries is how many entries a file reader buffers: 32 KiB of .index.
const chunkEntries = 4096

// entryScanner hands out the fixed-size entries of an index file. Reading a
// file, it holds one chunk at a time so memory stays flat however big the
// file; parsing a slice, buf is the slice itself and nothing is copied.
type entryScanner struct {
	r     io.ReaderAt // nil when buf holds every whole entry
	size  int64       // bytes of whole entries
	esize int
	buf   []byte
	off   int64 // file position of buf[0]
	n     int   // bytes of buf that hold file data
	pos   int64 // file position of the next entry
	err   error
}

func fileScanner(r io.ReaderAt, size int64, esize int) entryScanner {
	size = max(size, 0)
	size -= size % int64(esize)
	return entryScanner{r: r, size: size, esize: esize, buf: make([]byte, min(size, int64(esize*chunkEntries)))}
}

func memScanner(b []byte, esize int) entryScanner {
	size := len(b) - len(b)%esize
	return entryScanner{size: int64(size), esize: esize, buf: b[:size], n: size}
}

// next returns the next entry, valid until the following call, or nil at the
// end of the whole entries or after an I/O error.
func (s *entryScanner) next() []byte {
	if s.err != nil || s.pos >= s.size {
		return nil
	}
	if (s.pos < s.off || s.pos >= s.off+int64(s.n)) && !s.fill() {
		return nil
	}
	i := int(s.pos - s.off)
	s.pos += int64(s.esize)
	return s.buf[i : i+s.esize]
}

// peek returns the entry next would return, without consuming it.
func (s *entryScanner) peek() []byte {
	pos := s.pos
	b := s.next()
	s.pos = pos
	return b
}

// fill reads the chunk starting at pos. Only file scanners get here: a memory
// scanner's buf covers every position below size.
func (s *entryScanner) fill() bool {
	n := int(min(int64(len(s.buf)), s.size-s.pos))
	m, err := s.r.ReadAt(s.buf[:n], s.pos)
	if m < n {
		if err == nil || err == io.EOF {
			// The file is shorter than the caller said: it shrank under us.
			err = logfmt.Corruptf("", s.pos+int64(m), "file ends before its size of %d bytes", s.size)
		}
		s.err = err
		return false
	}
	s.off, s.n = s.pos, n
	return true
}

// skipZeros returns the position of the first non-zero byte from pos on, or
// size when there is none. Chunks are scanned whole because a preallocated
// index is megabytes of zeros.
func (s *entryScanner) skipZeros() int64 {
	for s.err == nil && s.pos < s.size {
		if (s.pos < s.off || s.pos >= s.off+int64(s.n)) && !s.fill() {
			return s.size
		}
		chunk := s.buf[s.pos-s.off : s.n]
		for i, c := range chunk {
			if c != 0 {
				return s.pos + int64(i)
			}
		}
		s.pos += int64(len(chunk))
	}
	return s.size
}

// zeroEntry tells whether e is an entry, not the end of the file, and all
// zero.
func zeroEntry(e []byte) bool { return e != nil && isZero(e) }

func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// prefixScan is what the offset and time index readers share: finding where
// the valid prefix ends and what follows it.
type prefixScan struct {
	s        entryScanner
	file     string
	partial  int
	done     bool
	layout   Layout
	problems []Problem
}

func newPrefixScan(s entryScanner, total int64, file string) prefixScan {
	return prefixScan{s: s, file: file, partial: int(max(total, 0) - s.size)}
}

// finish ends the scan when the whole entries run out, or reading fails.
func (p *prefixScan) finish() {
	p.layout.ValidBytes = p.s.pos
	p.stop()
}

// reject ends the valid prefix at the entry just read. An all-zero entry may
// start a preallocated tail, which is not a problem; any other is reported
// with why.
func (p *prefixScan) reject(zero bool, why string) {
	esize := int64(p.s.esize)
	p.layout.ValidBytes = p.s.pos - esize
	if !zero {
		p.report(p.layout.ValidBytes, why)
		p.stop()
		return
	}
	q := p.s.skipZeros()
	switch {
	case p.s.err != nil:
		// Err reports it.
	case q == p.s.size:
		p.layout.ZeroTail = p.s.size - p.layout.ValidBytes
	default:
		p.report(q-q%esize, fmt.Sprintf("entry is not zero, but entry %d before it is all zero and ends the valid entries",
			p.layout.ValidBytes/esize))
	}
	p.stop()
}

func (p *prefixScan) stop() {
	p.done = true
	if p.partial > 0 && p.s.err == nil {
		p.layout.PartialTail = p.partial
		p.report(p.s.size, fmt.Sprintf("%d bytes at the end do not make a whole entry of %d", p.partial, p.s.esize))
	}
}

func (p *prefixScan) report(pos int64, msg string) {
	p.problems = append(p.problems, Problem{File: p.file, Pos: pos, Entry: int(pos / int64(p.s.esize)), Msg: msg})
}

// Problems returns what the last call to Next found wrong. The slice is valid
// until the next call. Problems come from the final call, the one returning
// false, and there are at most two: what ends the valid entries, and a partial
// entry at the end of the file.
func (p *prefixScan) Problems() []Problem { return p.problems }

// Layout returns how the file divides up, once Next has returned false and Err
// is nil.
func (p *prefixScan) Layout() Layout { return p.layout }

// Err returns the error that stopped the reader, if any: an I/O error, or a
// *logfmt.CorruptError when the file is shorter than the size given. Bad
// bytes never stop it: they end the valid entries and become Problems.
func (p *prefixScan) Err() error {
	return logfmt.WithFile(p.s.err, p.file, 0)
}

// OffsetReader streams the valid entries of an .index file.
//
// Kafka itself takes every whole entry as valid, because it trims the files
// of inactive segments and rebuilds those of crashed ones. An offline reader
// cannot rely on that, so the valid prefix ends at the first entry that Kafka
// could not have written after the previous one: a relative offset that is
// negative or not above the previous one, or a position that is not positive
// or not above the previous one. If that entry and everything after it is
// zero it is the preallocated tail of an active segment, otherwise a Problem.
type OffsetReader struct {
	prefixScan
	base int64
	n    int // entries returned
	e    OffsetEntry
}

// NewOffsetReader reads the size bytes of an .index file from r, for a
// segment starting at base. file names it in Problems and errors.
func NewOffsetReader(r io.ReaderAt, size, base int64, file string) *OffsetReader {
	return newOffsetReader(fileScanner(r, size, OffsetEntrySize), size, base, file)
}

func newOffsetReader(s entryScanner, size, base int64, file string) *OffsetReader {
	return &OffsetReader{prefixScan: newPrefixScan(s, size, file), base: base}
}

// Next advances to the next valid entry. It returns false at the end of them,
// after which Problems, Layout and Err tell what followed.
func (r *OffsetReader) Next() bool {
	r.problems = r.problems[:0]
	if r.done {
		return false
	}
	b := r.s.next()
	if b == nil {
		r.finish()
		return false
	}
	rel, pos := offsetFields(b)
	if why := r.check(rel, pos); why != "" {
		r.reject(isZero(b), why)
		return false
	}
	r.e = OffsetEntry{Offset: r.base + int64(rel), Position: pos}
	r.n++
	return true
}

// Entry returns the entry Next advanced to.
func (r *OffsetReader) Entry() OffsetEntry { return r.e }

func (r *OffsetReader) check(rel, pos int32) string {
	switch {
	case rel < 0:
		return fmt.Sprintf("negative relative offset %d", rel)
	case r.base > math.MaxInt64-int64(rel):
		return fmt.Sprintf("relative offset %d overflows base offset %d", rel, r.base)
	case pos == 0:
		return "position 0, which Kafka never indexes"
	case pos < 0:
		return fmt.Sprintf("negative position %d", pos)
	case r.n == 0:
		return ""
	case r.base+int64(rel) <= r.e.Offset:
		return fmt.Sprintf("offset %d is not above the previous entry's %d", r.base+int64(rel), r.e.Offset)
	case pos <= r.e.Position:
		return fmt.Sprintf("position %d is not above the previous entry's %d", pos, r.e.Position)
	}
	return ""
}

// TimeReader streams the valid entries of a .timeindex file, in the manner of
// OffsetReader. The valid prefix ends at a negative relative offset, a
// negative timestamp, a timestamp not above the previous one or an offset
// below the previous one, which Kafka's TimeIndex.maybeAppend never writes.
//
// Timestamp 0 is legal, and Kafka appends (0, base) as a first entry (its
// last entry starts at timestamp -1). Kafka counts every whole entry of a
// file as an entry and trims an index to its entries when the segment rolls
// or closes, so an all-zero first entry is the entry (0, base) unless zeros
// follow it: only a preallocated file, the active segment's, holds two zero
// entries in a row, and there an all-zero first entry is as likely padding,
// which is what it is taken for.
type TimeReader struct {
	prefixScan
	base int64
	n    int // entries returned
	e    TimeEntry
}

// NewTimeReader reads the size bytes of a .timeindex file from r, for a
// segment starting at base. file names it in Problems and errors.
func NewTimeReader(r io.ReaderAt, size, base int64, file string) *TimeReader {
	return newTimeReader(fileScanner(r, size, TimeEntrySize), size, base, file)
}

func newTimeReader(s entryScanner, size, base int64, file string) *TimeReader {
	return &TimeReader{prefixScan: newPrefixScan(s, size, file), base: base}
}

// Next advances to the next valid entry. It returns false at the end of them,
// after which Problems, Layout and Err tell what followed.
func (r *TimeReader) Next() bool {
	r.problems = r.problems[:0]
	if r.done {
		return false
	}
	b := r.s.next()
	if b == nil {
		r.finish()
		return false
	}
	ts, rel := timeFields(b)
	zero := isZero(b) // b is not valid after peek
	if why := r.check(ts, rel); why != "" || zero && r.n == 0 && zeroEntry(r.s.peek()) {
		r.reject(zero, why)
		return false
	}
	r.e = TimeEntry{Timestamp: ts, Offset: r.base + int64(rel)}
	r.n++
	return true
}

// Entry returns the entry Next advanced to.
func (r *TimeReader) Entry() TimeEntry { return r.e }

func (r *TimeReader) check(ts int64, rel int32) string {
	switch {
	case rel < 0:
		return fmt.Sprintf("negative relative offset %d", rel)
	case r.base > math.MaxInt64-int64(rel):
		return fmt.Sprintf("relative offset %d overflows base offset %d", rel, r.base)
	case ts < 0:
		return fmt.Sprintf("negative timestamp %d", ts)
	case r.n == 0:
		return ""
	case ts <= r.e.Timestamp:
		return fmt.Sprintf("timestamp %d is not above the previous entry's %d", ts, r.e.Timestamp)
	case r.base+int64(rel) < r.e.Offset:
		return fmt.Sprintf("offset %d is below the previous entry's %d", r.base+int64(rel), r.e.Offset)
	}
	return ""
}
