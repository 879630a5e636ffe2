package commands

import (
	"io"

	"github.com/logtool/logtool/internal/meter"
)

// newProgress returns the bar for work of total units, bytes or items, or
// nil when none may be drawn: stderr is not a terminal, or --no-progress or
// --quiet was given.
func newProgress(g Global, desc string, total int64, bytes bool) *meter.Bar {
	if g.NoProgress || g.Quiet || !isTerminal(g.Stderr) {
		return nil
	}
	return meter.New(g.Stderr, desc, total, bytes)
}

func isTerminal(w io.Writer) bool { return meter.IsTerminal(w) }
