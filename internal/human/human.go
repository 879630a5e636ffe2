// Package human formats numbers for people; JSON output keeps exact values.
package human

import (
	"fmt"
	"strconv"
)

// Bytes prints a size in binary units: "1023 B", "1.5 KiB", "3.0 GiB".
func Bytes(n int64) string {
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
