package checkpoint

import (
	"bytes"
	"fmt"
	"io"
	"strconv"

	"github.com/logtool/logtool/logfmt"
)

// CleanerCheckpoint is logtool's per-partition cleaner checkpoint, the file
// <partition dir>/cleaner-checkpoint of the migrate-checkpoints command. It
// holds exactly "1\n<firstDirtyOffset> <lastCleanTimeMs>\n".
type CleanerCheckpoint struct {
	FirstDirtyOffset int64 // end of the cleaned range
	LastCleanTimeMs  int64 // wall clock of the pass that reached it; -1 unknown
}

// maxCleaner is the longest valid cleaner checkpoint: "1\n", two int64s of
// at most 20 characters, a space and a newline.
const maxCleaner = 2 + 20 + 1 + 20 + 1

// ReadCleaner reads a cleaner checkpoint. The format is logtool's own, so the
// reader is strict: version 1, numbers in canonical decimal, single spaces,
// both newlines, nothing after.
func ReadCleaner(r io.Reader, file string) (CleanerCheckpoint, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxCleaner+1))
	if err != nil {
		return CleanerCheckpoint{}, fmt.Errorf("reading %s: %w", file, err)
	}
	return parseCleaner(b, file)
}

func parseCleaner(b []byte, file string) (CleanerCheckpoint, error) {
	var c CleanerCheckpoint
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return CleanerCheckpoint{}, logfmt.Corruptf(file, 0, "line 1: %s does not end in a newline", excerpt(b))
	}
	if v, ok := parseCanonical(b[:i]); !ok {
		return CleanerCheckpoint{}, logfmt.Corruptf(file, 0, "line 1: malformed version %s", excerpt(b[:i]))
	} else if v != 1 {
		return CleanerCheckpoint{}, logfmt.Corruptf(file, 0, "line 1: unsupported version %d, want 1", v)
	}

	pos := i + 1
	line := b[pos:]
	j := bytes.IndexByte(line, '\n')
	if j < 0 {
		return CleanerCheckpoint{}, logfmt.Corruptf(file, int64(pos), "line 2: %s does not end in a newline", excerpt(line))
	}
	line = line[:j]
	sp := bytes.IndexByte(line, ' ')
	if sp < 0 {
		return CleanerCheckpoint{}, logfmt.Corruptf(file, int64(pos), "line 2: malformed %s, want \"<firstDirtyOffset> <lastCleanTimeMs>\"", excerpt(line))
	}
	var ok bool
	if c.FirstDirtyOffset, ok = parseCanonical(line[:sp]); !ok || c.FirstDirtyOffset < 0 {
		return CleanerCheckpoint{}, logfmt.Corruptf(file, int64(pos), "line 2: first dirty offset %s is not an offset", excerpt(line[:sp]))
	}
	if c.LastCleanTimeMs, ok = parseCanonical(line[sp+1:]); !ok || c.LastCleanTimeMs < -1 {
		return CleanerCheckpoint{}, logfmt.Corruptf(file, int64(pos+sp+1), "line 2: clean time %s is neither a time in ms nor -1", excerpt(line[sp+1:]))
	}
	if end := pos + j + 1; end != len(b) {
		return CleanerCheckpoint{}, logfmt.Corruptf(file, int64(end), "unexpected bytes after line 2")
	}
	return c, nil
}

// AppendCleaner appends the bytes of c's cleaner checkpoint.
func AppendCleaner(dst []byte, c CleanerCheckpoint) []byte {
	dst = append(dst, "1\n"...)
	dst = strconv.AppendInt(dst, c.FirstDirtyOffset, 10)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, c.LastCleanTimeMs, 10)
	return append(dst, '\n')
}

// parseCanonical parses an int64 written exactly as strconv.AppendInt writes
// it: no plus sign, no leading zeros, no "-0".
func parseCanonical(b []byte) (int64, bool) {
	v, ok := parseInt(b, 64)
	if !ok {
		return 0, false
	}
	var buf [20]byte
	return v, bytes.Equal(strconv.AppendInt(buf[:0], v, 10), b)
}
