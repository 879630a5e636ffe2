package upgrade

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/internal/testkit/testutil"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/codec"
	"github.com/logtool/logtool/logfmt/layout"
)

// A writer that changes a value is caught by the read-back comparison, and
// the partition stays exactly as it was, in place and with --output.
func TestUpgradeVerifyCatchesTamperedWriter(t *testing.T) {
	for _, tc := range []struct {
		name   string
		codec  codec.Type
		to     int8
		tamper func(*logfmt.Record)
	}{
		{"value", codec.None, 1, func(r *logfmt.Record) { r.Value = append(slices.Clone(r.Value), '!') }},
		{"key", codec.Gzip, 1, func(r *logfmt.Record) { r.Key = nil }},
		{"offset", codec.None, 2, func(r *logfmt.Record) { r.Offset++ }},
		{"timestamp", codec.LZ4, 2, func(r *logfmt.Record) { r.Magic, r.Timestamp, r.TimestampType = 1, 42, logfmt.CreateTime }},
	} {
		for _, output := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s-output-%v", tc.name, output), func(t *testing.T) {
				logDir, dir := upgradeGen(t, gen.Options{Magic: 0, Compression: tc.codec})
				snap := upgradeSnapshot(t, logDir)
				var out string
				if output {
					out = t.TempDir()
				}
				n := 0
				upgradeTamper = func(r *logfmt.Record) {
					if n++; n == 150 {
						tc.tamper(r)
					}
				}
				defer func() { upgradeTamper = nil }()
				_, err := Run(Options{Targets: upgradeTargets(t, dir), ToMagic: tc.to, Output: out})
				if !errors.Is(err, ErrVerify) {
					t.Fatalf("got %v, want a verification failure", err)
				}
				upgradeSameSnapshot(t, "after a failed verification", upgradeSnapshot(t, logDir), snap)
				if output {
					if entries, _ := os.ReadDir(out); len(entries) != 0 {
						t.Fatalf("output holds %v", entries)
					}
				}
			})
		}
	}
}

// upgradeFlip changes one byte of a file.
func upgradeFlip(t *testing.T, path string, pos int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[pos] ^= 0x55
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// upgradeEntryPos is the position of the n-th entry of a segment.
func upgradeEntryPos(t *testing.T, path string, n int) int64 {
	t.Helper()
	seg, err := logfmt.OpenSegment(path)
	if err != nil {
		t.Fatal(err)
	}
	defer seg.Close()
	for i := 0; seg.Next(); i++ {
		if i == n {
			return seg.Batch().Pos
		}
	}
	t.Fatalf("%s has no entry %d", path, n)
	return 0
}

// Corrupt input stops the partition with the file and byte position, and
// leaves it as it was, also when earlier segments were already converted.
func TestUpgradeCorruptInput(t *testing.T) {
	t.Parallel()
	// A gzip wrapper with a valid outer checksum around an inner message
	// whose own checksum is wrong.
	inner := logfmt.AppendLegacyMessage(nil, 0, 1, 0, -1, nil, []byte("inner"))
	inner[len(inner)-1] ^= 1
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(inner)
	zw.Close()
	badInner := logfmt.AppendLegacyMessage(nil, 0, 1, int8(codec.Gzip), -1, nil, z.Bytes())

	for _, tc := range []struct {
		name string
		// damage breaks the fixture's last segment and returns where.
		damage func(t *testing.T, log string) int64
		want   string
	}{
		{"checksum", func(t *testing.T, log string) int64 {
			pos := upgradeEntryPos(t, log, 3)
			upgradeFlip(t, log, pos+30)
			return pos
		}, "checksum mismatch"},
		{"size", func(t *testing.T, log string) int64 {
			pos := upgradeEntryPos(t, log, 2)
			upgradeFlip(t, log, pos+8)
			return pos // a size past the end is a torn entry to Kafka too
		}, "torn last entry"},
		{"magic", func(t *testing.T, log string) int64 {
			pos := upgradeEntryPos(t, log, 1)
			upgradeFlip(t, log, pos+16)
			return pos + 16
		}, "unknown magic"},
		{"torn", func(t *testing.T, log string) int64 {
			return upgradeAppend(t, log, logfmt.AppendLegacyMessage(nil, 0, 1<<40, 0, -1, nil, []byte("cut"))[:20])
		}, "does not end cleanly"},
		{"zeros", func(t *testing.T, log string) int64 {
			return upgradeAppend(t, log, make([]byte, 100))
		}, "does not end cleanly"},
		{"inner checksum", func(t *testing.T, log string) int64 {
			return upgradeAppend(t, log, badInner)
		}, "inner message at offset"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			logDir, dir := upgradeGen(t, gen.Options{Magic: 0})
			p, err := layout.ReadPartition(dir)
			if err != nil {
				t.Fatal(err)
			}
			last := p.Segments[len(p.Segments)-1].Log
			if tc.name == "inner checksum" {
				// Its offset must follow the segment's.
				recs := upgradeReadSegment(t, last)
				badInner = slices.Clone(badInner)
				copyOffset(badInner, recs[len(recs)-1].Offset+1)
			}
			pos := tc.damage(t, last)
			snap := upgradeSnapshot(t, logDir)
			_, err = Run(Options{Targets: upgradeTargets(t, logDir)})
			ce, ok := logfmt.AsCorrupt(err)
			if !ok {
				t.Fatalf("got %v, want a CorruptError", err)
			}
			if ce.File != last || ce.Pos != pos || !strings.Contains(ce.Error(), tc.want) {
				t.Fatalf("got %v (file %s, byte %d), want %q in %s at byte %d", err, ce.File, ce.Pos, tc.want, last, pos)
			}
			upgradeSameSnapshot(t, "after corrupt input", upgradeSnapshot(t, logDir), snap)
		})
	}
}

