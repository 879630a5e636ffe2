package commands

import (
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/logtool/logtool/internal/human"
)

// Every flag taking a size, a duration or a time reads it here, with the one
// syntax and range check of internal/human, so that every command says the
// same thing about a bad value: the flag, what is wrong, what it wants.
// Values a flag gives a meaning of its own ("-1" for unlimited,
// "file-mtime") are the caller's to recognize first.

// noMax is the upper bound of a flag that has none.
const noMax = int64(1<<63 - 1)

// sizeArg reads the size s of --flag, which must lie in [lo, hi].
func sizeArg(flag, s string, lo, hi int64) (int64, error) {
	n, err := human.SizeIn(s, lo, hi)
	return n, flagErr(flag, err)
}

// durationArg reads the duration s of --flag in milliseconds, which must
// lie in [lo, hi].
func durationArg(flag, s string, lo, hi int64) (int64, error) {
	ms, err := human.DurationIn(s, lo, hi)
	return ms, flagErr(flag, err)
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
	ms, err := human.TimeFrom(s, lo)
	return ms, flagErr(flag, err)
}

// flagErr is the usage error of --flag's value, nil for none.
func flagErr(flag string, err error) error {
	if err == nil {
		return nil
	}
	return usageErr("--%s: %v", flag, err)
}
