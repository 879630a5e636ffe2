package codec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/pierrec/lz4/v4"
)

// Kafka's LZ4 frame (Lz4BlockOutputStream, "a partial implementation of the
// v1.5.1 LZ4 Frame format"): magic, FLG, BD, header checksum HC, blocks each
// led by a little-endian uint32 size, and an end mark of four zero bytes.
const (
	lz4Magic = 0x184D2204

	lz4FlagVersion       = 0xC0 // bits 6-7, must be 01
	lz4FlagIndependent   = 0x20
	lz4FlagBlockSum      = 0x10
	lz4FlagContentSize   = 0x08
	lz4FlagContentSum    = 0x04
	lz4FlagReserved      = 0x03
	lz4BDReserved        = 0x8F
	lz4BlockUncompressed = 1 << 31

	// What Kafka writes: version 1, independent blocks, no checksums or
	// content size; 64 KiB maximum block size.
	lz4KafkaFLG   = 0x60
	lz4KafkaBD    = 0x40
	lz4KafkaBlock = 64 << 10
)

// lz4HeaderChecksum returns the HC byte for a frame whose header, HC
// excluded, is hdr. Kafka before magic 1 hashed the 4-byte magic along with
// the descriptor (KAFKA-3160); the LZ4 format hashes the descriptor alone.
func lz4HeaderChecksum(hdr []byte, magic int8) byte {
	if magic >= 1 {
		hdr = hdr[4:]
	}
	return byte(xxh32(hdr, 0) >> 8)
}

// lz4State is what a Reader knows of the frame it reads.
type lz4State struct {
	flg      byte
	maxBlock int
}

// unlz4Start reads the frame header under the rules of Kafka's
// Lz4BlockInputStream: it accepts block checksums (and checks them), a
// content size (skipped) and a content checksum (read but not checked, as
// Kafka does not), but not dependent blocks. The HC byte is checked only
// from magic 1 on.
func (r *Reader) unlz4Start() error {
	const minHeader = 7
	src := r.src
	if len(src) < minHeader {
		return fmt.Errorf("lz4: frame header truncated to %d bytes", len(src))
	}
	if m := binary.LittleEndian.Uint32(src); m != lz4Magic {
		return fmt.Errorf("lz4: bad frame magic %#08x", m)
	}
	flg, bd := src[4], src[5]
	switch {
	case flg&lz4FlagVersion != 0x40:
		return fmt.Errorf("lz4: unsupported frame version %d", flg>>6)
	case flg&lz4FlagReserved != 0 || bd&lz4BDReserved != 0:
		return fmt.Errorf("lz4: reserved bits set in frame descriptor %02x %02x", flg, bd)
	case flg&lz4FlagIndependent == 0:
		return errors.New("lz4: dependent blocks are not supported")
	case bd>>4 < 4:
		return fmt.Errorf("lz4: invalid block size id %d", bd>>4)
	}
	hdrLen := minHeader
	if flg&lz4FlagContentSize != 0 {
		hdrLen += 8
		if len(src) < hdrLen {
			return fmt.Errorf("lz4: frame header truncated to %d bytes", len(src))
		}
	}
	if r.magic >= 1 {
		if got, want := src[hdrLen-1], lz4HeaderChecksum(src[:hdrLen-1], r.magic); got != want {
			return fmt.Errorf("lz4: header checksum %02x, want %02x", got, want)
		}
	}
	r.lz4 = lz4State{flg: flg, maxBlock: 1 << (2*(bd>>4) + 8)}
	r.pos = hdrLen
	return nil
}

