// Package extsort sorts more byte records than memory should hold, as the
// lines of a hostile root checkpoint may be: it sorts runs of records in
// memory, writes each run to a temporary file, and merges the runs. Records
// are ordered by bytes.Compare; a caller makes its sort key a prefix that
// compares that way.
//
// The temporary files are removed as soon as they are created (where the
// system allows an open file to be removed), so a crash leaves nothing
// behind.
package extsort

import (
	"bufio"
	"bytes"
	"cmp"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
)

// maxMerge bounds the runs merged at once, and so the files open and the
// read buffers held.
const maxMerge = 64

const readBuffer = 64 << 10

// Sorter gathers records. Add them all, then Sort; a Sorter is used once.
type Sorter struct {
	memory int
	arena  []byte   // the records of the current run, end to end
	ends   []uint32 // where each record of the run ends in arena
	order  []uint32 // the run's records in order, while it is written
	runs   []run
	err    error
}

// run is a sorted run written out, and how many bytes of records it holds.
type run struct {
	f    *os.File
	size int
}

// New returns a Sorter that holds about memory bytes of records before it
// writes a run out.
func New(memory int) *Sorter {
	return &Sorter{memory: memory}
}

// Add adds a copy of rec.
func (s *Sorter) Add(rec []byte) error {
	if s.err != nil {
		return s.err
	}
	if len(s.arena)+len(rec) > s.memory && len(s.ends) > 0 {
		if s.err = s.spill(); s.err != nil {
			return s.err
		}
	}
	s.arena = append(s.arena, rec...)
	s.ends = append(s.ends, uint32(len(s.arena)))
	return nil
}

// run returns the records of the current run in order: their numbers,
// 4 bytes each rather than a slice header's 24.
func (s *Sorter) run() []uint32 {
	s.order = s.order[:0]
	for i := range s.ends {
		s.order = append(s.order, uint32(i))
	}
	slices.SortFunc(s.order, func(a, b uint32) int { return bytes.Compare(s.record(a), s.record(b)) })
	return s.order
}

// record returns record i of the current run.
func (s *Sorter) record(i uint32) []byte {
	start := uint32(0)
	if i > 0 {
		start = s.ends[i-1]
	}
	return s.arena[start:s.ends[i]:s.ends[i]]
}

// spill writes the current run to a file of its own.
func (s *Sorter) spill() error {
	f, err := tempFile()
	if err != nil {
		return err
	}
	s.runs = append(s.runs, run{f, len(s.arena)})
	w := bufio.NewWriterSize(f, readBuffer)
	for _, i := range s.run() {
		if err := writeRecord(w, s.record(i)); err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("extsort: %w", err)
	}
	s.arena, s.ends = s.arena[:0], s.ends[:0]
	return s.mergeDown()
}

// mergeDown merges the smallest runs into one while there are too many to
// merge at once, so that a record is merged again only when runs of its
// run's size have piled up.
func (s *Sorter) mergeDown() error {
	for len(s.runs) > maxMerge {
		slices.SortFunc(s.runs, func(a, b run) int { return cmp.Compare(a.size, b.size) })
		it, err := s.merge(s.runs[:maxMerge], nil)
		if err != nil {
			return err
		}
		var merged run
		for _, r := range s.runs[:maxMerge] {
			merged.size += r.size
		}
		if merged.f, err = tempFile(); err != nil {
			it.Close()
			return err
		}
		w := bufio.NewWriterSize(merged.f, readBuffer)
		for it.Next() {
			if err := writeRecord(w, it.Record()); err != nil {
				it.Close()
				closeRemove(merged.f)
				return err
			}
		}
		err = it.Close()
		if err == nil {
			err = w.Flush()
		}
		if err != nil {
			closeRemove(merged.f)
			return fmt.Errorf("extsort: %w", err)
		}
		s.runs = append(s.runs[maxMerge:], merged)
	}
	return nil
}

func tempFile() (*os.File, error) {
	f, err := os.CreateTemp("", "logtool-sort-")
	if err != nil {
		return nil, fmt.Errorf("extsort: %w", err)
	}
	os.Remove(f.Name()) // where allowed; Close removes it otherwise
	return f, nil
}

