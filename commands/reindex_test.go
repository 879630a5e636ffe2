package commands

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/logtool/logtool/internal/testkit/kafkasamples"
	"github.com/logtool/logtool/internal/testkit/locktest"
	"github.com/logtool/logtool/internal/testkit/testutil"

	"github.com/logtool/logtool/logfmt/layout"
	"github.com/logtool/logtool/reindex"
)

const reindexSample = "../testdata/kafka-logs"

// reindexCLI runs logtool in-process.
func reindexCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Run(append([]string{"logtool"}, args...), strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

// reindexCopy copies the shipped sample log directory (or one partition of
// it) into a temporary directory.
func reindexCopy(t *testing.T, parts ...string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(reindexSample, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(reindexSample, path)
		if len(parts) > 0 && rel != "." && !slices.Contains(parts, strings.Split(rel, string(filepath.Separator))[0]) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func reindexTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	m := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		m[rel] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestReindexCheckSample(t *testing.T) {
	code, out, errOut := reindexCLI(t, "reindex", "--check", reindexSample)
	if code != 0 || !strings.Contains(out, "checked 28 segment(s) in 8 partition(s): 0 problem(s), 0 difference(s)") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = reindexCLI(t, "reindex", "--check", "--strict", reindexSample)
	if code != 0 {
		t.Errorf("--strict on gen's own indexes: exit %d\n%s", code, out)
	}
}

// TestReindexCheckKafkaSamples: every real broker log directory passes
// --check; the one whose time indexes record exact offsets fails --strict.
func TestReindexCheckKafkaSamples(t *testing.T) {
	root := kafkasamples.Dir("logdirs")
	dirs, _ := filepath.Glob(filepath.Join(root, "*"))
	n := 0
	for _, d := range dirs {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			continue
		}
		n++
		code, out, errOut := reindexCLI(t, "reindex", "--check", d)
		if code != 0 {
			t.Errorf("%s: exit %d\n%s%s", d, code, out, errOut)
		}
	}
	if n == 0 {
		kafkasamples.Skip(t, fmt.Errorf("no Kafka sample log directories under %s", root))
	}
	code, out, _ := reindexCLI(t, "reindex", "--check", "--strict", filepath.Join(root, "volodymyrzee_kafka-2.x-zk"))
	if code != ExitProblems || !strings.Contains(out, "exact offset") {
		t.Errorf("--strict on a live broker's indexes: exit %d\n%s", code, out)
	}
}

// TestReindexRebuildsSample deletes every index of a copy of the sample and
// rebuilds them byte for byte.
func TestReindexRebuildsSample(t *testing.T) {
	dir := reindexCopy(t)
	want := reindexTree(t, dir)
	for name := range want {
		switch filepath.Ext(name) {
		case layout.IndexExt, layout.TimeIndexExt, layout.TxnIndexExt:
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	code, out, errOut := reindexCLI(t, "--workers", "3", "reindex", dir)
	if code != 0 || !strings.Contains(out, "written (was absent)") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	got := reindexTree(t, dir)
	delete(got, ".lock")
	for name, b := range want {
		if !bytes.Equal(got[name], b) {
			t.Errorf("%s differs after the rebuild", name)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d files, want %d", len(got), len(want))
	}
	code, out, _ = reindexCLI(t, "reindex", dir)
	if code != 0 || !strings.Contains(out, "wrote 0 file(s) for 28 segment(s) in 8 partition(s)") {
		t.Errorf("second run: exit %d\n%s", code, out)
	}
}

func TestReindexJSON(t *testing.T) {
	dir := reindexCopy(t, "payments.txn-0")
	idx := filepath.Join(dir, "payments.txn-0", layout.SegmentName(0, layout.IndexExt))
	b, err := os.ReadFile(idx)
	if err != nil {
		t.Fatal(err)
	}
	b[7]++ // the first entry's position, off its batch
	if err := os.WriteFile(idx, b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := reindexCLI(t, "--format", "json", "reindex", "--check", dir)
	if code != ExitProblems {
		t.Fatalf("exit %d, want 3\n%s%s", code, out, errOut)
	}
	types := map[string]int{}
	for line := range strings.Lines(out) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if m["type"] == nil || m["file"] == nil {
			t.Errorf("no type or file: %s", line)
		}
		types[m["type"].(string)]++
		if m["type"] == "problem" {
			if m["file"] != idx || m["position"] != float64(0) || m["entry"] != float64(0) || !strings.Contains(m["message"].(string), "batch starts") ||
				m["expected"] == nil || m["found"] == nil {
				t.Errorf("problem: %s", line)
			}
		}
	}
	if types["problem"] != 1 || types["reindex-segment"] != 6 || types["reindex"] != 1 {
		t.Errorf("objects by type: %v\n%s", types, out)
	}
}

func TestReindexTextProblems(t *testing.T) {
	dir := reindexCopy(t, "orders-0")
	tidx := filepath.Join(dir, "orders-0", layout.SegmentName(0, layout.TimeIndexExt))
	b, _ := os.ReadFile(tidx)
	if err := os.WriteFile(tidx, append(b, 1, 2, 3), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := reindexCLI(t, "reindex", "--check", filepath.Join(dir, "orders-0"))
	if code != ExitProblems || !strings.Contains(out, "problem: "+tidx) || !strings.Contains(errOut, "1 problem(s) found") {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
}

// TestReindexSegmentFile: a segment file path reindexes that segment only.
func TestReindexSegmentFile(t *testing.T) {
	dir := reindexCopy(t, "clicks-v1-0")
	part := filepath.Join(dir, "clicks-v1-0")
	for _, n := range []string{layout.SegmentName(0, layout.TimeIndexExt), layout.SegmentName(476, layout.TimeIndexExt)} {
		if err := os.Remove(filepath.Join(part, n)); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errOut := reindexCLI(t, "reindex", "--time", filepath.Join(part, layout.SegmentName(476, layout.LogExt)))
	if code != 0 || strings.Count(out, ".log") != 1 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(part, layout.SegmentName(476, layout.TimeIndexExt))); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(filepath.Join(part, layout.SegmentName(0, layout.TimeIndexExt))); err == nil {
		t.Error("the other segment was rebuilt too")
	}
}

func TestReindexDryRunAndGranularity(t *testing.T) {
	dir := reindexCopy(t, "user-profiles-0")
	before := reindexTree(t, dir)
	code, out, errOut := reindexCLI(t, "reindex", "--dry-run", "--time", "--granularity", "1m", dir)
	if code != 0 || !strings.Contains(out, "would write") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if after := reindexTree(t, dir); len(after) != len(before) {
		t.Fatal("dry run wrote files")
	}
	if code, out, _ := reindexCLI(t, "reindex", "--time", "--granularity", "1m", dir); code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	if code, out, _ := reindexCLI(t, "reindex", "--check", "--time", "--granularity", "1m", dir); code != 0 || !strings.Contains(out, "0 problem(s), 0 difference(s)") {
		t.Errorf("check with the same granularity: exit %d\n%s", code, out)
	}
	if code, out, _ := reindexCLI(t, "reindex", "--check", dir); code != 0 || strings.Contains(out, " 0 difference(s)") {
		t.Errorf("check of the coarse index against recovery: exit %d\n%s", code, out)
	}
}

func TestReindexUsage(t *testing.T) {
	for _, args := range [][]string{
		{"reindex"},
		{"reindex", "--strict", reindexSample},
		{"reindex", "--check", "--dry-run", reindexSample},
		{"reindex", "--check", "--truncate-corrupt-tail", reindexSample},
		{"reindex", "--offset", "--granularity", "1m", reindexSample},
		{"reindex", "--granularity", "1500us", reindexSample},
		{"reindex", "--interval-bytes", "-1", reindexSample},
		{"reindex", "--check", reindexSample + "/nonexistent"},
		{"reindex", "--check", reindexSample + "/meta.properties"},
		{"reindex", "--check", reindexSample + "/orders-0/leader-epoch-checkpoint"},
	} {
		if code, out, errOut := reindexCLI(t, args...); code != ExitUsage || !strings.HasPrefix(errOut, "logtool: reindex: ") {
			t.Errorf("%v: exit %d, want 2\n%s%s", args, code, out, errOut)
		}
	}
}

func TestReindexHelp(t *testing.T) {
	_, out, _ := reindexCLI(t, "reindex", "--help")
	for _, want := range []string{"--interval-bytes SIZE", "(default: 4096)", "--granularity", "--check", "--strict", "--dry-run",
		"--truncate-corrupt-tail", "--offset", "--time", "--txn", "testdata/kafka-logs"} {
		if !strings.Contains(out, want) {
			t.Errorf("--help lacks %q:\n%s", want, out)
		}
	}
}

// TestReindexTruncateRefused: a backup name already taken by other bytes
// makes the run refuse (exit 4) and leaves the .log alone.
func TestReindexTruncateRefused(t *testing.T) {
	dir := reindexCopy(t, "orders-1")
	log := filepath.Join(dir, "orders-1", layout.SegmentName(0, layout.LogExt))
	b, _ := os.ReadFile(log)
	torn := b[:len(b)-5]
	if err := os.WriteFile(log, torn, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := reindexCLI(t, "--format", "json", "reindex", "--dry-run", "--truncate-corrupt-tail", dir)
	var valid int64 = -1
	for line := range strings.Lines(out) {
		var m struct {
			Type       string `json:"type"`
			ValidBytes int64  `json:"validBytes"`
			File       string `json:"file"`
		}
		if json.Unmarshal([]byte(line), &m) == nil && m.Type == "reindex-segment" && m.File == log {
			valid = m.ValidBytes
		}
	}
	if code != 0 || valid <= 0 {
		t.Fatalf("dry run: exit %d, valid %d\n%s", code, valid, out)
	}
	if err := os.WriteFile(reindex.BackupName(log, valid), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := reindexCLI(t, "reindex", "--truncate-corrupt-tail", dir)
	if got, _ := os.ReadFile(log); code != ExitRefused || !bytes.Equal(got, torn) || !strings.Contains(errOut, "already exists") {
		t.Errorf("exit %d, want 4, the .log left alone\n%s", code, errOut)
	}
}

func TestReindexLocked(t *testing.T) {
	dir := reindexCopy(t, "orders-0")
	locktest.Hold(t, dir)
	before := reindexTree(t, dir)
	for _, target := range []string{dir, filepath.Join(dir, "orders-0"), filepath.Join(dir, "orders-0", layout.SegmentName(0, layout.LogExt))} {
		code, out, errOut := reindexCLI(t, "reindex", target)
		if code != ExitRefused || !strings.Contains(errOut, "locked by a running broker") {
			t.Errorf("%s: exit %d, want 4\n%s%s", target, code, out, errOut)
		}
	}
	if after := reindexTree(t, dir); len(after) != len(before) {
		t.Error("files changed under a broker's lock")
	}
	code, _, errOut := reindexCLI(t, "reindex", "--check", dir)
	if code != 0 || !strings.Contains(errOut, "warning") {
		t.Errorf("--check under a lock: exit %d, want 0 with a warning\n%s", code, errOut)
	}
}

// TestReindexDamagedSegment: a corrupt segment gets the indexes of its
// valid batches, and the run reports the damage as a problem, with file and
// position, and exits 3, in text and JSON, writing or not; the .log is left
// as it is. --truncate-corrupt-tail repairs it: a note and exit 0.
func TestReindexDamagedSegment(t *testing.T) {
	dir := reindexCopy(t, "orders-0")
	part := filepath.Join(dir, "orders-0")
	log := filepath.Join(part, layout.SegmentName(712, layout.LogExt))
	testutil.FlipByte(t, log, 5000) // in the batch at byte 4526
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	const pos = 4526
	wantLine := "problem: " + log + ": the valid batches end here: checksum mismatch"

	code, out, errOut := reindexCLI(t, "reindex", "--dry-run", part)
	if code != ExitProblems || !strings.Contains(out, wantLine) || !strings.Contains(out, "(at byte 4526)\n") ||
		!strings.Contains(out, "would write 2 file(s) for 3 segment(s) in 1 partition(s); 1 problem(s)\n") {
		t.Errorf("--dry-run: exit %d, want 3\n%s%s", code, out, errOut)
	}

	code, out, _ = reindexCLI(t, "--format", "json", "reindex", part)
	// The fields of a finding object this test reads.
	type finding struct {
		Type, File, Message string
		Position            *int64
	}
	var problems []finding
	for line := range strings.Lines(out) {
		var f finding
		if err := json.Unmarshal([]byte(line), &f); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		if f.Type == "problem" {
			problems = append(problems, f)
		}
	}
	if code != ExitProblems || len(problems) != 1 || string(problems[0].File) != log || problems[0].Position == nil || *problems[0].Position != pos ||
		!strings.HasPrefix(problems[0].Message, "the valid batches end here: checksum mismatch") {
		t.Errorf("json: exit %d, problems %+v\n%s", code, problems, out)
	}
	if got, _ := os.ReadFile(log); !bytes.Equal(got, b) {
		t.Error("the .log changed")
	}
	idx, err := os.ReadFile(filepath.Join(part, layout.SegmentName(712, layout.IndexExt)))
	if err != nil || len(idx) != 0 {
		t.Errorf("the .index of the damaged segment: %d bytes, %v; want the 0 entries of its valid batch", len(idx), err)
	}

	// Written already: a second run has nothing to write, and still fails.
	// --quiet leaves out the table and the summary, not the problem.
	code, out, errOut = reindexCLI(t, "--quiet", "reindex", part)
	if code != ExitProblems || !strings.HasPrefix(out, wantLine) || strings.Count(out, "\n") != 1 || errOut != "logtool: reindex: 1 problem(s) found\n" {
		t.Errorf("--quiet: exit %d\n%s%s", code, out, errOut)
	}

	code, out, _ = reindexCLI(t, "reindex", "--truncate-corrupt-tail", part)
	if code != ExitOK || strings.Contains(out, "problem") || !strings.Contains(out, "note: "+log+": cut the 60803 bytes from byte 4526") {
		t.Errorf("--truncate-corrupt-tail: exit %d, want 0\n%s", code, out)
	}
	if got, _ := os.ReadFile(log); !bytes.Equal(got, b[:pos]) {
		t.Errorf("the .log is %d bytes, want %d", len(got), pos)
	}
}

// TestReindexZeroTail: zeros after the last batch are preallocation in the
// active segment (a note, exit 0) and damage in an older one (a problem,
// exit 3, as verify has it).
func TestReindexZeroTail(t *testing.T) {
	for _, tc := range []struct {
		base int64
		code int
		kind string
	}{{1458, ExitOK, "note: "}, {712, ExitProblems, "problem: "}} {
		dir := reindexCopy(t, "orders-0")
		part := filepath.Join(dir, "orders-0")
		log := filepath.Join(part, layout.SegmentName(tc.base, layout.LogExt))
		f, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(make([]byte, 4096)); err != nil {
			t.Fatal(err)
		}
		f.Close()
		code, out, errOut := reindexCLI(t, "reindex", part)
		if code != tc.code || !strings.Contains(out, tc.kind+log+": 4096 zero bytes") {
			t.Errorf("segment %d: exit %d, want %d and a %q line\n%s%s", tc.base, code, tc.code, tc.kind, out, errOut)
		}
	}
}

// TestReindexTruncateDropsSnapshots: a cut of the active segment leaves the
// producer snapshot at the old log end past the new one. reindex removes
// it, as a broker's recovery does after it truncates, counts the cut .log
// and its backup among the files written, and verify then passes.
func TestReindexTruncateDropsSnapshots(t *testing.T) {
	dir := reindexCopy(t, "orders-0")
	part := filepath.Join(dir, "orders-0")
	log := filepath.Join(part, layout.SegmentName(1458, layout.LogExt))
	snap := filepath.Join(part, layout.SegmentName(1500, layout.SnapshotExt))
	fi, err := os.Stat(log)
	if err != nil {
		t.Fatal(err)
	}
	testutil.FlipByte(t, log, int(fi.Size()/2))

	code, out, errOut := reindexCLI(t, "reindex", "--dry-run", "--truncate-corrupt-tail", part)
	if code != ExitOK || !strings.Contains(out, "would remove 1 producer snapshot(s) past the new log end") {
		t.Errorf("--dry-run: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(snap); err != nil {
		t.Fatalf("--dry-run removed the snapshot: %v", err)
	}
	code, out, errOut = reindexCLI(t, "reindex", "--truncate-corrupt-tail", part)
	if code != ExitOK || strings.Contains(out, "wrote 0 file(s)") || strings.Contains(out, "wrote 1 file(s)") ||
		!strings.Contains(out, "removed 1 producer snapshot(s) past the new log end") || !strings.Contains(out, "note: "+snap+": removed") {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(snap); !os.IsNotExist(err) {
		t.Errorf("the snapshot past the new log end is still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(part, layout.SegmentName(1458, layout.SnapshotExt))); err != nil {
		t.Errorf("the snapshot at the segment's base went: %v", err)
	}
	if code, out, errOut := reindexCLI(t, "verify", part); code != ExitOK {
		t.Errorf("verify after the repair: exit %d\n%s%s", code, out, errOut)
	}
}

// TestReindexTruncateLowersCheckpoints (issue 36, C): a cut of the active
// segment moves the log end offset below the partition's recovery point and
// high watermark in the log directory's checkpoints. reindex brings both
// down to it, as a broker's load does, names each file it rewrote and counts
// it among the files written, warns of the records below the old high
// watermark that consumers may have read, and verify of the whole log
// directory then passes. The other partitions' entries are untouched.
func TestReindexTruncateLowersCheckpoints(t *testing.T) {
	dir := reindexCopy(t)
	part := filepath.Join(dir, "orders-0")
	log := filepath.Join(part, layout.SegmentName(1458, layout.LogExt))
	fi, err := os.Stat(log)
	if err != nil {
		t.Fatal(err)
	}
	testutil.FlipByte(t, log, int(fi.Size()/2))
	rp, hw := filepath.Join(dir, "recovery-point-offset-checkpoint"), filepath.Join(dir, "replication-offset-checkpoint")
	before, err := os.ReadFile(rp)
	if err != nil {
		t.Fatal(err)
	}

	code, out, errOut := reindexCLI(t, "reindex", "--dry-run", "--truncate-corrupt-tail", part)
	if code != ExitOK || !strings.Contains(out, "note: "+rp+": would lower the recovery point of orders-0 from 1500 to the log end offset") {
		t.Errorf("--dry-run: exit %d\n%s%s", code, out, errOut)
	}
	if got, _ := os.ReadFile(rp); !bytes.Equal(got, before) {
		t.Errorf("--dry-run changed %s", rp)
	}

	code, out, errOut = reindexCLI(t, "reindex", "--truncate-corrupt-tail", part)
	m := regexp.MustCompile(`note: ` + regexp.QuoteMeta(rp) + `: lowered the recovery point of orders-0 from 1500 to the log end offset (\d+) after the cut`).FindStringSubmatch(out)
	if code != ExitOK || m == nil || !strings.Contains(out, "note: "+hw+": lowered the high watermark of orders-0 from 1500 to the log end offset "+m[1]) {
		t.Fatalf("exit %d, want 0 and both checkpoints named\n%s%s", code, out, errOut)
	}
	end := m[1]
	warning := "note: " + hw + ": warning: the records at offsets " + end + " to 1499 of orders-0 were below its high watermark 1500, so consumers may have read them"
	if !strings.Contains(out, warning) {
		t.Errorf("no warning %q\n%s", warning, out)
	}
	// The cut .log, its backup, its .timeindex and the two checkpoints.
	if !strings.Contains(out, "wrote 5 file(s)") {
		t.Errorf("want wrote 5 file(s)\n%s", out)
	}
	for _, f := range []string{rp, hw} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "\norders 0 "+end+"\n") || !strings.Contains(string(b), "\norders 1 1500\n") {
			t.Errorf("%s:\n%s", f, b)
		}
	}
	if code, out, errOut := reindexCLI(t, "verify", dir); code != ExitOK {
		t.Errorf("verify of the log directory after the cut: exit %d\n%s%s", code, out, errOut)
	}
}
