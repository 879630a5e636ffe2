package codec

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
)

func TestTypeNames(t *testing.T) {
	tests := []struct {
		t    Type
		name string
	}{
		{None, "none"}, {Gzip, "gzip"}, {Snappy, "snappy"}, {LZ4, "lz4"}, {Zstd, "zstd"},
	}
	for _, tt := range tests {
		if got := tt.t.String(); got != tt.name {
			t.Errorf("Type(%d).String() = %q, want %q", tt.t, got, tt.name)
		}
		got, err := Parse(tt.name)
		if err != nil || got != tt.t {
			t.Errorf("Parse(%q) = %v, %v; want %v", tt.name, got, err, tt.t)
		}
	}
	for _, tt := range []struct {
		t    Type
		name string
	}{{5, "unknown(5)"}, {7, "unknown(7)"}, {-1, "unknown(-1)"}} {
		if got := tt.t.String(); got != tt.name {
			t.Errorf("Type(%d).String() = %q, want %q", tt.t, got, tt.name)
		}
	}
	for _, s := range []string{"", "GZIP", "unknown(5)", "lz4 ", "producer"} {
		if got, err := Parse(s); err == nil {
			t.Errorf("Parse(%q) = %v, want error", s, got)
		}
	}
}

func TestValidFor(t *testing.T) {
	tests := []struct {
		t     Type
		magic int8
		want  bool
	}{
		{None, 0, true}, {Gzip, 0, true}, {Snappy, 1, true}, {LZ4, 0, true}, {LZ4, 2, true},
		{Zstd, 0, false}, {Zstd, 1, false}, {Zstd, 2, true},
		{5, 2, false}, {6, 2, false}, {7, 2, false}, {-1, 2, false},
		{None, 3, false}, {Gzip, -1, false},
	}
	for _, tt := range tests {
		if got := tt.t.ValidFor(tt.magic); got != tt.want {
			t.Errorf("%v.ValidFor(%d) = %v, want %v", tt.t, tt.magic, got, tt.want)
		}
	}
}

var codecs = []Type{None, Gzip, Snappy, LZ4, Zstd}

func TestRoundTrip(t *testing.T) {
	inputs := map[string][]byte{
		"empty":         {},
		"one byte":      {'x'},
		"small json":    jsonish(300),
		"32KiB":         jsonish(32 << 10),
		"32KiB+1":       jsonish(32<<10 + 1),
		"64KiB":         jsonish(64 << 10),
		"64KiB+1":       jsonish(64<<10 + 1),
		"300KiB json":   jsonish(300 << 10),
		"random 200KiB": random(200<<10, 1),
		"zeros 1MiB":    make([]byte, 1<<20),
	}
	prefix := []byte("prefix")
	for _, ct := range codecs {
		for magic := int8(0); magic <= 2; magic++ {
			if !ct.ValidFor(magic) {
				continue
			}
			for name, in := range inputs {
				t.Run(fmt.Sprintf("%v/magic%d/%s", ct, magic, name), func(t *testing.T) {
					enc, err := Compress(bytes.Clone(prefix), ct, in, magic)
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.HasPrefix(enc, prefix) {
						t.Fatalf("Compress did not append to dst")
					}
					dec, err := Decompress(bytes.Clone(prefix), ct, enc[len(prefix):], magic, len(in))
					if err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(dec[len(prefix):], in) || !bytes.HasPrefix(dec, prefix) {
						t.Fatalf("round trip changed the data: got %d bytes, want %d", len(dec)-len(prefix), len(in))
					}
				})
			}
		}
	}
}

func TestCompressRefusesInvalid(t *testing.T) {
	tests := []struct {
		t     Type
		magic int8
	}{{Zstd, 0}, {Zstd, 1}, {5, 2}, {7, 0}, {Gzip, 3}, {LZ4, -1}}
	for _, tt := range tests {
		dst := []byte("keep")
		out, err := Compress(dst, tt.t, []byte("data"), tt.magic)
		if err == nil {
			t.Errorf("Compress(%v, magic %d) succeeded", tt.t, tt.magic)
		}
		if string(out) != "keep" {
			t.Errorf("Compress(%v, magic %d) returned %q, want dst unchanged", tt.t, tt.magic, out)
		}
	}
}

func TestDecompressUnknownCodec(t *testing.T) {
	for _, ct := range []Type{5, 6, 7, -3} {
		if _, err := Decompress(nil, ct, []byte("data"), 2, 0); err == nil {
			t.Errorf("Decompress(%v) succeeded", ct)
		}
	}
}

