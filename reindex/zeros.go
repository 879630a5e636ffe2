package reindex

import (
	"bytes"
	"io"

	"github.com/logtool/logtool/internal/safefile"
)

// zeroTail reports whether bytes [from, to) of the file at path are all
// zeros. Holes of a sparse file are skipped without being read (dataAfter),
// so a tail of gigabytes that was never written costs a few seeks.
func zeroTail(path string, from, to int64) (bool, error) {
	f, err := safefile.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for pos := from; pos < to; {
		start, end, err := dataAfter(f, pos, to)
		if err != nil {
			return false, err
		}
		for start < end {
			n := int(min(int64(len(buf)), end-start))
			if _, err := f.ReadAt(buf[:n], start); err != nil && err != io.EOF {
				return false, err
			}
			if !allZero(buf[:n]) {
				return false, nil
			}
			start += int64(n)
		}
		pos = end
	}
	return true, nil
}

var zeros = make([]byte, 64<<10)

func allZero(b []byte) bool { return bytes.Equal(b, zeros[:len(b)]) }
