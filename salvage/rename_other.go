//go:build !linux

package salvage

func renameNoReplace(from, to string) error { return renameChecked(from, to) }
