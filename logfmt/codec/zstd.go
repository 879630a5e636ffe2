package codec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// zstdReader pairs a streaming decoder with the bytes.Reader it reads
// from. Decoders are pooled by the window they accept, which is fixed when
// one is made.
type zstdReader struct {
	src bytes.Reader
	d   *zstd.Decoder
	cap int
}

var zstdReaders sync.Map // of window cap → *sync.Pool of *zstdReader

func (z *zstdReader) release() {
	z.d.Reset(nil) // do not keep the caller's input alive in the pool
	z.src.Reset(nil)
	poolFor(&zstdReaders, z.cap).Put(z)
}

// zstdMinWindow is the smallest window a decoder accepts, whatever the
// limit. The decoder holds a frame's window only as far as the frame fills
// it, and the windows zstd writes at levels up to 19 (Kafka's default is 3)
// reach 8 MiB, even for small content. Only levels 20-22 use larger ones,
// up to 128 MiB; they need a limit at least that large.
const zstdMinWindow = 8 << 20

// unzstdStart checks there is a frame to read. Kafka always writes one,
// even for no data, so empty input is an error.
func (r *Reader) unzstdStart() error {
	if len(r.src) == 0 {
		return errors.New("zstd: no frame in empty input")
	}
	return nil
}

// zstdWholes holds decoders of whole payloads for unzstd, each used by one
// goroutine at a time, pooled by window cap as zstdReaders are and with the
// streaming decoders' limits, so that a frame is refused alike whichever
// way it is read. A pool keeps a decoder on the P that last used it, so that
// batches decoded in parallel (logfmt.DeepReader) find their decoder's
// tables in their own core's cache: one decoder shared by every goroutine
// (zstd.Decoder's own concurrency) handed its state from core to core with
// every frame, and two goroutines decoding small frames were 1.4 times as
// fast as one instead of 1.9-2.0. The cap limit keeps DecodeAll within the
// slice it is given.
var zstdWholes sync.Map // of window cap → *sync.Pool of *zstd.Decoder

// zstdLimits are the options every decoder is made with, whole-frame and
// streaming alike: one goroutine, and the window and memory cap c.
func zstdLimits(c int) []zstd.DOption {
	return []zstd.DOption{
		zstd.WithDecoderConcurrency(1),
		zstd.WithDecoderMaxWindow(uint64(c)),
		zstd.WithDecoderMaxMemory(uint64(c)),
	}
}

// poolFor is the pool of m for window cap c.
func poolFor(m *sync.Map, c int) *sync.Pool {
	p, ok := m.Load(c)
	if !ok {
		p, _ = m.LoadOrStore(c, new(sync.Pool))
	}
	return p.(*sync.Pool)
}

// unzstd reads every frame of the payload as one stream, holding one window.
// Most payloads are a single frame that states its content size: when that
// fits p, the first read decodes it in one call, as fast as reading a frame
// gets; anything else, a failure included, is read as a stream from the
// start, so that what is read and the errors are the same either way.
func (r *Reader) unzstd(p []byte) (int, error) {
	if r.zs == nil {
		var h zstd.Header
		if r.pos == 0 && h.Decode(r.src) == nil && h.HasFCS && h.FrameContentSize <= uint64(len(p)) {
			r.pos = 1 // tried
			windowCap := max(r.limit, zstdMinWindow)
			if r.wholes == nil || r.wholeCap != windowCap {
				r.wholes, r.wholeCap = poolFor(&zstdWholes, windowCap), windowCap
			}
			pool := r.wholes
			d, _ := pool.Get().(*zstd.Decoder)
			if d == nil {
				d, _ = zstd.NewReader(nil, append(zstdLimits(windowCap), zstd.WithDecodeAllCapLimit(true))...)
			}
			if d != nil {
				out, err := d.DecodeAll(r.src, p[:0:len(p)])
				pool.Put(d)
				if err == nil {
					return len(out), io.EOF
				}
			}
		}
		if err := r.zstdStream(); err != nil {
			return 0, err
		}
	}
	n, err := r.zs.d.Read(p)
	switch {
	case err == nil || err == io.EOF:
		return n, err
	case errors.Is(err, zstd.ErrWindowSizeExceeded) || errors.Is(err, zstd.ErrDecoderSizeExceeded):
		if w, ok := zstdWindowOver(r.src, r.zs.cap); ok {
			return n, fmt.Errorf("zstd: %w", tooLarge("frame window", w, r.zs.cap))
		}
	}
	return n, fmt.Errorf("zstd: %w", err)
}

