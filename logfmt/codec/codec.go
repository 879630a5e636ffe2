// Package codec compresses and decompresses the payloads of Kafka's
// compressed wrapper messages (magic 0 and 1) and record batches (magic 2),
// byte-compatible with the Java producer and broker.
//
// Kafka does not use every codec in its standard form: snappy comes wrapped
// in xerial framing (or raw, depending on the client), and lz4 comes in a
// partial LZ4 frame whose header checksum was computed wrongly before magic 1
// (KAFKA-3160). See kafka-formats.md §3.
//
// Decompress never trusts a length in its input for allocation and fails with
// ErrTooLarge while decoding, not after, once the output passes the caller's
// limit, so a small hostile payload cannot exhaust memory. (zstd's decoder
// stops at the next power of two above the limit, at least 8 MiB.)
package codec

import (
	"errors"
	"fmt"
)

// Type is the codec id held in the low 3 bits of Kafka's attributes.
type Type int8

const (
	None   Type = 0
	Gzip   Type = 1
	Snappy Type = 2
	LZ4    Type = 3
	Zstd   Type = 4
)

var names = [...]string{None: "none", Gzip: "gzip", Snappy: "snappy", LZ4: "lz4", Zstd: "zstd"}

// String returns the name Kafka uses for t in compression.type.
func (t Type) String() string {
	if t >= 0 && int(t) < len(names) {
		return names[t]
	}
	return fmt.Sprintf("unknown(%d)", int8(t))
}

// Parse returns the Type that String names s.
func Parse(s string) (Type, error) {
	for t, name := range names {
		if s == name {
			return Type(t), nil
		}
	}
	return 0, fmt.Errorf("unknown compression codec %q", s)
}

// ValidFor reports whether Kafka accepts codec t in a message or batch of
// the given magic: zstd only came with magic 2 (KIP-110), and ids 5-7 were
// never assigned.
func (t Type) ValidFor(magic int8) bool {
	if magic < 0 || magic > 2 {
		return false
	}
	switch t {
	case None, Gzip, Snappy, LZ4:
		return true
	case Zstd:
		return magic == 2
	}
	return false
}

// DefaultLimit is the decompressed size Decompress allows when given a limit
// of 0 or less. Kafka's default max.message.bytes is about 1 MiB, so 64 MiB
// leaves room for large configured limits while bounding what a corrupt or
// hostile payload can make us allocate.
const DefaultLimit = 64 << 20

// ErrTooLarge is returned, wrapped, when the decompressed output would exceed
// the limit given to Decompress.
var ErrTooLarge = errors.New("decompressed size exceeds limit")

func tooLarge(limit int) error {
	return fmt.Errorf("%w of %d bytes", ErrTooLarge, limit)
}

// Decompress appends the decompression of src to dst and returns the result.
// At most limit bytes are appended (DefaultLimit if limit <= 0); beyond that
// it fails with an error wrapping ErrTooLarge.
//
// The magic of the message or batch holding src only matters for lz4: magic 0
// frames carry Kafka's broken header checksum, which is not checked, while for
// magic 1 and 2 a wrong header checksum is an error, as in Kafka.
//
// Errors describe what is wrong with src, with offsets relative to src; the
// caller knows where src lies in its file and wraps them. On error dst is
// returned with its original length, but its spare capacity may have been
// written to.
func Decompress(dst []byte, t Type, src []byte, magic int8, limit int) ([]byte, error) {
	if limit <= 0 {
		limit = DefaultLimit
	}
	switch t {
	case None:
		if len(src) > limit {
			return dst, tooLarge(limit)
		}
		return append(dst, src...), nil
	case Gzip:
		return gunzip(dst, src, limit)
	case Snappy:
		return unsnappy(dst, src, limit)
	case LZ4:
		return unlz4(dst, src, magic, limit)
	case Zstd:
		return unzstd(dst, src, limit)
	}
	return dst, fmt.Errorf("unknown compression codec %d", int8(t))
}

// Compress appends the compression of src with codec t to dst, framed as the
// Java producer and broker frame it for a message or batch of the given
// magic, and returns the result. It refuses a codec that magic does not allow.
//
// The framing is Kafka's byte for byte: one gzip member; snappy in xerial
// framing with 32 KiB chunks; lz4 in Kafka's frame with 64 KiB independent
// blocks and the header checksum Kafka writes for magic; a standard zstd
// frame. For snappy and lz4 the compressed blocks also match what Kafka's
// default compressors produce (checked against broker-written batches);
// gzip and zstd output differs from Java's, as two compressors' output may.
func Compress(dst []byte, t Type, src []byte, magic int8) ([]byte, error) {
	if !t.ValidFor(magic) {
		return dst, fmt.Errorf("compression codec %v is not valid for magic %d", t, magic)
	}
	switch t {
	case Gzip:
		return gzipAppend(dst, src)
	case Snappy:
		return snappyAppend(dst, src), nil
	case LZ4:
		return lz4Append(dst, src, magic), nil
	case Zstd:
		return zstdAppend(dst, src)
	}
	return append(dst, src...), nil
}
