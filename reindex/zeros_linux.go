package reindex

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// dataAfter returns the next range [start, end) at or after pos, before
// limit, that may hold data: Linux's SEEK_DATA and SEEK_HOLE skip the
// holes of a sparse file (a file system without them reports all of it as
// data). start == end == limit means only holes remain.
func dataAfter(f *os.File, pos, limit int64) (start, end int64, err error) {
	fd := int(f.Fd())
	start, err = unix.Seek(fd, pos, unix.SEEK_DATA)
	if errors.Is(err, unix.ENXIO) {
		return limit, limit, nil
	}
	if err != nil {
		return pos, limit, nil // no hole support: read it all
	}
	if start >= limit {
		return limit, limit, nil
	}
	end, err = unix.Seek(fd, start, unix.SEEK_HOLE)
	if err != nil {
		return start, limit, nil
	}
	return start, min(end, limit), nil
}