// copyOffset sets a legacy entry's offset; its checksum does not cover it.
func copyOffset(entry []byte, offset int64) {
	for i := 0; i < 8; i++ {
		entry[i] = byte(offset >> (56 - 8*i))
	}
}

// upgradeAppend appends b to a file, keeping its modification time, and
// returns where b starts.
func upgradeAppend(t *testing.T, path string, b []byte) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(path, fi.ModTime(), fi.ModTime())
	return fi.Size()
}

// upgradeLogical reads what a broker would serve from a partition
// directory after loading its log directory, as Kafka's loader does
// (internal/testkit/kafkaloader) and, with unflushed, as after a broker crash that
// recovers every segment.
func upgradeLogical(t *testing.T, dir string, unflushed ...bool) []upgradeRecord {
	t.Helper()
	var out []upgradeRecord
	testutil.BrokerRecords(t, filepath.Dir(dir), len(unflushed) > 0 && unflushed[0], func(part string, b *logfmt.Batch, r *logfmt.Record) {
		if part == filepath.Base(dir) {
			out = append(out, upgradeRecord{Offset: r.Offset, Timestamp: r.Timestamp, Type: r.TimestampType, Magic: b.Magic(),
				Key: string(r.Key), Value: string(r.Value), NullKey: r.Key == nil, NullValue: r.Value == nil, Headers: len(r.Headers)})
		}
	})
	return out
}

// upgradePartitionFiles is what two runs that end alike must agree on:
// every file's content, and the modification time of segments, which
// retention reads. Temporary files are left out: Kafka ignores them.
func upgradePartitionFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for name, v := range upgradeSnapshot(t, dir) {
		if strings.HasSuffix(name, safefile.TempSuffix) {
			continue
		}
		if !strings.HasSuffix(name, layout.LogExt) {
			v = v[:strings.LastIndexByte(v, '@')]
		}
		m[name] = v
	}
	return m
}

// A crash at every file-system step of an in-place upgrade leaves a
// partition that loads as all old or all new, and a second run finishes
// the job with exactly the result of an uninterrupted one.
func TestUpgradeCrashAtEveryStep(t *testing.T) {
	upgradeCrashTest(t, Options{ToMagic: 1, TimestampType: logfmt.LogAppendTime})
}

// The same with --output: the output partition either does not exist or
// is complete, and the source never changes.
func TestUpgradeOutputCrashAtEveryStep(t *testing.T) {
	upgradeCrashTest(t, Options{ToMagic: 1, Output: "out"})
}

