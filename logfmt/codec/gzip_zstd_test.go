package codec

import (
	"bytes"
	stdgzip "compress/gzip"
	"errors"
	"io"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/logtool/logtool/internal/testkit/testutil/zstdframe"
)

func stdGzip(t *testing.T, data []byte, level int, name string) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := stdgzip.NewWriterLevel(&buf, level)
	if err != nil {
		t.Fatal(err)
	}
	w.Name = name
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestGzipDecode(t *testing.T) {
	a, b := jsonish(50000), []byte("second member")
	tests := []struct {
		name string
		in   []byte
		want []byte
	}{
		{"stdlib default", stdGzip(t, a, stdgzip.DefaultCompression, ""), a},
		{"stdlib stored, with name", stdGzip(t, a, stdgzip.NoCompression, "x.json"), a},
		{"stdlib empty", stdGzip(t, nil, stdgzip.BestSpeed, ""), []byte{}},
		// Java's GZIPInputStream reads concatenated members.
		{"two members", append(stdGzip(t, a, 9, ""), stdGzip(t, b, 1, "")...), append(bytes.Clone(a), b...)},
	}
	for _, tt := range tests {
		got, err := Decompress(nil, Gzip, tt.in, 1, 0)
		if err != nil || !bytes.Equal(got, tt.want) {
			t.Errorf("%s: got %d bytes, %v; want %d bytes", tt.name, len(got), err, len(tt.want))
		}
	}
}

// TestGzipOneMember: our output is a single member that the standard
// library reads to the last byte.
func TestGzipOneMember(t *testing.T) {
	in := jsonish(100 << 10)
	enc, err := Compress(nil, Gzip, in, 2)
	if err != nil {
		t.Fatal(err)
	}
	src := bytes.NewReader(enc)
	r, err := stdgzip.NewReader(src)
	if err != nil {
		t.Fatal(err)
	}
	r.Multistream(false)
	out, err := io.ReadAll(r)
	if err != nil || !bytes.Equal(out, in) {
		t.Fatalf("stdlib read %d bytes, %v", len(out), err)
	}
	if src.Len() != 0 {
		t.Errorf("%d bytes after the first member", src.Len())
	}
}

func TestGzipCorrupt(t *testing.T) {
	good := stdGzip(t, jsonish(2000), 6, "")
	badCRC := bytes.Clone(good)
	badCRC[len(badCRC)-8] ^= 1
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", nil, "truncated"},
		{"not gzip", []byte("hello, world"), "gzip"},
		{"truncated", good[:len(good)-3], "truncated"},
		{"bad CRC", badCRC, "checksum"},
		{"trailing garbage", append(bytes.Clone(good), "junk"...), "gzip"},
	}
	for _, tt := range tests {
		out, err := Decompress([]byte("dst"), Gzip, tt.in, 1, 0)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got %v, want error containing %q", tt.name, err, tt.want)
		}
		if string(out) != "dst" {
			t.Errorf("%s: returned %q, want dst", tt.name, out)
		}
	}
}

func TestZstdEncoding(t *testing.T) {
	in := jsonish(100 << 10)
	enc, err := Compress(nil, Zstd, in, 2)
	if err != nil {
		t.Fatal(err)
	}
	var h zstd.Header
	if err := h.Decode(enc); err != nil {
		t.Fatal(err)
	}
	// zstd-jni writes no checksum unless asked to.
	if h.HasCheckSum {
		t.Errorf("frame has a checksum")
	}
	d, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if out, err := d.DecodeAll(enc, nil); err != nil || !bytes.Equal(out, in) {
		t.Errorf("a fresh decoder read %d bytes, %v", len(out), err)
	}
	// Kafka writes a frame even for no data; so do we.
	if empty, _ := Compress(nil, Zstd, nil, 2); len(empty) == 0 {
		t.Errorf("empty input gave no frame")
	} else if out, err := Decompress(nil, Zstd, empty, 2, 0); err != nil || len(out) != 0 {
		t.Errorf("empty frame decoded to %d bytes, %v", len(out), err)
	}
}

func TestZstdDecode(t *testing.T) {
	a, b := jsonish(30000), []byte("second frame")
	fa, _ := Compress(nil, Zstd, a, 2)
	var h zstd.Header
	if err := h.Decode(zstdStream(a)); err != nil || h.HasFCS || h.WindowSize != 8<<20 {
		t.Fatalf("stream frame: content size %v, window %d, %v; want none and 8 MiB", h.HasFCS, h.WindowSize, err)
	}
	tests := []struct {
		name  string
		in    []byte
		limit int
		want  []byte
	}{
		{"stream frame, no content size", zstdStream(a), 0, a},
		// The stream frame declares an 8 MiB window, more than the limit.
		{"stream frame, small limit", zstdStream(a), 32 << 10, a},
		{"two frames", append(bytes.Clone(fa), zstdStream(b)...), 0, append(bytes.Clone(a), b...)},
	}
	for _, tt := range tests {
		got, err := Decompress(nil, Zstd, tt.in, 2, tt.limit)
		if err != nil || !bytes.Equal(got, tt.want) {
			t.Errorf("%s: got %d bytes, %v; want %d bytes", tt.name, len(got), err, len(tt.want))
		}
	}
}

