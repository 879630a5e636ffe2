package human

import (
	"math"
	"testing"
	"time"
)

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB", 5 << 20: "5.0 MiB",
		3 << 30: "3.0 GiB", 1 << 62: "4.0 EiB", -2048: "-2.0 KiB",
		1<<20 - 1: "1.0 MiB", 1<<20 - 52: "1023.9 KiB", math.MaxInt64: "8.0 EiB", math.MinInt64: "-8.0 EiB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestTime(t *testing.T) {
	for _, tc := range []struct {
		ms   int64
		want string
	}{
		{0, "1970-01-01T00:00:00Z"},
		{1704067200000, "2024-01-01T00:00:00Z"},
		{1704067776680, "2024-01-01T00:09:36.680Z"},
		{1704067776001, "2024-01-01T00:09:36.001Z"},
		{-1, "1969-12-31T23:59:59.999Z"},
		{-1000, "1969-12-31T23:59:59Z"},
	} {
		got := Time(tc.ms)
		if got != tc.want {
			t.Errorf("Time(%d) = %q, want %q", tc.ms, got, tc.want)
			continue
		}
		// What is printed parses back to the same instant.
		p, err := time.Parse(time.RFC3339Nano, got)
		if err != nil || p.UnixMilli() != tc.ms {
			t.Errorf("Time(%d) = %q reads back as %v, %v", tc.ms, got, p.UnixMilli(), err)
		}
	}
	// Extremes do not panic.
	for _, ms := range []int64{math.MaxInt64, math.MinInt64} {
		if Time(ms) == "" {
			t.Errorf("Time(%d) is empty", ms)
		}
	}
}

func TestDuration(t *testing.T) {
	const s, m, h, d = 1000, 60 * 1000, 3600 * 1000, 86400 * 1000
	for _, tc := range []struct {
		ms   int64
		want string
	}{
		{0, "0s"},
		{1, "1ms"},
		{999, "999ms"},
		{1000, "1s"},
		{1499, "1s"},
		{1500, "2s"},
		{59*s + 500, "1m"},
		{h + 5*s, "1h5s"},
		{22*h + 59*m + 55*s, "22h59m55s"},
		{742*h + 59*m + 55*s, "30d22h59m55s"},
		{7 * d, "7d"},
		{d + 12*h, "1d12h"},
		{-1500, "-2s"},
		{-250, "-250ms"},
		{math.MaxInt64, "106751991167d7h12m56s"},
		{math.MinInt64, "-106751991167d7h12m56s"},
	} {
		if got := Duration(tc.ms); got != tc.want {
			t.Errorf("Duration(%d) = %q, want %q", tc.ms, got, tc.want)
		}
	}
}
