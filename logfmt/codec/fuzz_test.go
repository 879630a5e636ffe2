package codec

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzDecompress feeds arbitrary bytes to every codec. testdata/fuzz holds
// hand-made edge cases (a magic 0 lz4 frame, a pierrec frame with every
// flag, concatenated xerial streams, bombs); the seeds below add our own
// output for every codec and magic.
func FuzzDecompress(f *testing.F) {
	for _, ct := range codecs {
		for magic := int8(0); magic <= 2; magic++ {
			if enc, err := Compress(nil, ct, jsonish(500), magic); err == nil {
				f.Add(uint8(ct), magic, enc)
			}
		}
	}
	const limit = 1 << 20
	f.Fuzz(func(t *testing.T, codec uint8, magic int8, data []byte) {
		ct := Type(codec & 7)
		out, err := Decompress([]byte("dst"), ct, data, magic, limit)
		if string(out[:3]) != "dst" {
			t.Fatalf("dst overwritten: %q", out[:3])
		}
		if err != nil {
			if len(out) != 3 {
				t.Fatalf("error %v with %d bytes appended", err, len(out)-3)
			}
			return
		}
		if len(out)-3 > limit {
			t.Fatalf("%d bytes decoded past the limit of %d", len(out)-3, limit)
		}
		if !ct.ValidFor(magic) {
			return
		}
		// Whatever decodes must survive our own write and read.
		enc, err := Compress(nil, ct, out[3:], magic)
		if err != nil {
			t.Fatal(err)
		}
		back, err := Decompress(nil, ct, enc, magic, limit)
		if err != nil || !bytes.Equal(back, out[3:]) {
			t.Fatalf("round trip of %d bytes: got %d bytes, %v", len(out)-3, len(back), err)
		}
	})
}

// FuzzReader reads arbitrary payloads in pieces of fuzzed sizes: the bytes
// must be those of one whole read (Decompress), and so must the error.
func FuzzReader(f *testing.F) {
	for _, ct := range codecs {
		for magic := int8(0); magic <= 2; magic++ {
			if enc, err := Compress(nil, ct, jsonish(3000), magic); err == nil {
				f.Add(uint8(ct), magic, uint16(1000), uint16(7), enc)
			}
		}
	}
	const limit = 1 << 20
	f.Fuzz(func(t *testing.T, codec uint8, magic int8, a, b uint16, data []byte) {
		ct := Type(codec & 7)
		want, wantErr := Decompress(nil, ct, data, magic, limit)
		var r Reader
		if err := r.Reset(ct, data, magic, limit); err != nil {
			if wantErr == nil || err.Error() != wantErr.Error() {
				t.Fatalf("Reset: %v; Decompress: %v", err, wantErr)
			}
			return
		}
		got, err := readIn(&r, []int{1 + int(a), 1 + int(b)}, limit)
		if len(got) > limit {
			if !errors.Is(wantErr, ErrTooLarge) {
				t.Fatalf("more than %d bytes in pieces; whole: %v", limit, wantErr)
			}
			return // past Decompress's total, which a Reader does not have
		}
		if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
			t.Fatalf("in pieces of %d and %d: %v; whole: %v", 1+int(a), 1+int(b), err, wantErr)
		}
		if err == nil && !bytes.Equal(got, want) {
			t.Fatalf("in pieces: %d bytes; whole: %d", len(got), len(want))
		}
	})
}
