package export

import (
	"bytes"
	"strings"
	"testing"

	"github.com/logtool/logtool/fetch"
	"github.com/logtool/logtool/logfmt"
)

// TestAppendStreamed: the line AppendStreamed passes on in pieces is the
// line Append makes, in each format and encoding, for byte strings of text with
// characters JSON escapes, of bytes that are not UTF-8, and null, as the
// value, the key, a header key and a header value; and no piece it flushes,
// nor what it leaves, holds more than a chunk and a piece.
func TestAppendStreamed(t *testing.T) {
	text := []byte(strings.Repeat("héllo \"wörld\"\n\x01\\ ", 200000)) // 4 MiB
	binary := append([]byte{0xff}, text...)
	for _, c := range []struct {
		f   Format
		enc Encoding
	}{{JSONLines, Base64}, {JSONLines, UTF8}, {Kcat, Base64}, {Kcat, UTF8}} {
		e, enc := NewEncoder("t", 0, c.f, c.enc, fetch.ReadCommitted), c.enc
		for _, v := range [][]byte{text, binary, nil} {
			for place := range 4 {
				r := &fetch.Record{Record: &logfmt.Record{Offset: 7, Timestamp: 9, Key: []byte("k"), Value: []byte("v"),
					Headers: []logfmt.Header{{Key: []byte("h"), Value: []byte("v")}}}}
				switch place {
				case 0:
					r.Value = v
				case 1:
					r.Key = v
				case 2:
					if v == nil {
						continue // a header key is never null
					}
					r.Headers[0].Key = v
				case 3:
					r.Headers[0].Value = v
				}
				want := e.Append([]byte("before\n"), r)
				var got []byte
				out, err := e.AppendStreamed([]byte("before\n"), r, func(b []byte) ([]byte, error) {
					if len(b) > chunkSize+streamPiece*4/3+64 {
						t.Errorf("flushed %d bytes at once", len(b))
					}
					got = append(got, b...)
					return b[:0], nil
				})
				if err != nil {
					t.Fatal(err)
				}
				if len(out) > chunkSize+streamPiece*4/3+64 {
					t.Errorf("format %v, encoding %v, %d bytes in place %d: %d bytes left unflushed", c.f, enc, len(v), place, len(out))
				}
				if got = append(got, out...); !bytes.Equal(got, want) {
					t.Errorf("format %v, encoding %v, %d bytes in place %d: streamed line differs from Append's", c.f, enc, len(v), place)
				}
			}
		}
	}
}
