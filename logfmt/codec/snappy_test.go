package codec

import (
	"bytes"
	"encoding/binary"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/snappy"
)

// xerial builds a xerial stream from a 16-byte header and raw blocks.
func xerial(header []byte, blocks ...[]byte) []byte {
	b := bytes.Clone(header)
	for _, blk := range blocks {
		b = binary.BigEndian.AppendUint32(b, uint32(len(blk)))
		b = append(b, blk...)
	}
	return b
}

var xerialV1 = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1}

// TestSnappyFraming checks our output byte by byte: SnappyOutputStream's
// header, then 32 KiB chunks each holding one raw block.
func TestSnappyFraming(t *testing.T) {
	in := jsonish(100 << 10)
	got, err := Compress(nil, Snappy, in, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(got, xerialV1) {
		t.Fatalf("header % x, want % x", got[:16], xerialV1)
	}
	var blocks [][]byte
	for rest := got[16:]; len(rest) > 0; {
		n := binary.BigEndian.Uint32(rest)
		blocks = append(blocks, rest[4:4+n])
		rest = rest[4+n:]
	}
	i := 0
	for want := range slices.Chunk(in, xerialChunk) {
		if i >= len(blocks) {
			t.Fatalf("%d chunks, want more", len(blocks))
		}
		if dec, err := snappy.Decode(nil, blocks[i]); err != nil || !bytes.Equal(dec, want) {
			t.Errorf("chunk %d does not hold the next 32 KiB of input: %v", i, err)
		}
		i++
	}
	if i != len(blocks) {
		t.Errorf("%d chunks, want %d", len(blocks), i)
	}
	if empty, _ := Compress(nil, Snappy, nil, 2); !bytes.Equal(empty, xerialV1) {
		t.Errorf("empty input gave % x, want the header alone", empty)
	}
}

func TestSnappyDecode(t *testing.T) {
	a, b := jsonish(40000), []byte("second chunk")
	ab := append(bytes.Clone(a), b...)
	leVersions := []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 1, 0, 0, 0, 1, 0, 0, 0}
	zeroVersions := []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 0, 0, 0, 0, 0}
	tests := []struct {
		name string
		in   []byte
		want []byte
	}{
		{"raw block", snappy.Encode(nil, a), a},
		{"raw s2 snappy-compatible block", s2.EncodeSnappy(nil, a), a},
		{"raw empty block", []byte{0}, []byte{}},
		{"xerial two chunks", xerial(xerialV1, snappy.Encode(nil, a), snappy.Encode(nil, b)), ab},
		{"xerial header only", xerialV1, []byte{}},
		// Redpanda writes the versions little-endian; versions are not checked.
		{"xerial LE versions", xerial(leVersions, snappy.Encode(nil, a)), a},
		{"xerial zero versions", xerial(zeroVersions, snappy.Encode(nil, a)), a},
		// Concatenated streams: snappy-java skips a header where a chunk
		// length is expected.
		{"xerial repeated header", append(xerial(xerialV1, snappy.Encode(nil, a)), xerial(leVersions, snappy.Encode(nil, b))...), ab},
		// Short input that merely starts like the magic is raw snappy.
		{"raw, 0x82 first byte", snappy.Encode(nil, bytes.Repeat([]byte{'x'}, 0x82)), bytes.Repeat([]byte{'x'}, 0x82)},
	}
	for _, tt := range tests {
		got, err := Decompress([]byte("dst"), Snappy, tt.in, 2, 0)
		if err != nil || !bytes.Equal(got[3:], tt.want) || string(got[:3]) != "dst" {
			t.Errorf("%s: got %d bytes, %v; want %d bytes", tt.name, len(got)-3, err, len(tt.want))
		}
	}
}

func TestSnappyCorrupt(t *testing.T) {
	blk := snappy.Encode(nil, jsonish(1000))
	frame := xerial(xerialV1, blk)
	// An s2 block that repeats the last offset with a copy of offset 0:
	// klauspost's default decoder accepts it, C++ snappy does not.
	s2Repeat := []byte{10, 0x04, 'a', 'b', 0x01, 0x02, 0x01, 0x00}
	if out, err := s2.Decode(nil, s2Repeat); err != nil || string(out) != "ababababab" {
		t.Fatalf("s2 extension block: s2 decodes %q, %v", out, err)
	}
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", nil, "snappy"},
		{"raw garbage", []byte{5, 0xFF, 0xFF}, "snappy"},
		{"raw truncated", blk[:len(blk)-1], "snappy"},
		{"raw trailing byte", append(bytes.Clone(blk), 0), "snappy"},
		{"raw s2 extension", s2Repeat, "snappy"},
		{"magic only", xerialV1[:8], "header truncated"},
		{"header truncated", xerialV1[:15], "header truncated"},
		{"chunk length truncated", frame[:18], "length truncated at offset 16"},
		{"chunk cut short", frame[:len(frame)-1], "exceeds"},
		{"chunk length huge", append(bytes.Clone(xerialV1), 0x7F, 0xFF, 0xFF, 0xFF, 1, 2, 3), "length 2147483647 exceeds"},
		{"chunk empty", xerial(xerialV1, []byte{}), "chunk at offset 16"},
		{"chunk garbage", xerial(xerialV1, []byte{5, 0xFF}), "chunk at offset 16"},
		{"chunk s2 extension", xerial(xerialV1, s2Repeat), "chunk at offset 16"},
		{"second chunk bad", xerial(xerialV1, blk, []byte{1}), "chunk at offset " + strconv.Itoa(20+len(blk))},
		{"partial repeated header", append(bytes.Clone(frame), xerialV1[:10]...), "bad xerial header"},
		{"wrong repeated header", append(bytes.Clone(frame), 0x82, 'S', 'N', 'A', 'X', 'X', 'X', 'X', 0, 0, 0, 1, 0, 0, 0, 1), "bad xerial header"},
	}
	for _, tt := range tests {
		out, err := Decompress([]byte("dst"), Snappy, tt.in, 2, 0)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want error containing %q", tt.name, err, tt.want)
		}
		if string(out) != "dst" {
			t.Errorf("%s: returned %q, want dst", tt.name, out)
		}
	}
}
