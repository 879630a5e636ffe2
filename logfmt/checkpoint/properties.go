package checkpoint

import (
	"unicode/utf16"
	"unicode/utf8"

	"github.com/logtool/logtool/logfmt"
)

// property is the value of one key of a Java properties file, with the byte
// offset of the logical line that held it.
type property struct {
	value string
	pos   int64
}

// parseProperties reads b as java.util.Properties.load does: natural lines end
// at "\n", "\r" or "\r\n"; leading blanks (space, tab, form feed) are
// skipped; a line whose first non-blank is '#' or '!' is a comment; an odd
// number of backslashes at the end of a line joins the next one, minus its
// leading blanks; the key runs to the first unescaped '=', ':' or blank, and
// the value starts after blanks and at most one '=' or ':'. Escapes \t \n \r
// \f and \uXXXX are decoded and any other escaped character stands for
// itself. A later key replaces an earlier one.
//
// Java reads the bytes as ISO-8859-1; here bytes outside ASCII are kept as
// they are, which is the same for every value Kafka writes.
func parseProperties(b []byte, file string) (map[string]property, error) {
	props := make(map[string]property)
	var buf []byte
	for off := 0; off < len(b); {
		var line []byte
		var start int
		line, start, off = logicalLine(b, off, buf[:0])
		if line == nil {
			break
		}
		buf = line
		k, v := splitProperty(line)
		key, ok := unescapeProperty(k)
		if !ok {
			return nil, logfmt.Corruptf(file, int64(start), "malformed \\uXXXX escape in key %s", excerpt(k))
		}
		value, ok := unescapeProperty(v)
		if !ok {
			return nil, logfmt.Corruptf(file, int64(start), "malformed \\uXXXX escape in value of %q", key)
		}
		props[key] = property{value: value, pos: int64(start)}
	}
	return props, nil
}

func isPropBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\f' }

// logicalLine is Properties.LineReader.readLine (Java 11 and later) over b
// from off. It appends the logical line, continuations joined, to buf and
// returns it with the offset where it starts and the offset to continue from.
// line is nil when only blank lines and comments remain.
func logicalLine(b []byte, off int, buf []byte) (line []byte, start, next int) {
	skipBlank, continued, backslash := true, false, false
	for i := off; i < len(b); i++ {
		c := b[i]
		if skipBlank {
			if isPropBlank(c) || (!continued && (c == '\r' || c == '\n')) {
				continue
			}
			skipBlank, continued = false, false
		}
		if len(buf) == 0 && (c == '#' || c == '!') {
			// A comment runs to the end of its line; a backslash does not
			// continue it. The loop's i++ steps over the terminator.
			for i < len(b) && b[i] != '\n' && b[i] != '\r' {
				i++
			}
			skipBlank = true
			continue
		}
		if c != '\n' && c != '\r' {
			if len(buf) == 0 {
				start = i
			}
			buf = append(buf, c)
			backslash = c == '\\' && !backslash
			continue
		}
		switch {
		case len(buf) == 0:
			skipBlank = true
		case backslash:
			buf = buf[:len(buf)-1]
			skipBlank, continued, backslash = true, true, false
			if c == '\r' && i+1 < len(b) && b[i+1] == '\n' {
				i++
			}
		default:
			return buf, start, i + 1
		}
	}
	if len(buf) == 0 {
		return nil, 0, len(b)
	}
	if backslash {
		buf = buf[:len(buf)-1]
	}
	return buf, start, len(b)
}

// splitProperty cuts a logical line into its raw key and value as
// Properties.load0 does.
func splitProperty(line []byte) (key, value []byte) {
	keyLen, valStart, sep, backslash := 0, len(line), false, false
	for ; keyLen < len(line); keyLen++ {
		c := line[keyLen]
		if !backslash && (c == '=' || c == ':') {
			valStart, sep = keyLen+1, true
			break
		}
		if !backslash && isPropBlank(c) {
			valStart = keyLen + 1
			break
		}
		backslash = c == '\\' && !backslash
	}
	for ; valStart < len(line); valStart++ {
		c := line[valStart]
		if isPropBlank(c) {
			continue
		}
		if !sep && (c == '=' || c == ':') {
			sep = true
			continue
		}
		break
	}
	return line[:keyLen], line[valStart:]
}

// unescapeProperty is Properties.loadConvert. It fails only on a \u not
// followed by four hex digits.
func unescapeProperty(in []byte) (string, bool) {
	var out []byte
	plain := 0 // in[plain:i] has no escapes and is not yet copied
	for i := 0; i < len(in); {
		if in[i] != '\\' {
			i++
			continue
		}
		out = append(out, in[plain:i]...)
		i++
		if i == len(in) {
			// A lone final backslash; readLine already drops these.
			plain = i
			break
		}
		c := in[i]
		i++
		switch c {
		case 't':
			out = append(out, '\t')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 'f':
			out = append(out, '\f')
		case 'u':
			r, ok := hex4(in[i:])
			if !ok {
				return "", false
			}
			i += 4
			// Java strings are UTF-16: a surrogate pair arrives as two escapes.
			if utf16.IsSurrogate(r) && len(in) >= i+6 && in[i] == '\\' && in[i+1] == 'u' {
				if r2, ok := hex4(in[i+2:]); ok {
					if p := utf16.DecodeRune(r, r2); p != utf8.RuneError {
						r = p
						i += 6
					}
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			out = append(out, c)
		}
		plain = i
	}
	if out == nil {
		return string(in), true
	}
	return string(append(out, in[plain:]...)), true
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// appendProperty appends "key=value\n" escaped as Properties.store(Writer)
// escapes it (saveConvert without Unicode escapes, since Kafka stores through
// a UTF-8 writer).
func appendProperty(dst []byte, key, value string) []byte {
	dst = appendEscaped(dst, key, true)
	dst = append(dst, '=')
	dst = appendEscaped(dst, value, false)
	return append(dst, '\n')
}

func appendEscaped(dst []byte, s string, isKey bool) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case ' ':
			if i == 0 || isKey {
				dst = append(dst, '\\')
			}
			dst = append(dst, ' ')
		case '\t':
			dst = append(dst, `\t`...)
		case '\n':
			dst = append(dst, `\n`...)
		case '\r':
			dst = append(dst, `\r`...)
		case '\f':
			dst = append(dst, `\f`...)
		case '=', ':', '#', '!', '\\':
			dst = append(dst, '\\', c)
		default:
			dst = append(dst, c)
		}
	}
	return dst
}
