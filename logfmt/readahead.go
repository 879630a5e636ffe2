package logfmt

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"sync"
)

// Read-ahead (ReadAheadWindows): a goroutine reads the windows that follow
// the one in use, so that the kernel's copy of the next chunks overlaps the
// caller's work on this one. Windows are the goroutine's buffers themselves;
// only an entry that straddles two of them is moved, and then only its head,
// into room left before the second buffer's data. A seek backwards or past
// the fetched data restarts the fetching. compact's passes, bound by parsing
// and hashing, gain a tenth from it.

const (
	// aheadBuffers are in play: one holds the current window, the others
	// are being filled or wait to be used.
	aheadBuffers = 8
	// aheadRoom is kept in front of each buffer's data for the head of an
	// entry that straddles two buffers; a longer head is joined by copying.
	aheadRoom = 64 << 10
	// aheadChunkSize is the data of a buffer. The kernel copies the page
	// cache into a buffer that fits a core's cache about twice as fast as
	// into one that does not, and the caller then reads it from cache
	// (figures in docs/performance.md).
	aheadChunkSize = 256 << 10
)

type readAhead struct {
	room int // aheadRoom, smaller in tests
	full chan aheadChunk
	free chan []byte
	quit chan struct{}
	done chan struct{}
	next int64 // where the next chunk received from full begins
	err  error // why the data ended early, once a short chunk arrived
}

// aheadChunk is a buffer whose data, buf[room:room+n], was read
// at pos. err is set when the read came up short.
type aheadChunk struct {
	buf []byte
	pos int64
	n   int
	err error
}

// Close stops the read-ahead goroutine, if any, which ends the current
// Batch's validity. The reader stays usable.
func (s *SegmentReader) Close() {
	plain := !s.ahead
	s.stopAhead()
	if plain {
		s.putLarge(s.buf)
	}
	s.putLarge(s.join)
	s.buf, s.bufPos, s.chunk, s.join = nil, 0, nil, nil
}

// fetch is window for a reader reading ahead.
func (s *SegmentReader) fetch(pos int64, n int) ([]byte, error) {
	end := s.bufPos + int64(len(s.buf))
	if s.ra == nil || pos < s.bufPos || pos > end || s.ra.next != end {
		s.stopAhead()
		s.startAhead(pos)
		s.buf, s.bufPos, s.chunk = nil, pos, nil
	}
	room := s.ra.room
	head := s.buf[pos-s.bufPos:]
	c := s.ra.receive()
	if len(head) <= room && len(head)+c.n >= n {
		start := room - len(head)
		copy(c.buf[start:], head)
		s.release(s.chunk)
		s.chunk, s.buf, s.bufPos = c.buf, c.buf[start:room+c.n], pos
		if cap(s.join) > keptLarge {
			s.putLarge(s.join)
			s.join = nil
		}
		return s.buf[:n], nil
	}
	// A long head or a long entry: join it in a buffer of its own. head
	// may lie in s.join already; copy moves it to the front.
	// The chunks are appended whole: room for one past n.
	want := n + aheadChunkSize
	if s.aheadSizes != [2]int{} {
		want = n + s.aheadSizes[1]
	}
	j := s.join[:0]
	if cap(j) < want {
		j = s.getLarge(want)[:0]
	}
	j = append(j, head...)
	if cap(s.join) < want {
		s.putLarge(s.join)
	}
	for {
		if c.buf != nil {
			j = append(j, c.buf[room:room+c.n]...)
			s.release(c.buf)
		}
		if len(j) >= n || c.err != nil {
			break
		}
		c = s.ra.receive()
	}
	s.release(s.chunk)
	s.chunk, s.join = nil, j
	if len(j) < n {
		s.buf, s.bufPos = nil, 0
		return nil, fmt.Errorf("%s: read %d bytes at %d: %w", s.file, n, pos, c.err)
	}
	s.buf, s.bufPos = j, pos
	return j[:n], nil
}

// receive returns the next chunk; past the end of the data it returns one
// without a buffer, carrying the reason.
func (ra *readAhead) receive() aheadChunk {
	c, ok := <-ra.full
	if !ok {
		return aheadChunk{pos: ra.next, err: cmp.Or(ra.err, io.ErrUnexpectedEOF)}
	}
	ra.next = c.pos + int64(c.n)
	ra.err = c.err
	return c
}

func (s *SegmentReader) release(buf []byte) {
	if buf != nil {
		s.ra.free <- buf
	}
}

// startAhead starts fetching at pos.
func (s *SegmentReader) startAhead(pos int64) {
	room, chunk := aheadRoom, int64(aheadChunkSize)
	if s.aheadSizes != [2]int{} {
		room, chunk = s.aheadSizes[0], int64(s.aheadSizes[1])
	}
	ra := &readAhead{
		room: room,
		full: make(chan aheadChunk, aheadBuffers),
		free: make(chan []byte, aheadBuffers),
		quit: make(chan struct{}),
		done: make(chan struct{}),
		next: pos,
	}
	// Buffers are as small as the data to read, so that a short segment
	// costs little memory.
	size := room + int(max(1, min(chunk, s.size-pos)))
	for range aheadBuffers {
		ra.free <- getAheadBuf(size)
	}
	s.ra = ra
	go ra.run(s.r, pos, s.size)
}

// stopAhead stops the goroutine and gives its buffers back.
func (s *SegmentReader) stopAhead() {
	ra := s.ra
	if ra == nil {
		return
	}
	close(ra.quit)
	<-ra.done
	for c := range ra.full {
		putAheadBuf(c.buf)
	}
	for len(ra.free) > 0 {
		putAheadBuf(<-ra.free)
	}
	putAheadBuf(s.chunk)
	s.chunk, s.ra = nil, nil
}

// aheadBufs keeps full-size buffers between readers, so that a partition
// of many segments reuses its buffers rather than allocating them for each
// segment: a heap as large as a compaction's offset map lets garbage grow
// far before the collector runs.
var aheadBufs = sync.Pool{New: func() any { return new([]byte) }}

const aheadBufSize = aheadRoom + aheadChunkSize

func getAheadBuf(size int) []byte {
	if size != aheadBufSize {
		return make([]byte, size)
	}
	p := aheadBufs.Get().(*[]byte)
	if len(*p) != aheadBufSize {
		*p = make([]byte, aheadBufSize)
	}
	return *p
}

func putAheadBuf(b []byte) {
	if len(b) == aheadBufSize {
		aheadBufs.Put(&b)
	}
}

// run fills free buffers in file order from pos until size, a short read
// or quit.
func (ra *readAhead) run(r io.ReaderAt, pos, size int64) {
	defer close(ra.done)
	defer close(ra.full)
	for pos < size {
		var buf []byte
		select {
		case buf = <-ra.free:
		case <-ra.quit:
			return
		}
		n := int(min(int64(len(buf)-ra.room), size-pos))
		got, err := r.ReadAt(buf[ra.room:ra.room+n], pos)
		c := aheadChunk{buf: buf, pos: pos, n: got}
		if got < n {
			if err == nil || errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			c.err = err
		}
		select {
		case ra.full <- c:
		case <-ra.quit:
			ra.free <- buf
			return
		}
		if c.err != nil {
			return
		}
		pos += int64(got)
	}
}
