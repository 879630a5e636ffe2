package commands

import (
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/logtool/logtool/internal/human"
)

// Every flag taking a size, a duration or a time reads it here, with the one
// syntax of internal/human, and gets its range checked here, so that every
// command says the same thing about a bad value: the flag, what is wrong,
// what it wants. Values a flag gives a meaning of its own ("-1" for
// unlimited, "file-mtime") are the caller's to recognize first.

// noMax is the upper bound of a flag that has none.
const noMax = int64(1<<63 - 1)

// sizeArg reads the size s of --flag, which must lie in [lo, hi].
func sizeArg(flag, s string, lo, hi int64) (int64, error) {
	n, err := human.ParseSize(s)
	if err != nil {
		return 0, usageErr("--%s: %v", flag, err)
	}
	return n, inRange(flag, s, n, lo, hi, func(n int64) string { return strconv.FormatInt(n, 10) + " bytes" })
}

// durationArg reads the duration s of --flag in milliseconds, which must
// lie in [lo, hi].
func durationArg(flag, s string, lo, hi int64) (int64, error) {
	ms, err := human.ParseDuration(s)
	if err != nil {
		return 0, usageErr("--%s: %v", flag, err)
	}
	return ms, inRange(flag, s, ms, lo, hi, human.Duration)
}

// warnBareMillis warns when a duration flag the user gave is a bare number
// under a second: Kafka's unit is the millisecond, so --max-lag 7 is 7 ms,
// which is rarely what was meant.
func warnBareMillis(c *cli.Context, flag, s string) {
	if !c.IsSet(flag) || s == "" || strings.Trim(s, "0123456789") != "" {
		return
	}
	if n, err := strconv.ParseInt(s, 10, 64); err != nil || n < 1 || n >= 1000 {
		return
	}
	if g, err := global(c); err == nil {
		g.Warnf("--%s %s is %s ms (a number without a unit is milliseconds, Kafka's unit); write %ss for seconds", flag, s, s, s)
	}
}

// timeArg reads the time s of --flag in milliseconds since the epoch, which
// must not be before lo.
func timeArg(flag, s string, lo int64) (int64, error) {
	ms, err := human.ParseTime(s)
	if err != nil {
		return 0, usageErr("--%s: %v", flag, err)
	}
	if ms < lo {
		return 0, usageErr("--%s: must not be before %s, got %s", flag, human.Time(lo), s)
	}
	return ms, nil
}

func inRange(flag, s string, n, lo, hi int64, show func(int64) string) error {
	switch {
	case n < lo && lo == 0:
		return usageErr("--%s: must not be negative, got %s", flag, s)
	case n < lo && lo == 1:
		return usageErr("--%s: must be positive, got %s", flag, s)
	case n < lo:
		return usageErr("--%s: must be at least %s, got %s", flag, show(lo), s)
	case n > hi:
		return usageErr("--%s: must be at most %s, got %s", flag, show(hi), s)
	}
	return nil
}
