package protocol_test

import (
	"math"
	"testing"

	p "github.com/logtool/logtool/logfmt/protocol"
)

// Doubles print as Java's Double.toString, which Jackson uses.
func TestAppendDouble(t *testing.T) {
	for _, c := range []struct {
		d    float64
		want string
	}{
		{0, "0.0"}, {math.Copysign(0, -1), "-0.0"}, {1048576, "1048576.0"}, {1.5, "1.5"}, {0.001, "0.001"},
		{9999999, "9999999.0"}, {1e7, "1.0E7"}, {1e10, "1.0E10"}, {1.25e-4, "1.25E-4"}, {-2.5e20, "-2.5E20"},
		{math.Inf(1), `"Infinity"`}, {math.NaN(), `"NaN"`},
	} {
		if got := string(p.AppendDouble(nil, c.d)); got != c.want {
			t.Errorf("AppendDouble(%v) = %s, want %s", c.d, got, c.want)
		}
	}
}
