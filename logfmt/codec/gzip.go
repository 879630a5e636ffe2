package codec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
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

func (g *gzipReader) release() {
	g.src.Reset(nil) // do not keep the caller's input alive in the pool
	gzipReaders.Put(g)
}

// gunzipStart reads the header of the first member.
func (r *Reader) gunzipStart() error {
	r.gz, _ = gzipReaders.Get().(*gzipReader)
	if r.gz == nil {
		r.gz = new(gzipReader)
	}
	r.gz.src.Reset(r.src)
	if err := r.gz.z.Reset(&r.gz.src); err != nil {
		return gzipError(err)
	}
	return nil
}

// gunzip reads on through every member of the payload, as Java's
// GZIPInputStream does.
func (r *Reader) gunzip(p []byte) (int, error) {
	n, err := r.gz.z.Read(p)
	if err != nil && err != io.EOF {
		err = gzipError(err)
	}
	return n, err
}

func gzipError(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return errors.New("gzip: truncated stream")
	}
	return fmt.Errorf("gzip: %w", err)
}

// gzipWriters holds gzip writers. DefaultCompression is level 6, the
// Deflater default Kafka uses unless compression.gzip.level is set.
var gzipWriters = sync.Pool{New: func() any {
	z, _ := gzip.NewWriterLevel(nil, gzip.DefaultCompression)
	return z
}}
