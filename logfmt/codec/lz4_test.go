package codec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/pierrec/lz4/v4"
)

// TestLZ4Header checks the exact bytes Kafka writes around the blocks: the
// 7-byte header, whose last byte differs between magic 0 and later, and the
// end mark.
func TestLZ4Header(t *testing.T) {
	tests := []struct {
		magic int8
		want  []byte
	}{
		{0, []byte{0x04, 0x22, 0x4D, 0x18, 0x60, 0x40, 0x1A, 0, 0, 0, 0}},
		{1, []byte{0x04, 0x22, 0x4D, 0x18, 0x60, 0x40, 0x82, 0, 0, 0, 0}},
		{2, []byte{0x04, 0x22, 0x4D, 0x18, 0x60, 0x40, 0x82, 0, 0, 0, 0}},
	}
	for _, tt := range tests {
		got, err := Compress(nil, LZ4, nil, tt.magic)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, tt.want) {
			t.Errorf("magic %d: empty frame % x, want % x", tt.magic, got, tt.want)
		}
		got, err = Compress(nil, LZ4, jsonish(1000), tt.magic)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got[:7], tt.want[:7]) || !bytes.HasSuffix(got, tt.want[7:]) {
			t.Errorf("magic %d: frame starts % x and ends % x, want % x and % x",
				tt.magic, got[:7], got[len(got)-4:], tt.want[:7], tt.want[7:])
		}
	}
}

// lz4Blocks returns the size words of the blocks of a frame with a 7-byte
// header and no checksums.
func lz4Blocks(t *testing.T, frame []byte) []uint32 {
	t.Helper()
	var words []uint32
	for pos := 7; ; {
		w := binary.LittleEndian.Uint32(frame[pos:])
		if w == 0 {
			if pos+4 != len(frame) {
				t.Fatalf("end mark at %d of %d bytes", pos, len(frame))
			}
			return words
		}
		words = append(words, w)
		pos += 4 + int(w&^lz4BlockUncompressed)
	}
}

func TestLZ4Blocks(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		want []uint32 // size words; 0 stands for any compressed size
	}{
		{"json 64KiB+1", jsonish(64<<10 + 1), []uint32{0, 1 | 1<<31}},
		{"json 100KiB", jsonish(100 << 10), []uint32{0, 0}},
		// Incompressible blocks are stored as they are, with bit 31 set.
		{"random 100KiB", random(100<<10, 2), []uint32{64<<10 | 1<<31, 36<<10 | 1<<31}},
		// A block that compression would not shrink is stored.
		{"short", []byte("abc"), []uint32{3 | 1<<31}},
	}
	for _, tt := range tests {
		frame, err := Compress(nil, LZ4, tt.in, 2)
		if err != nil {
			t.Fatal(err)
		}
		got := lz4Blocks(t, frame)
		if len(got) != len(tt.want) {
			t.Fatalf("%s: blocks %x, want %x", tt.name, got, tt.want)
		}
		for i, w := range tt.want {
			if w == 0 && (got[i]&lz4BlockUncompressed != 0 || got[i] == 0) || w != 0 && got[i] != w {
				t.Errorf("%s: block %d size word %#x, want %#x", tt.name, i, got[i], w)
			}
		}
	}
}

// TestLZ4HeaderChecksum: Kafka ignores the HC byte for magic 0, whose
// writers computed it wrongly, and checks it for magic 1 and 2.
func TestLZ4HeaderChecksum(t *testing.T) {
	in := jsonish(5000)
	broken, _ := Compress(nil, LZ4, in, 0)
	correct, _ := Compress(nil, LZ4, in, 1)
	garbage := bytes.Clone(correct)
	garbage[6] = 0x55
	tests := []struct {
		name   string
		frame  []byte
		magic  int8
		wantOK bool
	}{
		{"broken HC, magic 0", broken, 0, true},
		{"correct HC, magic 0", correct, 0, true},
		{"garbage HC, magic 0", garbage, 0, true},
		{"broken HC, magic 1", broken, 1, false},
		{"broken HC, magic 2", broken, 2, false},
		{"correct HC, magic 1", correct, 1, true},
		{"garbage HC, magic 2", garbage, 2, false},
	}
	for _, tt := range tests {
		out, err := Decompress(nil, LZ4, tt.frame, tt.magic, 0)
		switch {
		case tt.wantOK && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.wantOK && !bytes.Equal(out, in):
			t.Errorf("%s: wrong output", tt.name)
		case !tt.wantOK && (err == nil || !strings.Contains(err.Error(), "header checksum")):
			t.Errorf("%s: got %v, want a header checksum error", tt.name, err)
		}
	}
}

