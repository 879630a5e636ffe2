package human

import (
	"fmt"
	"strconv"
)

// The bounded parsers are the parsers with a flag's range checked, so that
// every flag says the same thing about a value out of it: what is wrong and
// what the flag wants. The caller names the flag.

// SizeIn reads the size s, which must lie in [lo, hi].
func SizeIn(s string, lo, hi int64) (int64, error) {
	n, err := ParseSize(s)
	if err != nil {
		return 0, err
	}
	return n, inRange(s, n, lo, hi, func(n int64) string { return strconv.FormatInt(n, 10) + " bytes" })
}

// DurationIn reads the duration s in milliseconds, which must lie in
// [lo, hi].
func DurationIn(s string, lo, hi int64) (int64, error) {
	ms, err := ParseDuration(s)
	if err != nil {
		return 0, err
	}
	return ms, inRange(s, ms, lo, hi, Duration)
}

// TimeFrom reads the time s in milliseconds since the epoch, which must not
// be before lo.
func TimeFrom(s string, lo int64) (int64, error) {
	ms, err := ParseTime(s)
	if err != nil {
		return 0, err
	}
	if ms < lo {
		return 0, fmt.Errorf("must not be before %s, got %s", Time(lo), s)
	}
	return ms, nil
}

func inRange(s string, n, lo, hi int64, show func(int64) string) error {
	switch {
	case n < lo && lo == 0:
		return fmt.Errorf("must not be negative, got %s", s)
	case n < lo && lo == 1:
		return fmt.Errorf("must be positive, got %s", s)
	case n < lo:
		return fmt.Errorf("must be at least %s, got %s", show(lo), s)
	case n > hi:
		return fmt.Errorf("must be at most %s, got %s", show(hi), s)
	}
	return nil
}
