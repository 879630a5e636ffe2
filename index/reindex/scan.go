package reindex

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"

	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/logfmt"
)

const (
	// chunkSize is the unit of reading. Large chunks keep the hand-over
	// between the reading goroutine and the checksumming one rare; three of
	// them in flight bound a scan's memory at 12 MiB plus one straddling
	// entry.
	chunkSize  = 4 << 20
	chunksLive = 3

	// minEntrySize is LegacyRecord.RECORD_OVERHEAD_V0, the smallest size
	// field FileLogInputStream accepts.
	minEntrySize = 14
)

// chunk is one piece of the file, read at pos.
type chunk struct {
	b   []byte
	pos int64
	err error
}

// scanner frames the shallow entries of a segment file with exactly the
// rules of logfmt.SegmentReader (a test holds them together), but reads the
// file in large chunks on a goroutine of its own and hands out entries that
// point into those chunks. The kernel's copy of chunk n+1 then overlaps the
// checksum of chunk n and nothing is copied a second time, which is what
// keeps a rebuild close to the speed of reading the file.
//
// Entries must be consumed in order; a Batch is valid until the next call to
// next. close must be called to stop the reading goroutine.
type scanner struct {
	file string
	size int64
	pos  int64 // position of the next entry

	full chan chunk
	free chan []byte
	quit chan struct{}
	done chan struct{}

	chunkLen int    // bytes read at a time
	cur      chunk  // the chunk holding pos, or the last one received
	carry    []byte // bytes that span chunks, copied together
	carryPos int64  // file position of carry[0]

	batch  logfmt.Batch
	end    logfmt.End
	endMsg string
	err    error
}

// newScanner starts reading the size bytes of r, chunkLen bytes at a time.
func newScanner(r io.ReaderAt, size int64, file string, chunkLen int) *scanner {
	s := &scanner{
		file: file, size: size, chunkLen: chunkLen,
		full: make(chan chunk, chunksLive-1),
		free: make(chan []byte, chunksLive),
		quit: make(chan struct{}),
		done: make(chan struct{}),
	}
	go s.read(r)
	return s
}

// openScanner opens a segment file for scanning from its first byte.
func openScanner(path string) (*scanner, *os.File, error) {
	f, err := safefile.Open(path)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return newScanner(f, st.Size(), path, chunkSize), f, nil
}

// read runs on its own goroutine, filling chunks in file order. Buffers are
// allocated lazily so that small segments cost small memory.
func (s *scanner) read(r io.ReaderAt) {
	defer close(s.done)
	defer close(s.full)
	allocated := 0
	for pos := int64(0); pos < s.size; {
		var b []byte
		select {
		case b = <-s.free:
		case <-s.quit:
			return
		default:
			if allocated < chunksLive {
				allocated++
				b = getChunk(s.chunkLen, s.size)
				break
			}
			select {
			case b = <-s.free:
			case <-s.quit:
				return
			}
		}
		n := int(min(int64(cap(b)), s.size-pos))
		got, err := r.ReadAt(b[:n], pos)
		c := chunk{b: b[:got], pos: pos}
		if got < n {
			if err == nil || errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			c.err = err
		}
		select {
		case s.full <- c:
		case <-s.quit:
			return
		}
		if c.err != nil {
			return
		}
		pos += int64(got)
	}
}

// close stops the reading goroutine, waits for it and hands the buffers
// back for the next scan.
func (s *scanner) close() {
	close(s.quit)
	<-s.done
	putChunk(s.cur.b)
	s.cur.b = nil
	for c := range s.full {
		putChunk(c.b)
	}
	for {
		select {
		case b := <-s.free:
			putChunk(b)
		default:
			return
		}
	}
}

// chunks keeps full-size read buffers between scans, so that a partition
// of many segments does not allocate 12 MiB per segment.
var chunks = sync.Pool{New: func() any { return new([]byte) }}

// getChunk returns a buffer of chunkLen bytes, or of the file's size when
// that is smaller. Only full-size buffers are pooled.
func getChunk(chunkLen int, size int64) []byte {
	if n := min(int64(chunkLen), size); n < chunkSize {
		return make([]byte, max(n, 1))
	}
	p := chunks.Get().(*[]byte)
	if cap(*p) < chunkSize {
		*p = make([]byte, chunkSize)
	}
	return (*p)[:chunkSize]
}

func putChunk(b []byte) {
	if cap(b) == chunkSize {
		b = b[:chunkSize]
		chunks.Put(&b)
	}
}

// advance moves to the next chunk, handing the current one back.
func (s *scanner) advance() error {
	next := s.cur.pos + int64(len(s.cur.b))
	if s.cur.b != nil {
		s.free <- s.cur.b[:cap(s.cur.b)]
		s.cur.b = nil
	}
	c, ok := <-s.full
	if !ok || c.err != nil {
		err := io.ErrUnexpectedEOF
		if ok {
			err = c.err
		}
		return fmt.Errorf("%s: read at %d: %w", s.file, next, err)
	}
	s.cur = c
	return nil
}

