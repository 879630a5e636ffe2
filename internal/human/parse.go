package human

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// The parsers below read what people type into flags: the one syntax of
// sizes, durations and times of every command. They check syntax only; a
// flag's range (positive, at least 14 bytes, -1 for unlimited) is checked by
// the bounded parsers (bounds.go) or the caller, so that "-1h" is read as a
// negative duration and the message can say what the flag wants.

// sizeUnits are the binary units ParseSize takes: K, Ki and KiB all mean
// 1024. Decimal units (KB, MB, ...) are refused: they mean powers of ten to
// some and of two to others, and a size off by 2.4% is a wrong size.
var sizeUnits = map[string]uint{
	"": 0, "B": 0,
	"K": 10, "Ki": 10, "KiB": 10,
	"M": 20, "Mi": 20, "MiB": 20,
	"G": 30, "Gi": 30, "GiB": 30,
	"T": 40, "Ti": 40, "TiB": 40,
	"P": 50, "Pi": 50, "PiB": 50,
}

// SizeSyntax says what ParseSize reads, for messages and help texts.
const SizeSyntax = "bytes, or a whole number with a binary unit: K, M, G, T (also written Ki or KiB, MiB, ...), as in 64MiB"

// ParseSize reads a size in bytes: a whole number, optionally followed
// (with or without a space) by a binary unit, as in "1048576", "64MiB",
// "512K", "1 GiB". A sign is allowed, for flags where -1 means no limit.
func ParseSize(s string) (int64, error) {
	num, unit := splitUnit(strings.TrimSpace(s))
	shift, ok := sizeUnits[unit]
	if !ok {
		switch u := strings.ToUpper(unit); {
		case len(u) == 2 && u[1] == 'B' && strings.ContainsRune("KMGTP", rune(u[0])):
			return 0, fmt.Errorf("%q: %s is ambiguous (powers of ten or of two): write %s%ciB for binary units, or the number of bytes",
				s, unit, num, u[0])
		}
		return 0, fmt.Errorf("%q is not a size: want %s", s, SizeSyntax)
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return 0, fmt.Errorf("%q is too large", s)
		}
		return 0, fmt.Errorf("%q is not a size: want %s", s, SizeSyntax)
	}
	if n > math.MaxInt64>>shift || n < math.MinInt64>>shift {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return n << shift, nil
}

// splitUnit cuts s after its number: an optional sign, digits and dots.
func splitUnit(s string) (num, unit string) {
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		i++
	}
	return s[:i], strings.TrimLeft(s[i:], " ")
}

// DurationSyntax says what ParseDuration reads.
const DurationSyntax = "milliseconds, or Go's syntax with d for days, as in 90s, 36h, 7d, 1d12h"

// ParseDuration reads a span and returns milliseconds: plain milliseconds
// ("604800000"), or Go's syntax with whole days first if any, as Duration
// prints it ("7d", "1d12h", "30d22h59m55s", "36h", "90m", "750ms"). A leading
// "-" makes it negative.
func ParseDuration(s string) (int64, error) {
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		return ms, nil
	} else if errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("%q is too large", s)
	}
	bad := fmt.Errorf("%q is not a duration: want %s", s, DurationSyntax)
	rest, neg := s, false
	if rest != "" && (rest[0] == '-' || rest[0] == '+') {
		rest, neg = rest[1:], rest[0] == '-'
	}
	if rest == "" || rest[0] == '-' || rest[0] == '+' {
		return 0, bad
	}
	var days int64
	if i := strings.IndexByte(rest, 'd'); i >= 0 {
		d, err := strconv.ParseUint(rest[:i], 10, 64)
		switch {
		case err != nil && errors.Is(err, strconv.ErrRange) || err == nil && d > maxDays:
			return 0, fmt.Errorf("%q is too large", s)
		case err != nil:
			return 0, bad
		}
		days, rest = int64(d), rest[i+1:]
	}
	var d time.Duration
	if rest != "" {
		var err error
		if rest[0] == '-' || rest[0] == '+' {
			return 0, bad
		}
		if d, err = time.ParseDuration(rest); err != nil {
			return 0, bad
		}
		if d%time.Millisecond != 0 {
			return 0, fmt.Errorf("%q is not a whole number of milliseconds", s)
		}
	}
	ms := days*86_400_000 + d.Milliseconds()
	if neg {
		ms = -ms
	}
	return ms, nil
}

// maxDays keeps days*86,400,000 plus any Go duration within an int64.
const maxDays = 100_000_000

// TimeSyntax says what ParseTime reads.
const TimeSyntax = "milliseconds since the epoch, or RFC 3339, as in 2024-01-01T00:00:00Z"

// ParseTime reads a point in time, milliseconds since the epoch or RFC 3339
// ("2024-01-01T00:00:00Z", "2024-01-01T01:00:00.5+01:00"), the form Time
// prints.
func ParseTime(s string) (int64, error) {
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		return ms, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, fmt.Errorf("%q is not a time: want %s", s, TimeSyntax)
	}
	return t.UnixMilli(), nil
}
