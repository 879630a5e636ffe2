//go:build unix

package faulttest

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/internal/testkit/testutil"
	"github.com/logtool/logtool/logfmt/checkpoint"
	"github.com/logtool/logtool/replicas"
)

// killWriter is a writing command of the external kill campaign.
type killWriter struct {
	name     string
	args     []string // the log directory is appended
	template string   // which generated log directory it runs on
	rule     crashRule
	// prepare changes a fresh copy before the run.
	prepare func(t *testing.T, dir string)
	// sameFiles: a re-run leaves every file byte-identical to an
	// uninterrupted run's.
	sameFiles bool
	// out, when set, is the log directory the command writes into instead
	// of dir, and what a broker loads; args are then the whole command
	// line, without dir.
	out func(dir string) string
	// done tells, for a command that never replaces its output, that the
	// kill came after the output was complete: the re-run refuses (exit 4).
	done func(out string) bool
	// swaps: the writer swaps segments (.swap files); every third kill
	// lands within the swap.
	swaps bool
}

// TestKillCampaign (LOGTOOL_LONG=1) builds the binary, generates a few
// hundred MB with logtool gen, and for each writer starts it and kills it
// with SIGKILL after a random delay, many times. After each kill what a
// broker serves after loading the directory with Kafka's rules
// (internal/testkit/kafkaloader), as it is and as after a broker crash that
// recovers every segment, must follow the writer's crash rule; then a
// re-run must succeed and give exactly the result of an uninterrupted run,
// with nothing left over and verify --deep clean.
//
// LOGTOOL_KILL_MB (default 300) sizes each generated log directory,
// LOGTOOL_KILL_TRIALS (default 20) is the number of kills per writer and
// LOGTOOL_KILL_SEED (default: the clock) seeds the delays.
func TestKillCampaign(t *testing.T) {
	mb, trials, rng, root, bin := startKills(t, 15)
	exe := func(args ...string) {
		t.Helper()
		if out, err := exec.Command(bin, append([]string{"--no-progress"}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("logtool %s: %v\n%s", strings.Join(args, " "), err, clip(string(out), 2000))
		}
	}

	// Four partitions of about mb/4 MB in 6 segments each: v2 with keys,
	// tombstones and transactions for compact, retention, reindex and
	// migrate-checkpoints; v0 whose segments alternate v0 and v1 for
	// upgrade. Uncompressed, so that the size is what was asked for.
	perPartition := mb << 20 / 4
	const valueBytes = 1000
	records := perPartition / (valueBytes + 70)
	templates := map[string]string{"v2": filepath.Join(root, "v2"), "mixed": filepath.Join(root, "mixed")}
	common := []string{"--topic", "events", "--topic", "orders", "--partitions", "2", "--records", strconv.Itoa(records),
		"--value-bytes", strconv.Itoa(valueBytes), "--batch-records", "20", "--segment-bytes", strconv.Itoa(perPartition / 6), "--seed", "15"}
	exe(append([]string{"gen", "--out", templates["v2"], "--keys", "20000", "--tombstone-ratio", "0.05",
		"--transactional-ratio", "0.2", "--abort-ratio", "0.2"}, common...)...)
	exe(append([]string{"gen", "--out", templates["mixed"], "--magic", "0", "--keys", "20000"}, common...)...)
	mixFormats(t, templates["mixed"], func(part string) { exe("upgrade", "--to-magic", "1", part) })

	retentionBytes := strconv.Itoa(perPartition / 2)
	writers := []killWriter{
		{name: "compact", args: []string{"compact", "--topic", ".*", "--now", compactNow}, template: "v2", swaps: true},
		{name: "upgrade", args: []string{"upgrade", "--to-magic", "1", "--timestamp-type", "log-append"}, template: "mixed", rule: ruleEach, swaps: true},
		{name: "retention", args: []string{"retention", "--topic", ".*", "--now", compactNow, "--retention-ms", "-1", "--retention-bytes", retentionBytes},
			template: "v2", rule: ruleSuffix},
		{name: "reindex", args: []string{"reindex"}, template: "v2", sameFiles: true, prepare: func(t *testing.T, dir string) {
			// Stale indexes: reindex has every file to write.
			for _, p := range testutil.PartitionDirs(t, dir) {
				for _, s := range segments(t, p) {
					writeFile(t, s.Index, nil)
					writeFile(t, s.TimeIndex, nil)
				}
			}
		}},
		{name: "migrate-checkpoints", args: []string{"migrate-checkpoints", "--clean-time", "1700000000000"}, template: "v2", sameFiles: true,
			prepare: func(t *testing.T, dir string) {
				n := int64(records)
				writeFile(t, filepath.Join(dir, "cleaner-offset-checkpoint"), checkpoint.AppendOffsets(nil, []checkpoint.OffsetEntry{
					{Topic: "events", Partition: 0, Offset: n / 3}, {Topic: "events", Partition: 1, Offset: n / 2},
					{Topic: "orders", Partition: 0, Offset: n / 5}, {Topic: "gone", Partition: 3, Offset: 9},
				}))
			}},
		// A new partition directory, from a partition with a damaged
		// batch, into an empty log directory next to the source's.
		{name: "salvage", template: "v2", sameFiles: true,
			args: []string{"salvage", "--out", "", ""},
			out:  func(dir string) string { return filepath.Join(filepath.Dir(dir), "salvaged") },
			done: func(out string) bool { _, err := os.Stat(filepath.Join(out, "events-0")); return err == nil },
			prepare: func(t *testing.T, dir string) {
				log := segments(t, filepath.Join(dir, "events-0"))[1].Log
				at, _ := damagedEntry(t, log)
				testutil.FlipByte(t, log, int(at.Pos)+at.Size/2)
				if err := os.Mkdir(filepath.Join(filepath.Dir(dir), "salvaged"), 0o755); err != nil {
					t.Fatal(err)
				}
			}},
	}
	var summary []string
	for _, w := range writers {
		t.Run(w.name, func(t *testing.T) {
			fresh := func() (dir, out string, args []string) {
				dir = filepath.Join(t.TempDir(), "kafka-logs")
				testutil.CopyTree(t, templates[w.template], dir)
				if w.prepare != nil {
					w.prepare(t, dir)
				}
				if w.out == nil {
					return dir, dir, append(slices.Clone(w.args), dir)
				}
				out = w.out(dir)
				args = slices.Clone(w.args)
				args[2], args[3] = filepath.Join(out, "events-0"), filepath.Join(dir, "events-0")
				return dir, out, args
			}
			// The uninterrupted runs: the faster of two gives the delays.
			dir, out, _ := fresh()
			old := brokerLogicalWith(t, out, false, hashedLine)
			oldFiles := digest(t, out)
			oldDirs := subdirs(t, out)
			os.RemoveAll(filepath.Dir(dir))
			var took time.Duration
			var changes, swaps window
			var want []string
			var wantFiles map[string]string
			var wantDirs []string
			for range 2 {
				dir, out, args := fresh()
				d, c, s := timedRun(t, bin, args, out)
				if took == 0 || d < took {
					took, changes, swaps = d, c, s
				}
				want, wantFiles, wantDirs = brokerLogicalWith(t, out, false, hashedLine), digest(t, out), subdirs(t, out)
				if got, text := exitCode(t, bin, "verify", "--deep", out); got != 0 {
					t.Fatalf("verify --deep after an uninterrupted run: exit %d\n%s", got, clip(text, 1500))
				}
				os.RemoveAll(filepath.Dir(dir))
			}
			if w.rule != ruleExact && slices.Equal(old, want) || w.out != nil && len(want) == 0 {
				t.Fatal("the uninterrupted run changed no record; the writer is not exercised")
			}
			if w.swaps && swaps.first == 0 {
				t.Fatal("no .swap file was seen during the uninterrupted runs")
			}

			// Kills rotate between a delay from the start, anywhere in the
			// run; one from the first change a loader would see, within
			// the time the changes took (half as long again), where the
			// machine's load cannot make them miss; and, for writers that
			// swap, one from the first .swap file, within the time the
			// first swap took (half as long again).
			modes := 2
			if w.swaps {
				modes = 3
			}
			var before, midway, after, swapLeft, stageLeft int
			for i := range trials {
				dir, out, args := fresh()
				var when string
				switch i % modes {
				case 0:
					delay := time.Duration(rng.Int64N(int64(took)))
					killRun(t, bin, args, out, nil, delay)
					when = fmt.Sprintf("trial %d (killed %v after the start; uninterrupted: %v)", i, delay.Round(time.Millisecond), took.Round(time.Millisecond))
				case 1:
					initial := listing(out)
					delay := time.Duration(rng.Int64N(int64(changes.length()*3/2 + time.Millisecond)))
					killRun(t, bin, args, out, func(l string) bool { return l != initial }, delay)
					when = fmt.Sprintf("trial %d (killed %v after the first change; uninterrupted: changes for %v)", i, delay.Round(time.Microsecond), changes.length().Round(time.Microsecond))
				case 2:
					delay := time.Duration(rng.Int64N(int64(swaps.length()*3/2 + time.Millisecond)))
					killRun(t, bin, args, out, hasSwap, delay)
					when = fmt.Sprintf("trial %d (killed %v after the first .swap file; uninterrupted: the first swap took %v)", i, delay.Round(time.Microsecond), swaps.length().Round(time.Microsecond))
				}
				// What a broker serves depends only on the files: a kill that
				// left them as they were, or as an uninterrupted run leaves
				// them, needs no second look.
				tmp := func(s string) bool { return !strings.HasSuffix(s, ".tmp") }
				files, dirs := digest(t, out), subdirs(t, out)
				switch {
				case len(diff(oldFiles, files, tmp)) == 0 && slices.Equal(dirs, oldDirs):
					before++
				case len(diff(wantFiles, files, tmp)) == 0 && slices.Equal(dirs, wantDirs):
					after++
				default:
					midway++
				}
				asOld := len(diff(oldFiles, files, nil)) == 0 && slices.Equal(dirs, oldDirs)
				asWhole := len(diff(wantFiles, files, nil)) == 0 && slices.Equal(dirs, wantDirs)
				if hasSwap(listing(out)) {
					swapLeft++
				}
				if slices.ContainsFunc(dirs, func(d string) bool { return strings.HasSuffix(d, "-delete") }) {
					stageLeft++
				}
				for _, unflushed := range []bool{false, true} {
					if asOld || asWhole {
						break
					}
					checkRecords(t, fmt.Sprintf("%s, as a broker loads it (unflushed %v)", when, unflushed),
						brokerLogicalWith(t, out, unflushed, hashedLine), old, want, w.rule)
				}
				wantCode := 0
				if w.done != nil && w.done(out) {
					wantCode = 4
				}
				if got, text := exitCode(t, bin, args...); got != wantCode {
					t.Fatalf("%s: re-run: exit %d, want %d\n%s", when, got, wantCode, clip(text, 2000))
				}
				files, dirs = digest(t, out), subdirs(t, out)
				rerunAsWhole := len(diff(wantFiles, files, nil)) == 0 && slices.Equal(dirs, wantDirs)
				if !rerunAsWhole {
					checkRecords(t, when+", after the re-run", brokerLogicalWith(t, out, false, hashedLine), want, want, ruleExact)
				}
				if left := leftovers(t, out); len(left) > 0 {
					t.Errorf("%s: left after the re-run: %v", when, left)
				}
				if !slices.Equal(dirs, wantDirs) {
					t.Errorf("%s: after the re-run the directories are %v, want %v", when, dirs, wantDirs)
				}
				if w.sameFiles {
					if d := diff(wantFiles, files, tmp); len(d) > 0 {
						t.Errorf("%s: after the re-run the files differ from an uninterrupted run: %v", when, d)
					}
				}
				if !rerunAsWhole {
					if got, text := exitCode(t, bin, "verify", "--deep", out); got != 0 {
						t.Errorf("%s: verify --deep after the re-run: exit %d\n%s", when, got, clip(text, 1500))
					}
				}
				os.RemoveAll(filepath.Dir(dir))
				if t.Failed() {
					return
				}
			}
			line := fmt.Sprintf("%s: %d kills: %d before the first change, %d midway (%d with .swap files, %d with a staging directory), %d after the last change; uninterrupted run %v, changes from %v to %v",
				w.name, trials, before, midway, swapLeft, stageLeft, after, took.Round(time.Millisecond), changes.first.Round(time.Millisecond), changes.last.Round(time.Millisecond))
			t.Log(line)
			summary = append(summary, line)
		})
	}
	t.Logf("summary:\n%s", strings.Join(summary, "\n"))
}

// window is when something was seen during a run, from its start.
type window struct{ first, last time.Duration }

func (w window) length() time.Duration { return w.last - w.first }

func (w *window) see(at time.Duration) {
	if w.first == 0 {
		w.first = at
	}
	w.last = at
}

// hasSwap tells a listing that holds a .swap file.
func hasSwap(l string) bool { return strings.Contains(l, ".swap ") }

// timedRun runs logtool to completion and returns how long it took, when
// the files a loader sees under the log directory out first and last
// changed, and when .swap files were there the first time (the first
// swap), polling their names.
func timedRun(t *testing.T, bin string, args []string, out string) (took time.Duration, changes, swaps window) {
	t.Helper()
	seen, swapped := listing(out), false
	cmd := exec.Command(bin, append([]string{"--no-progress"}, args...)...)
	text := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = text, text
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		select {
		case err := <-done:
			took = time.Since(start)
			if err != nil {
				t.Fatalf("uninterrupted run: %v\n%s", err, clip(text.String(), 2000))
			}
			if l := listing(out); l != seen || changes.first == 0 {
				changes.see(took)
			}
			return took, changes, swaps
		default:
		}
		l, at := listing(out), time.Since(start)
		if l != seen {
			seen = l
			changes.see(at)
		}
		if hasSwap(l) && !swapped {
			swaps.see(at)
		}
		swapped = swapped || swaps.first > 0 && !hasSwap(l)
		time.Sleep(200 * time.Microsecond)
	}
}