func upgradeCrashTest(t *testing.T, opts Options) {
	// Generated once, copied for every crash point.
	src, _ := upgradeGen(t, gen.Options{Magic: 0, Compression: codec.Snappy, Records: 80, SegmentBytes: 2 << 10})
	fixture := func() (logDir, dir string, o Options) {
		root := t.TempDir()
		logDir = filepath.Join(root, "logs")
		testutil.CopyTree(t, src, logDir)
		dir = filepath.Join(logDir, "legacy-0")
		o = opts
		o.Targets = upgradeTargets(t, logDir)
		if o.Output != "" {
			o.Output = filepath.Join(root, o.Output)
		}
		return logDir, dir, o
	}
	_, dir, o := fixture()
	old := upgradeLogical(t, dir)
	counter := &safefile.Faults{}
	restore := safefile.SetFaultHook(counter.Hook)
	_, err := Run(o)
	restore()
	if err != nil {
		t.Fatal(err)
	}
	final := dir
	if o.Output != "" {
		final = filepath.Join(o.Output, filepath.Base(dir))
	}
	newRecs := upgradeLogical(t, final)
	newFiles := upgradePartitionFiles(t, final)
	var newRoot map[string]string
	if o.Output != "" {
		newRoot = upgradeRootFiles(t, o.Output)
		if len(newRoot) != 6 {
			t.Fatalf("root files copied: %v", newRoot)
		}
	}
	if slices.Equal(old, newRecs) {
		t.Fatal("the upgrade changed nothing visible; the test would prove nothing")
	}
	steps := counter.Steps()
	t.Logf("%d steps", steps)
	sawOld, sawNew := false, false
	for n := int64(1); n <= steps; n++ {
		logDir, dir, o := fixture()
		oldSource := upgradeSnapshot(t, logDir)
		final := dir
		if o.Output != "" {
			final = filepath.Join(o.Output, filepath.Base(dir))
		}
		f := &safefile.Faults{FailAt: n}
		restore := safefile.SetFaultHook(f.Hook)
		_, err := Run(o)
		restore()
		if !errors.Is(err, safefile.ErrInjected) {
			t.Fatalf("step %d of %d: got %v", n, steps, err)
		}
		if o.Output != "" {
			upgradeSameSnapshot(t, fmt.Sprintf("source after a crash at step %d", n), upgradeSnapshot(t, logDir), oldSource)
			// A broker started on the output (Kafka's loader, which also
			// refuses names it cannot parse) serves nothing or all of it.
			if got := upgradeLogical(t, final); len(got) > 0 && !slices.Equal(got, newRecs) {
				t.Fatalf("step %d: a broker started on the output serves %d records, neither none nor the %d converted", n, len(got), len(newRecs))
			}
			if _, err := os.Stat(final); err == nil {
				// The crash hit after the final rename: the output is whole,
				// and a re-run refuses to overwrite it.
				sawNew = true
				upgradeSameSnapshot(t, fmt.Sprintf("output after a crash at step %d", n), upgradePartitionFiles(t, final), newFiles)
				if _, err := Run(o); !errors.Is(err, ErrRefused) {
					t.Fatalf("step %d: re-run over a complete output: %v", n, err)
				}
				continue
			}
			sawOld = true
		} else {
			switch got := upgradeLogical(t, dir); {
			case slices.Equal(got, old):
				sawOld = true
			case slices.Equal(got, newRecs):
				sawNew = true
			default:
				t.Fatalf("crash at step %d of %d: the partition loads as neither the old nor the new data", n, steps)
			}
		}
		if _, err := Run(o); err != nil {
			t.Fatalf("re-run after a crash at step %d: %v", n, err)
		}
		upgradeSameSnapshot(t, fmt.Sprintf("re-run after a crash at step %d", n), upgradePartitionFiles(t, final), newFiles)
		if o.Output != "" {
			entries, err := os.ReadDir(o.Output)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				if isUpgradeStage(e.Name()) {
					t.Fatalf("step %d: the staging directory %s survived the re-run", n, e.Name())
				}
			}
			upgradeSameSnapshot(t, fmt.Sprintf("root files after a re-run after step %d", n), upgradeRootFiles(t, o.Output), newRoot)
		}
	}
	if !sawOld || !sawNew {
		t.Fatalf("over %d steps: saw old %v, new %v", steps, sawOld, sawNew)
	}
}

// upgradeRootFiles is the content of the files at the root of a log
// directory.
func upgradeRootFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for name, v := range upgradePartitionFiles(t, dir) {
		if !strings.Contains(name, string(filepath.Separator)) {
			m[name] = v
		}
	}
	return m
}

