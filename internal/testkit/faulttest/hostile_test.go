package faulttest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/logtool/logtool/commands"
	"github.com/logtool/logtool/internal/testkit/testutil/zstdframe"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/codec"
)

// heapLimit bounds the growth of the heap (garbage included) in-process
// for the hostile inputs that are damaged: a command may refuse them at any
// point, and a decompressor without a limit fails it.
const heapLimit = 448 << 20

// bombHeapLimit bounds it for the decompression bombs, which every command
// reads a record at a time: the records are 1 MiB, and holding a batch of
// them took as many MiB as it has records. The bound, 128 MiB, is on
// the resident set of the process, which TestBombRSS measures.
// 48 MiB leaves room for the GC timing of a loaded runner under -race,
// far below the 512 MiB of a batch held whole.
const bombHeapLimit = 48 << 20

// measured runs logtool and samples the live heap meanwhile: peak is the
// most the heap held above what it held before (garbage included, so an
// upper bound of the live memory), alloc all that was allocated. The
// standard output is dropped, not kept: what a command prints, a dump of
// millions of lines, is not memory the command holds.
func measured(t *testing.T, args ...string) (r result, peak, alloc uint64) {
	t.Helper()
	// The peak counts garbage, which the collector lets pile up in
	// proportion to what the test binary holds live and how far a loaded
	// runner lets it fall behind; collecting often keeps the figure close to
	// what the command holds.
	defer debug.SetGCPercent(debug.SetGCPercent(20))
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	base := sample[0].Value.Uint64()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > base && v-base > peak {
				peak = v - base
			}
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	r = runDropping(t, args...)
	close(stop)
	wg.Wait()
	runtime.ReadMemStats(&after)
	return r, peak, after.TotalAlloc - before.TotalAlloc
}

// runDropping is run with the standard output dropped.
func runDropping(t *testing.T, args ...string) (r result) {
	t.Helper()
	var errOut bytes.Buffer
	defer func() {
		if p := recover(); p != nil {
			t.Errorf("PANIC: logtool %s: %v\n%s", strings.Join(args, " "), p, debug.Stack())
			r = result{code: exitPanic, stderr: errOut.String()}
		}
	}()
	code := commands.Run(append([]string{"logtool", "--no-progress"}, args...), strings.NewReader(""), io.Discard, &errOut)
	return result{code: code, stderr: errOut.String()}
}

// partitionWith writes a log directory with one partition whose only
// segment holds data.
func partitionWith(t *testing.T, data []byte) (dir, part, log string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "kafka-logs")
	part = filepath.Join(dir, "hostile-0")
	if err := os.MkdirAll(part, 0o755); err != nil {
		t.Fatal(err)
	}
	log = filepath.Join(part, "00000000000000000000.log")
	writeFile(t, log, data)
	return dir, part, log
}

// rewritePartition writes the partition of partitionWith again, for the next
// command: compact leaves none of the bombs' records, which have no key.
func rewritePartition(t *testing.T, part, log string, data []byte) {
	t.Helper()
	if err := os.RemoveAll(part); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(part, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, log, data)
}

// v2Batch is a one-record batch whose records area is replaced by payload,
// under codec c, with a valid checksum.
func v2Batch(t *testing.T, c codec.Type, payload []byte) []byte {
	t.Helper()
	b, err := logfmt.AppendBatch(nil, logfmt.DefaultBatchOptions(0), []logfmt.Record{{Offset: 0, Timestamp: 1700000000000, Value: []byte("v")}})
	if err != nil {
		t.Fatal(err)
	}
	b = append(b[:logfmt.V2HeaderSize], payload...)
	binary.BigEndian.PutUint32(b[8:], uint32(len(b)-logfmt.LogOverhead))
	b[22] = b[22]&^0x07 | byte(c)
	fixCRC(b)
	return b
}

// hostileCommands are the commands run over each hostile partition.
func hostileCommands(dir, part, log string, magic int8) [][]string {
	cmds := [][]string{
		{"verify", "--deep", part},
		{"dump", "--deep-iteration", "--print-data-log", log},
		{"dump", "--deep-iteration", part},
		{"reindex", part},
		{"find", "--offset", "0", part},
		// The offset map (128 MiB by default) is allocated whole, and the
		// heap counts it at once, though its pages become resident only as
		// keys fill them: a small one keeps the bound on the rest.
		{"compact", "--topic", ".*", "--now", compactNow, "--max-lag", "1ms", "--offset-map-memory", "8MiB", part},
		{"export", part},
		{"salvage", part, "--out", filepath.Join(filepath.Dir(dir), "salvaged", filepath.Base(part))},
		{"replay", "--dry-run", "--bootstrap-server", "localhost:9092", part},
	}
	if magic < 2 {
		cmds = append(cmds, []string{"upgrade", "--to-magic", "2", part})
	}
	// The key pass reads every record's key, the match pass its value.
	cmds = append(cmds, []string{"grep", "--key-regex", ".", "--max-lag", "1ms", "--now", compactNow, part})
	return cmds
}

