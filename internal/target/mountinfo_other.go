//go:build !linux

package target

type mount struct{}

func mounts() []mount { return nil }

// origin is realPath: only Linux tells where a bind mount comes from.
func origin(_ []mount, realPath string) string { return realPath }
