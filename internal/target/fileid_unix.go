//go:build unix

package target

import (
	"os"
	"syscall"
)

// fileID is what identifies a file or directory whatever path reaches it.
type fileID struct{ dev, ino uint64 }

func idOf(path string) (fileID, bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileID{}, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{uint64(st.Dev), st.Ino}, true
}