// checkHostile runs every command and wants bounded memory, no panic, and
// for commands that fail, one error line naming the file.
func checkHostile(t *testing.T, cmds [][]string, file string) {
	t.Helper()
	for _, args := range cmds {
		r, peak, alloc := measured(t, args...)
		t.Logf("%-8s exit %d, heap peak %d MiB, allocated %d MiB", args[0], r.code, peak>>20, alloc>>20)
		if peak > heapLimit {
			t.Errorf("%s: heap grew by %d MiB; want under %d", strings.Join(args, " "), peak>>20, heapLimit>>20)
		}
		if r.code == 1 {
			lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
			if !strings.Contains(r.stderr, filepath.Base(file)) || len(lines) > 3 {
				t.Errorf("%s: %v; want one clear error line naming %s", strings.Join(args, " "), r, filepath.Base(file))
			}
		}
		if r.code == exitPanic || r.code == 0 && args[0] == "verify" {
			t.Errorf("%s: %v", strings.Join(args, " "), r)
		}
	}
}

// TestHostileBatchLength: batches declaring 2 GB, after a valid one, in
// every magic.
func TestHostileBatchLength(t *testing.T) {
	for magic := int8(0); magic <= 2; magic++ {
		t.Run(fmt.Sprint("v", magic), func(t *testing.T) {
			var valid []byte
			if magic == 2 {
				var err error
				if valid, err = logfmt.AppendBatch(nil, logfmt.DefaultBatchOptions(0), []logfmt.Record{{Offset: 0, Timestamp: 1, Value: []byte("v")}}); err != nil {
					t.Fatal(err)
				}
			} else {
				valid = logfmt.AppendLegacyMessage(nil, magic, 0, 0, 1, nil, []byte("v"))
			}
			huge := bytes.Clone(valid)
			binary.BigEndian.PutUint64(huge, 1)
			binary.BigEndian.PutUint32(huge[8:], 0x7fffff00)
			data := append(append(bytes.Clone(valid), huge...), make([]byte, 4096)...)
			dir, part, log := partitionWith(t, data)
			checkHostile(t, hostileCommands(dir, part, log, magic), log)
		})
	}
}

// TestHostileDecompressionBomb: one entry of each compressed format, valid
// checksums, holding records (inner messages) of 1 MiB of zeros each: 512
// with LOGTOOL_LONG=1, 64 in CI under the race detector, where verify,
// dump, compact and export read three formats. Every command reads them a
// record at a time and succeeds; holding the batch grew the heap by
// 150-400 MiB.
func TestHostileDecompressionBomb(t *testing.T) {
	n := 64
	if long() {
		n = 512
	}
	for _, f := range allFormats() {
		if f.codec == codec.None {
			continue
		}
		t.Run(f.name, func(t *testing.T) {
			if !long() && f.name != "v2-zstd" && f.name != "v2-gzip" && f.name != "v1-lz4" {
				t.Skip("LOGTOOL_LONG=1 runs every format")
			}
			entry := bombEntry(t, f.codec, f.magic, n, 1)
			dir, part, log := partitionWith(t, entry)
			// The stored entry is read whole (its checksum covers it), by
			// up to three readers at once, upgrade's included (the entry it
			// converts, and its verifier's reads of it and of the output,
			// which goes to the file as it is made). zstd,
			// lz4 and gzip store a MiB of zeros in a few hundred bytes,
			// snappy in 50 KiB.
			cmds := hostileCommands(dir, part, log, f.magic)
			if !long() {
				cmds = [][]string{cmds[0], cmds[2], cmds[5], cmds[6]} // verify, dump, compact, export
			}
			for _, args := range cmds {
				rewritePartition(t, part, log, entry)
				start := time.Now()
				r, peak, alloc := measured(t, args...)
				t.Logf("%-8s exit %d, heap peak %d MiB, allocated %d MiB, %v", args[0], r.code, peak>>20, alloc>>20, time.Since(start).Round(time.Millisecond))
				if limit := bombHeapLimit + 3*uint64(len(entry)); peak > limit {
					t.Errorf("%s: heap grew by %d MiB; want under %d", strings.Join(args, " "), peak>>20, limit>>20)
				}
				if r.code != 0 {
					t.Errorf("%s: %v", strings.Join(args, " "), r)
				}
			}
		})
	}
}

