// Package human formats sizes, times and durations for people, and reads
// them back from flags. It is the one place logtool's text output takes them
// from and the one parser of every flag taking a size, a duration or a time,
// so that every command prints and reads them the same way; JSON output
// keeps the exact integers (bytes, milliseconds) instead.
package human

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Bytes prints a size in binary units: "1023 B", "1.5 KiB", "3.0 GiB".
func Bytes(n int64) string {
	if n < 1024 && n > -1024 {
		return strconv.FormatInt(n, 10) + " B"
	}
	// The bound is what rounds to 1024.0 at one decimal, so that a size just
	// under a unit reads "1.0 MiB", not "1024.0 KiB".
	f, unit := float64(n)/1024, 0
	for (f >= 1023.95 || f <= -1023.95) && unit < 5 {
		f /= 1024
		unit++
	}
	return fmt.Sprintf("%.1f %ciB", f, "KMGTPE"[unit])
}

// Time prints a timestamp in milliseconds since the epoch as RFC 3339 in UTC,
// with milliseconds only when it has some: "2024-01-01T00:10:00Z",
// "2024-01-01T00:09:36.680Z". It is the form the flags taking a time (--now,
// --from-time, --timestamp) read, so a time can be pasted back.
func Time(ms int64) string {
	t := time.UnixMilli(ms).UTC()
	if t.Nanosecond() == 0 {
		return t.Format("2006-01-02T15:04:05Z")
	}
	return t.Format("2006-01-02T15:04:05.000Z")
}

// Duration prints a span of milliseconds as an operator reads a lag or an
// age: whole days, then hours, minutes and seconds, each only when it is not
// zero ("30d22h59m55s", "1h5s", "7d"), rounded to the second from one second
// up and in milliseconds below ("750ms"). Kafka's ages run to weeks, which
// Go's "742h59m55s" makes the reader divide by 24. ParseDuration, which
// every flag taking a duration uses, reads it back.
func Duration(ms int64) string {
	if ms == 0 {
		return "0s"
	}
	sign := ""
	// uint64 holds the magnitude of every int64, math.MinInt64 too.
	u := uint64(ms)
	if ms < 0 {
		sign, u = "-", -u
	}
	if u < 1000 {
		return sign + strconv.FormatUint(u, 10) + "ms"
	}
	s := u / 1000
	if u%1000 >= 500 {
		s++
	}
	var b strings.Builder
	b.WriteString(sign)
	for _, unit := range []struct {
		secs uint64
		name byte
	}{{86400, 'd'}, {3600, 'h'}, {60, 'm'}, {1, 's'}} {
		if n := s / unit.secs; n > 0 {
			b.WriteString(strconv.FormatUint(n, 10))
			b.WriteByte(unit.name)
			s -= n * unit.secs
		}
	}
	return b.String()
}
