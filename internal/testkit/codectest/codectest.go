// Package codectest compresses and decompresses whole payloads for tests:
// the form of the codec package's streaming Writer and Reader that takes
// and returns everything at once.
package codectest

import (
	"fmt"
	"io"
	"slices"

	"github.com/logtool/logtool/logfmt/codec"
)

// Compress appends the compression of src with codec t, for a batch or
// message of the given magic, to dst.
func Compress(dst []byte, t codec.Type, src []byte, magic int8) ([]byte, error) {
	var w codec.Writer
	if err := w.Reset(dst, t, magic); err != nil {
		return dst, err
	}
	if _, err := w.Write(src); err != nil {
		return dst, err
	}
	return w.Close()
}

// Decompress appends the whole decompression of src to dst: at most limit
// bytes (codec.DefaultLimit if limit <= 0), else an error wrapping
// codec.ErrTooLarge.
func Decompress(dst []byte, t codec.Type, src []byte, magic int8, limit int) ([]byte, error) {
	if limit <= 0 {
		limit = codec.DefaultLimit
	}
	var r codec.Reader
	if err := r.Reset(t, src, magic, limit); err != nil {
		return dst, err
	}
	start := len(dst)
	out := slices.Grow(dst, min(4*len(src)+512, limit+1))
	for {
		if len(out) == cap(out) {
			out = append(out, 0)[:len(out)]
		}
		room := min(cap(out)-len(out), start+limit+1-len(out))
		n, err := r.Read(out[len(out) : len(out)+room])
		out = out[:len(out)+n]
		if len(out)-start > limit {
			return dst, fmt.Errorf("decompressed output is %w of %d bytes", codec.ErrTooLarge, limit)
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return dst, err
		}
	}
}