// unlz4 decodes the next block of the frame into p, or into the Reader's
// buffer when it does not fit. At the end mark it checks what follows and
// returns io.EOF.
func (r *Reader) unlz4(p []byte) (int, error) {
	src, pos, f := r.src, r.pos, r.lz4
	if len(src)-pos < 4 {
		return 0, fmt.Errorf("lz4: block size truncated at offset %d", pos)
	}
	word := binary.LittleEndian.Uint32(src[pos:])
	at := pos
	pos += 4
	size := int(word &^ lz4BlockUncompressed)
	if size == 0 {
		// The end mark; Kafka also takes a zero size with the stored bit as one.
		if f.flg&lz4FlagContentSum != 0 {
			if len(src)-pos < 4 {
				return 0, fmt.Errorf("lz4: content checksum truncated at offset %d", pos)
			}
			pos += 4
		}
		if pos != len(src) {
			return 0, fmt.Errorf("lz4: %d bytes after the end of the frame at offset %d", len(src)-pos, pos)
		}
		r.pos = pos
		return 0, io.EOF
	}
	if size > f.maxBlock {
		return 0, fmt.Errorf("lz4: block at offset %d: size %d exceeds the frame's maximum %d", at, size, f.maxBlock)
	}
	if size > len(src)-pos {
		return 0, fmt.Errorf("lz4: block at offset %d: size %d exceeds the %d bytes left", at, size, len(src)-pos)
	}
	block := src[pos : pos+size]
	pos += size
	if f.flg&lz4FlagBlockSum != 0 {
		if len(src)-pos < 4 {
			return 0, fmt.Errorf("lz4: block at offset %d: checksum truncated", at)
		}
		if got, want := binary.LittleEndian.Uint32(src[pos:]), xxh32(block, 0); got != want {
			return 0, fmt.Errorf("lz4: block at offset %d: checksum %08x, want %08x", at, got, want)
		}
		pos += 4
	}
	r.pos = pos
	if word&lz4BlockUncompressed != 0 {
		r.out = block
		return 0, nil
	}
	n, err := lz4BlockLen(block, f.maxBlock)
	if err != nil {
		return 0, fmt.Errorf("lz4: block at offset %d: %w", at, err)
	}
	if n > r.limit {
		return 0, fmt.Errorf("lz4: block at offset %d: %w", at, tooLarge("block", uint64(n), r.limit))
	}
	dst, direct := r.piece(p, n)
	if m, err := lz4.UncompressBlock(block, dst); err != nil || m != n {
		return 0, fmt.Errorf("lz4: block at offset %d: corrupt compressed data", at)
	}
	return r.took(dst, direct), nil
}

var errLZ4Block = errors.New("malformed compressed block")

// lz4BlockLen returns the decoded length of an LZ4 block by walking its
// sequences without decoding them, so that the output can be placed, and
// allocated exactly, before any byte is decoded. It fails as soon
// as the length passes maxLen, the frame's maximum block size.
func lz4BlockLen(b []byte, maxLen int) (int, error) {
	n, i := 0, 0
	for {
		if i >= len(b) {
			return 0, errLZ4Block
		}
		token := b[i]
		i++
		lit := int(token >> 4)
		if lit == 15 {
			if i, lit = lz4ExtendLen(b, i, lit, maxLen); i < 0 {
				return 0, errLZ4Block
			}
		}
		if lit > len(b)-i {
			return 0, errLZ4Block
		}
		i += lit
		n += lit
		if n > maxLen {
			return 0, fmt.Errorf("block decodes to more than the frame's maximum block size %d", maxLen)
		}
		if i == len(b) { // the last sequence has literals only
			return n, nil
		}
		if len(b)-i < 2 {
			return 0, errLZ4Block
		}
		i += 2 // match offset
		match := int(token&15) + 4
		if token&15 == 15 {
			if i, match = lz4ExtendLen(b, i, match, maxLen); i < 0 {
				return 0, errLZ4Block
			}
		}
		n += match
	}
}

// lz4ExtendLen adds to length the bytes at b[i:] that extend it, each 255
// meaning another follows. It returns the index after them, or -1 if b ends
// first or the length grows past maxLen.
func lz4ExtendLen(b []byte, i, length, maxLen int) (int, int) {
	for i < len(b) && length <= maxLen {
		x := b[i]
		i++
		length += int(x)
		if x != 255 {
			return i, length
		}
	}
	return -1, 0
}

var lz4Compressors = sync.Pool{New: func() any { return new(lz4.CompressorCCompat) }}

// lz4Header appends the frame header Kafka's Lz4BlockOutputStream writes:
// 64 KiB independent blocks, no checksums, and the header checksum Kafka
// computes for magic.
func lz4Header(dst []byte, magic int8) []byte {
	hdr := len(dst)
	dst = binary.LittleEndian.AppendUint32(dst, lz4Magic)
	dst = append(dst, lz4KafkaFLG, lz4KafkaBD)
	return append(dst, lz4HeaderChecksum(dst[hdr:], magic))
}

// lz4AppendBlock appends one block as Kafka writes it, stored uncompressed
// when compressing does not shrink it. CompressorCCompat produces the bytes
// of the C library's LZ4_compress_fast, which lz4-java's fast compressor
// (Kafka's default) wraps.
func lz4AppendBlock(dst, block []byte, c *lz4.CompressorCCompat) []byte {
	at := len(dst)
	dst = grow(dst, 4+lz4.CompressBlockBound(len(block)))
	n, err := c.CompressBlock(block, dst[at+4:cap(dst)])
	if err != nil || n == 0 || n >= len(block) {
		dst = binary.LittleEndian.AppendUint32(dst, uint32(len(block))|lz4BlockUncompressed)
		return append(dst, block...)
	}
	binary.LittleEndian.PutUint32(dst[at:at+4], uint32(n))
	return dst[:at+4+n]
}