// zstdStream takes a streaming decoder from the pool and starts it on the
// payload.
func (r *Reader) zstdStream() error {
	windowCap := max(r.limit, zstdMinWindow)
	z, _ := poolFor(&zstdReaders, windowCap).Get().(*zstdReader)
	if z == nil {
		// One goroutine and low memory: the decoder then keeps one window
		// plus a block or two, and decodes as it is read.
		d, err := zstd.NewReader(nil, append(zstdLimits(windowCap), zstd.WithDecoderLowmem(true), zstd.WithDecodeBuffersBelow(0))...)
		if err != nil {
			return fmt.Errorf("zstd: %w", err)
		}
		z = &zstdReader{d: d, cap: windowCap}
	}
	r.zs = z
	z.src.Reset(r.src)
	if err := z.d.Reset(&z.src); err != nil {
		return fmt.Errorf("zstd: %w", err)
	}
	return nil
}

// zstdOneShots compress whole payloads, one encoder for each goroutine
// compressing at once (the cleaner's batch workers). A shared Encoder's
// EncodeAll would take turns among as many encoders as GOMAXPROCS was when
// it was made, and keep every CPU's worth of tables on a large machine.
var zstdOneShots = sync.Pool{New: func() any {
	e, err := zstd.NewWriter(nil,
		// Level 3, Kafka's default compression.zstd.level.
		zstd.WithEncoderLevel(zstd.SpeedDefault),
		// zstd-jni, which Kafka uses, writes no checksum by default.
		zstd.WithEncoderCRC(false),
		// Kafka never compresses an empty payload, but if asked to we
		// must still produce a frame: klauspost writes nothing for
		// empty input by default.
		zstd.WithZeroFrames(true),
		zstd.WithEncoderConcurrency(1))
	if err != nil {
		panic(err) // the options are constant and valid
	}
	return e
}}

// zstdOneShot is the size up to which a Writer gathers a zstd payload and
// compresses it in one call, as most batches are; a larger payload goes
// through a streaming encoder, so that what is held stays within this plus
// the encoder's window.
const zstdOneShot = 1 << 20

// zstdStreamWindow is the streaming encoder's window: what zstd-jni, which
// Kafka uses, picks at level 3 for input of unknown size (window log 21).
const zstdStreamWindow = 2 << 20

var zstdStreamers = sync.Pool{New: func() any {
	e, err := zstd.NewWriter(nil,
		zstd.WithEncoderLevel(zstd.SpeedDefault),
		zstd.WithEncoderCRC(false),
		zstd.WithEncoderConcurrency(1),
		zstd.WithWindowSize(zstdStreamWindow),
		zstd.WithLowerEncoderMem(true))
	if err != nil {
		panic(err) // the options are constant and valid
	}
	return e
}}

// zstdWindowOver walks the frames of src without decoding them and returns
// the window of the first that asks for more than windowCap bytes: its
// window, or its content size when it is written in one segment. ok is
// false when there is none, or the framing cannot be walked that far.
func zstdWindowOver(src []byte, windowCap int) (window uint64, ok bool) {
	for len(src) > 0 {
		var h zstd.Header
		if err := h.Decode(src); err != nil || h.HeaderSize <= 0 || h.HeaderSize > len(src) {
			return 0, false
		}
		if h.Skippable {
			n := uint64(h.HeaderSize) + uint64(h.SkippableSize)
			if n > uint64(len(src)) {
				return 0, false
			}
			src = src[n:]
			continue
		}
		w := h.WindowSize
		if h.SingleSegment {
			w = h.FrameContentSize
		}
		if w > uint64(windowCap) {
			return w, true
		}
		p := h.HeaderSize
		for last := false; !last; {
			if p+3 > len(src) {
				return 0, false
			}
			v := uint32(src[p]) | uint32(src[p+1])<<8 | uint32(src[p+2])<<16
			p += 3
			last = v&1 != 0
			size := int(v >> 3)
			switch (v >> 1) & 3 {
			case 1: // RLE: one byte repeated size times
				size = 1
			case 3:
				return 0, false
			}
			if size > len(src)-p {
				return 0, false
			}
			p += size
		}
		if h.HasCheckSum {
			p += 4
		}
		if p > len(src) {
			return 0, false
		}
		src = src[p:]
	}
	return 0, false
}
