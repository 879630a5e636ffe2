package commands

import (
	"fmt"
	"strconv"
)

// humanBytes prints a size for people (JSON output keeps exact numbers).
func humanBytes(n int64) string {
	if n < 1024 && n > -1024 {
		return strconv.FormatInt(n, 10) + " B"
	}
	f, unit := float64(n)/1024, 0
	for (f >= 1024 || f <= -1024) && unit < 5 {
		f /= 1024
		unit++
	}
	return fmt.Sprintf("%.1f %ciB", f, "KMGTPE"[unit])
}