// TestHostileRecordTooLarge: one record of 512 MiB of zeros, in a batch of
// each codec, and a zstd frame that declares 512 MiB of content in one
// segment (so a window as large). Each is refused before anything is
// allocated for it, in one line naming the file, the batch's position and
// the declared size; verify reports it as a problem.
func TestHostileRecordTooLarge(t *testing.T) {
	cases := map[string][]byte{
		"zstd-window": v2Batch(t, codec.Zstd, zstdframe.RLE(512<<20)),
	}
	for _, c := range []codec.Type{codec.Gzip, codec.Snappy, codec.LZ4, codec.Zstd} {
		cases["record-"+c.String()] = bombEntry(t, c, 2, 1, 512)
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			if !long() && name != "record-zstd" && name != "zstd-window" {
				t.Skip("LOGTOOL_LONG=1 runs every codec")
			}
			dir, part, log := partitionWith(t, data)
			want := "record 0 declares 536870922 bytes: over the size limit of 67108864 bytes for one record (MaxRecordBytes) (at byte 0)"
			if name == "zstd-window" {
				want = "zstd: frame window of 536870912 bytes is over the size limit of 67108864 bytes (at byte 61)"
			}
			// Up to three readers hold the stored entry (26 MiB for snappy).
			limit := bombHeapLimit + 3*uint64(len(data))
			for _, args := range hostileCommands(dir, part, log, 2) {
				r, peak, _ := measured(t, args...)
				t.Logf("%-8s exit %d, heap peak %d MiB", args[0], r.code, peak>>20)
				if peak > limit {
					t.Errorf("%s: heap grew by %d MiB; want under %d", strings.Join(args, " "), peak>>20, limit>>20)
				}
				switch args[0] {
				case "verify": // the problem is on the report, on stdout
					if r.code != 3 {
						t.Errorf("%s: %v; want exit 3", strings.Join(args, " "), r)
					}
					continue
				case "reindex": // reads no record of a v2 batch without transactions
					if r.code != 0 {
						t.Errorf("%s: %v", strings.Join(args, " "), r)
					}
					continue
				}
				lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
				// replay names the partition before the file.
				if r.code == 0 && args[0] != "dump" || !strings.HasPrefix(r.stderr, "logtool: "+args[0]+": ") ||
					!strings.Contains(lines[0], ": "+log+": ") || !strings.Contains(lines[0], want) || len(lines) > 2 {
					t.Errorf("%s: %v; want one line naming the file and %q", strings.Join(args, " "), r, want)
				}
			}
		})
	}
}

// TestHostileVarints: records whose varints run past ten bytes or declare a
// 2 GB key, under a valid checksum.
func TestHostileVarints(t *testing.T) {
	for name, records := range map[string][]byte{
		"overrun":     bytes.Repeat([]byte{0xff}, 20),
		"key-2GB":     {0x10, 0x00, 0x00, 0x00, 0xfe, 0xff, 0xff, 0xff, 0x0f, 0x00, 0x00, 0x00},
		"length-2GB":  {0xfe, 0xff, 0xff, 0xff, 0x0f, 0x00},
		"header-2GB":  {0x12, 0x00, 0x00, 0x00, 0x01, 0x01, 0xfe, 0xff, 0xff, 0xff, 0x0f},
		"count-empty": {},
	} {
		t.Run(name, func(t *testing.T) {
			dir, part, log := partitionWith(t, v2Batch(t, codec.None, records))
			checkHostile(t, hostileCommands(dir, part, log, 2), log)
		})
	}
}

