package commands

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/logtool/logtool/internal/human"
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

	// The rate is smoothed over windows of rateWindow from start, not taken
	// from the bar, which starts its clock when it appears, a second into
	// the work, and so first shows a second's work done in no time.
	rate     float64 // units a second
	mark     time.Time
	markDone int64
	status   time.Time // when the text after the bar was last made
}

const (
	rateWindow = 500 * time.Millisecond
	// etaAfter is how long the work runs, and etaShare how much of it is
	// done, before the time left is shown: before that it is a guess.
	etaAfter = 3 * time.Second
	etaShare = 0.02
)

// newProgress returns the bar for work of total units, bytes or items, or
// nil when none may be drawn. A total not known yet is given to SetTotal.
func newProgress(g Global, desc string, total int64, bytes bool) *progress {
	if g.NoProgress || g.Quiet || !isTerminal(g.Stderr) {
		return nil
	}
	now := time.Now()
	return &progress{w: g.Stderr, desc: desc, bytes: bytes, total: total, start: now, mark: now}
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
	now := time.Now()
	if dt := now.Sub(p.mark); dt >= rateWindow {
		r := float64(p.done-p.markDone) / dt.Seconds()
		if p.rate == 0 {
			p.rate = r
		} else {
			p.rate = 0.7*p.rate + 0.3*r
		}
		p.mark, p.markDone = now, p.done
	}
	if p.bar == nil {
		if p.total <= 0 || now.Sub(p.start) < progressDelay {
			return
		}
		// Counts, rate and time left are logtool's own (statusLine), after
		// the bar; the bar's figures are turned off.
		p.bar = progressbar.NewOptions64(p.total, progressbar.OptionSetWriter(p.w),
			progressbar.OptionSetDescription(p.statusLine(now)), progressbar.OptionShowDescriptionAtLineEnd(),
			progressbar.OptionSetPredictTime(false), progressbar.OptionSetElapsedTime(false),
			progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
		p.status = now
	} else if now.Sub(p.status) >= 100*time.Millisecond {
		p.bar.Describe(p.statusLine(now))
		p.status = now
	}
	p.bar.Add64(p.done - p.shown)
	p.shown = p.done
}

// statusLine is what follows the bar: "verify 1.2 GiB/2.0 GiB, 310.0 MiB/s,
// 3s left", the time left only once it means something.
func (p *progress) statusLine(now time.Time) string {
	count, rate := func(n int64) string { return strconv.FormatInt(n, 10) }, ""
	switch {
	case p.bytes:
		count = human.Bytes
		rate = human.Bytes(int64(p.rate)) + "/s"
	case p.items != "":
		rate = fmt.Sprintf("%.0f %s/s", p.rate, p.items)
	}
	line := p.desc + " " + count(p.done) + "/" + count(p.total)
	if rate != "" && p.rate > 0 {
		line += ", " + rate
	}
	if now.Sub(p.start) >= etaAfter && p.rate > 0 && p.done < p.total && float64(p.done) >= etaShare*float64(p.total) {
		left := time.Duration(float64(p.total-p.done) / p.rate * float64(time.Second))
		if left >= time.Second {
			line += ", " + human.Duration(left.Round(time.Second).Milliseconds()) + " left"
		}
	}
	return line
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
		p.bar.Describe(p.statusLine(time.Now()))
	}
}
