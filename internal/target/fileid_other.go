//go:build !unix

package target

// fileID is what identifies a file or directory whatever path reaches it:
// here only its real path.
type fileID struct{ path string }

func idOf(path string) (fileID, bool) { return fileID{path}, true }
