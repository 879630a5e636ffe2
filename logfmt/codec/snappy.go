package codec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

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

// unsnappyStart tells xerial framing from raw snappy. Both occur in one
// log: Java clients and brokers write xerial, librdkafka, sarama and
// franz-go write raw, and the broker keeps a v2 batch's bytes as the
// producer sent them. Only the 8-byte magic tells them apart, as in
// librdkafka; the version fields are not checked because some writers get
// them wrong (Redpanda writes them little-endian).
func (r *Reader) unsnappyStart() error {
	if !bytes.HasPrefix(r.src, xerialMagic) {
		return nil
	}
	if len(r.src) < xerialHeaderLen {
		return fmt.Errorf("snappy: xerial header truncated to %d bytes", len(r.src))
	}
	r.xerial, r.pos = true, xerialHeaderLen
	return nil
}

// unsnappy decodes the next xerial chunk, or the raw block that is the
// whole payload, into p or the Reader's buffer.
func (r *Reader) unsnappy(p []byte) (int, error) {
	src := r.src
	if !r.xerial {
		if r.pos == len(src) && len(src) > 0 {
			return 0, io.EOF
		}
		r.pos = len(src)
		n, err := r.snappyBlock(p, src)
		if err != nil {
			return 0, fmt.Errorf("snappy: %w", err)
		}
		return n, nil
	}
	pos := r.pos
	for {
		if pos == len(src) {
			return 0, io.EOF
		}
		// snappy-java skips the header of a concatenated stream where a
		// chunk length is expected. A real chunk length cannot start with
		// byte 0x82: it would be negative as an int32.
		if !bytes.HasPrefix(src[pos:], xerialMagic[:4]) {
			break
		}
		if len(src)-pos < xerialHeaderLen || !bytes.HasPrefix(src[pos:], xerialMagic) {
			return 0, fmt.Errorf("snappy: bad xerial header at offset %d", pos)
		}
		pos += xerialHeaderLen
	}
	if len(src)-pos < 4 {
		return 0, fmt.Errorf("snappy: xerial chunk length truncated at offset %d", pos)
	}
	n := binary.BigEndian.Uint32(src[pos:])
	if uint64(n) > uint64(len(src)-pos-4) {
		return 0, fmt.Errorf("snappy: xerial chunk at offset %d: length %d exceeds the %d bytes left", pos, n, len(src)-pos-4)
	}
	r.pos = pos + 4 + int(n)
	k, err := r.snappyBlock(p, src[pos+4:r.pos])
	if err != nil {
		return 0, fmt.Errorf("snappy: xerial chunk at offset %d: %w", pos, err)
	}
	return k, nil
}

var errSnappyBlock = errors.New("corrupt block")

// snappyBlock decodes one raw snappy block. The block states its decoded
// length up front, so the limit is checked before anything is allocated.
// DecodeStrict rejects the s2 extensions that klauspost's default decoder
// accepts but the C++ snappy under snappy-java does not.
func (r *Reader) snappyBlock(p, block []byte) (int, error) {
	n, err := snappy.DecodedLen(block)
	if err != nil {
		return 0, errSnappyBlock
	}
	if n > r.limit {
		return 0, tooLarge("block", uint64(n), r.limit)
	}
	dst, direct := r.piece(p, n)
	if _, err := snappy.DecodeStrict(dst, block); err != nil {
		return 0, errSnappyBlock
	}
	return r.took(dst, direct), nil
}

// xerialHeader appends the stream header SnappyOutputStream writes.
func xerialHeader(dst []byte) []byte {
	dst = append(dst, xerialMagic...)
	dst = binary.BigEndian.AppendUint32(dst, 1)  // version
	return binary.BigEndian.AppendUint32(dst, 1) // minimum compatible version
}

// xerialAppendChunk appends one chunk: its length and a raw snappy block.
func xerialAppendChunk(dst, chunk []byte) []byte {
	at := len(dst)
	dst = grow(dst, 4+s2.MaxEncodedLen(len(chunk)))
	block := s2.EncodeSnappy(dst[at+4:cap(dst)], chunk)
	binary.BigEndian.PutUint32(dst[at:at+4], uint32(len(block)))
	return dst[:at+4+len(block)]
}
