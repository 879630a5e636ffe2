package retention

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/logtool/logtool/internal/human"
)

// ParseMs reads a retention.ms value: milliseconds as Kafka's config takes
// them ("604800000", "-1" for unlimited) or a duration ("7d", "168h", "90m").
func ParseMs(s string) (int64, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n < -1 {
			return 0, fmt.Errorf("%q: want -1 (unlimited) or at least 0 ms", s)
		}
		return n, nil
	}
	if strings.HasPrefix(s, "-") {
		return 0, fmt.Errorf("%q: a duration must not be negative (-1 means unlimited)", s)
	}
	ms, err := human.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("%q is neither milliseconds nor a duration like 7d or 168h", s)
	}
	return ms, nil
}

// byteUnits are the suffixes ParseBytes takes, longest first so that "KiB"
// is not read as "B".
var byteUnits = []struct {
	suffix string
	factor int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"B", 1},
}

// ParseBytes reads a retention.bytes value: a byte count ("-1" for no
// limit) with an optional unit, binary (KiB, MiB, GiB, TiB) or decimal (KB,
// MB, GB, TB), as in "50GiB".
func ParseBytes(s string) (int64, error) {
	num, factor := s, int64(1)
	for _, u := range byteUnits {
		if strings.HasSuffix(s, u.suffix) {
			num, factor = strings.TrimSuffix(s, u.suffix), u.factor
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	switch {
	case err != nil:
		return 0, fmt.Errorf("%q is not a byte count like 1073741824 or 1GiB", s)
	case n == -1 && factor == 1:
		return -1, nil
	case n < 0:
		return 0, fmt.Errorf("%q: want -1 (no limit) or at least 0 bytes", s)
	case n > math.MaxInt64/factor:
		return 0, fmt.Errorf("%q is too large", s)
	}
	return n * factor, nil
}
