package retention

import (
	"strconv"
	"testing"
)

func TestParseMs(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"604800000", 604800000, true},
		{"-1", -1, true},
		{"0", 0, true},
		{"168h", DefaultRetentionMs, true},
		{"90m", 90 * 60 * 1000, true},
		{"1.5s", 1500, true},
		{"999us", 0, true},
		{"-2", 0, false},
		{"-1h", 0, false},
		{"7d", DefaultRetentionMs, true},
		{"1d12h", 36 * 3600 * 1000, true},
		{"7x", 0, false},
		{"d", 0, false},
		{"", 0, false},
		{"1e3", 0, false},
	}
	for _, tt := range tests {
		got, err := ParseMs(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseMs(%q) = %d, %v; want %d, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestParseBytes(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1073741824", 1 << 30, true},
		{"-1", -1, true},
		{"0", 0, true},
		{"1GiB", 1 << 30, true},
		{"50GiB", 50 << 30, true},
		{"512KiB", 512 << 10, true},
		{"2MB", 2e6, true},
		{"3TB", 3e12, true},
		{"100B", 100, true},
		{"8388607TiB", 8388607 << 40, true},
		{"8388608TiB", 0, false},
		{"-1GiB", 0, false},
		{"-2", 0, false},
		{"1.5GiB", 0, false},
		{"GiB", 0, false},
		{"1 GiB", 0, false},
		{"1gib", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		got, err := ParseBytes(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func FuzzParseLimits(f *testing.F) {
	for _, s := range []string{"604800000", "-1", "168h", "1.5s", "1GiB", "3TB", "-2", "8388608TiB", "1h-1m", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if ms, err := ParseMs(s); err == nil && ms < -1 {
			t.Fatalf("ParseMs(%q) = %d", s, ms)
		}
		b, err := ParseBytes(s)
		if err != nil {
			return
		}
		if b < -1 {
			t.Fatalf("ParseBytes(%q) = %d", s, b)
		}
		// Any accepted value reads back from its plain form.
		if back, err := ParseBytes(strconv.FormatInt(b, 10)); err != nil || back != b {
			t.Fatalf("ParseBytes(%q) = %d, which reads back as %d, %v", s, b, back, err)
		}
	})
}
