package meter

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestNilBar: a nil bar is what every command holds off a terminal: each
// method must be a no-op.
func TestNilBar(t *testing.T) {
	var p *Bar
	p.Add(1)
	p.Set(1, 2)
	p.Clear()
	p.Finish()
	p.Describe("x")
	p.Items("x")
	p.More(1)
}

// TestProgressRateAndTimeLeft: the first frame, drawn a second into the
// work, shows the rate of that second (it showed 616 GiB/s: the bar's own
// clock starts when it appears), and the time left appears only once the
// work has run a while and done a share of itself.
func TestProgressRateAndTimeLeft(t *testing.T) {
	saved := Delay
	Delay = time.Second
	defer func() { Delay = saved }()
	var out bytes.Buffer
	start := time.Now().Add(-time.Second)
	p := &Bar{w: &out, desc: "verify", bytes: true, total: 4 << 30, start: start, mark: start}
	p.Add(1 << 30)
	if p.bar == nil {
		t.Fatal("no bar a second into the work")
	}
	if gib := p.rate / (1 << 30); gib < 0.9 || gib > 1.01 {
		t.Errorf("first rate %.2f GiB/s, want about 1 (a GiB in the first second)", gib)
	}
	if strings.Contains(out.String(), " left") {
		t.Errorf("time left shown a second into the work: %q", out.String())
	}

	now := time.Now()
	for _, tc := range []struct {
		ran  time.Duration
		done int64
		want string // "" for no time left
	}{
		{2 * time.Second, 2 << 30, ""},           // too early
		{10 * time.Second, 10 << 20, ""},         // too little done
		{10 * time.Second, 2 << 30, ", 2s left"}, // 2 GiB at 1 GiB/s
		{10 * time.Second, 4<<30 - 1<<20, ""},    // under a second
	} {
		p := &Bar{desc: "verify", bytes: true, total: 4 << 30, done: tc.done, start: now.Add(-tc.ran), rate: 1 << 30}
		line := p.statusLine(now)
		if _, left, _ := strings.Cut(line, "GiB/s"); left != tc.want {
			t.Errorf("ran %v, done %d: %q, want it to end %q", tc.ran, tc.done, line, tc.want)
		}
	}
}
