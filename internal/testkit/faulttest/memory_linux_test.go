package faulttest

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
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
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/codec"
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

// TestMemoryBombs runs every command that reads records on decompression
// bombs, keyed and keyless, and wants each within the goal: 64 MiB plus
// three of the largest record (1 MiB). CI takes v1-snappy and v2-zstd and
// bombs of 32 records; LOGTOOL_LONG=1 every format and 512 records (about
// ten minutes), where the snappy bombs store 26 MiB: upgrade of a legacy
// one held that entry two or three times (the converter's read, and its
// verifier's reads of it and of the output) at 71-95 MiB, and holds it
// once, at 46 MiB, since the verifier waits for the converter to give
// its entry back and reads the two sides of a large batch one after the
// other.
func TestMemoryBombs(t *testing.T) {
	n, formats := 32, []format{}
	for _, f := range allFormats() {
		switch {
		case f.codec == codec.None:
		case long() || f.name == "v1-snappy" || f.name == "v2-zstd":
			formats = append(formats, f)
		}
	}
	if long() {
		n = 512
	}
	for _, f := range formats {
		for _, keyed := range []bool{false, true} {
			name := f.name
			if keyed {
				name += "-keyed"
			}
			t.Run(name, func(t *testing.T) {
				entry := keyedBombEntry(t, f.codec, f.magic, n, 1, keyed)
				dir, part, log := partitionWith(t, entry)
				cmds := hostileCommands(dir, part, log, f.magic)
				for i, args := range cmds {
					if args[0] == "compact" { // with the default offset map
						cmds[i] = []string{"compact", "--topic", ".*", "--now", compactNow, "--max-lag", "1ms", part}
					}
				}
				for _, args := range cmds {
					t.Run(args[0], func(t *testing.T) {
						rewritePartition(t, part, log, entry)
						checkRSS(t, rssBase+3*mib, [][]string{args})
					})
				}
			})
		}
	}
}

// TestMemorySparseLength: an entry header declaring a huge length in a
// sparse file is checked against the bytes left in the file and the
// 128 MiB bound on an entry before anything is allocated for it (2 GiB:
// 46-49 MiB peak RSS before and after this test was written, found torn or
// refused). A length under both is read whole for its checksum, as Kafka
// reads it: an entry of 120 MiB of zeros costs the readers up to two of
// it, within the goal if it held a record. LOGTOOL_LONG=1 adds a 2 GiB
// length inside a 2.2 GB file, which dump and salvage then scan for a batch
// to go on from (about 10 s).
func TestMemorySparseLength(t *testing.T) {
	type sparse struct {
		name   string
		length uint32 // of the entry after the valid batches
		size   int64  // of the file, holes past the header
		limit  int64
	}
	cases := []sparse{
		{"2GiB-in-100MB", 0x7ffffff0, 100 << 20, rssBase},
		{"120MiB-in-130MB", 120 << 20, 130 << 20, rssBase},
	}
	if long() {
		cases = append(cases, sparse{"2GiB-in-2.2GB", 0x7ffffff0, 2200 << 20, rssBase})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := fixture(t, gen.Options{Topics: []string{"events"}, Records: 100, Keys: 10, Magic: 2, Seed: 9})
			part := filepath.Join(dir, "events-0")
			log := filepath.Join(part, "00000000000000000000.log")
			data := readFile(t, log)
			// Base offset, length, partition leader epoch, magic 2.
			h := binary.BigEndian.AppendUint64(nil, 100)
			h = binary.BigEndian.AppendUint32(h, tc.length)
			h = append(h, 0, 0, 0, 0, 2)
			writeFile(t, log, append(data, h...))
			if err := os.Truncate(log, tc.size); err != nil {
				t.Fatal(err)
			}
			for _, ext := range []string{".index", ".timeindex"} {
				os.Remove(strings.TrimSuffix(log, ".log") + ext)
			}
			checkRSS(t, tc.limit, [][]string{
				{"dump", "--deep-iteration", log},
				{"salvage", part, "--out", filepath.Join(filepath.Dir(dir), "salvaged", "events-0")},
				{"verify", "--deep", part},
				{"export", part},
			}, 0, 1, 3)
		})
	}
}

