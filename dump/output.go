package dump

import (
	"io"
	"sync/atomic"
)

// Output of parallel jobs is kept in job order: each job appends to chunks
// that travel through its own bounded channel, and the writer drains the
// channels in order. A job running ahead of the one being written blocks once
// its channel is full, so memory is bounded by workers × queue × chunk size,
// whatever the size of the files.
const (
	chunkSize  = 64 << 10
	chunkQueue = 4
)

type chunk struct {
	stderr  bool
	b       *[]byte
	release func() // gives b back, when it is not the sink's
}

// chunks recycles chunk buffers between the jobs and the writer of one
// run. A full list drops buffers for the collector; an empty one allocates.
type chunks chan *[]byte

func newChunks(workers int) chunks { return make(chunks, workers*(chunkQueue+2)) }

func (c chunks) get() *[]byte {
	select {
	case b := <-c:
		return b
	default:
		b := make([]byte, 0, chunkSize+4<<10)
		return &b
	}
}

func (c chunks) put(b *[]byte) {
	*b = (*b)[:0]
	select {
	case c <- b:
	default:
	}
}

// sink is one job's output. Text is appended to out directly (no per-line
// copies) and handed to the writer when a chunk fills.
type sink struct {
	ch   chan chunk
	out  *[]byte
	free chunks
	stop *atomic.Bool // set when the writer failed; jobs then stop early
}

func newSink(free chunks, stop *atomic.Bool) *sink {
	return &sink{ch: make(chan chunk, chunkQueue), free: free, stop: stop}
}

// buf is the current stdout chunk; callers append to it and call set. A
// sink takes a buffer only when its job starts writing, so jobs waiting for a
// worker hold no memory.
func (s *sink) buf() []byte {
	if s.out == nil {
		s.out = s.free.get()
	}
	return *s.out
}

// set stores the grown chunk and sends it on once it is full.
func (s *sink) set(b []byte) {
	*s.out = b
	if len(b) >= chunkSize {
		s.flush()
	}
}

func (s *sink) flush() {
	if s.out == nil || len(*s.out) == 0 {
		return
	}
	s.ch <- chunk{b: s.out}
	s.out = nil
}

// text sends b, which stays b's owner's, after everything written so far;
// release is called once it is written.
func (s *sink) text(b []byte, release func()) {
	s.flush()
	s.ch <- chunk{b: &b, release: release}
}

// stderr sends b (copied) to stderr after everything written so far.
func (s *sink) stderr(b []byte) {
	s.flush()
	c := s.free.get()
	*c = append(*c, b...)
	s.ch <- chunk{stderr: true, b: c}
}

func (s *sink) close() {
	s.flush()
	if s.out != nil {
		s.free.put(s.out)
	}
	close(s.ch)
}

// drain writes one job's chunks; after a write error it keeps reading, so
// the job can finish, but writes nothing more.
func drain(s *sink, stdout, stderr io.Writer, werr *error) {
	for c := range s.ch {
		if *werr == nil {
			w := stdout
			if c.stderr {
				w = stderr
			}
			if _, err := w.Write(*c.b); err != nil {
				*werr = err
				s.stop.Store(true)
			}
		}
		if c.release != nil {
			c.release()
		} else {
			s.free.put(c.b)
		}
	}
}
