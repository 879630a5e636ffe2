package human

import (
	"math"
	"testing"
)

func TestBounds(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"negative size", second(SizeIn("-1", 0, 10)), "must not be negative, got -1"},
		{"zero size", second(SizeIn("0", 1, 10)), "must be positive, got 0"},
		{"small size", second(SizeIn("13", 14, 100)), "must be at least 14 bytes, got 13"},
		{"big size", second(SizeIn("2KiB", 1, 1024)), "must be at most 1024 bytes, got 2KiB"},
		{"long duration", second(DurationIn("2h", 1, 3600000)), "must be at most 1h, got 2h"},
		{"early time", second(TimeFrom("-5", 0)), "must not be before 1970-01-01T00:00:00Z, got -5"},
		{"bad size", second(SizeIn("1KB", 1, 10)), ""},
	} {
		switch {
		case tc.err == nil:
			t.Errorf("%s: no error", tc.name)
		case tc.want != "" && tc.err.Error() != tc.want:
			t.Errorf("%s: %q, want %q", tc.name, tc.err, tc.want)
		}
	}
	if n, err := SizeIn("64MiB", 1, math.MaxInt32); n != 64<<20 || err != nil {
		t.Errorf("SizeIn(64MiB) = %d, %v", n, err)
	}
}

func second(_ int64, err error) error { return err }
