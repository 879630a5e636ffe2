package faulttest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/logtool/logtool/logfmt/codec"
)

// rssLimit is the bound on the resident set of any command reading
// the decompression bombs, the stored entry, which is read whole for its
// checksum, included: only snappy, which cannot compress better than about
// 21:1, stores a bomb in more than a MiB (26 MiB for 512 MiB of zeros), and
// upgrade holds it four times (the entry it converts, its output, and both
// again to compare them).
const rssLimit = 128 << 20

// TestBombRSS (LOGTOOL_LONG=1) runs the built binary, without the race
// detector, on the decompression bombs of TestHostileDecompressionBomb at
// full size (512 records of 1 MiB, every compressed format) and on a record
// of 512 MiB, and wants the peak resident set of every command under
// rssLimit. The in-process tests bound the heap; this bounds the process,
// the default 128 MiB offset map of compact included. Each command gets the
// partition as written: compact leaves none of the bombs' keyless records.
func TestBombRSS(t *testing.T) {
	if !long() {
		t.Skip("LOGTOOL_LONG=1 builds the binary and runs it on 512 MiB bombs")
	}
	// GNU time measures the command from a process of its own: a child of
	// this test would inherit its high-water mark, which the bombs raise.
	if _, err := os.Stat("/usr/bin/time"); err != nil {
		t.Skip("no /usr/bin/time")
	}
	bin := filepath.Join(t.TempDir(), "logtool")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/logtool/logtool").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	entries := map[string][]byte{"v2-record-512MiB": bombEntry(t, codec.Zstd, 2, 1, 512)}
	for _, f := range allFormats() {
		if f.codec != codec.None {
			entries[f.name] = bombEntry(t, f.codec, f.magic, 512, 1)
		}
	}
	for name, entry := range entries {
		t.Run(name, func(t *testing.T) {
			dir, part, log := partitionWith(t, entry)
			cmds := hostileCommands(dir, part, log, int8(entry[16]))
			for i, args := range cmds {
				if args[0] == "compact" { // with Kafka's default offset map
					cmds[i] = []string{"compact", "--now", compactNow, "--max-lag", "1ms", part}
				}
			}
			out := filepath.Join(t.TempDir(), "time")
			for _, args := range cmds {
				rewritePartition(t, part, log, entry)
				cmd := exec.Command("/usr/bin/time", append([]string{"-f", "%M", "-o", out, bin, "--no-progress"}, args...)...)
				var stderr strings.Builder
				cmd.Stderr = &stderr
				err := cmd.Run()
				if _, ok := err.(*exec.ExitError); err != nil && !ok {
					t.Fatal(err)
				}
				kib, err := strconv.ParseInt(strings.TrimSpace(lastLine(readFile(t, out))), 10, 64)
				if err != nil {
					t.Fatalf("/usr/bin/time wrote %q", readFile(t, out))
				}
				rss := kib << 10
				t.Logf("%-8s exit %d, peak RSS %d MiB", args[0], cmd.ProcessState.ExitCode(), rss>>20)
				if rss > rssLimit {
					t.Errorf("%s: peak RSS %d MiB; want under %d (stderr %q)", strings.Join(args, " "), rss>>20, rssLimit>>20, clip(stderr.String(), 300))
				}
			}
		})
	}
}

// lastLine is the last line of b: GNU time writes "Command exited with
// non-zero status N" before its figures when the command fails.
func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}
