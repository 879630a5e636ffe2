//go:build !unix

package safefile

import "os"

// Without O_NOFOLLOW and O_NONBLOCK the checks around each open (NoSymlinks,
// the Stat before Open) are the only guard.
const (
	noFollow = 0
	nonBlock = 0
)

func symlinkErr(err error, _ string) error { return err }

func blocking(*os.File) error { return nil }
