//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package logfmt

func (s *SegmentReader) mapWindow(pos int64, n int) ([]byte, error) { return nil, nil }

func (s *SegmentReader) unmap() {}

// MapWindows maps nothing on this system; windows are read.
func (s *SegmentReader) MapWindows() bool { return false }

func (s *SegmentReader) shrunk() error { return nil }
