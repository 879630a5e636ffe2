package export

import (
	"bytes"
	"strings"
	"testing"

	"github.com/logtool/logtool/fetch"
	"github.com/logtool/logtool/logfmt"
)

// TestAppendStreamed: the line AppendStreamed passes on in pieces is the
// line Append makes, in each encoding, for values of text with characters
// JSON escapes, of bytes that are not UTF-8, and null; and no piece it
// flushes holds more than a chunk and a piece.
func TestAppendStreamed(t *testing.T) {
	text := []byte(strings.Repeat("héllo \"wörld\"\n\x01\\ ", 200000)) // 4 MiB
	binary := append([]byte{0xff}, text...)
	for _, enc := range []Encoding{Base64, UTF8} {
		e := NewEncoder("t", 0, JSONLines, enc, fetch.ReadCommitted)
		for _, v := range [][]byte{text, binary, nil} {
			r := &fetch.Record{Record: &logfmt.Record{Offset: 7, Timestamp: 9, Key: []byte("k"), Value: v,
				Headers: []logfmt.Header{{Key: []byte("h"), Value: []byte("v")}}}}
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
			if got = append(got, out...); !bytes.Equal(got, want) {
				t.Errorf("encoding %v, value of %d bytes: streamed line differs from Append's", enc, len(v))
			}
		}
	}
}