// TestLZ4PierrecReadsOurs: pierrec's frame reader, which always checks the
// header checksum, accepts our frames for magic 1 and 2 and rejects the
// broken checksum of magic 0.
func TestLZ4PierrecReadsOurs(t *testing.T) {
	for _, in := range [][]byte{{}, jsonish(200 << 10), random(70<<10, 3)} {
		for magic := int8(0); magic <= 2; magic++ {
			frame, err := Compress(nil, LZ4, in, magic)
			if err != nil {
				t.Fatal(err)
			}
			out, err := io.ReadAll(lz4.NewReader(bytes.NewReader(frame)))
			if magic == 0 {
				if !errors.Is(err, lz4.ErrInvalidHeaderChecksum) {
					t.Errorf("magic 0: pierrec got %v, want ErrInvalidHeaderChecksum", err)
				}
				continue
			}
			if err != nil || !bytes.Equal(out, in) {
				t.Errorf("magic %d, %d bytes: pierrec read %d bytes, %v", magic, len(in), len(out), err)
			}
		}
	}
}

// TestLZ4ReadsPierrec decodes frames with the options other writers use:
// larger blocks (sarama's pierrec default is 4 MiB), block and content
// checksums, and a content size.
func TestLZ4ReadsPierrec(t *testing.T) {
	in := jsonish(600 << 10)
	tests := []struct {
		name string
		opts []lz4.Option
	}{
		{"defaults", nil},
		{"64KiB blocks", []lz4.Option{lz4.BlockSizeOption(lz4.Block64Kb), lz4.ChecksumOption(false)}},
		{"256KiB blocks, block checksums", []lz4.Option{lz4.BlockSizeOption(lz4.Block256Kb), lz4.BlockChecksumOption(true)}},
		{"1MiB blocks, content size", []lz4.Option{lz4.BlockSizeOption(lz4.Block1Mb), lz4.SizeOption(uint64(len(in)))}},
		{"4MiB blocks, all flags", []lz4.Option{lz4.BlockSizeOption(lz4.Block4Mb), lz4.BlockChecksumOption(true),
			lz4.ChecksumOption(true), lz4.SizeOption(uint64(len(in)))}},
		{"level 9", []lz4.Option{lz4.CompressionLevelOption(lz4.Level9)}},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		w := lz4.NewWriter(&buf)
		if err := w.Apply(tt.opts...); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(in); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		for magic := int8(0); magic <= 2; magic++ {
			out, err := Decompress(nil, LZ4, buf.Bytes(), magic, 0)
			if err != nil || !bytes.Equal(out, in) {
				t.Errorf("%s, magic %d: got %d bytes, %v", tt.name, magic, len(out), err)
			}
		}
	}
}

func TestLZ4Corrupt(t *testing.T) {
	good, _ := Compress(nil, LZ4, jsonish(100<<10), 2)
	block := lz4Block(jsonish(1000))
	patch := func(b []byte, at int, v ...byte) []byte {
		b = bytes.Clone(b)
		copy(b[at:], v)
		return b
	}
	withHC := func(f []byte) []byte { // recompute HC after patching the descriptor
		f = bytes.Clone(f)
		f[6] = lz4HeaderChecksum(f[:6], 1)
		return f
	}
	checksummed := func(flg byte, tail ...byte) []byte {
		f := []byte{0x04, 0x22, 0x4D, 0x18, flg, 0x40}
		f = append(f, lz4HeaderChecksum(f, 1))
		f = append(f, block...)
		sum := binary.LittleEndian.AppendUint32(nil, xxh32(block[4:], 0))
		return append(append(f, sum...), tail...)
	}
	tests := []struct {
		name  string
		frame []byte
		want  string
	}{
		{"empty", nil, "truncated"},
		{"short header", good[:6], "truncated"},
		{"bad magic", patch(good, 0, 0x03), "magic"},
		{"version 0", withHC(patch(good, 4, 0x20)), "version"},
		{"reserved FLG bit", withHC(patch(good, 4, 0x61)), "reserved"},
		{"reserved BD bit", withHC(patch(good, 5, 0xC0)), "reserved"},
		{"dependent blocks", withHC(patch(good, 4, 0x40)), "dependent"},
		{"block size id 3", withHC(patch(good, 5, 0x30)), "block size id"},
		{"content size truncated", withHC(patch(good[:10], 4, 0x68)), "truncated"},
		{"no end mark", good[:len(good)-4], "truncated"},
		{"partial end mark", good[:len(good)-2], "truncated"},
		{"block cut short", good[:200], "exceeds"},
		{"block over 64KiB", lz4Frame(0x60, 0x40, patch(block, 0, 0x01, 0x00, 0x01, 0x00)), "maximum"},
		{"stored block over 64KiB", lz4Frame(0x60, 0x40, patch(block, 0, 0x01, 0x00, 0x01, 0x80)), "maximum"},
		{"garbage block", lz4Frame(0x60, 0x40, []byte{3, 0, 0, 0, 0xF0, 0xFF, 0xFF}), "block at offset 7"},
		{"bad back reference", lz4Frame(0x60, 0x40, []byte{5, 0, 0, 0, 0x14, 'a', 0x05, 0x00, 0x00}), "corrupt"},
		{"trailing bytes", append(bytes.Clone(good), 0), "after the end"},
		{"second frame", append(bytes.Clone(good), good...), "after the end"},
		{"bad block checksum", patch(checksummed(0x70, 0, 0, 0, 0), 7+len(block), 0xEE), "checksum"},
		{"block checksum missing", checksummed(0x70)[:7+len(block)+2], "checksum truncated"},
		{"content checksum missing", checksummed(0x74, 0, 0, 0, 0), "content checksum truncated"},
	}
	for _, tt := range tests {
		out, err := Decompress([]byte("dst"), LZ4, tt.frame, 2, 0)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want error containing %q", tt.name, err, tt.want)
		}
		if string(out) != "dst" {
			t.Errorf("%s: returned %q, want dst", tt.name, out)
		}
	}
	// The same checksummed frames are fine when intact; the content
	// checksum is read but not verified, as in Kafka.
	for _, f := range [][]byte{checksummed(0x70, 0, 0, 0, 0), checksummed(0x74, 0, 0, 0, 0, 1, 2, 3, 4)} {
		if out, err := Decompress(nil, LZ4, f, 2, 0); err != nil || !bytes.Equal(out, jsonish(1000)) {
			t.Errorf("checksummed frame FLG %#x: %d bytes, %v", f[4], len(out), err)
		}
	}
}

