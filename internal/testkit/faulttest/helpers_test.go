package faulttest

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/logtool/logtool/commands"
	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/internal/testkit/testutil"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/codec"
	"github.com/logtool/logtool/logfmt/layout"
)

// long reports whether the long runs were asked for (LOGTOOL_LONG=1).
func long() bool { return os.Getenv("LOGTOOL_LONG") == "1" }

// result is what one in-process run of logtool gave.
type result struct {
	code           int
	stdout, stderr string
}

func (r result) String() string {
	return fmt.Sprintf("exit %d, stderr %q", r.code, clip(r.stderr, 600))
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// exitPanic is the exit code run reports for a panic in commands.Run.
const exitPanic = -1

// run runs logtool in-process. A panic on the calling goroutine is turned
// into a test failure naming the command line, instead of ending the test
// binary (a panic on a worker goroutine cannot be caught and still would).
func run(t testing.TB, args ...string) (r result) {
	t.Helper()
	var out, errOut bytes.Buffer
	argv := append([]string{"logtool", "--no-progress"}, args...)
	defer func() {
		if p := recover(); p != nil {
			t.Errorf("PANIC: logtool %s: %v\n%s", strings.Join(args, " "), p, debug.Stack())
			r = result{code: exitPanic, stdout: out.String(), stderr: errOut.String()}
		}
	}()
	code := commands.Run(argv, strings.NewReader(""), &out, &errOut)
	return result{code: code, stdout: out.String(), stderr: errOut.String()}
}

// format is a magic with a codec valid for it.
type format struct {
	name  string
	magic int8
	codec codec.Type
}

func allFormats() []format {
	var out []format
	for magic := int8(0); magic <= 2; magic++ {
		for c := codec.None; c <= codec.Zstd; c++ {
			if c.ValidFor(magic) {
				out = append(out, format{fmt.Sprintf("v%d-%s", magic, c), magic, c})
			}
		}
	}
	return out
}

// templates caches generated log directories by their options; tests copy
// them instead of generating again.
var templates struct {
	sync.Mutex
	root string
	dirs map[string]string
}

// rssHelperEnv, when set, makes the test binary the helper of the memory
// tests (memory_linux_test.go), which sets measureChild.
const rssHelperEnv = "LOGTOOL_RSS_HELPER"

var measureChild func() int

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	if measureChild != nil && os.Getenv(rssHelperEnv) != "" {
		return measureChild()
	}
	// Every write of the commands is fsynced; on a disk that makes the
	// campaign several times slower. The crash tests inject their faults
	// above the file system, so a RAM file system (where fsync is free)
	// loses nothing. LOGTOOL_CAMPAIGN_DISK=1 keeps the default TMPDIR.
	if os.Getenv("TMPDIR") == "" && os.Getenv("LOGTOOL_CAMPAIGN_DISK") != "1" {
		if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
			if d, err := os.MkdirTemp("/dev/shm", "faulttest-"); err == nil {
				os.Setenv("TMPDIR", d)
				defer os.RemoveAll(d) // here, not in TestMain: os.Exit skips deferred calls
			}
		}
	}
	root, err := os.MkdirTemp("", "faulttest-templates-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(root)
	templates.root, templates.dirs = root, map[string]string{}
	return m.Run()
}

// fixture returns a fresh copy of the log directory gen writes for o (Out is
// ignored).
func fixture(t testing.TB, o gen.Options) string {
	return derivedFixture(t, "", o, nil)
}

// derivedFixture is fixture with fn applied to the generated directory, once
// for every test that asks with the same name and options.
func derivedFixture(t testing.TB, name string, o gen.Options, fn func(testing.TB, string)) string {
	t.Helper()
	o.Out = ""
	key := fmt.Sprintf("%s %+v", name, o)
	templates.Lock()
	defer templates.Unlock()
	src, ok := templates.dirs[key]
	if !ok {
		src = filepath.Join(templates.root, fmt.Sprint(len(templates.dirs)))
		o.Out = src
		if _, err := gen.Generate(o); err != nil {
			t.Fatalf("gen %+v: %v", o, err)
		}
		if fn != nil {
			fn(t, src)
		}
		templates.dirs[key] = src
	}
	dst := filepath.Join(t.TempDir(), "kafka-logs")
	testutil.CopyTree(t, src, dst)
	return dst
}

// matrixOptions is a small partition of several segments, each large enough
// for an .index entry, with every kind of record gen writes for the format.
func matrixOptions(f format) gen.Options {
	o := gen.Options{Topics: []string{"events"}, Records: 400, Keys: 60, ValueBytes: 60, BatchRecords: 8,
		SegmentBytes: 6000, Magic: f.magic, Compression: f.codec, TombstoneRatio: 0.1, Seed: 8}
	if f.magic == 2 {
		o.TransactionalRatio, o.AbortRatio = 0.3, 0.3
	}
	return o
}

