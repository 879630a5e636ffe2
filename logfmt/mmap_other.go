//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package logfmt

import (
	"io"
	"os"
)

func (s *SegmentReader) mapWindow(pos int64, n int) ([]byte, error) { return nil, nil }

func (s *SegmentReader) unmap() {}

// mappable is nil: this system maps nothing, and windows are read.
func mappable(io.ReaderAt) *os.File { return nil }

func (s *SegmentReader) shrunk() error { return nil }
