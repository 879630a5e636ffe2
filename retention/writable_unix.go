//go:build unix

package retention

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// dirWritable tells whether files can be created, renamed and removed in
// dir, as the kernel would decide for this process (access(2), which also
// sees a read-only mount).
func dirWritable(dir string) error {
	if err := unix.Access(dir, unix.W_OK|unix.X_OK); err != nil {
		return fmt.Errorf("directory %s is not writable: %w", dir, err)
	}
	return nil
}
