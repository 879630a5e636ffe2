// Package javaprops reads the Java properties file format
// (java.util.Properties.load), which Kafka's tools take for client
// configuration (--command-config).
package javaprops

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
)

// Parse reads properties from data, UTF-8 text. A key given twice keeps its
// last value, as Properties.load does. The only error is a malformed \uXXXX
// escape, which Java refuses too.
func Parse(data []byte) (map[string]string, error) {
	entries, err := Entries(data)
	if err != nil {
		return nil, err
	}
	props := make(map[string]string, len(entries))
	for _, e := range entries {
		props[e.Key] = e.Value
	}
	return props, nil
}

// Entry is one property as the file gives it, Line being the first line
// of its logical line, counted from 1.
type Entry struct {
	Key, Value string
	Line       int
}

// Entries is Parse's properties in the order of the file, each key as
// often as it is given, so that a caller can name the line of one.
func Entries(data []byte) ([]Entry, error) {
	var entries []Entry
	lines := naturalLines(string(data))
	for i := 0; i < len(lines); i++ {
		first := i + 1
		line := strings.TrimLeft(lines[i], " \t\f")
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue // a comment does not continue on the next line, even after a backslash
		}
		// A logical line goes on while a natural line ends in an odd number of
		// backslashes; the next one's leading whitespace is not part of it.
		var logical strings.Builder
		for {
			cont := trailingBackslashes(line)%2 == 1
			if !cont {
				logical.WriteString(line)
				break
			}
			logical.WriteString(line[:len(line)-1])
			if i+1 >= len(lines) {
				break
			}
			i++
			line = strings.TrimLeft(lines[i], " \t\f")
		}
		k, v, err := keyValue(logical.String())
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", first, err)
		}
		entries = append(entries, Entry{Key: k, Value: v, Line: first})
	}
	return entries, nil
}

// naturalLines splits at \n, \r and \r\n, as Java's LineReader does.
func naturalLines(s string) []string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.Split(strings.ReplaceAll(s, "\r", "\n"), "\n")
}

func trailingBackslashes(s string) int {
	n := 0
	for n < len(s) && s[len(s)-1-n] == '\\' {
		n++
	}
	return n
}

// keyValue splits a logical line: the key ends at the first unescaped '=',
// ':' or whitespace; whitespace, then at most one '=' or ':', then
// whitespace separate it from the value.
func keyValue(line string) (string, string, error) {
	end := len(line)
	for i := 0; i < len(line); i++ {
		if line[i] == '\\' {
			i++
			continue
		}
		if strings.IndexByte("=: \t\f", line[i]) >= 0 {
			end = i
			break
		}
	}
	rest := strings.TrimLeft(line[end:], " \t\f")
	if rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = strings.TrimLeft(rest[1:], " \t\f")
	}
	k, err := unescape(line[:end])
	if err != nil {
		return "", "", err
	}
	v, err := unescape(rest)
	return k, v, err
}

func unescape(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			// A lone backslash at the end is what is left of a continuation
			// at the end of the input; Java drops it.
			if s[i] != '\\' {
				b.WriteByte(s[i])
			}
			continue
		}
		i++
		switch c := s[i]; c {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			r, err := hex4(s[i+1:])
			if err != nil {
				return "", err
			}
			i += 4
			// Java strings are UTF-16: a character beyond the BMP is two
			// escapes, a surrogate pair.
			if utf16.IsSurrogate(r) && strings.HasPrefix(s[i+1:], `\u`) {
				if r2, err := hex4(s[i+3:]); err == nil {
					if d := utf16.DecodeRune(r, r2); d != unicode.ReplacementChar {
						r = d
						i += 6
					}
				}
			}
			b.WriteRune(r)
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

// hex4 reads the four hex digits of a \uXXXX escape at the start of s.
func hex4(s string) (rune, error) {
	if len(s) < 4 {
		return 0, fmt.Errorf("malformed \\uXXXX escape \\u%s", s)
	}
	n, err := strconv.ParseUint(s[:4], 16, 16)
	if err != nil {
		return 0, fmt.Errorf("malformed \\uXXXX escape \\u%s", s[:4])
	}
	return rune(n), nil
}
