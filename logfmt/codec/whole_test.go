package codec

import (
	"fmt"
	"io"
	"slices"
	"sync"
)

// The whole-payload forms of the Writer and Reader, for this package's
// tests; other packages' tests have internal/testkit/codectest.

var compressWriters = sync.Pool{New: func() any { return new(Writer) }}

// Compress appends the compression of src with codec t to dst, as a Writer
// given src in one piece would, and returns the result.
func Compress(dst []byte, t Type, src []byte, magic int8) ([]byte, error) {
	w := compressWriters.Get().(*Writer)
	defer compressWriters.Put(w)
	if err := w.Reset(dst, t, magic); err != nil {
		return dst, err
	}
	w.Write(src)
	return w.Close()
}

// Decompress appends the whole decompression of src to dst and returns the
// result. It is a Reader read to the end: for payloads known to be small,
// and for tests. At most limit bytes are appended (DefaultLimit if limit <=
// 0), which also bounds each piece; beyond that it fails with an error
// wrapping ErrTooLarge. On error dst is returned with its original length,
// but its spare capacity may have been written to.
func Decompress(dst []byte, t Type, src []byte, magic int8, limit int) ([]byte, error) {
	if limit <= 0 {
		limit = DefaultLimit
	}
	var r Reader
	defer r.release()
	if err := r.Reset(t, src, magic, limit); err != nil {
		return dst, err
	}
	start := len(dst)
	// Most Kafka payloads compress 2-5x; starting there saves most regrowth.
	out := slices.Grow(dst, min(4*len(src)+512, limit+1))
	for {
		if len(out) == cap(out) {
			out = append(out, 0)[:len(out)]
		}
		room := min(cap(out)-len(out), start+limit+1-len(out))
		n, err := r.Read(out[len(out) : len(out)+room])
		out = out[:len(out)+n]
		if len(out)-start > limit {
			return dst, fmt.Errorf("decompressed output is %w of %d bytes", ErrTooLarge, limit)
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return dst, err
		}
	}
}