// killRun starts logtool and kills it with SIGKILL delay after the start,
// or, with wait, delay after the listing of the log directory out first
// satisfies wait (at once if the run ends first).
func killRun(t *testing.T, bin string, args []string, out string, wait func(string) bool, delay time.Duration) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"--no-progress"}, args...)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for wait != nil && !wait(listing(out)) && len(done) == 0 {
		time.Sleep(200 * time.Microsecond)
	}
	time.Sleep(delay)
	cmd.Process.Signal(syscall.SIGKILL)
	err := <-done
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL) {
		t.Fatalf("logtool %s: %v", strings.Join(args, " "), err)
	}
}

// exitCode runs logtool to completion and returns its exit code and output.
func exitCode(t *testing.T, bin string, args ...string) (int, string) {
	t.Helper()
	text, err := exec.Command(bin, append([]string{"--no-progress"}, args...)...).CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), string(text)
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, string(text)
}

// subdirs lists the directories directly under dir.
func subdirs(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

// listing is the names under dir that a loader reads, each with its inode
// number, which a file renamed over it changes. Temporary files and the
// .lock that taking the lock creates are left out.
func listing(dir string) string {
	var b strings.Builder
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.Name() == ".lock" || strings.HasSuffix(d.Name(), ".tmp") {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				fmt.Fprintf(&b, "%s %d\n", path, st.Ino)
			}
		}
		return nil
	})
	return b.String()
}

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, s, err)
	}
	return n
}

