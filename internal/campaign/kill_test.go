//go:build unix

package campaign

import (
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

	"github.com/logtool/logtool/internal/testutil"
	"github.com/logtool/logtool/logfmt/checkpoint"
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
}

// TestKillCampaign (LOGTOOL_LONG=1) builds the binary, generates a few
// hundred MB with logtool gen, and for each writer starts it and kills it
// with SIGKILL after a random delay, many times. After each kill what a
// broker serves after loading the directory with Kafka's rules
// (internal/kafkaloader), as it is and as after a broker crash that
// recovers every segment, must follow the writer's crash rule; then a
// re-run must succeed and give exactly the result of an uninterrupted run,
// with nothing left over and verify --deep clean.
//
// LOGTOOL_KILL_MB (default 300) sizes each generated log directory,
// LOGTOOL_KILL_TRIALS (default 20) is the number of kills per writer and
// LOGTOOL_KILL_SEED (default: the clock) seeds the delays.
func TestKillCampaign(t *testing.T) {
	if !long() {
		t.Skip("the external kill -9 campaign takes minutes; LOGTOOL_LONG=1 runs it")
	}
	mb := envInt(t, "LOGTOOL_KILL_MB", 300)
	trials := envInt(t, "LOGTOOL_KILL_TRIALS", 20)
	seed := envInt(t, "LOGTOOL_KILL_SEED", int(time.Now().UnixNano()%1e9))
	t.Logf("LOGTOOL_KILL_MB=%d LOGTOOL_KILL_TRIALS=%d LOGTOOL_KILL_SEED=%d", mb, trials, seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 15))

	root := t.TempDir()
	bin := filepath.Join(root, "logtool")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/logtool/logtool").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
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
		{name: "compact", args: []string{"compact", "--now", compactNow}, template: "v2"},
		{name: "upgrade", args: []string{"upgrade", "--to-magic", "1", "--timestamp-type", "log-append"}, template: "mixed", rule: ruleEach},
		{name: "retention", args: []string{"retention", "--now", compactNow, "--retention-ms", "-1", "--retention-bytes", retentionBytes},
			template: "v2", rule: ruleSuffix},
		{name: "reindex", args: []string{"reindex"}, template: "v2", sameFiles: true, prepare: func(t *testing.T, dir string) {
			// Stale indexes: reindex has every file to write.
			for _, p := range partitions(t, dir) {
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
	}
	var summary []string
	for _, w := range writers {
		t.Run(w.name, func(t *testing.T) {
			fresh := func() string {
				dir := filepath.Join(t.TempDir(), "kafka-logs")
				testutil.CopyTree(t, templates[w.template], dir)
				if w.prepare != nil {
					w.prepare(t, dir)
				}
				return dir
			}
			// The uninterrupted runs: the faster of two gives the delays.
			dir := fresh()
			old := logicalWith(t, dir, hashedLine)
			oldFiles := digest(t, dir)
			os.RemoveAll(filepath.Dir(dir))
			var took, first, last time.Duration
			var want []string
			var wantFiles map[string]string
			for range 2 {
				dir := fresh()
				d, f, l := timedRun(t, bin, append(w.args, dir))
				if took == 0 || d < took {
					took, first, last = d, f, l
				}
				want, wantFiles = logicalWith(t, dir, hashedLine), digest(t, dir)
				os.RemoveAll(filepath.Dir(dir))
			}
			if w.rule != ruleExact && slices.Equal(old, want) {
				t.Fatal("the uninterrupted run changed no record; the writer is not exercised")
			}

			// Even trials kill at a delay from the start, anywhere in the
			// run; odd ones at a delay from the first change a loader would
			// see, within the time the changes took (half as long again),
			// where the machine's load cannot make them miss.
			var before, midway, after int
			for i := range trials {
				dir := fresh()
				var when string
				if i%2 == 0 {
					delay := time.Duration(rng.Int64N(int64(took)))
					killRun(t, bin, append(w.args, dir), delay, false)
					when = fmt.Sprintf("trial %d (killed %v after the start; uninterrupted: %v)", i, delay.Round(time.Millisecond), took.Round(time.Millisecond))
				} else {
					delay := time.Duration(rng.Int64N(int64((last-first)*3/2 + time.Millisecond)))
					killRun(t, bin, append(w.args, dir), delay, true)
					when = fmt.Sprintf("trial %d (killed %v after the first change; uninterrupted: changes for %v)", i, delay.Round(time.Microsecond), (last - first).Round(time.Microsecond))
				}
				tmp := func(s string) bool { return !strings.HasSuffix(s, ".tmp") }
				switch files := digest(t, dir); {
				case len(diff(oldFiles, files, tmp)) == 0:
					before++
				case len(diff(wantFiles, files, tmp)) == 0:
					after++
				default:
					midway++
				}
				for _, unflushed := range []bool{false, true} {
					checkRecords(t, fmt.Sprintf("%s, as a broker loads it (unflushed %v)", when, unflushed),
						brokerLogicalWith(t, dir, unflushed, hashedLine), old, want, w.rule)
				}
				if out, err := exec.Command(bin, append(append([]string{"--no-progress"}, w.args...), dir)...).CombinedOutput(); err != nil {
					t.Fatalf("%s: re-run: %v\n%s", when, err, clip(string(out), 2000))
				}
				checkRecords(t, when+", after the re-run", logicalWith(t, dir, hashedLine), want, want, ruleExact)
				if left := leftovers(t, dir); len(left) > 0 {
					t.Errorf("%s: left after the re-run: %v", when, left)
				}
				if w.sameFiles {
					if d := diff(wantFiles, digest(t, dir), tmp); len(d) > 0 {
						t.Errorf("%s: after the re-run the files differ from an uninterrupted run: %v", when, d)
					}
				}
				if out, err := exec.Command(bin, "--no-progress", "verify", "--deep", dir).CombinedOutput(); err != nil {
					t.Errorf("%s: verify --deep after the re-run: %v\n%s", when, err, clip(string(out), 1500))
				}
				os.RemoveAll(filepath.Dir(dir))
				if t.Failed() {
					return
				}
			}
			line := fmt.Sprintf("%s: %d kills: %d before the first change, %d midway, %d after the last change; uninterrupted run %v, changes from %v to %v",
				w.name, trials, before, midway, after, took.Round(time.Millisecond), first.Round(time.Millisecond), last.Round(time.Millisecond))
			t.Log(line)
			summary = append(summary, line)
		})
	}
	t.Logf("summary:\n%s", strings.Join(summary, "\n"))
}

// timedRun runs logtool to completion and returns how long it took and
// when the files a loader sees under its log directory (the last argument)
// first and last changed, polling their names.
func timedRun(t *testing.T, bin string, args []string) (took, first, last time.Duration) {
	t.Helper()
	dir := args[len(args)-1]
	seen := listing(dir)
	cmd := exec.Command(bin, append([]string{"--no-progress"}, args...)...)
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
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
				t.Fatalf("uninterrupted run: %v\n%s", err, clip(out.String(), 2000))
			}
			if l := listing(dir); l != seen {
				last = took
			}
			if first == 0 {
				first, last = took, took
			}
			return took, first, last
		default:
		}
		if l := listing(dir); l != seen {
			seen, last = l, time.Since(start)
			if first == 0 {
				first = last
			}
		}
		time.Sleep(200 * time.Microsecond)
	}
}

// killRun starts logtool and kills it with SIGKILL delay after the start,
// or with afterChange delay after the first change of the files a loader
// sees (at once if it ends first).
func killRun(t *testing.T, bin string, args []string, delay time.Duration, afterChange bool) {
	t.Helper()
	dir := args[len(args)-1]
	initial := listing(dir)
	cmd := exec.Command(bin, append([]string{"--no-progress"}, args...)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for afterChange && listing(dir) == initial && len(done) == 0 {
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
