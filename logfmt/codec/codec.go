// Package codec compresses and decompresses the payloads of Kafka's
// compressed wrapper messages (magic 0 and 1) and record batches (magic 2),
// byte-compatible with the Java producer and broker.
//
// Kafka does not use every codec in its standard form: snappy comes wrapped
// in xerial framing (or raw, depending on the client), and lz4 comes in a
// partial LZ4 frame whose header checksum was computed wrongly before magic 1
// (KAFKA-3160). See kafka-formats.md §3.
//
// Both directions stream, as Kafka's do: a Reader hands out a payload's
// decompressed bytes a piece at a time and a Writer compresses what is
// written to it, so that memory follows the codec's unit (a gzip window, an
// lz4 block, a snappy chunk, a zstd window), not the payload. No length read
// from the input sizes an allocation before it is checked against a limit.
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

// DefaultLimit is the limit a Reader applies when given 0 or less: the
// most it allocates for one piece of a payload that can only be decoded
// whole (see Reader). Kafka's default max.message.bytes is about 1 MiB, so a
// real payload never has a piece this large, while the bound keeps what a
// corrupt or hostile payload can make us allocate well under the memory a
// command may use.
const DefaultLimit = 64 << 20

// ErrTooLarge is returned, wrapped, when a payload declares a piece larger
// than the limit, or when Decompress's output would pass it.
var ErrTooLarge = errors.New("over the size limit")

// tooLarge reports a piece of a payload that would decode to size bytes.
func tooLarge(what string, size uint64, limit int) error {
	return fmt.Errorf("%s of %d bytes is %w of %d bytes", what, size, ErrTooLarge, limit)
}
