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
