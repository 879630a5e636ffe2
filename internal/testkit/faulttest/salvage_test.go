package faulttest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/internal/testkit/kafkasamples"
	"github.com/logtool/logtool/internal/testkit/kafkatest"
	"github.com/logtool/logtool/internal/testkit/testutil"
	"github.com/logtool/logtool/logfmt/codec"
	"github.com/logtool/logtool/logfmt/layout"
	"github.com/logtool/logtool/salvage"
)

// TestSalvageMatrix salvages a partition with one damaged entry, for every
// damage of the corruption matrix in every format, and one cut inside an
// entry of the first and of the last segment: verify --deep --strict finds
// nothing in the output, and the output holds, byte for byte and in order,
// exactly the entries that franz-go's kmsg decodes in full and whose
// offsets are the ones the entry had before the damage.
func TestSalvageMatrix(t *testing.T) {
	for _, f := range allFormats() {
		t.Run(f.name, func(t *testing.T) {
			for _, d := range logDamages {
				dir := fixture(t, matrixOptions(f))
				part := onlyPartition(t, dir)
				truth := entriesOf(t, part)
				log, at, e := damageFirst(t, f, part, d)
				if e == nil {
					continue
				}
				t.Run(d.name, func(t *testing.T) {
					checkSalvage(t, part, truth, map[string]int64{filepath.Base(log): at.Pos}, map[string][]byte{filepath.Base(log): e})
				})
			}
			for _, which := range []int{0, -1} {
				dir := fixture(t, matrixOptions(f))
				part := onlyPartition(t, dir)
				truth := entriesOf(t, part)
				segs := segments(t, part)
				log := segs[(which+len(segs))%len(segs)].Log
				bs := testutil.Batches(t, log)
				cut := bs[len(bs)/2].Pos + int64(bs[len(bs)/2].Size)/2
				replaceFile(t, log, readFile(t, log)[:cut])
				t.Run(fmt.Sprintf("cut-%s-at%d", filepath.Base(log), cut), func(t *testing.T) {
					// Entries from the cut one on are gone: their bytes are.
					checkSalvage(t, part, truth, map[string]int64{filepath.Base(log): bs[len(bs)/2].Pos}, map[string][]byte{filepath.Base(log): nil})
				})
			}
		})
	}
}

// entry is an entry of a segment before any damage.
type entry struct {
	pos         int64
	data        []byte
	first, last int64
}

// entriesOf splits each segment of a partition into its entries, decoded
// by kmsg.
func entriesOf(t *testing.T, part string) map[string][]entry {
	t.Helper()
	out := map[string][]entry{}
	for _, s := range segments(t, part) {
		data := readFile(t, s.Log)
		es, pos := kafkatest.Entries(data)
		for i, e := range es {
			b, err := kafkatest.Decode(e)
			if err != nil {
				t.Fatalf("%s at %d: %v", s.Log, pos[i], err)
			}
			out[filepath.Base(s.Log)] = append(out[filepath.Base(s.Log)], entry{pos[i], e, b.First, b.Last})
		}
	}
	return out
}

// checkSalvage salvages part and holds the output to the truth: in the
// segment named in damagedAt, the entry at that position was replaced by
// the bytes in replaced (nil: the segment ends inside it, and cut holds
// what is left of it).
func checkSalvage(t *testing.T, part string, truth map[string][]entry, damagedAt map[string]int64, replaced map[string][]byte) {
	t.Helper()
	out := filepath.Join(t.TempDir(), filepath.Base(part))
	rep, err := salvage.Partition(part, out, salvage.Options{})
	if err != nil {
		t.Fatalf("salvage: %v", err)
	}
	if r := run(t, "verify", "--deep", "--strict", out); r.code != 0 {
		t.Errorf("verify --deep --strict on the output: %v\n%s", r, clip(r.stdout, 3000))
	}
	for name, want := range truth {
		var kept []byte
		dropped := 0
		last := int64(-1)
		for i, e := range want {
			pos, damaged := damagedAt[name]
			if !damaged || e.pos != pos {
				kept = append(kept, e.data...)
				last = e.last
				continue
			}
			nb := replaced[name]
			if nb == nil {
				nb = readFile(t, filepath.Join(part, name))[pos:]
			}
			if b, err := kafkatest.Decode(nb); err == nil && b.First == e.first && b.Last == e.last {
				kept = append(kept, nb...) // kmsg reads it whole, with its true offsets
				last = e.last
				continue
			}
			dropped++
			// Frames in the damaged bytes that kmsg reads whole and whose
			// offsets fit between their neighbours: a compressed wrapper's
			// messages stored verbatim by the codec are such frames.
			next := int64(1 << 62)
			if i+1 < len(want) && replaced[name] != nil {
				next = want[i+1].first
			}
			for q := 0; len(nb)-q >= 17; {
				es, _ := kafkatest.Entries(nb[q:])
				if len(es) > 0 {
					if b, err := kafkatest.Decode(es[0]); err == nil && b.First > last && b.Last < next {
						kept = append(kept, es[0]...)
						last = b.Last
						q += len(es[0])
						continue
					}
				}
				q++
			}
			if replaced[name] == nil {
				break
			}
		}
		got, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, kept) {
			t.Errorf("%s: output holds %d bytes, want %d (the sound entries)\nlost: %+v", name, len(got), len(kept), rep.Lost)
		}
		if dropped > 0 && len(rep.Lost) == 0 {
			t.Errorf("%s: an entry was dropped but the report lists no loss", name)
		}
	}
	// The report names the damaged bytes and nothing else.
	for _, l := range rep.Lost {
		name := filepath.Base(l.Segment)
		pos, ok := damagedAt[name]
		end := pos + int64(len(replaced[name]))
		if replaced[name] == nil {
			end = int64(len(readFile(t, l.Segment)))
		}
		if !ok || l.Position < pos || l.End > end || l.Position >= l.End {
			t.Errorf("lost %+v, want a range within the damaged bytes %d to %d of %s", l, pos, end, name)
		}
	}
	if p, err := layout.ReadPartition(out); err != nil || len(p.Snapshots) != 1 {
		t.Errorf("output: %v, snapshots %v", err, p.Snapshots)
	}
}

