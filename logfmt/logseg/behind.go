package logseg

import (
	"sync"

	"github.com/logtool/logtool/internal/safefile"
)

// behindWriter buffers what is written and writes it to the file on a
// goroutine of its own, so that the copy into the kernel and the start of
// the disk's writeback overlap with the checking of the next batches
// instead of adding to it. The bytes, their order and the file's Commit
// (one fsync, then the rename) are those of a plain buffered writer.
type behindWriter struct {
	f    *safefile.File
	buf  []byte
	free chan []byte
	full chan []byte
	done chan struct{}

	mu  sync.Mutex
	err error // the first write error; nothing is written after it
}

// behindBuffers is the number of buffers of behindBytes: one being filled,
// one being written, one spare so that neither side waits on the other.
const (
	behindBuffers = 3
	behindBytes   = 1 << 20
)

// writebackBytes is how much is written before the disk is asked to write
// it: the final fsync then waits for about the last of it rather than for
// the whole segment. Ranges of a few MiB cost more CPU in the kernel (1 MiB:
// a third more for the whole salvage) than they save.
const writebackBytes = 32 << 20

func newBehindWriter(f *safefile.File) *behindWriter {
	w := &behindWriter{f: f, free: make(chan []byte, behindBuffers), full: make(chan []byte, behindBuffers), done: make(chan struct{})}
	// The buffers grow as they fill: a small segment's writer costs little.
	for range behindBuffers - 1 {
		w.free <- nil
	}
	go w.run(w.full)
	return w
}

func (w *behindWriter) run(full <-chan []byte) {
	defer close(w.done)
	var off, started int64
	for b := range full {
		if w.failed() == nil {
			if _, err := w.f.Write(b); err != nil {
				w.mu.Lock()
				w.err = err
				w.mu.Unlock()
			} else if off += int64(len(b)); off-started >= writebackBytes {
				w.f.StartWriteback(started, off-started)
				started = off
			}
		}
		w.free <- b[:0]
	}
}

func (w *behindWriter) failed() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Write copies p, which the caller may reuse at once.
func (w *behindWriter) Write(p []byte) error {
	for len(p) > 0 {
		if len(w.buf) == behindBytes {
			if err := w.failed(); err != nil {
				return err
			}
			w.full <- w.buf
			w.buf = <-w.free
		}
		n := min(len(p), behindBytes-len(w.buf))
		w.buf = append(w.buf, p[:n]...)
		p = p[n:]
	}
	return nil
}

// Close writes what is buffered and waits for every write: after it the
// file may be committed or aborted.
func (w *behindWriter) Close() error {
	if w.full == nil {
		return w.failed()
	}
	if len(w.buf) > 0 {
		w.full <- w.buf
	}
	close(w.full)
	w.full = nil
	<-w.done
	return w.failed()
}
