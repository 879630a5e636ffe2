package codec

import (
	"fmt"
	"io"
	"slices"
	"sync"
)

// Reader decompresses one payload held in memory, a piece at a time, as
// Kafka's decompressing input streams do. What it holds is the codec's
// state and at most one decoded piece: a gzip window (32 KiB), an lz4 block
// (Kafka writes 64 KiB, the format allows 4 MiB), a snappy chunk (32 KiB
// from Java clients) or a zstd window (up to 8 MiB below level 20). Two
// pieces can be larger: a raw snappy block, which other clients write for a
// whole payload, and a zstd frame's window, which is its content size when
// the frame is written in one segment. Either is refused, with an error
// wrapping ErrTooLarge that names its declared size, when it is over the
// limit given to Reset, before anything is allocated for it.
//
// Errors describe what is wrong with the payload, with offsets relative to
// it; the caller knows where it lies in its file. Read returns the bytes
// decoded before a fault first, and the error on the next call.
//
// Keep a Reader per goroutine and Reset it for each payload: its buffers
// are reused, and its gzip and zstd decoders come from pools shared by all
// Readers and go back once a payload has been read to its end.
type Reader struct {
	t     Type
	src   []byte
	magic int8
	limit int
	err   error // io.EOF after the last byte, else what stopped decoding
	pos   int   // none, lz4, snappy: the next byte of src to read
	out   []byte
	buf   []byte // holds out when a piece did not fit the caller's slice

	lz4    lz4State
	xerial bool
	gz     *gzipReader
	zs     *zstdReader
	// wholes is the pool of whole-frame zstd decoders for wholeCap,
	// looked up once rather than for every frame.
	wholes   *sync.Pool
	wholeCap int
}

// Reset starts reading src, a payload of codec t from a message or batch of
// the given magic (only lz4 cares: see unlz4Header). limit bounds a piece
// decoded whole; 0 or less means DefaultLimit. An error in the payload's
// header is returned here and by Read.
func (r *Reader) Reset(t Type, src []byte, magic int8, limit int) error {
	if limit <= 0 {
		limit = DefaultLimit
	}
	r.release()
	*r = Reader{t: t, src: src, magic: magic, limit: limit, buf: r.buf, gz: r.gz, zs: r.zs, wholes: r.wholes, wholeCap: r.wholeCap}
	switch t {
	case None:
	case Gzip:
		r.err = r.gunzipStart()
	case Snappy:
		r.err = r.unsnappyStart()
	case LZ4:
		r.err = r.unlz4Start()
	case Zstd:
		r.err = r.unzstdStart()
	default:
		r.err = fmt.Errorf("unknown compression codec %d", int8(t))
	}
	return r.err
}

// Read reads up to len(p) decompressed bytes into p. It fills p unless the
// payload ends or fails first, and returns io.EOF after the last byte of a
// payload that is whole.
func (r *Reader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(r.out) > 0 {
			k := copy(p[n:], r.out)
			r.out = r.out[k:]
			n += k
			continue
		}
		if r.err != nil {
			break
		}
		var k int
		switch r.t {
		case None:
			r.out, r.pos, r.err = r.src[r.pos:], len(r.src), io.EOF
		case Gzip:
			k, r.err = r.gunzip(p[n:])
		case Snappy:
			k, r.err = r.unsnappy(p[n:])
		case LZ4:
			k, r.err = r.unlz4(p[n:])
		case Zstd:
			k, r.err = r.unzstd(p[n:])
		}
		n += k
	}
	if r.err != nil && len(r.out) == 0 {
		r.release()
	}
	if n > 0 || len(p) == 0 {
		return n, nil
	}
	return 0, r.err
}

// release gives the pooled decoders back and lets go of the payload.
func (r *Reader) release() {
	if r.gz != nil {
		r.gz.release()
		r.gz = nil
	}
	if r.zs != nil {
		r.zs.release()
		r.zs = nil
	}
	r.src = nil
}

// piece returns where to decode a piece of n bytes: into p when it fits
// (direct), else into the Reader's own buffer, which Read then hands out
// through out.
func (r *Reader) piece(p []byte, n int) (dst []byte, direct bool) {
	if n <= len(p) {
		return p[:n], true
	}
	r.buf = slices.Grow(r.buf[:0], n)[:n]
	return r.buf, false
}

// took finishes a piece decoded into dst, as piece placed it, and returns
// how many bytes of the caller's slice it filled.
func (r *Reader) took(dst []byte, direct bool) int {
	if direct {
		return len(dst)
	}
	r.out = dst
	return 0
}
