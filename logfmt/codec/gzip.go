package codec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/klauspost/compress/gzip"
)

// gzipReader pairs a gzip reader with the bytes.Reader it reads from, so a
// pooled pair decodes a slice without allocating. bytes.Reader is an
// io.ByteReader, which keeps gzip from wrapping it in a bufio.Reader.
type gzipReader struct {
	src bytes.Reader
	z   gzip.Reader
}

var gzipReaders sync.Pool // of *gzipReader

// gunzip reads every member of src, as Java's GZIPInputStream does.
func gunzip(dst, src []byte, limit int) ([]byte, error) {
	r, _ := gzipReaders.Get().(*gzipReader)
	if r == nil {
		r = new(gzipReader)
	}
	defer func() {
		r.src.Reset(nil) // do not keep the caller's input alive in the pool
		gzipReaders.Put(r)
	}()
	r.src.Reset(src)
	if err := r.z.Reset(&r.src); err != nil {
		return dst, gzipError(err)
	}
	out, err := readLimited(dst, &r.z, len(src), limit)
	if err != nil && !errors.Is(err, ErrTooLarge) {
		err = gzipError(err)
	}
	return out, err
}

func gzipError(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return errors.New("gzip: truncated stream")
	}
	return fmt.Errorf("gzip: %w", err)
}

// readLimited appends all of r to dst, failing as soon as more than limit
// bytes arrive, so memory stays within about twice the limit. srcLen, the
// compressed size, only sizes the first allocation.
func readLimited(dst []byte, r io.Reader, srcLen, limit int) ([]byte, error) {
	start := len(dst)
	// Most Kafka payloads compress 2-5x; starting there saves most regrowth.
	out := slices.Grow(dst, min(4*srcLen+512, limit+1))
	for {
		if len(out) == cap(out) {
			out = append(out, 0)[:len(out)]
		}
		room := min(cap(out)-len(out), start+limit+1-len(out))
		n, err := r.Read(out[len(out) : len(out)+room])
		out = out[:len(out)+n]
		if len(out)-start > limit {
			return dst, tooLarge(limit)
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return dst, err
		}
	}
}

// gzipWriter pairs a gzip writer with the slice it appends to.
type gzipWriter struct {
	out appender
	z   *gzip.Writer
}

var gzipWriters = sync.Pool{New: func() any {
	w := new(gzipWriter)
	// DefaultCompression is level 6, the Deflater default Kafka uses unless
	// compression.gzip.level is set.
	w.z, _ = gzip.NewWriterLevel(&w.out, gzip.DefaultCompression)
	return w
}}

// gzipAppend writes src as one gzip member, as GZIPOutputStream does.
func gzipAppend(dst, src []byte) ([]byte, error) {
	w := gzipWriters.Get().(*gzipWriter)
	defer gzipWriters.Put(w)
	w.out = dst
	w.z.Reset(&w.out)
	_, err := w.z.Write(src)
	if cerr := w.z.Close(); err == nil {
		err = cerr
	}
	out := []byte(w.out)
	w.out = nil // do not keep the caller's buffer alive in the pool
	if err != nil {
		return dst, fmt.Errorf("gzip: %w", err)
	}
	return out, nil
}

// appender is an io.Writer that appends to itself.
type appender []byte

func (a *appender) Write(p []byte) (int, error) {
	*a = append(*a, p...)
	return len(p), nil
}