// startKills is how a kill test starts: skipped unless LOGTOOL_LONG=1, its
// settings from the environment (LOGTOOL_KILL_MB, LOGTOOL_KILL_TRIALS,
// LOGTOOL_KILL_SEED), the delays' random source (stream, one per test, so
// that tests sharing a seed draw apart), and logtool built into root.
func startKills(t *testing.T, stream uint64) (mb, trials int, rng *rand.Rand, root, bin string) {
	t.Helper()
	if !long() {
		t.Skip("the external kill -9 campaign takes minutes; LOGTOOL_LONG=1 runs it")
	}
	mb = envInt(t, "LOGTOOL_KILL_MB", 300)
	trials = envInt(t, "LOGTOOL_KILL_TRIALS", 20)
	seed := envInt(t, "LOGTOOL_KILL_SEED", int(time.Now().UnixNano()%1e9))
	t.Logf("LOGTOOL_KILL_MB=%d LOGTOOL_KILL_TRIALS=%d LOGTOOL_KILL_SEED=%d", mb, trials, seed)
	rng = rand.New(rand.NewPCG(uint64(seed), stream))
	root = t.TempDir()
	bin = filepath.Join(root, "logtool")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/logtool/logtool").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return mb, trials, rng, root, bin
}

// TestKillDigest (LOGTOOL_LONG=1) is the kill campaign's row for digest,
// which writes one file and no log directory: killed with SIGKILL at a
// random moment, it leaves at --out nothing, the file that was there before
// (an earlier digest) or the whole digest, byte for byte, and beside it at
// most logtool's temporary file, which replicas does not read as a whole
// digest unless it is one; a re-run then writes the digest of an
// uninterrupted run and leaves nothing else.
//
// LOGTOOL_KILL_MB (default 300) sizes the generated log directory,
// LOGTOOL_KILL_TRIALS (default 20) is the number of kills and
// LOGTOOL_KILL_SEED (default: the clock) seeds the delays.
func TestKillDigest(t *testing.T) {
	mb, trials, rng, root, bin := startKills(t, 16)
	// One large partition, read in ranges, and small ones, read a whole
	// partition per worker; transactions and tombstones.
	dir := filepath.Join(root, "kafka-logs")
	gen := func(args ...string) {
		t.Helper()
		if code, text := exitCode(t, bin, append([]string{"gen", "--out", dir, "--value-bytes", "1000", "--batch-records", "20",
			"--transactional-ratio", "0.2", "--abort-ratio", "0.2", "--tombstone-ratio", "0.05", "--seed", "16"}, args...)...); code != 0 {
			t.Fatalf("gen: exit %d\n%s", code, clip(text, 2000))
		}
	}
	gen("--topic", "events", "--records", strconv.Itoa(mb<<20/2/1070), "--keys", "20000")
	gen("--topic", "orders", "--partitions", "8", "--records", strconv.Itoa(mb<<20/2/8/1070), "--keys", "2000")

	out := filepath.Join(root, "out", "broker.digest")
	if err := os.Mkdir(filepath.Dir(out), 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{"digest", "--out", out, dir}
	// An earlier digest of the broker, which a killed run must leave whole.
	if code, text := exitCode(t, bin, "digest", "--all-records", "--out", out, dir); code != 0 {
		t.Fatalf("digest --all-records: exit %d\n%s", code, clip(text, 2000))
	}
	earlier := readFile(t, out)
	// The uninterrupted runs: the faster of two gives the delays.
	var took time.Duration
	var want []byte
	for range 2 {
		os.Remove(out)
		start := time.Now()
		if code, text := exitCode(t, bin, args...); code != 0 {
			t.Fatalf("uninterrupted run: exit %d\n%s", code, clip(text, 2000))
		}
		if d := time.Since(start); took == 0 || d < took {
			took = d
		}
		got := readFile(t, out)
		if want != nil && !bytes.Equal(got, want) {
			t.Fatal("two uninterrupted runs wrote different digests")
		}
		want = got
	}
	if bytes.Equal(want, earlier) {
		t.Fatal("the earlier digest is the new one: a kill that left it would pass unnoticed")
	}
	tmp := safefile.TempName(out)
	var none, old, whole, tmps int
	for i := range trials {
		prior := i%2 == 1
		os.Remove(out)
		if prior {
			writeFile(t, out, earlier)
		}
		delay := time.Duration(rng.Int64N(int64(took * 6 / 5)))
		killRun(t, bin, args, filepath.Dir(out), nil, delay)
		when := fmt.Sprintf("trial %d (killed %v after the start; uninterrupted: %v; an earlier digest there: %v)", i, delay.Round(time.Millisecond), took.Round(time.Millisecond), prior)
		got, err := os.ReadFile(out)
		switch {
		case errors.Is(err, os.ErrNotExist) && !prior:
			none++
		case err != nil:
			t.Fatalf("%s: %v", when, err)
		case prior && bytes.Equal(got, earlier):
			old++
		case bytes.Equal(got, want):
			whole++
		default:
			t.Fatalf("%s: --out holds %d bytes that are neither the earlier digest nor the whole new one", when, len(got))
		}
		entries, err := os.ReadDir(filepath.Dir(out))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if name := filepath.Join(filepath.Dir(out), e.Name()); name != out && name != tmp {
				t.Fatalf("%s: left %s", when, e.Name())
			}
		}
		if b, err := os.ReadFile(tmp); err == nil {
			tmps++
			if !bytes.Equal(b, want) && readsWhole(tmp) {
				t.Fatalf("%s: the temporary file, %d bytes of %d, reads as a whole digest", when, len(b), len(want))
			}
		}
		if code, text := exitCode(t, bin, args...); code != 0 {
			t.Fatalf("%s: re-run: exit %d\n%s", when, code, clip(text, 2000))
		}
		if !bytes.Equal(readFile(t, out), want) {
			t.Fatalf("%s: the re-run's digest differs from an uninterrupted run's", when)
		}
		if _, err := os.Stat(tmp); err == nil {
			t.Fatalf("%s: the re-run left %s", when, tmp)
		}
	}
	t.Logf("digest: %d kills: %d left no file, %d the earlier digest, %d the whole digest; %d left a temporary file; uninterrupted run %v",
		trials, none, old, whole, tmps, took.Round(time.Millisecond))
}

// readsWhole tells whether replicas reads path as a whole digest.
func readsWhole(path string) bool {
	s, err := replicas.OpenDigest(path)
	if err != nil {
		return false
	}
	defer s.Close()
	for {
		p, err := s.Next()
		if err != nil {
			return false
		}
		if p == nil {
			return true
		}
	}
}
