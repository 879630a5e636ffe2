//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package logfmt

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"syscall"
)

// mapWindow maps the window holding [pos, pos+n) and unmaps the one before.
// A failed mapping turns mapping off, and the window is read instead.
func (s *SegmentReader) mapWindow(pos int64, n int) ([]byte, error) {
	s.unmap()
	page := int64(os.Getpagesize())
	off := pos &^ (page - 1)
	length := min(max(cmp.Or(s.mapLen, mapWindowSize), pos+int64(n)-off), s.size-off)
	m, err := syscall.Mmap(int(s.mapFile.Fd()), off, int(length), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		s.mapFile = nil
		return s.window(pos, n)
	}
	s.mapping, s.buf, s.bufPos = m, m, off
	return m[pos-off : pos-off+int64(n)], nil
}

func (s *SegmentReader) unmap() {
	if s.mapping != nil {
		_ = syscall.Munmap(s.mapping)
		s.mapping, s.buf, s.bufPos = nil, nil, 0
	}
}

// mappable is the file MappedWindows maps: r when it is one.
func mappable(r io.ReaderAt) *os.File {
	f, _ := r.(*os.File)
	return f
}

// shrunk reports a mapped file now shorter than the data being read.
func (s *SegmentReader) shrunk() error {
	fi, err := s.mapFile.Stat()
	if err != nil {
		return fmt.Errorf("%s: %w", s.file, err)
	}
	if fi.Size() < s.size {
		return fmt.Errorf("%s: the file shrank from %d to %d bytes while it was read", s.file, s.size, fi.Size())
	}
	return nil
}