// TestLimitBoundary checks that output of exactly limit bytes decodes and one
// byte more fails, with and without bytes already in dst.
func TestLimitBoundary(t *testing.T) {
	const limit = 100 << 10
	in := jsonish(limit + 1)
	for _, ct := range codecs {
		// 9 MiB of prefix passes zstdMinWindow: klauspost counts it against
		// the decoder cap when a frame states its content size.
		for _, prefixLen := range []int{0, 9 << 20} {
			t.Run(fmt.Sprintf("%v/prefix%d", ct, prefixLen), func(t *testing.T) {
				dst := make([]byte, prefixLen)
				for _, n := range []int{limit, limit + 1} {
					enc, err := Compress(nil, ct, in[:n], 2)
					if err != nil {
						t.Fatal(err)
					}
					out, err := Decompress(dst, ct, enc, 2, limit)
					switch {
					case n <= limit && err != nil:
						t.Errorf("%d bytes with limit %d: %v", n, limit, err)
					case n <= limit && !bytes.Equal(out[prefixLen:], in[:n]):
						t.Errorf("%d bytes with limit %d: wrong output", n, limit)
					case n > limit && !errors.Is(err, ErrTooLarge):
						t.Errorf("%d bytes with limit %d: got %v, want ErrTooLarge", n, limit, err)
					case n > limit && len(out) != prefixLen:
						t.Errorf("%d bytes with limit %d: returned %d bytes, want dst back", n, limit, len(out))
					}
				}
			})
		}
	}
}

func TestDefaultLimit(t *testing.T) {
	enc, err := Compress(nil, LZ4, make([]byte, DefaultLimit+1), 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Decompress(nil, LZ4, enc, 2, 0); !errors.Is(err, ErrTooLarge) {
		t.Errorf("limit 0: got %v, want ErrTooLarge at DefaultLimit", err)
	}
	if _, err := Decompress(nil, LZ4, enc, 2, DefaultLimit+1); err != nil {
		t.Errorf("limit DefaultLimit+1: %v", err)
	}
}

// TestBombs decompresses small inputs that expand to 64 MiB or more with a
// 1 MiB limit, and checks that they fail without allocating much.
func TestBombs(t *testing.T) {
	const limit = 1 << 20
	zeros := make([]byte, 64<<20)
	bombs := []struct {
		name string
		t    Type
		data []byte
	}{
		// A raw snappy block that claims 2 GiB: nothing may be allocated.
		{"snappy raw length", Snappy, []byte{0x80, 0x80, 0x80, 0x80, 0x08, 0x00, 'x'}},
		{"lz4 4MiB blocks", LZ4, lz4Frame(0x60, 0x70, lz4Block(make([]byte, 4<<20)), lz4Block(make([]byte, 4<<20)))},
		{"zstd without content size", Zstd, zstdStream(zeros)},
	}
	for _, ct := range codecs[1:] {
		enc, err := Compress(nil, ct, zeros, 2)
		if err != nil {
			t.Fatal(err)
		}
		bombs = append(bombs, struct {
			name string
			t    Type
			data []byte
		}{ct.String(), ct, enc})
	}
	// Appending grows a large slice by a quarter at a time, so reaching n
	// bytes allocates about 5n in all. The zstd decoder stops at its cap,
	// at least zstdMinWindow; the others within a block or chunk of the limit.
	maxAlloc := func(t Type) uint64 {
		if t == Zstd {
			return 6 * zstdMinWindow
		}
		return 6 * limit
	}
	for _, bomb := range bombs {
		t.Run(bomb.name, func(t *testing.T) {
			// The first call warms up pools and the shared zstd decoder,
			// so that only the second is measured.
			for i := range 2 {
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				_, err := Decompress(nil, bomb.t, bomb.data, 2, limit)
				runtime.ReadMemStats(&after)
				if !errors.Is(err, ErrTooLarge) {
					t.Fatalf("got %v, want ErrTooLarge", err)
				}
				if n := after.TotalAlloc - before.TotalAlloc; i == 1 && n > maxAlloc(bomb.t) {
					t.Errorf("allocated %d bytes for a %d-byte bomb with limit %d", n, len(bomb.data), limit)
				}
			}
		})
	}
}

// TestTruncated cuts valid compressed data at every length and checks that
// Decompress fails without panicking. xerial framing has no end marker, so a
// cut between chunks is undetectable and must give a prefix of the input.
func TestTruncated(t *testing.T) {
	in := jsonish(100 << 10)
	for _, ct := range codecs[1:] {
		for _, magic := range []int8{0, 2} {
			if !ct.ValidFor(magic) {
				continue
			}
			enc, err := Compress(nil, ct, in, magic)
			if err != nil {
				t.Fatal(err)
			}
			cuts := []int{len(enc) - 1, len(enc) - 4}
			for n := 0; n < len(enc); n += 1 + n/64 {
				cuts = append(cuts, n)
			}
			for _, n := range cuts {
				out, err := Decompress(nil, ct, enc[:n], magic, 0)
				if err == nil && !(ct == Snappy && bytes.HasPrefix(in, out)) {
					t.Fatalf("%v magic %d: %d of %d bytes decoded without error", ct, magic, n, len(enc))
				}
			}
		}
	}
}

// TestConcurrent runs every codec from several goroutines at once, for the
// race detector to check the pooled and shared encoders and decoders.
func TestConcurrent(t *testing.T) {
	in := jsonish(70 << 10)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 20 {
				ct := codecs[(g+i)%len(codecs)]
				enc, err := Compress(nil, ct, in, 2)
				if err != nil {
					t.Error(err)
					return
				}
				out, err := Decompress(nil, ct, enc, 2, 0)
				if err != nil || !bytes.Equal(out, in) {
					t.Errorf("%v: got %d bytes, %v", ct, len(out), err)
					return
				}
			}
		})
	}
	wg.Wait()
}
