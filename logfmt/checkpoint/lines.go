package checkpoint

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/logtool/logtool/logfmt"
)

// maxLine caps one line of a text checkpoint. Kafka's lines hold a topic name
// (at most 249 bytes) and two numbers, so a longer line is never a checkpoint,
// and the cap stops a file without line breaks from being buffered whole.
const maxLine = 64 << 10

// lineEnd returns the index of the first line terminator in b, or -1. Java's
// BufferedReader.readLine, which every Kafka checkpoint reader uses, ends a
// line at "\n", at "\r" and at "\r\n".
func lineEnd(b []byte) int { return bytes.IndexAny(b, "\r\n") }

// termLen is the length of the terminator at b[i]: 2 for "\r\n", else 1.
func termLen(b []byte, i int) int {
	if b[i] == '\r' && i+1 < len(b) && b[i+1] == '\n' {
		return 2
	}
	return 1
}

// nextLine returns the line of b starting at off, without its terminator, and
// the offset of the line after it (len(b) at the end).
func nextLine(b []byte, off int) (line []byte, next int) {
	rest := b[off:]
	i := lineEnd(rest)
	if i < 0 {
		return rest, len(b)
	}
	return rest[:i], off + i + termLen(rest, i)
}

// lineScanner yields the lines of a stream as readLine would, tracking the
// number and byte position of the current line for error messages. Its
// memory is one buffer of at most maxLine bytes, whatever the stream's size.
type lineScanner struct {
	sc   *bufio.Scanner
	file string
	pos  int64 // byte offset where the current line starts
	next int64 // byte offset just past the current line's terminator
	line int   // 1-based number of the current line
}

func newLineScanner(r io.Reader, file string) *lineScanner {
	s := &lineScanner{sc: bufio.NewScanner(r), file: file}
	// Room for a line of maxLine bytes plus "\r\n"; longer ones fail in scan.
	s.sc.Buffer(make([]byte, 0, 4096), maxLine+2)
	s.sc.Split(s.split)
	return s
}

// split is a bufio.SplitFunc. Scanner hands back each token right after split
// returns it, so recording positions here keeps pos in step with the token.
func (s *lineScanner) split(data []byte, atEOF bool) (int, []byte, error) {
	i := lineEnd(data)
	var adv int
	var tok []byte
	switch {
	// A "\r" at the end of the buffer may be the first half of "\r\n".
	case i >= 0 && (data[i] == '\n' || i+1 < len(data) || atEOF):
		adv, tok = i+termLen(data, i), data[:i]
	case atEOF && len(data) > 0:
		adv, tok = len(data), data
	default:
		return 0, nil, nil
	}
	s.pos = s.next
	s.next += int64(adv)
	return adv, tok, nil
}

// scan returns the next line, valid until the next call, or io.EOF.
func (s *lineScanner) scan() ([]byte, error) {
	if !s.sc.Scan() {
		err := s.sc.Err()
		switch {
		case err == nil:
			return nil, io.EOF
		case errors.Is(err, bufio.ErrTooLong):
			s.pos = s.next
			s.line++
			return nil, s.corrupt("longer than %d bytes", maxLine)
		default:
			return nil, fmt.Errorf("reading %s: %w", s.file, err)
		}
	}
	s.line++
	b := s.sc.Bytes()
	if len(b) > maxLine {
		return nil, s.corrupt("longer than %d bytes", maxLine)
	}
	// Kafka decodes checkpoints as strict UTF-8 and fails on anything else.
	if !utf8.Valid(b) {
		return nil, s.corrupt("not valid UTF-8")
	}
	return b, nil
}

// corrupt reports a problem with the current line.
func (s *lineScanner) corrupt(format string, args ...any) error {
	return logfmt.Corruptf(s.file, s.pos, "line %d: %s", s.line, fmt.Sprintf(format, args...))
}

// isJavaSpace reports whether c is in Java's regex class \s.
func isJavaSpace(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\v', '\f', '\r':
		return true
	}
	return false
}

// splitFields splits line as Java's Pattern.compile("\\s+").split(line) does,
// which is how Kafka cuts a checkpoint entry: a leading separator yields an
// empty first field, trailing separators yield nothing, an empty line is one
// empty field and a line of only separators is no field at all. It stops once
// it has found more than max fields, since the caller only needs to know that
// there are too many.
func splitFields(line []byte, dst [][]byte, max int) [][]byte {
	dst = dst[:0]
	if len(line) == 0 {
		return append(dst, line)
	}
	if isJavaSpace(line[0]) {
		dst = append(dst, line[:0])
	}
	for i := 0; i < len(line) && len(dst) <= max; {
		for i < len(line) && isJavaSpace(line[i]) {
			i++
		}
		j := i
		for j < len(line) && !isJavaSpace(line[j]) {
			j++
		}
		if j > i {
			dst = append(dst, line[i:j])
		}
		i = j
	}
	if len(dst) == 1 && len(dst[0]) == 0 {
		return dst[:0]
	}
	return dst
}

// parseInt parses b as Java's Integer.parseInt (bits 32) or Long.parseLong
// (bits 64) do for ASCII input: an optional sign, then at least one decimal
// digit, in range. It takes bytes so that reading a large checkpoint does not
// allocate a string per number.
func parseInt(b []byte, bits uint) (int64, bool) {
	neg := false
	if len(b) > 0 && (b[0] == '+' || b[0] == '-') {
		neg = b[0] == '-'
		b = b[1:]
	}
	if len(b) == 0 {
		return 0, false
	}
	limit := uint64(1) << (bits - 1) // magnitude of the minimum value
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if n > (limit-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	if neg {
		return -int64(n), true // n == 1<<63 wraps to math.MinInt64, which is right
	}
	if n == limit {
		return 0, false
	}
	return int64(n), true
}

// excerpt quotes b for an error message, shortened if long.
func excerpt(b []byte) string {
	const max = 80
	if len(b) > max {
		return fmt.Sprintf("%q...", b[:max])
	}
	return fmt.Sprintf("%q", b)
}