// TestSalvageSamples salvages real brokers' partitions, which hold no
// damage: every segment is copied byte for byte and the output verifies
// clean, its indexes byte-identical to a recovery rebuild.
func TestSalvageSamples(t *testing.T) {
	samples := kafkasamples.Dir("logdirs")
	dirs, _ := filepath.Glob(filepath.Join(samples, "*", "*-[0-9]*"))
	if len(dirs) == 0 {
		kafkasamples.Skip(t, errors.New("no samples at "+samples))
	}
	for _, dir := range dirs {
		p, err := layout.ReadPartition(dir)
		if err != nil || len(p.Segments) == 0 || p.Dir.Topic == "__cluster_metadata" {
			continue
		}
		out := filepath.Join(t.TempDir(), filepath.Base(dir))
		rep, err := salvage.Partition(dir, out, salvage.Options{})
		if err != nil {
			t.Errorf("%s: %v", dir, err)
			continue
		}
		if len(rep.Lost) > 0 {
			t.Errorf("%s: lost %+v", dir, rep.Lost)
		}
		for _, s := range p.Segments {
			if s.Log != "" && !bytes.Equal(readFile(t, s.Log), readFile(t, filepath.Join(out, filepath.Base(s.Log)))) {
				t.Errorf("%s: not copied byte for byte", s.Log)
			}
		}
		if r := run(t, "verify", "--deep", "--strict", out); r.code != 0 {
			t.Errorf("%s: verify --deep --strict on the output: %v\n%s", dir, r, clip(r.stdout, 2000))
		}
	}
}

// TestSalvageKillPoints kills salvage at each of its file-system steps (a
// sample in CI, every one with LOGTOOL_LONG=1): the output's log directory
// is copied as the step finds it, which is what a SIGKILL there leaves.
// A broker started on that copy (internal/testkit/kafkaloader) must load it, no
// file in the staging directory taking the log directory offline, and
// serve either no partition there or the whole output; a re-run must then
// remove the staging directory and leave the files of an uninterrupted
// run, byte for byte.
func TestSalvageKillPoints(t *testing.T) {
	dir := fixture(t, matrixOptions(format{"v2-zstd", 2, codec.Zstd}))
	part := onlyPartition(t, dir)
	log := segments(t, part)[0].Log
	at, _ := damagedEntry(t, log)
	testutil.FlipByte(t, log, int(at.Pos)+at.Size/2)
	salvageTo := func(logDir string) result {
		return run(t, "salvage", part, "--out", filepath.Join(logDir, filepath.Base(part)))
	}
	newLogDir := func() string {
		d := filepath.Join(t.TempDir(), "kafka-logs")
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}

	whole := newLogDir()
	var steps safefile.Faults
	restore := safefile.SetFaultHook(steps.Hook)
	r := salvageTo(whole)
	restore()
	if r.code != 0 {
		t.Fatalf("uninterrupted run: %v", r)
	}
	want, wantFiles := brokerLogical(t, whole, false), digest(t, whole)
	if len(want) == 0 {
		t.Fatal("the output serves no record; the test would prove nothing")
	}
	points := crashSteps(steps.Steps())
	t.Logf("%d kill points, %d tried", steps.Steps(), len(points))
	for _, n := range points {
		logDir, killed := newLogDir(), ""
		var seen int64
		restore := safefile.SetFaultHook(func(safefile.Step, string) error {
			if seen++; seen == n {
				killed = filepath.Join(t.TempDir(), "kafka-logs")
				testutil.CopyTree(t, logDir, killed)
			}
			return nil
		})
		r := salvageTo(logDir)
		restore()
		if r.code != 0 || killed == "" {
			t.Fatalf("kill point %d: %v", n, r)
		}
		for _, unflushed := range []bool{false, true} {
			if got := brokerLogical(t, killed, unflushed); len(got) > 0 && !slices.Equal(got, want) {
				t.Errorf("kill point %d (unflushed %v): a broker serves %d records, neither none nor the %d of the output", n, unflushed, len(got), len(want))
			}
		}
		done := len(brokerLogical(t, killed, false)) > 0
		r = salvageTo(killed)
		if done && r.code != 4 || !done && r.code != 0 {
			t.Errorf("kill point %d (output complete: %v): re-run: %v", n, done, r)
		}
		if d := diff(wantFiles, digest(t, killed), nil); len(d) > 0 {
			t.Errorf("kill point %d: after the re-run the files differ from an uninterrupted run's: %v", n, d)
		}
		// The output and the .lock of the directory it went into, which
		// stays as a broker leaves it; no stage.
		if entries, err := os.ReadDir(killed); err != nil || len(entries) != 2 || entries[0].Name() != ".lock" || entries[1].Name() != filepath.Base(part) {
			t.Errorf("kill point %d: after the re-run the directory holds %v (%v), want the output and .lock alone", n, entries, err)
		}
	}
}