// window returns the n bytes at pos, which lie inside the file and at or
// after every position asked for before. n is checked by the caller. Bytes
// that span chunks are copied together into carry; an entry whose header
// spanned chunks starts before the current chunk, in carry already.
func (s *scanner) window(pos int64, n int) ([]byte, error) {
	if pos >= s.cur.pos {
		for pos >= s.cur.pos+int64(len(s.cur.b)) {
			if err := s.advance(); err != nil {
				return nil, err
			}
		}
		off := int(pos - s.cur.pos)
		if off+n <= len(s.cur.b) {
			return s.cur.b[off : off+n], nil
		}
		s.carry, s.carryPos = append(s.carry[:0], s.cur.b[off:]...), pos
	} else {
		k := copy(s.carry, s.carry[pos-s.carryPos:])
		s.carry, s.carryPos = s.carry[:k], pos
	}
	// An entry larger than a chunk is gathered in one allocation of its
	// size, rather than grown a chunk at a time.
	s.carry = slices.Grow(s.carry, n-len(s.carry))
	for len(s.carry) < n {
		end := s.carryPos + int64(len(s.carry))
		if end >= s.cur.pos+int64(len(s.cur.b)) {
			if err := s.advance(); err != nil {
				return nil, err
			}
			continue
		}
		off := int(end - s.cur.pos)
		s.carry = append(s.carry, s.cur.b[off:off+min(n-len(s.carry), len(s.cur.b)-off)]...)
	}
	return s.carry[:n], nil
}

// next frames the entry at pos. It returns false at the end of the data or
// on an error, which End and Err then tell apart.
func (s *scanner) next() bool {
	if s.err != nil || s.end != logfmt.EndNone {
		return false
	}
	b, err := s.frame()
	if err != nil {
		s.err = err
		return false
	}
	if b == nil {
		return false
	}
	s.batch = logfmt.Batch{Pos: s.pos, Data: b}
	s.pos += int64(len(b))
	return true
}

func (s *scanner) frame() ([]byte, error) {
	pos, rest := s.pos, s.size-s.pos
	if rest <= 0 {
		s.end = logfmt.EndClean
		return nil, nil
	}
	if rest < logfmt.HeaderSizeUpToMagic {
		return nil, s.tail(fmt.Sprintf("%d bytes at the end are too few for an entry header", rest))
	}
	h, err := s.window(pos, logfmt.HeaderSizeUpToMagic)
	if err != nil {
		return nil, err
	}
	size := int32(binary.BigEndian.Uint32(h[8:]))
	magic := int8(h[logfmt.MagicOffset])
	if size < minEntrySize {
		if size == 0 {
			zero, err := s.allZero()
			if err != nil {
				return nil, err
			}
			if zero {
				s.end, s.endMsg = logfmt.EndZeroTail, fmt.Sprintf("%d zero bytes from byte %d to the end", rest, pos)
				return nil, nil
			}
		}
		return nil, logfmt.Corruptf(s.file, pos, "entry size %d is below the minimum %d", size, minEntrySize)
	}
	if magic < 0 || magic > 2 {
		return nil, logfmt.Corruptf(s.file, pos+logfmt.MagicOffset, "unknown magic %d", magic)
	}
	total := int64(size) + logfmt.LogOverhead
	if total > rest {
		s.end, s.endMsg = logfmt.EndTorn, fmt.Sprintf("entry at byte %d declares %d bytes but only %d remain", pos, total, rest)
		return nil, nil
	}
	if magic == 2 && total < logfmt.V2HeaderSize {
		return nil, logfmt.Corruptf(s.file, pos+8, "record batch size %d is below the %d-byte header", total, logfmt.V2HeaderSize)
	}
	if total > logfmt.DefaultMaxBatchSize {
		return nil, logfmt.Corruptf(s.file, pos+8, "entry size %d exceeds the %d-byte limit", total, logfmt.DefaultMaxBatchSize)
	}
	return s.window(pos, int(total))
}

// tail classifies a remainder too short for a header as zeros or a torn
// write.
func (s *scanner) tail(torn string) error {
	zero, err := s.allZero()
	if err != nil {
		return err
	}
	if zero {
		s.end, s.endMsg = logfmt.EndZeroTail, fmt.Sprintf("%d zero bytes from byte %d to the end", s.size-s.pos, s.pos)
	} else {
		s.end, s.endMsg = logfmt.EndTorn, torn
	}
	return nil
}

// allZero reports whether every byte from pos to the end is zero. It
// consumes the rest of the file, so it is only called once the scan ends.
func (s *scanner) allZero() (bool, error) {
	p := s.pos
	if p < s.cur.pos {
		// A header that spanned chunks left the start in carry.
		for _, c := range s.carry[p-s.carryPos : s.cur.pos-s.carryPos] {
			if c != 0 {
				return false, nil
			}
		}
		p = s.cur.pos
	}
	for p < s.size {
		n := int(min(s.cur.pos+int64(len(s.cur.b))-p, s.size-p))
		if n <= 0 {
			if err := s.advance(); err != nil {
				return false, err
			}
			continue
		}
		b := s.cur.b[p-s.cur.pos:][:n]
		for _, c := range b {
			if c != 0 {
				return false, nil
			}
		}
		p += int64(n)
	}
	return true, nil
}