// TestHostileCheckpoints: root checkpoints of hundreds of thousands of
// lines (two million with LOGTOOL_LONG=1), one whose count line declares
// 2^31-1 entries, and topic names that climb out of the log directory.
func TestHostileCheckpoints(t *testing.T) {
	cases := map[string][]byte{
		"lines":          manyLines(300_000),
		"declared-count": []byte("0\n2147483647\nevents 0 5\n"),
		"traversal":      []byte("0\n3\n../../escape 0 5\n.. 0 5\nevents/../../x 0 7\n"),
	}
	if long() {
		// Some 40 seconds under the race detector.
		cases["millions"] = manyLines(2_000_000)
	}
	for name, content := range cases {
		t.Run(name, func(t *testing.T) {
			o := matrixOptions(format{"v2-none", 2, codec.None})
			o.Records = 50
			dir := fixture(t, o)
			parent := filepath.Dir(dir)
			for _, file := range []string{"cleaner-offset-checkpoint", "log-start-offset-checkpoint", "recovery-point-offset-checkpoint"} {
				writeFile(t, filepath.Join(dir, file), content)
			}
			outside := digest(t, parent)
			path := filepath.Join(dir, "cleaner-offset-checkpoint")
			part := filepath.Join(dir, o.Topics[0]+"-0")
			checkHostileFile(t, [][]string{
				{"verify", dir},
				{"dump", path},
				{"reindex", "--check", dir},
				{"find", "--offset", "0", part},
				{"export", dir},
				{"salvage", part, "--out", filepath.Join(t.TempDir(), filepath.Base(part))},
				{"replay", "--dry-run", "--bootstrap-server", "localhost:9092", dir},
				{"compact", "--topic", ".*", "--now", compactNow, dir},
				{"retention", "--topic", ".*", "--now", compactNow, "--retention-ms", "1h", dir},
				{"migrate-checkpoints", "--dry-run", dir},
				{"migrate-checkpoints", dir},
			}, path)
			if d := diff(outside, digest(t, parent), func(s string) bool { return !strings.HasPrefix(s, "kafka-logs/") }); len(d) > 0 {
				t.Errorf("files appeared outside the log directory: %v", d)
			}
		})
	}
}

// checkHostileFile is checkHostile for a damaged checkpoint: verify must
// find it, the others may refuse it (exit 1, one line naming it) or go on.
func checkHostileFile(t *testing.T, cmds [][]string, file string) {
	t.Helper()
	for _, args := range cmds {
		r, peak, alloc := measured(t, args...)
		t.Logf("%-8s exit %d, heap peak %d MiB, allocated %d MiB", args[0], r.code, peak>>20, alloc>>20)
		if peak > memLimitCheckpoint {
			t.Errorf("%s: heap grew by %d MiB; want under %d", strings.Join(args, " "), peak>>20, memLimitCheckpoint>>20)
		}
		switch {
		case r.code == exitPanic:
		case args[0] == "verify" && r.code != 3:
			t.Errorf("verify: %v; want exit 3", r)
		case r.code == 1 && (!strings.Contains(r.stderr, "checkpoint") || strings.Count(strings.TrimSpace(r.stderr), "\n") > 2):
			t.Errorf("%s: %v; want one clear line naming the checkpoint", strings.Join(args, " "), r)
		case r.code != 0 && r.code != 1 && r.code != 3:
			t.Errorf("%s: %v", strings.Join(args, " "), r)
		}
	}
}

// memLimitCheckpoint: root checkpoints are streamed, so the heap holds
// about a line of them, plus 12 bytes an entry where verify looks for
// partitions listed twice. Reading a checkpoint of 300,000 lines whole
// took more.
const memLimitCheckpoint = 64 << 20

// manyLines is a root offset checkpoint of n entries for partitions of a
// topic that is not in the log directory.
func manyLines(n int) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "0\n%d\n", n)
	for i := range n {
		fmt.Fprintf(&b, "ghost %d %d\n", i, i)
	}
	return b.Bytes()
}

// TestMigrateCheckpointsMemory: migrate-checkpoints on a root checkpoint
// of 100,000 entries for partitions that are not in the log directory. It
// took 2.2 KB and 37 us an entry, all but a little in the text table that
// listed every one of them; the report now lists the first thousand and
// counts the rest.
func TestMigrateCheckpointsMemory(t *testing.T) {
	o := matrixOptions(format{"v2-none", 2, codec.None})
	o.Records = 50
	dir := fixture(t, o)
	path := filepath.Join(dir, "cleaner-offset-checkpoint")
	writeFile(t, path, manyLines(100_000))
	checkHostileFile(t, [][]string{{"migrate-checkpoints", "--dry-run", dir}, {"migrate-checkpoints", dir}}, path)
	migrated, err := os.ReadFile(path + ".migrated")
	if err != nil || !bytes.Equal(migrated, manyLines(100_000)) {
		t.Errorf("the root file was not renamed whole: %v", err)
	}
}