// A kill after any ".swap" rename of an upgrade of a partition whose
// segments alternate v0 and v1 (only the v0 ones are rewritten) leaves a
// directory that Kafka's loader turns into every record, each in its old
// or its new form. Kafka completes ONE swap range per partition, from the
// lowest ".swap" base to the highest ".swap" next offset, deleting every
// other segment inside it: one swap over non-adjacent segments loses the v1
// segments between them (issue 15, item 2).
func TestUpgradeMixedFormatCrashAfterSwapRenames(t *testing.T) {
	src, _ := upgradeGen(t, gen.Options{Magic: 0, Compression: codec.Gzip, Records: 600, SegmentBytes: 4 << 10})
	testutil.AlternateSegments(t, filepath.Join(src, "legacy-0"), func(scratch string) {
		if _, err := Run(Options{Targets: upgradeTargets(t, scratch), ToMagic: 1}); err != nil {
			t.Fatal(err)
		}
	})
	fixture := func() (string, string) {
		logDir := filepath.Join(t.TempDir(), "logs")
		testutil.CopyTree(t, src, logDir)
		return logDir, filepath.Join(logDir, "legacy-0")
	}
	key := func(rs []upgradeRecord) []string {
		var out []string
		for _, r := range rs {
			out = append(out, fmt.Sprintf("%d %q %q %v %v %d", r.Offset, r.Key, r.Value, r.NullKey, r.NullValue, r.Headers))
		}
		return out
	}
	logDir, dir := fixture()
	old := key(upgradeLogical(t, dir))
	isSwap := func(step safefile.Step, path string) bool {
		return step == safefile.StepRename && strings.HasSuffix(path, layout.SwapSuffix)
	}
	var swaps int
	restore := safefile.SetFaultHook(func(step safefile.Step, path string) error {
		if isSwap(step, path) {
			swaps++
		}
		return nil
	})
	_, err := Run(Options{Targets: upgradeTargets(t, logDir), ToMagic: 1, TimestampType: logfmt.LogAppendTime})
	restore()
	if err != nil || swaps < 2 {
		t.Fatalf("uninterrupted run: %v, %d swap renames", err, swaps)
	}
	for k := 1; k <= swaps; k++ {
		logDir, dir := fixture()
		seen, dead := 0, false
		restore := safefile.SetFaultHook(func(step safefile.Step, path string) error {
			if dead {
				return safefile.ErrInjected
			}
			if isSwap(step, path) {
				if seen++; seen == k {
					dead = true // the process dies right after this rename
				}
			}
			return nil
		})
		_, err := Run(Options{Targets: upgradeTargets(t, logDir), ToMagic: 1, TimestampType: logfmt.LogAppendTime})
		restore()
		if !errors.Is(err, safefile.ErrInjected) {
			t.Fatalf("kill after swap rename %d: %v", k, err)
		}
		for _, unflushed := range []bool{false, true} {
			if got := key(upgradeLogical(t, dir, unflushed)); !slices.Equal(got, old) {
				t.Fatalf("kill after swap rename %d of %d (unflushed %v): a broker serves %d records of %d", k, swaps, unflushed, len(got), len(old))
			}
		}
	}
}

// TestUpgradeLookalikesAndDurableOutput: look-alike leftover names planted
// around the output and its parent keep every byte through a run that
// fails at each file-system step and a rerun; the output's missing
// ancestors are fsynced into their parents.
func TestUpgradeLookalikesAndDurableOutput(t *testing.T) {
	src, _ := upgradeGen(t, gen.Options{Magic: 0, Compression: codec.Snappy, Records: 80, SegmentBytes: 2 << 10})
	root := t.TempDir()
	synced := map[string]bool{}
	restore := safefile.SetFaultHook(func(step safefile.Step, path string) error {
		if step == safefile.StepSyncDir {
			synced[path] = true
		}
		return nil
	})
	_, err := Run(Options{Targets: upgradeTargets(t, src), ToMagic: 1, Output: filepath.Join(root, "a", "b", "out")})
	restore()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{root, filepath.Join(root, "a"), filepath.Join(root, "a", "b")} {
		if !synced[d] {
			t.Errorf("%s: not fsynced after a directory was made in it", d)
		}
	}
	steps := int64(0)
	for n := int64(0); n == 0 || n <= steps; n++ {
		parent := t.TempDir()
		out := filepath.Join(parent, "out")
		planted := testutil.PlantLookalikes(t, parent, out)
		o := Options{Targets: upgradeTargets(t, src), ToMagic: 1, Output: out}
		f := &safefile.Faults{FailAt: n}
		restore := safefile.SetFaultHook(f.Hook)
		_, err := Run(o)
		restore()
		if n == 0 {
			// The run that counts the steps, around the same names.
			steps = f.Steps()
			if err != nil {
				t.Fatal(err)
			}
		} else if !errors.Is(err, safefile.ErrInjected) {
			t.Fatalf("step %d: %v", n, err)
		}
		planted.Check(t)
		if _, err := Run(o); err != nil && !errors.Is(err, ErrRefused) {
			t.Fatalf("step %d: rerun: %v", n, err)
		}
		planted.Check(t)
	}
}
