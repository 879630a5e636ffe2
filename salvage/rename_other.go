//go:build !linux

package salvage

// noFollow is left out where its value differs: the staging directory is
// new and only salvage writes in it.
const noFollow = 0

func renameNoReplace(from, to string) error { return renameChecked(from, to) }