// manyTopics is a root offset checkpoint of n entries, each for a topic of
// its own that is not in the log directory, from the first'th on: topic
// ghost-i, partition 0, offset i-first.
func manyTopics(first, n int) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "0\n%d\n", n)
	for i := range n {
		fmt.Fprintf(&b, "ghost-%d 0 %d\n", first+i, i)
	}
	return b.Bytes()
}

// TestMigrateCheckpointsHuge: the two runs of migrate-checkpoints that must
// know every partition of the root files, on root files of 5,000,000
// entries each (LOGTOOL_LONG=1), each entry naming a topic of its own, half
// of them in both files: forward with a .migrated file, which it merges,
// and reverse, which rebuilds the root file from both. They held every
// entry (8 and 24 bytes, and a map of the topics' names); they now sort the
// entries on disk in a few MiB, and write what they wrote before. CI runs
// reverse on 400,000 entries (600,000 lines) within 24 MiB of heap;
// holding them took about 80 bytes a line (830 MB RSS for 10M), some 50 MiB.
func TestMigrateCheckpointsHuge(t *testing.T) {
	n, limit, runs := 400_000, 24<<20, []bool{true}
	if long() {
		n, limit, runs = 5_000_000, 24<<20, []bool{false, true}
	}
	o := matrixOptions(format{"v2-none", 2, codec.None})
	o.Records = 50
	for _, reverse := range runs {
		dir := fixture(t, o)
		root := filepath.Join(dir, "cleaner-offset-checkpoint")
		// Both files name ghost-n/2 to ghost-n-1; the root file wins.
		writeFile(t, root, manyTopics(0, n))
		writeFile(t, root+".migrated", manyTopics(n/2, n))
		args := []string{"migrate-checkpoints", dir}
		file := root + ".migrated"
		if reverse {
			args = []string{"migrate-checkpoints", "--reverse", dir}
			file = root
		}
		r, peak, alloc := measured(t, args...)
		t.Logf("%v: exit %d, heap peak %d MiB, allocated %d MiB", args, r.code, peak>>20, alloc>>20)
		if r.code != 0 || peak > uint64(limit) {
			t.Errorf("%v: %v, heap grew by %d MiB; want exit 0 and under %d", args, r, peak>>20, limit>>20)
		}
		if got := readFile(t, file); !bytes.Equal(got, hugeMigrated(n, reverse)) {
			t.Errorf("%v: %s is not what was written before", args, filepath.Base(file))
		}
	}
}

// hugeMigrated is what TestMigrateCheckpointsHuge's runs write: forward,
// the root file's entries, then the .migrated file's of the other
// partitions; reverse, the same in the topics' order ("ghost-1" comes
// before "ghost-10").
func hugeMigrated(n int, reverse bool) []byte {
	type entry struct {
		topic  string
		offset int
	}
	var es []entry
	for i := range n + n/2 {
		off := i
		if i >= n {
			off = i - n/2
		}
		es = append(es, entry{fmt.Sprint("ghost-", i), off})
	}
	if reverse {
		slices.SortFunc(es, func(a, b entry) int { return strings.Compare(a.topic, b.topic) })
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "0\n%d\n", len(es))
	for _, e := range es {
		fmt.Fprintf(&b, "%s 0 %d\n", e.topic, e.offset)
	}
	return b.Bytes()
}

// TestVerifyCheckpointTopics: verify on a root checkpoint whose entries
// each name a topic of their own: 400,000 of them, or 740,000 with
// LOGTOOL_LONG=1, just under the 16 MiB verify reads. Verify looks for
// partitions listed twice; the index and table of topic names it held for
// that grew the heap by 23 and 39 MiB (86 MB RSS for 740,000); it now sorts
// the entries on disk, in 4 MiB.
func TestVerifyCheckpointTopics(t *testing.T) {
	n := 400_000
	if long() {
		n = 740_000
	}
	o := matrixOptions(format{"v2-none", 2, codec.None})
	o.Records = 50
	dir := fixture(t, o)
	writeFile(t, filepath.Join(dir, "cleaner-offset-checkpoint"), manyTopics(0, n))
	r, peak, alloc := measured(t, "verify", dir)
	t.Logf("verify: exit %d, heap peak %d MiB, allocated %d MiB", r.code, peak>>20, alloc>>20)
	if r.code != 0 || peak > 24<<20 { // the whole file would take hundreds of MiB
		t.Errorf("verify: %v, heap grew by %d MiB; want exit 0 and under 24", r, peak>>20)
	}
}