// TestZstdLargeWindow: zstd levels 20-22 declare windows up to 128 MiB,
// which the decoder accepts only if the limit is as large.
func TestZstdLargeWindow(t *testing.T) {
	var buf bytes.Buffer
	w, err := zstd.NewWriter(&buf, zstd.WithWindowSize(128<<20))
	if err != nil {
		t.Fatal(err)
	}
	in := jsonish(1000)
	if _, err := w.Write(in); err != nil {
		t.Fatal(err)
	}
	// Flushing before Close makes the writer emit the header before it
	// knows the content size, so the header states the window.
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var h zstd.Header
	if err := h.Decode(buf.Bytes()); err != nil || h.WindowSize != 128<<20 {
		t.Fatalf("frame window %d, %v; want 128 MiB", h.WindowSize, err)
	}
	if _, err := Decompress(nil, Zstd, buf.Bytes(), 2, DefaultLimit); !errors.Is(err, ErrTooLarge) {
		t.Errorf("128 MiB window, default limit: got %v, want ErrTooLarge", err)
	}
	if out, err := Decompress(nil, Zstd, buf.Bytes(), 2, 128<<20); err != nil || !bytes.Equal(out, in) {
		t.Errorf("128 MiB window, 128 MiB limit: got %d bytes, %v", len(out), err)
	}
}

func TestZstdCorrupt(t *testing.T) {
	good, _ := Compress(nil, Zstd, jsonish(5000), 2)
	tests := []struct {
		name string
		in   []byte
	}{
		{"empty", nil},
		{"not zstd", []byte("hello, world")},
		{"truncated", good[:len(good)-1]},
		{"trailing garbage", append(bytes.Clone(good), "junk"...)},
	}
	for _, tt := range tests {
		out, err := Decompress([]byte("dst"), Zstd, tt.in, 2, 0)
		if err == nil || !strings.HasPrefix(err.Error(), "zstd: ") {
			t.Errorf("%s: got %v, want a zstd error", tt.name, err)
		}
		if string(out) != "dst" {
			t.Errorf("%s: returned %q, want dst", tt.name, out)
		}
	}
}

// A frame written in one segment needs a window as large as its content:
// one declaring more than the limit is refused, naming its size, before
// anything is allocated for it. Frames with a window under the limit
// decode a window at a time, however much they hold.
func TestZstdWindowRefusedBeforeDecoding(t *testing.T) {
	small := zstdframe.RLE(1 << 20)
	if out, err := Decompress(nil, Zstd, small, 2, 0); err != nil || len(out) != 1<<20 {
		t.Fatalf("1 MiB RLE frame: %d bytes, %v", len(out), err)
	}
	bomb := zstdframe.RLE(512 << 20)
	var r Reader
	buf := make([]byte, 64<<10)
	// Bytes, not a count of allocations: the count is the whole process's,
	// and the shared decoders' goroutines of earlier calls still allocate
	// a little now and then.
	var start, end runtime.MemStats
	runtime.ReadMemStats(&start)
	for range 3 {
		if err := r.Reset(Zstd, bomb, 2, DefaultLimit); err != nil {
			t.Fatal(err)
		}
		_, err := r.Read(buf)
		if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "frame window of 536870912 bytes") {
			t.Fatalf("err = %v, want ErrTooLarge naming the window", err)
		}
	}
	runtime.ReadMemStats(&end)
	if n := end.TotalAlloc - start.TotalAlloc; n > 1<<20 {
		t.Errorf("refusing a declared bomb three times allocated %d bytes; want under 1 MiB", n)
	}
	// The same content in frames of 1 MiB streams, a frame at a time.
	many := bytes.Repeat(small, 512)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := r.Reset(Zstd, many, 2, DefaultLimit); err != nil {
		t.Fatal(err)
	}
	n, err := io.CopyBuffer(io.Discard, &r, buf)
	runtime.ReadMemStats(&after)
	if err != nil || n != 512<<20 {
		t.Fatalf("512 frames of 1 MiB: %d bytes, %v", n, err)
	}
	if a := after.TotalAlloc - before.TotalAlloc; a > 16<<20 {
		t.Errorf("allocated %d bytes streaming 512 MiB", a)
	}
}

// bigWindowFrame is a zstd frame of n bytes of content, in raw blocks, that
// states its content size and, not being written in one segment, a window
// of 128 MiB: more than the streaming decoder accepts under the default
// limit (64 MiB).
func bigWindowFrame(content []byte) []byte {
	n := len(content)
	f := []byte{0x28, 0xb5, 0x2f, 0xfd, 2 << 6, (27 - 10) << 3, byte(n), byte(n >> 8), byte(n >> 16), byte(n >> 24)}
	for len(content) > 0 {
		k := min(len(content), 100<<10)
		h := uint32(k) << 3 // a raw block
		if k == len(content) {
			h |= 1
		}
		f = append(f, byte(h), byte(h>>8), byte(h>>16))
		f = append(f, content[:k]...)
		content = content[k:]
	}
	return f
}

// TestZstdSameWhateverTheSlice: what a Reader reads, and its error, must
// not depend on the size of the caller's slice. A frame that states its
// content size and fits the slice is decoded whole (DecodeAll, no window
// limit); otherwise it streams, and the stream refuses a declared window
// over the limit. So a frame with a 128 MiB window and 300 KiB of content
// decodes into a 512 KiB slice and fails into a 256 KiB one.
func TestZstdSameWhateverTheSlice(t *testing.T) {
	content := jsonish(300 << 10)
	in := bigWindowFrame(content)
	read := func(size int) ([]byte, error) {
		var r Reader
		defer r.release()
		if err := r.Reset(Zstd, in, 2, DefaultLimit); err != nil {
			return nil, err
		}
		return readIn(&r, []int{size}, math.MaxInt)
	}
	big, bigErr := read(512 << 10)
	small, smallErr := read(256 << 10)
	if !bytes.Equal(big, small) || (bigErr == nil) != (smallErr == nil) {
		t.Errorf("512 KiB slice: %d bytes, %v; 256 KiB slice: %d bytes, %v", len(big), bigErr, len(small), smallErr)
	}
}
