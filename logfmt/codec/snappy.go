package codec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/snappy"
)

// xerial framing, as written by snappy-java's SnappyOutputStream: an 8-byte
// magic, two big-endian int32 versions, then chunks of int32 length + one
// raw snappy block each.
var xerialMagic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

const (
	xerialHeaderLen = 16
	// xerialChunk is snappy-java's DEFAULT_BLOCK_SIZE, the uncompressed
	// size of each chunk the Java producer writes.
	xerialChunk = 32 << 10
)

// unsnappy decodes xerial-framed or raw snappy. Both occur in one log: Java
// clients and brokers write xerial, librdkafka, sarama and franz-go write raw,
// and the broker keeps a v2 batch's bytes as the producer sent them. Only the
// 8-byte magic tells them apart, as in librdkafka; the version fields are not
// checked because some writers get them wrong (Redpanda writes them
// little-endian).
func unsnappy(dst, src []byte, limit int) ([]byte, error) {
	if !bytes.HasPrefix(src, xerialMagic) {
		out, err := snappyBlock(dst, src, limit)
		if err != nil {
			return dst, fmt.Errorf("snappy: %w", err)
		}
		return out, nil
	}
	if len(src) < xerialHeaderLen {
		return dst, fmt.Errorf("snappy: xerial header truncated to %d bytes", len(src))
	}
	out := dst
	for pos := xerialHeaderLen; pos < len(src); {
		// snappy-java skips the header of a concatenated stream where a
		// chunk length is expected. A real chunk length cannot start with
		// byte 0x82: it would be negative as an int32.
		if bytes.HasPrefix(src[pos:], xerialMagic[:4]) {
			if len(src)-pos < xerialHeaderLen || !bytes.HasPrefix(src[pos:], xerialMagic) {
				return dst, fmt.Errorf("snappy: bad xerial header at offset %d", pos)
			}
			pos += xerialHeaderLen
			continue
		}
		if len(src)-pos < 4 {
			return dst, fmt.Errorf("snappy: xerial chunk length truncated at offset %d", pos)
		}
		n := binary.BigEndian.Uint32(src[pos:])
		if uint64(n) > uint64(len(src)-pos-4) {
			return dst, fmt.Errorf("snappy: xerial chunk at offset %d: length %d exceeds the %d bytes left", pos, n, len(src)-pos-4)
		}
		var err error
		if out, err = snappyBlock(out, src[pos+4:pos+4+int(n)], limit-(len(out)-len(dst))); err != nil {
			if errors.Is(err, ErrTooLarge) {
				return dst, tooLarge(limit)
			}
			return dst, fmt.Errorf("snappy: xerial chunk at offset %d: %w", pos, err)
		}
		pos += 4 + int(n)
	}
	return out, nil
}

var errSnappyBlock = errors.New("corrupt block")

// snappyBlock appends the decoding of one raw snappy block. The block states
// its decoded length up front, so the limit is checked before allocating.
// DecodeStrict rejects the s2 extensions that klauspost's default decoder
// accepts but the C++ snappy under snappy-java does not.
func snappyBlock(dst, src []byte, limit int) ([]byte, error) {
	n, err := snappy.DecodedLen(src)
	if err != nil {
		return dst, errSnappyBlock
	}
	if n > limit {
		return dst, tooLarge(limit)
	}
	dst = slices.Grow(dst, n)
	if _, err := snappy.DecodeStrict(dst[len(dst):len(dst)+n], src); err != nil {
		return dst, errSnappyBlock
	}
	return dst[:len(dst)+n], nil
}

// snappyAppend writes src in xerial framing, as SnappyOutputStream does.
func snappyAppend(dst, src []byte) []byte {
	dst = append(dst, xerialMagic...)
	dst = binary.BigEndian.AppendUint32(dst, 1) // version
	dst = binary.BigEndian.AppendUint32(dst, 1) // minimum compatible version
	for len(src) > 0 {
		chunk := src[:min(len(src), xerialChunk)]
		src = src[len(chunk):]
		at := len(dst)
		dst = slices.Grow(dst, 4+s2.MaxEncodedLen(len(chunk)))
		block := s2.EncodeSnappy(dst[at+4:cap(dst)], chunk)
		binary.BigEndian.PutUint32(dst[at:at+4], uint32(len(block)))
		dst = dst[:at+4+len(block)]
	}
	return dst
}