// TestLZ4StoredEndMark: Kafka reads a zero size with the stored bit set as
// the end mark too.
func TestLZ4StoredEndMark(t *testing.T) {
	f := lz4Frame(0x60, 0x40, lz4Block([]byte("hello, hello, hello, hello")))
	copy(f[len(f)-4:], []byte{0, 0, 0, 0x80})
	if out, err := Decompress(nil, LZ4, f, 2, 0); err != nil || string(out) != "hello, hello, hello, hello" {
		t.Errorf("got %q, %v", out, err)
	}
}

// TestLZ4BlockLen compares the length lz4BlockLen predicts with what the
// block decodes to, for blocks of varied content and size.
func TestLZ4BlockLen(t *testing.T) {
	var c lz4.CompressorHC
	for _, in := range [][]byte{
		jsonish(1), jsonish(15), jsonish(16), jsonish(300), jsonish(64 << 10),
		make([]byte, 64<<10), random(1000, 4), bytes.Repeat([]byte("ab"), 40000),
	} {
		block := make([]byte, lz4.CompressBlockBound(len(in)))
		n, err := c.CompressBlock(in, block)
		if err != nil || n == 0 {
			t.Fatalf("%d bytes did not compress: %v", len(in), err)
		}
		got, err := lz4BlockLen(block[:n], 4<<20)
		if err != nil || got != len(in) {
			t.Errorf("%d bytes: lz4BlockLen = %d, %v", len(in), got, err)
		}
		if _, err := lz4BlockLen(block[:n], len(in)-1); err == nil {
			t.Errorf("%d bytes: no error with a maximum one byte short", len(in))
		}
	}
	for _, b := range [][]byte{
		{},
		{0xF0},                  // literal length extension missing
		{0xF0, 0xFF},            // literal length extension unfinished
		{0x30, 'a', 'b'},        // literals cut short
		{0x10, 'a', 0x01},       // match offset cut short
		{0x1F, 'a', 0x01, 0x00}, // match length extension missing
		{0x10, 'a', 0x01, 0x00}, // ends with a match
	} {
		if n, err := lz4BlockLen(b, 64<<10); err == nil {
			t.Errorf("% x: lz4BlockLen = %d, want error", b, n)
		}
	}
}

func TestXXH32(t *testing.T) {
	tests := []struct {
		in   string
		seed uint32
		want uint32
	}{
		{"", 0, 0x02CC5D05},
		{"a", 0, 0x550D7456},
		{"abc", 0, 0x32D153FF},
		{"Nobody inspects the spammish repetition", 0, 0xE2293B2F},
	}
	for _, tt := range tests {
		if got := xxh32([]byte(tt.in), tt.seed); got != tt.want {
			t.Errorf("xxh32(%q, %d) = %08x, want %08x", tt.in, tt.seed, got, tt.want)
		}
	}
}

// TestXXH32Pierrec checks xxh32 on every length from 0 to 100 and a few
// large ones against the content checksum pierrec writes, the xxh32 of the
// whole content.
func TestXXH32Pierrec(t *testing.T) {
	data := random(1<<20+7, 5)
	lengths := []int{1 << 10, 64<<10 + 3, len(data)}
	for n := range 101 {
		lengths = append(lengths, n)
	}
	for _, n := range lengths {
		var buf bytes.Buffer
		w := lz4.NewWriter(&buf)
		if err := w.Apply(lz4.ChecksumOption(true)); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data[:n]); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		frame := buf.Bytes()
		if want, got := binary.LittleEndian.Uint32(frame[len(frame)-4:]), xxh32(data[:n], 0); got != want {
			t.Errorf("%d bytes: xxh32 = %08x, pierrec wrote %08x", n, got, want)
		}
	}
}
