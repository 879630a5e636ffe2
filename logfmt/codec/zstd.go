package codec

import (
	"errors"
	"fmt"
	"math/bits"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// zstdDecoders holds shared decoders, which are safe for concurrent
// DecodeAll, keyed by the power of two (1<<key bytes) that caps their output.
// The cap is fixed when a decoder is made, so rounding up to a power of two
// keeps the number of decoders small; unzstd applies the exact limit itself.
var zstdDecoders sync.Map // of int → *zstd.Decoder

func zstdDecoder(key int) (*zstd.Decoder, error) {
	if d, ok := zstdDecoders.Load(key); ok {
		return d.(*zstd.Decoder), nil
	}
	d, err := zstd.NewReader(nil,
		zstd.WithDecoderConcurrency(0),
		zstd.WithDecoderMaxMemory(1<<key))
	if err != nil {
		return nil, err
	}
	if prev, loaded := zstdDecoders.LoadOrStore(key, d); loaded {
		d.Close()
		return prev.(*zstd.Decoder), nil
	}
	return d, nil
}

// zstdMinCap is the smallest output cap given to a decoder. The decoder
// refuses frames whose window exceeds its cap, even when their content is
// small, and the windows zstd writes at levels up to 19 (Kafka's default is
// 3) reach 8 MiB. Only levels 20-22 use larger ones, up to 128 MiB; they need
// a limit at least that large.
const zstdMinCap = 8 << 20

// unzstd decodes every frame of src. Kafka always writes a frame, even for
// no data, so empty input is an error.
func unzstd(dst, src []byte, limit int) ([]byte, error) {
	if len(src) == 0 {
		return dst, errors.New("zstd: no frame in empty input")
	}
	// A bomb declares its size: refuse it before the decoder allocates for
	// it, instead of letting DecodeAll grow its output up to the cap.
	if least, ok := zstdLeast(src); ok && least > uint64(limit) {
		return dst, tooLarge(limit)
	}
	// klauspost counts the bytes already in dst against the cap when a frame
	// states its content size, so the cap must cover them too.
	d, err := zstdDecoder(bits.Len(uint(max(len(dst)+limit, zstdMinCap) - 1)))
	if err != nil {
		return dst, fmt.Errorf("zstd: %w", err)
	}
	out, err := d.DecodeAll(src, dst)
	switch {
	case errors.Is(err, zstd.ErrWindowSizeExceeded):
		return dst, fmt.Errorf("zstd: frame window too large: %w", tooLarge(limit))
	case errors.Is(err, zstd.ErrDecoderSizeExceeded) || err == nil && len(out)-len(dst) > limit:
		return dst, tooLarge(limit)
	case err != nil:
		return dst, fmt.Errorf("zstd: %w", err)
	}
	return out, nil
}

// zstdEncoder is shared: EncodeAll is safe for concurrent use.
var zstdEncoder = sync.OnceValues(func() (*zstd.Encoder, error) {
	return zstd.NewWriter(nil,
		// Level 3, Kafka's default compression.zstd.level.
		zstd.WithEncoderLevel(zstd.SpeedDefault),
		// zstd-jni, which Kafka uses, writes no checksum by default.
		zstd.WithEncoderCRC(false),
		// Kafka never compresses an empty payload, but if asked to we
		// must still produce a frame: klauspost writes nothing for
		// empty input by default.
		zstd.WithZeroFrames(true))
})

func zstdAppend(dst, src []byte) ([]byte, error) {
	e, err := zstdEncoder()
	if err != nil {
		return dst, fmt.Errorf("zstd: %w", err)
	}
	return e.EncodeAll(src, dst), nil
}

// zstdLeast walks the frames of src without decoding them and returns the
// least they decode to if they decode at all: a frame's declared content
// size (the decoder fails a frame that decodes to anything else), or else
// the sizes of its raw and RLE blocks. ok is false when the framing cannot
// be walked; the decoder then reports what is wrong.
func zstdLeast(src []byte) (least uint64, ok bool) {
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
		p := h.HeaderSize
		var blocks uint64
		for last := false; !last; {
			if p+3 > len(src) {
				return 0, false
			}
			v := uint32(src[p]) | uint32(src[p+1])<<8 | uint32(src[p+2])<<16
			p += 3
			last = v&1 != 0
			size := int(v >> 3)
			switch (v >> 1) & 3 {
			case 0: // raw
				blocks += uint64(size)
			case 1: // RLE: one byte repeated size times
				blocks += uint64(size)
				size = 1
			case 2: // compressed: at least nothing is known
			default:
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
		if h.HasFCS {
			least += h.FrameContentSize
		} else {
			least += blocks
		}
		src = src[p:]
	}
	return least, true
}