func writeRecord(w *bufio.Writer, r []byte) error {
	if _, err := w.Write(binary.AppendUvarint(w.AvailableBuffer(), uint64(len(r)))); err != nil {
		return fmt.Errorf("extsort: %w", err)
	}
	if _, err := w.Write(r); err != nil {
		return fmt.Errorf("extsort: %w", err)
	}
	return nil
}

// Close drops the records of a Sorter that will not be sorted; it does
// nothing to one that was, or to nil.
func (s *Sorter) Close() {
	if s != nil {
		s.close()
	}
}

// Sort returns the records in order. The Sorter must not be used after.
func (s *Sorter) Sort() (*Iter, error) {
	if s.err != nil {
		s.close()
		return nil, s.err
	}
	it, err := s.merge(s.runs, s)
	s.runs = nil // the Iter has them
	if err != nil {
		return nil, err
	}
	return it, nil
}

func (s *Sorter) close() {
	for _, r := range s.runs {
		closeRemove(r.f)
	}
	s.runs = nil
}

func closeRemove(f *os.File) error {
	err := f.Close()
	os.Remove(f.Name())
	return err
}

// merge merges runs, whose files it takes over, and the current run of
// mem, if not nil.
func (s *Sorter) merge(runs []run, mem *Sorter) (*Iter, error) {
	it := &Iter{}
	for _, r := range runs {
		f := r.f
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			it.Close()
			return nil, fmt.Errorf("extsort: %w", err)
		}
		it.files = append(it.files, f)
		c := &cursor{r: bufio.NewReaderSize(f, readBuffer)}
		if c.next() {
			it.h = append(it.h, c)
		} else if c.err != nil {
			it.Close()
			return nil, c.err
		}
	}
	if mem != nil {
		if c := (&cursor{mem: mem, order: mem.run()}); c.next() {
			it.h = append(it.h, c)
		}
	}
	heap.Init(&it.h)
	return it, nil
}

// Iter yields the sorted records.
type Iter struct {
	h     cursors
	files []*os.File
	rec   []byte
	began bool
	err   error
}

// Next moves to the next record.
func (it *Iter) Next() bool {
	if it.err != nil {
		return false
	}
	if it.began && len(it.h) > 0 {
		c := it.h[0]
		if c.next() {
			heap.Fix(&it.h, 0)
		} else {
			if c.err != nil {
				it.err = c.err
				return false
			}
			heap.Pop(&it.h)
		}
	}
	it.began = true
	if len(it.h) == 0 {
		return false
	}
	it.rec = it.h[0].rec
	return true
}

// Record is the current record, valid until the next call to Next.
func (it *Iter) Record() []byte { return it.rec }

// Err is the error that ended Next early.
func (it *Iter) Err() error { return it.err }

// Close removes the temporary files and returns Err or an error closing
// them.
func (it *Iter) Close() error {
	var errs []error
	for _, f := range it.files {
		errs = append(errs, closeRemove(f))
	}
	it.files, it.h = nil, nil
	return errors.Join(append(errs, it.err)...)
}

// cursor walks one run: a file's records, or the Sorter's current run.
type cursor struct {
	r     *bufio.Reader
	mem   *Sorter
	order []uint32
	rec   []byte
	buf   []byte
	err   error
}

func (c *cursor) next() bool {
	if c.r == nil {
		if len(c.order) == 0 {
			return false
		}
		c.rec, c.order = c.mem.record(c.order[0]), c.order[1:]
		return true
	}
	n, err := binary.ReadUvarint(c.r)
	if err == io.EOF {
		return false
	}
	if err == nil && n > uint64(1<<31) {
		err = errors.New("record too long")
	}
	if err == nil {
		c.buf = slices.Grow(c.buf[:0], int(n))[:n]
		_, err = io.ReadFull(c.r, c.buf)
	}
	if err != nil {
		c.err = fmt.Errorf("extsort: reading a run back: %w", err)
		return false
	}
	c.rec = c.buf
	return true
}

// cursors is a heap of cursors by their current record.
type cursors []*cursor

func (h cursors) Len() int           { return len(h) }
func (h cursors) Less(i, j int) bool { return bytes.Compare(h[i].rec, h[j].rec) < 0 }
func (h cursors) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *cursors) Push(x any)        { *h = append(*h, x.(*cursor)) }
func (h *cursors) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}
