package commands

import (
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progressDelay is how long work runs before its bar appears: a bar that
// flashes up for a run of half a second only gets in the way.
var progressDelay = time.Second

// progress is the progress bar of a long run, on stderr. Every command makes
// it with newProgress, which returns nil, and every method of a nil progress
// does nothing, unless stderr is a terminal and neither --no-progress nor
// --quiet was given. The bar appears once the work has run for
// progressDelay and is cleared when it finishes. The workers of a command
// report to it concurrently.
type progress struct {
	w     io.Writer
	desc  string
	bytes bool   // count bytes, else items
	items string // what the items are, for the rate ("records/s"); "" for "it/s"
	start time.Time

	mu    sync.Mutex
	total int64
	done  int64
	shown int64 // what bar has been told
	bar   *progressbar.ProgressBar
}

// newProgress returns the bar for work of total units, bytes or items, or
// nil when none may be drawn. A total not known yet is given to SetTotal.
func newProgress(g Global, desc string, total int64, bytes bool) *progress {
	if g.NoProgress || g.Quiet || !isTerminal(g.Stderr) {
		return nil
	}
	return &progress{w: g.Stderr, desc: desc, bytes: bytes, total: total, start: time.Now()}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Add records n more units done.
func (p *progress) Add(n int64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done += n
	p.show()
}

// Set records done units done in all, out of total (which may grow as the
// work finds out how much there is).
func (p *progress) Set(done, total int64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if total != p.total && p.bar != nil {
		p.bar.ChangeMax64(total)
	}
	p.done, p.total = done, total
	p.show()
}

// More adds todo units to the total, for work that learns as it goes how
// much there is.
func (p *progress) More(todo int64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total += todo
	if p.bar != nil {
		p.bar.ChangeMax64(p.total)
	}
	p.show()
}

func (p *progress) show() {
	if p.bar == nil {
		if p.total <= 0 || time.Since(p.start) < progressDelay {
			return
		}
		opts := []progressbar.Option{progressbar.OptionSetWriter(p.w), progressbar.OptionSetDescription(p.desc),
			progressbar.OptionThrottle(100 * time.Millisecond), progressbar.OptionClearOnFinish()}
		switch {
		case p.bytes:
			// Binary units (MiB/s), as every size logtool prints.
			opts = append(opts, progressbar.OptionShowBytes(true), progressbar.OptionUseIECUnits(true))
		case p.items != "":
			opts = append(opts, progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetItsString(p.items))
		default:
			opts = append(opts, progressbar.OptionShowCount())
		}
		p.bar = progressbar.NewOptions64(p.total, opts...)
	}
	p.bar.Add64(p.done - p.shown)
	p.shown = p.done
}

// Clear erases the bar, so that a line can be written to the terminal; the
// next update draws it again.
func (p *progress) Clear() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		p.bar.Clear()
	}
}

// Finish erases the bar for good.
func (p *progress) Finish() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		p.bar.Finish()
	}
}

// barWriter clears the progress bar before each write, so that lines and
// bar do not overwrite each other.
type barWriter struct {
	w   io.Writer
	bar *progress
}

func (b *barWriter) Write(p []byte) (int, error) {
	b.bar.Clear()
	return b.w.Write(p)
}

// Describe replaces the bar's description, for figures that change as the
// work goes (replay's records/s and MiB/s).
func (p *progress) Describe(s string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.desc = s
	if p.bar != nil {
		p.bar.Describe(s)
	}
}