// digest maps every file under dir (by relative path) to a hash of its
// content, and every symbolic link to its target. The .lock file is left
// out: taking the lock creates it.
func digest(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == ".lock" {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if d.Type()&fs.ModeSymlink != 0 {
			to, err := os.Readlink(path)
			out[rel] = "-> " + to
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		out[rel] = hex.EncodeToString(sum[:8])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// diff lists the files that differ between two digests, only those whose
// name satisfies keep (nil: all).
func diff(a, b map[string]string, keep func(string) bool) []string {
	var out []string
	for k, v := range a {
		if keep != nil && !keep(k) {
			continue
		}
		if w, ok := b[k]; !ok {
			out = append(out, "-"+k)
		} else if w != v {
			out = append(out, "~"+k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok && (keep == nil || keep(k)) {
			out = append(out, "+"+k)
		}
	}
	slices.Sort(out)
	return out
}

func isLog(name string) bool { return strings.HasSuffix(name, ".log") }

// logical is the content a consumer sees in each partition of a log
// directory: one line per record with its offset, timestamp, key, value and
// headers, and one per control record. Segment layout, codecs, magics and
// index files are not part of it.
func logical(t testing.TB, dir string) []string {
	t.Helper()
	return logicalWith(t, dir, recordLine)
}

// lineFunc turns a record into one line of logical.
type lineFunc func(part string, b *logfmt.Batch, r *logfmt.Record) string

func logicalWith(t testing.TB, dir string, line lineFunc) []string {
	t.Helper()
	ld, err := layout.ReadLogDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range ld.Partitions {
		for _, s := range p.Segments {
			if s.Log == "" {
				continue
			}
			out = append(out, segmentRecords(t, p.Dir.Name, s.Log, line)...)
		}
	}
	return out
}

func segmentRecords(t testing.TB, part, path string, line lineFunc) []string {
	t.Helper()
	seg, err := logfmt.OpenSegment(path)
	if err != nil {
		t.Fatal(err)
	}
	defer seg.Close()
	var out []string
	var it logfmt.RecordIter
	for seg.Next() {
		b := seg.Batch()
		if err := b.Validate(); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		it.File = path
		if err := it.Reset(b); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for it.Next() {
			out = append(out, line(part, b, it.Record()))
		}
		if it.Err() != nil {
			t.Fatalf("%s: %v", path, it.Err())
		}
	}
	if seg.Err() != nil || seg.End() != logfmt.EndClean {
		t.Fatalf("%s: %v (%v)", path, seg.Err(), seg.End())
	}
	return out
}

// recordLine is one line of logical.
func recordLine(part string, b *logfmt.Batch, r *logfmt.Record) string {
	line := fmt.Sprintf("%s %d ts=%d key=%q value=%q", part, r.Offset, r.Timestamp, r.Key, r.Value)
	if r.Key == nil {
		line = fmt.Sprintf("%s %d ts=%d key=null value=%q", part, r.Offset, r.Timestamp, r.Value)
	}
	if r.Value == nil {
		line += " tombstone"
	}
	if b.IsControl() {
		line += " control"
	}
	for _, h := range r.Headers {
		line += fmt.Sprintf(" h[%q]=%q", h.Key, h.Value)
	}
	return line
}

// hashedLine is recordLine with everything after the offset hashed, for
// partitions too big to hold as text. The fields are hashed as they are,
// length-prefixed (-1 for null), without recordLine's quoting.
func hashedLine(part string, b *logfmt.Batch, r *logfmt.Record) string {
	h := sha256.New()
	var n [8]byte
	num := func(v int64) {
		binary.BigEndian.PutUint64(n[:], uint64(v))
		h.Write(n[:])
	}
	field := func(p []byte) {
		if p == nil {
			num(-1)
			return
		}
		num(int64(len(p)))
		h.Write(p)
	}
	num(r.Timestamp)
	field(r.Key)
	field(r.Value)
	if b.IsControl() {
		num(1)
	} else {
		num(0)
	}
	num(int64(len(r.Headers)))
	for _, hd := range r.Headers {
		field(hd.Key)
		field(hd.Value)
	}
	return fmt.Sprintf("%s %d %x", part, r.Offset, h.Sum(nil)[:12])
}

// brokerLogical is logical as a broker serves the log directory after
// loading it with Kafka's rules (internal/testkit/kafkaloader), from each
// partition's log start offset; with unflushed, as after a broker crash
// that recovers every segment. It changes nothing on disk.
func brokerLogical(t testing.TB, dir string, unflushed bool) []string {
	t.Helper()
	return brokerLogicalWith(t, dir, unflushed, recordLine)
}

func brokerLogicalWith(t testing.TB, dir string, unflushed bool, line lineFunc) []string {
	t.Helper()
	var out []string
	testutil.BrokerRecords(t, dir, unflushed, func(part string, b *logfmt.Batch, r *logfmt.Record) {
		out = append(out, line(part, b, r))
	})
	return out
}

// segmentPaths lists the files of a partition's segments in base order.
func segments(t testing.TB, partDir string) []layout.Segment {
	t.Helper()
	p, err := layout.ReadPartition(partDir)
	if err != nil {
		t.Fatal(err)
	}
	return p.Segments
}

// onlyPartition returns the one partition directory of a log directory.
func onlyPartition(t testing.TB, dir string) string {
	t.Helper()
	ld, err := layout.ReadLogDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ld.Partitions) != 1 {
		t.Fatalf("%s: %d partitions, want 1", dir, len(ld.Partitions))
	}
	return ld.Partitions[0].Path
}

// fixCRC recomputes the stored checksum of the entry e (any magic), so that
// damage under it is left for the checks past the checksum.
func fixCRC(e []byte) {
	if e[logfmt.MagicOffset] >= 2 {
		put32(e[17:], crc32.Checksum(e[21:], crc32.MakeTable(crc32.Castagnoli)))
		return
	}
	put32(e[12:], crc32.ChecksumIEEE(e[16:]))
}

func put32(b []byte, v uint32) {
	b[0], b[1], b[2], b[3] = byte(v>>24), byte(v>>16), byte(v>>8), byte(v)
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// replaceFile rewrites path keeping its modification time, which retention
// and upgrade read.
func replaceFile(t testing.TB, path string, b []byte) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, b)
	if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
}
