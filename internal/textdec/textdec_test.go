package textdec

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestPieceEnd: decoding a key or value in the pieces dump streams a large one in
// gives the bytes that decoding it whole does, for every decoder, with
// sequences of every length, valid, cut short and stray, across every cut.
func TestPieceEnd(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := [][]byte{
		[]byte("a"), []byte("é"), []byte("€"), []byte("𝄞"),
		{0xe2, 0x82}, {0xf0, 0x9d, 0x84}, {0x80}, {0xbf, 0xbf, 0xbf}, {0xff}, {0xc0, 0xaf},
	}
	for range 2000 {
		var b []byte
		for len(b) < 40 {
			b = append(b, alphabet[rng.IntN(len(alphabet))]...)
		}
		for _, dec := range []Decoder{String, Hex, Base64} {
			for n := 4; n < 12; n++ {
				var got []byte
				rest := b
				for len(rest) > n {
					k := dec.PieceEnd(rest, n)
					if k <= 0 || k > n {
						t.Fatalf("PieceEnd(%x, %d) = %d", rest, n, k)
					}
					got = dec.AppendText(got, rest[:k])
					rest = rest[k:]
				}
				got = dec.AppendText(got, rest)
				if want := dec.AppendText(nil, b); !bytes.Equal(got, want) {
					t.Fatalf("decoder %v, pieces of %d of %x: %q, want %q", dec, n, b, got, want)
				}
			}
		}
	}
}

// TestAppendJSONPieces: a key or value written into JSON a piece at a time
// reads as AppendJSON writes it whole, for every decoder, with valid UTF-8,
// escapes and invalid bytes (the base64 object) across piece sizes, and is
// handed on after each piece.
func TestAppendJSONPieces(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := [][]byte{
		[]byte("a"), []byte("é"), []byte("𝄞"), []byte(`"`), []byte(`\`), {'\n'}, {0x01},
	}
	for i := range 1000 {
		var b []byte
		for len(b) < 40 {
			b = append(b, alphabet[rng.IntN(len(alphabet))]...)
		}
		if i%2 == 1 {
			b[rng.IntN(len(b))] = 0xff // not UTF-8: the base64 object
		}
		for _, dec := range []Decoder{String, Hex, Base64} {
			for n := 3; n < 12; n++ {
				flushes := 0
				flush := func(dst []byte) []byte {
					flushes++
					return dst
				}
				got := dec.AppendJSONPieces([]byte("x"), b, n, flush)
				if want := dec.AppendJSON([]byte("x"), b); !bytes.Equal(got, want) {
					t.Fatalf("decoder %v, pieces of %d of %x: %s, want %s", dec, n, b, got, want)
				}
				if flushes < len(b)/n-1 {
					t.Fatalf("decoder %v, pieces of %d of %d bytes: %d flushes", dec, n, len(b), flushes)
				}
			}
		}
	}
	if got := String.AppendJSONPieces(nil, nil, 4, nil); string(got) != "null" {
		t.Fatalf("nil: %s", got)
	}
}
