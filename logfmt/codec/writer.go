package codec

import (
	"encoding/binary"
	"fmt"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Writer compresses a payload written to it in pieces and appends the
// result to a slice, framed as the Java producer and broker frame it: one
// gzip member; snappy in xerial framing with 32 KiB chunks; lz4 in Kafka's
// frame with 64 KiB independent blocks and the header checksum Kafka writes
// for the magic; a standard zstd frame. For snappy and lz4 the compressed
// blocks also match what Kafka's default compressors produce (checked
// against broker-written batches); gzip and zstd output differs from
// Java's, as two compressors' output may.
//
// Besides the output, a Writer holds at most one unfinished lz4 block or
// snappy chunk, a gzip window, or up to zstdOneShot bytes of a zstd payload
// and then a streaming encoder's window, so a payload far larger than that
// can be written a record at a time. Keep one per goroutine and Reset it for
// each payload.
type Writer struct {
	t     Type
	dst   appender
	start int
	pend  []byte // lz4, snappy: the unfinished block; zstd: a small payload
	gz    *gzip.Writer
	lz    *lz4.CompressorCCompat
	zs    *zstd.Encoder // zstd once the payload passes zstdOneShot
	err   error
}

// Reset starts a payload of codec t for a message or batch of the given
// magic, to be appended to dst. It refuses a codec that magic does not
// allow.
func (w *Writer) Reset(dst []byte, t Type, magic int8) error {
	w.release()
	*w = Writer{t: t, dst: dst, start: len(dst), pend: w.pend[:0]}
	if !t.ValidFor(magic) {
		w.err = fmt.Errorf("compression codec %v is not valid for magic %d", t, magic)
		return w.err
	}
	switch t {
	case Gzip:
		w.gz = gzipWriters.Get().(*gzip.Writer)
		w.gz.Reset(&w.dst)
	case Snappy:
		w.dst = xerialHeader(w.dst)
	case LZ4:
		w.lz = lz4Compressors.Get().(*lz4.CompressorCCompat)
		w.dst = lz4Header(w.dst, magic)
	}
	return nil
}

// Write compresses p.
func (w *Writer) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	switch w.t {
	case None:
		w.dst = append(w.dst, p...)
	case Gzip:
		if _, err := w.gz.Write(p); err != nil {
			w.err = fmt.Errorf("gzip: %w", err)
		}
	case Snappy:
		w.blocks(p, xerialChunk)
	case LZ4:
		w.blocks(p, lz4KafkaBlock)
	case Zstd:
		w.zstd(p)
	}
	if w.err != nil {
		return 0, w.err
	}
	return len(p), nil
}

// blocks cuts what is written into blocks of size bytes, as Kafka's lz4 and
// snappy output streams do, and compresses each once it is full.
func (w *Writer) blocks(p []byte, size int) {
	for len(p) > 0 {
		if len(w.pend) == 0 && len(p) >= size {
			w.block(p[:size])
			p = p[size:]
			continue
		}
		k := min(size-len(w.pend), len(p))
		w.pend = append(w.pend, p[:k]...)
		p = p[k:]
		if len(w.pend) == size {
			w.block(w.pend)
			w.pend = w.pend[:0]
		}
	}
}

func (w *Writer) block(b []byte) {
	if w.t == LZ4 {
		w.dst = lz4AppendBlock(w.dst, b, w.lz)
	} else {
		w.dst = xerialAppendChunk(w.dst, b)
	}
}

func (w *Writer) zstd(p []byte) {
	if w.zs == nil && len(w.pend)+len(p) <= zstdOneShot {
		w.pend = append(w.pend, p...)
		return
	}
	if w.zs == nil {
		w.zs = zstdStreamers.Get().(*zstd.Encoder)
		w.zs.Reset(&w.dst)
		if _, err := w.zs.Write(w.pend); err != nil {
			w.err = fmt.Errorf("zstd: %w", err)
			return
		}
		w.pend = w.pend[:0]
	}
	if _, err := w.zs.Write(p); err != nil {
		w.err = fmt.Errorf("zstd: %w", err)
	}
}

// Spill hands the output made so far to out and empties it, keeping its
// room, so that a large payload can go to a file a piece at a time. It
// spills nothing with zstd, whose streaming encoder may still be writing
// its output on goroutines of its own.
func (w *Writer) Spill(out func([]byte) error) error {
	if w.err != nil {
		return w.err
	}
	if w.t == Zstd || len(w.dst) == 0 {
		return nil
	}
	w.err = out(w.dst)
	w.dst, w.start = w.dst[:0], 0
	return w.err
}

// Close finishes the payload and returns dst with it appended. On error
// dst is returned with its original length.
func (w *Writer) Close() ([]byte, error) {
	if w.err == nil {
		w.err = w.finish()
	}
	out := []byte(w.dst)
	w.release()
	if w.err != nil {
		return out[:w.start], w.err
	}
	return out, nil
}

func (w *Writer) finish() error {
	switch w.t {
	case Gzip:
		if err := w.gz.Close(); err != nil {
			return fmt.Errorf("gzip: %w", err)
		}
	case Snappy:
		if len(w.pend) > 0 {
			w.block(w.pend)
		}
	case LZ4:
		if len(w.pend) > 0 {
			w.block(w.pend)
		}
		w.dst = binary.LittleEndian.AppendUint32(w.dst, 0)
	case Zstd:
		if w.zs != nil {
			if err := w.zs.Close(); err != nil {
				return fmt.Errorf("zstd: %w", err)
			}
			return nil
		}
		e := zstdOneShots.Get().(*zstd.Encoder)
		w.dst = e.EncodeAll(w.pend, w.dst)
		zstdOneShots.Put(e)
	}
	return nil
}

// release gives the pooled compressors back and lets go of the output.
func (w *Writer) release() {
	if w.gz != nil {
		w.gz.Reset(nil)
		gzipWriters.Put(w.gz)
	}
	if w.lz != nil {
		lz4Compressors.Put(w.lz)
	}
	if w.zs != nil {
		w.zs.Reset(nil)
		zstdStreamers.Put(w.zs)
	}
	w.gz, w.lz, w.zs, w.dst = nil, nil, nil, nil
}

// appender is an io.Writer that appends to itself.
type appender []byte

func (a *appender) Write(p []byte) (int, error) {
	*a = append(grow(*a, len(p)), p...)
	return len(p), nil
}

// grow makes room for n more bytes in b, doubling its capacity at least:
// append grows a large slice by a quarter at a time, so a payload of tens
// of MiB written a block at a time would leave four times its size behind.
func grow(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		return b
	}
	nb := make([]byte, len(b), max(2*cap(b), len(b)+n))
	copy(nb, b)
	return nb
}
