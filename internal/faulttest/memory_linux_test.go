package faulttest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/logtool/logtool/internal/gen"
)

// The memory tests run the built binary and read its peak resident set as
// /usr/bin/time does, from the rusage the kernel gives the process that
// waits for it. That process must be a small one: a child starts with the
// high-water mark of the process it was forked from (Go forks by sharing
// the parent's memory until exec), so a child of this test binary, which
// holds the in-process tests' fixtures and bombs, would report them. The
// test binary runs itself again as a helper (rssHelperEnv), a fresh small
// process, which runs the command and writes its peak to a file.
const (
	// rssBase is what the goal allows a command besides three of its
	// largest record: "peak RSS at most 64 MiB + 3 × the largest record".
	rssBase = 64 << 20
)

func init() { measureChild = runMeasured }

// runMeasured is the helper's main: it runs os.Args[1:], writes the
// command's peak RSS in KiB to the file rssHelperEnv names, and exits with
// its status.
func runMeasured() int {
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, os.Stdout, os.Stderr
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		fmt.Fprintln(os.Stderr, err)
		return 125
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if err := os.WriteFile(os.Getenv(rssHelperEnv), []byte(strconv.FormatInt(ru.Maxrss, 10)), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 125
	}
	return cmd.ProcessState.ExitCode()
}

var built struct {
	sync.Once
	path string
	err  error
}

// logtoolBinary is logtool built once for the package's tests, or the binary
// LOGTOOL_BIN names (to measure another build, such as one from before a
// fix).
func logtoolBinary(t testing.TB) string {
	t.Helper()
	if bin := os.Getenv("LOGTOOL_BIN"); bin != "" {
		return bin
	}
	built.Do(func() {
		built.path = filepath.Join(templates.root, "logtool")
		if out, err := exec.Command("go", "build", "-o", built.path, "github.com/logtool/logtool").CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.path
}

// peakRSS runs the built binary with args and returns its exit code, its
// stderr and its peak resident set in bytes.
func peakRSS(t testing.TB, args ...string) (code int, stderr string, rss int64) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "maxrss")
	cmd := exec.Command(self, append([]string{logtoolBinary(t), "--no-progress"}, args...)...)
	cmd.Env = append(os.Environ(), rssHelperEnv+"="+out)
	var errOut strings.Builder
	cmd.Stderr = &errOut
	err = cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("logtool %s: no peak RSS (%v): %s", strings.Join(args, " "), err, clip(errOut.String(), 600))
	}
	kib, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), errOut.String(), kib << 10
}

// checkRSS runs each command and wants its peak RSS at most limit, and no
// exit code but those in codes (any, when codes is empty).
func checkRSS(t *testing.T, limit int64, cmds [][]string, codes ...int) {
	t.Helper()
	for _, args := range cmds {
		code, stderr, rss := peakRSS(t, args...)
		t.Logf("%s: exit %d, peak RSS %d MiB", strings.Join(args, " "), code, rss>>20)
		if rss > limit {
			t.Errorf("%s: peak RSS %d MiB; want at most %d MiB", strings.Join(args, " "), rss>>20, limit>>20)
		}
		if len(codes) > 0 && !slices.Contains(codes, code) {
			t.Errorf("%s: exit %d, want one of %v: %s", strings.Join(args, " "), code, codes, clip(stderr, 600))
		}
	}
}

// TestMemoryGarbageSnapshot: a 200 MB file named as a producer snapshot
// that is none, by its version or by its CRC, was read whole before it was
// refused (426-840 MiB peak RSS across dump, verify, reindex and compact).
// It is refused by its header, or by its CRC read a window at a time.
func TestMemoryGarbageSnapshot(t *testing.T) {
	for _, tc := range []struct {
		name   string
		header []byte
	}{
		{"not-a-version", []byte("garbage!!!")},
		{"version-1-wrong-crc", []byte{0, 1, 0, 0, 0, 0, 0, 0, 0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := fixture(t, gen.Options{Topics: []string{"events"}, Records: 2000, Keys: 100, Magic: 2, SegmentBytes: 40000, Seed: 9})
			part := filepath.Join(dir, "events-0")
			// One at each segment's base after the first, where a broker
			// writes them at a roll, for each command to meet.
			logs, err := filepath.Glob(filepath.Join(part, "*.log"))
			if err != nil || len(logs) < 3 {
				t.Fatalf("segments %v, %v", logs, err)
			}
			for _, l := range logs[1:] {
				s := strings.TrimSuffix(l, ".log") + ".snapshot"
				writeFile(t, s, tc.header)
				if err := os.Truncate(s, 200<<20); err != nil {
					t.Fatal(err)
				}
			}
			checkRSS(t, rssBase, [][]string{
				{"dump", part},
				{"verify", part},
				{"reindex", part},
				{"compact", "--topic", ".*", "--now", compactNow, "--max-lag", "1ms", part},
			}, 0, 1, 3)
		})
	}
}

// TestMemoryCompactSmallDirtyRange: compact's offset map is allocated for
// the keys the dirty range can hold, not for --offset-map-memory. The
// default 128 MiB map was allocated whole, and cleared (so made resident)
// for each partition after a worker's first: three partitions of 5 records
// took compact to 147 MiB with one worker.
func TestMemoryCompactSmallDirtyRange(t *testing.T) {
	dir := fixture(t, gen.Options{Topics: []string{"events"}, Partitions: 3, Records: 20, Keys: 5, Magic: 2, Seed: 9})
	checkRSS(t, rssBase, [][]string{
		{"--workers", "1", "compact", "--topic", ".*", "--now", compactNow, "--max-lag", "1ms", dir},
	}, 0)
}
