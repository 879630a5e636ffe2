package commands

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/logtool/logtool/internal/meter"
	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal: the side a command writes to, and the
// side its output is read from.
func openPTY(t *testing.T) (tty, master *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetUint32(int(m.Fd()), unix.TIOCGPTN)
	if err == nil {
		err = unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0)
	}
	if err == nil {
		tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	}
	if err != nil {
		m.Close()
		t.Skipf("no pseudo-terminal: %v", err)
	}
	return tty, m
}

// onTerminal runs logtool with stderr a terminal and returns what reached
// it.
func onTerminal(t *testing.T, args ...string) (int, string) {
	t.Helper()
	tty, master := openPTY(t)
	got := make(chan []byte)
	go func() {
		// Reading ends with EIO once the terminal side is closed.
		b, _ := io.ReadAll(master)
		got <- b
	}()
	var stdout bytes.Buffer
	code := Run(append([]string{"logtool"}, newDirs(t, args)...), strings.NewReader(""), &stdout, tty)
	tty.Close()
	b := <-got
	master.Close()
	return code, string(b)
}

// TestProgressOnTerminal: on a terminal every long command draws its bar,
// and none with --quiet or --no-progress, or when the work ends before the
// bar's delay.
func TestProgressOnTerminal(t *testing.T) {
	s := usageSample(t)
	for _, r := range progressRuns(s) {
		t.Run(strings.Join(r.args, " "), func(t *testing.T) {
			defer setProgressDelay(0)()
			code, got := onTerminal(t, r.args...)
			if code != ExitOK || !strings.Contains(got, r.desc) {
				t.Errorf("exit %d; want a %q bar, terminal got %q", code, r.desc, got)
			}
			// Sizes in binary units, as everywhere else.
			if decimal := regexp.MustCompile(`[0-9] ?[kMGT]B\b`).FindString(got); decimal != "" {
				t.Errorf("decimal unit %q on the bar: %q", decimal, got)
			}
			for _, flag := range []string{"--quiet", "--no-progress"} {
				if code, got := onTerminal(t, append([]string{flag}, r.args...)...); code != ExitOK || got != "" {
					t.Errorf("%s: exit %d, terminal got %q", flag, code, got)
				}
			}
			meter.Delay = time.Hour
			if code, got := onTerminal(t, r.args...); code != ExitOK || got != "" {
				t.Errorf("work shorter than the delay: exit %d, terminal got %q", code, got)
			}
		})
	}
}
