package dump

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

func TestAppendInt(t *testing.T) {
	vals := []int64{0, 1, 9, 10, 99, 100, 999, 1000, 9999, 10000, 10001, 99999999, 100000000,
		1704067203042, math.MaxInt64, math.MinInt64, -1, -9, -10, -10000, math.MinInt64 + 1}
	for _, p := range pow10 {
		vals = append(vals, int64(p-1), int64(p), int64(p+1), -int64(p))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 10000; i++ {
		vals = append(vals, int64(rng.Uint64()), rng.Int64N(1e6), -rng.Int64N(1e12))
	}
	for _, v := range vals {
		if got, want := string(appendInt(nil, v)), strconv.FormatInt(v, 10); got != want {
			t.Fatalf("appendInt(%d) = %q", v, got)
		}
		if got, want := string(appendUint([]byte("x"), uint64(v))), "x"+strconv.FormatUint(uint64(v), 10); got != want {
			t.Fatalf("appendUint(%d) = %q", uint64(v), got)
		}
		if got, want := string(appendUint(nil, math.MaxUint64-uint64(v))), strconv.FormatUint(math.MaxUint64-uint64(v), 10); got != want {
			t.Fatalf("appendUint(%d) = %q", uint64(v), got)
		}
	}
}

func BenchmarkAppendInt(b *testing.B) {
	buf := make([]byte, 0, 64)
	for i := 0; i < b.N; i++ {
		buf = appendInt(buf[:0], 1704067203042+int64(i))
	}
}

func BenchmarkStrconvAppendInt(b *testing.B) {
	buf := make([]byte, 0, 64)
	for i := 0; i < b.N; i++ {
		buf = strconv.AppendInt(buf[:0], 1704067203042+int64(i), 10)
	}
}

func FuzzAppendUint(f *testing.F) {
	for _, u := range []uint64{0, 9, 10, 99999999, 100000000, 1704067203042, 1e16 - 1, 1e16, math.MaxUint64} {
		f.Add(u, 0)
	}
	f.Fuzz(func(t *testing.T, u uint64, prefix int) {
		b := make([]byte, prefix&31, prefix&31+prefix>>5&31)
		if got, want := appendUint(b, u)[len(b):], strconv.FormatUint(u, 10); string(got) != want {
			t.Fatalf("appendUint(%d) = %q", u, got)
		}
	})
}