// TestMemoryLargeRecords runs the commands that read records on partitions
// of two records of 20 MiB, under --max-record-bytes 24MiB, in one batch
// uncompressed and in two zstd batches, one partition with one worker and
// four with four, and wants each within the goal: 64 MiB plus three of the
// largest record, whatever --workers. Before the workers shared a budget
// (logfmt.Job) four workers took dump to 631-666 MiB, export to 391-488,
// compact 325-375, verify 267-296 and grep 255-266; one worker, dump
// --print-data-log 163-168 and export 176-179. On the zstd partitions
// with four workers compact then took 113-139 MiB and export 80-117, as a
// reader's window held a large entry's spare buffer and compact's batch
// workers kept a record's in their pool, so that the next partition
// allocated its own: 75-79 and 74-87 MiB since.
//
// A third shape puts the large bytes in headers, a header key in one
// record and a header value in the other, for the commands that render
// them. dump and export rendered a header, and dump --format json a key or
// value, whole, up to three times it as text and six as JSON: with 20 MiB
// headers dump --deep-iteration took 161-404 MiB and --print-headers
// 279-739, export with four workers 162; with 60 MiB values dump --format
// json --print-data-log took 299-780 MiB (goal 244), export --format kcat
// 249 (one record a batch, one worker). LOGTOOL_LONG=1 adds
// records of 60 MiB (about 100 s; the normal run about 30 s).
func TestMemoryLargeRecords(t *testing.T) {
	sizes := []int{20 << 20}
	if long() {
		sizes = append(sizes, 60<<20)
	}
	for _, recordBytes := range sizes {
		t.Run(fmt.Sprintf("%dMiB", recordBytes>>20), func(t *testing.T) {
			largeRecords(t, recordBytes)
		})
	}
}

// largeRecords is TestMemoryLargeRecords for records of recordBytes, under
// a --max-record-bytes 4 MiB above them.
func largeRecords(t *testing.T, recordBytes int) {
	maxRecord := fmt.Sprintf("%dMiB", recordBytes>>20+4)
	value := make([]byte, recordBytes)
	rng := rand.New(rand.NewPCG(9, 9)) // incompressible, so zstd stores it whole
	for i := 0; i < len(value); i += 8 {
		binary.LittleEndian.PutUint64(value[i:], rng.Uint64())
	}
	for _, shape := range []struct {
		name     string
		c        codec.Type
		perBatch int
		headers  bool // the large bytes a header key in one record, a header value in the other
	}{{"one-batch-none", codec.None, 2, false}, {"two-batches-zstd", codec.Zstd, 1, false}, {"headers-none", codec.None, 1, true}} {
		dir := filepath.Join(t.TempDir(), "kafka-logs")
		var parts []string
		for p := range 4 {
			part := filepath.Join(dir, fmt.Sprintf("large-%d", p))
			if err := os.MkdirAll(part, 0o755); err != nil {
				t.Fatal(err)
			}
			recs := []logfmt.Record{
				{Offset: 0, Timestamp: bombTime, Key: []byte("k0"), Value: value},
				{Offset: 1, Timestamp: bombTime + 1, Key: []byte("k1"), Value: value},
			}
			if shape.headers {
				recs[0].Value, recs[0].Headers = []byte("v0"), []logfmt.Header{{Key: value, Value: []byte("h0")}}
				recs[1].Value, recs[1].Headers = []byte("v1"), []logfmt.Header{{Key: []byte("h1"), Value: value}}
			}
			var seg []byte
			for i := 0; i < len(recs); i += shape.perBatch {
				o := logfmt.DefaultBatchOptions(int64(i))
				o.Compression = shape.c
				var err error
				if seg, err = logfmt.AppendBatch(seg, o, recs[i:i+shape.perBatch]); err != nil {
					t.Fatal(err)
				}
			}
			writeFile(t, filepath.Join(part, "00000000000000000000.log"), seg)
			parts = append(parts, part)
		}
		for _, workers := range []int{1, 4} {
			t.Run(fmt.Sprintf("%s-%d-workers", shape.name, workers), func(t *testing.T) {
				paths := parts[:workers]
				var cmds [][]string
				for _, c := range [][]string{
					{"dump", "--deep-iteration", "--print-data-log"},
					{"dump", "--deep-iteration"},
					{"dump", "--print-data-log", "--print-headers"},
					{"dump", "--format", "json", "--print-data-log"},
					{"verify", "--deep"},
					{"export"},
					{"export", "--format", "kcat"},
					{"grep", "--key", "k1"},
					{"compact", "--topic", ".*", "--now", compactNow, "--max-lag", "1ms", "--dry-run"},
					{"reindex", "--check"},
				} {
					if shape.headers && c[0] != "dump" && c[0] != "export" {
						continue // the others render no headers
					}
					args := append([]string{"--workers", strconv.Itoa(workers), c[0], "--max-record-bytes", maxRecord}, c[1:]...)
					if c[0] == "reindex" {
						args = append([]string{"--workers", strconv.Itoa(workers)}, c...)
					}
					cmds = append(cmds, append(args, paths...))
				}
				for _, args := range cmds {
					t.Run(strings.Join(args[2:len(args)-len(paths)], " "), func(t *testing.T) {
						checkRSS(t, rssBase+3*int64(recordBytes), [][]string{args}, 0)
					})
				}
			})
		}
	}
}
