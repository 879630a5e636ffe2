// Package meter draws the progress bar of a long run on a terminal: counts,
// rate and time left of bytes or items, fed concurrently by a command's
// workers. A nil *Bar is what every command holds off a terminal, and every
// method of it does nothing.
package meter

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

// Delay is how long work runs before its bar appears: a bar that flashes
// up for a run of half a second only gets in the way. Tests change it.
var Delay = time.Second

// Bar is the progress bar of a long run. It appears once the work has run
// for Delay and is cleared when it finishes.
type Bar struct {
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

// New returns a bar on w, a terminal, for work of total units, bytes or
// items. A total not known yet is given to Set or More.
func New(w io.Writer, desc string, total int64, bytes bool) *Bar {
	now := time.Now()
	return &Bar{w: w, desc: desc, bytes: bytes, total: total, start: now, mark: now}
}

// Items names what the units are, for the rate ("records/s"), where it
// would otherwise read "it/s".
func (p *Bar) Items(name string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.items = name
}

// IsTerminal tells whether w is a terminal, where a bar may be drawn.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Add records n more units done.
func (p *Bar) Add(n int64) {
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
func (p *Bar) Set(done, total int64) {
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
func (p *Bar) More(todo int64) {
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

func (p *Bar) show() {
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
		if p.total <= 0 || now.Sub(p.start) < Delay {
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
func (p *Bar) statusLine(now time.Time) string {
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
func (p *Bar) Clear() {
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
func (p *Bar) Finish() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		p.bar.Finish()
	}
}

// Writer returns w wrapped to clear the bar before each write, so that
// lines and bar do not overwrite each other.
func (p *Bar) Writer(w io.Writer) io.Writer { return &barWriter{w: w, bar: p} }

type barWriter struct {
	w   io.Writer
	bar *Bar
}

func (b *barWriter) Write(p []byte) (int, error) {
	b.bar.Clear()
	return b.w.Write(p)
}

// Describe replaces the bar's description, for figures that change as the
// work goes (replay's records/s and MiB/s).
func (p *Bar) Describe(s string) {
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
