package human

import (
	"strconv"
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		err  string // part of the message; "" for success
	}{
		{"0", 0, ""}, {"1048576", 1 << 20, ""}, {"-1", -1, ""},
		{"64MiB", 64 << 20, ""}, {"64Mi", 64 << 20, ""}, {"64M", 64 << 20, ""}, {"64 MiB", 64 << 20, ""},
		{"1GiB", 1 << 30, ""}, {"512K", 512 << 10, ""}, {"3T", 3 << 40, ""}, {"2PiB", 2 << 50, ""}, {"100B", 100, ""},
		{"8191PiB", 8191 << 50, ""},
		{"64MB", 0, `"64MB": MB is ambiguous (powers of ten or of two): write 64MiB for binary units, or the number of bytes`},
		{"1kb", 0, "write 1KiB"}, {"5GB", 0, "write 5GiB"},
		{"8192PiB", 0, `"8192PiB" is too large`}, {"99999999999999999999", 0, "too large"},
		{"", 0, "is not a size"}, {"MiB", 0, "is not a size"}, {"1.5GiB", 0, "is not a size"}, {"1x", 0, "is not a size"},
		{"0x10", 0, "is not a size"}, {"1 2", 0, "is not a size"}, {"--1", 0, "is not a size"},
	} {
		got, err := ParseSize(tc.in)
		switch {
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("ParseSize(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("ParseSize(%q) = %d, %v; want an error with %q", tc.in, got, err, tc.err)
		}
	}
}

func TestParseDuration(t *testing.T) {
	const h, d = 3_600_000, 86_400_000
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"7d", 7 * d, true}, {"1d12h", 36 * h, true}, {"30d22h59m55s", 30*d + 22*h + 59*60_000 + 55_000, true},
		{"36h", 36 * h, true}, {"750ms", 750, true}, {"0s", 0, true}, {"1.5h", 90 * 60_000, true},
		{"604800000", 604_800_000, true}, {"7", 7, true}, {"0", 0, true}, {"-1", -1, true},
		{"-1h", -h, true}, {"-2d", -2 * d, true}, {"+1h", h, true},
		{"", 0, false}, {"d", 0, false}, {"-", 0, false}, {"--1h", 0, false}, {"1d-1h", 0, false}, {"1d+1h", 0, false},
		{"100000001d", 0, false}, {"1h1d", 0, false}, {"7x", 0, false}, {"1 h", 0, false}, {"1500us", 0, false}, {"1.0001s", 0, false}, {"99999999999999999999", 0, false},
	} {
		got, err := ParseDuration(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseDuration(%q) = %d, %v; want %d, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
	// What Duration prints reads back, to the second.
	for _, ms := range []int64{1000, 59_000, 3_605_000, 742*h + 59*60_000 + 55_000, 7 * d, -90_000} {
		if got, err := ParseDuration(Duration(ms)); err != nil || got != ms {
			t.Errorf("ParseDuration(Duration(%d) = %q) = %d, %v", ms, Duration(ms), got, err)
		}
	}
	if _, err := ParseDuration("7x"); err == nil || err.Error() != `"7x" is not a duration: want `+DurationSyntax {
		t.Errorf("message: %v", err)
	}
}

func TestParseTime(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"1704067200000", 1704067200000, true}, {"-1", -1, true},
		{"2024-01-01T00:00:00Z", 1704067200000, true}, {"2024-01-01T00:09:36.680Z", 1704067776680, true},
		{"2024-01-01T01:00:00+01:00", 1704067200000, true},
		{"", 0, false}, {"2024-01-01", 0, false}, {"yesterday", 0, false}, {"1e3", 0, false},
	} {
		got, err := ParseTime(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseTime(%q) = %d, %v; want %d, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
	// What Time prints reads back.
	for _, ms := range []int64{0, 1704067776680, -1000} {
		if got, err := ParseTime(Time(ms)); err != nil || got != ms {
			t.Errorf("ParseTime(Time(%d) = %q) = %d, %v", ms, Time(ms), got, err)
		}
	}
}

// FuzzParse: no input panics; a size or duration that parses is what its
// number says in the unit it names, and reads the same once printed in
// plain bytes or milliseconds.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"64MiB", "1 GiB", "-1", "7d", "1d12h", "-1h", "750ms", "2024-01-01T00:00:00Z", "64MB", "9223372036854775807", "8191PiB", "1.5h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if n, err := ParseSize(s); err == nil {
			if back, err := ParseSize(strconv.FormatInt(n, 10)); err != nil || back != n {
				t.Fatalf("ParseSize(%q) = %d does not read back: %d, %v", s, n, back, err)
			}
			if strings.TrimLeft(s, "+-0123456789") == "" && s != "" {
				if v, err := strconv.ParseInt(s, 10, 64); err != nil || v != n {
					t.Fatalf("ParseSize(%q) = %d, plain number %d", s, n, v)
				}
			}
		} else if err.Error() == "" {
			t.Fatalf("ParseSize(%q): empty message", s)
		}
		if ms, err := ParseDuration(s); err == nil {
			if back, err := ParseDuration(strconv.FormatInt(ms, 10)); err != nil || back != ms {
				t.Fatalf("ParseDuration(%q) = %d does not read back", s, ms)
			}
		}
		if ms, err := ParseTime(s); err == nil {
			if back, err := ParseTime(strconv.FormatInt(ms, 10)); err != nil || back != ms {
				t.Fatalf("ParseTime(%q) = %d does not read back", s, ms)
			}
		}
	})
}
