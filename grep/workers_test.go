package grep

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/logtool/logtool/compact"
	"github.com/logtool/logtool/fetch"
	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/internal/testkit/testutil"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/codec"
	"github.com/logtool/logtool/logfmt/layout"
)

// runRaw runs one partition's job and returns all it wrote, text or JSON,
// and its result as text: counts, findings, notes and error.
func runRaw(t *testing.T, j Job, o Options) string {
	t.Helper()
	var out bytes.Buffer
	var res string
	if err := Run(&out, []Job{j}, o, func(r *Result) {
		res = fmt.Sprintf("counts %v findings %d keys %d notes %q err %v", r.Counts, r.Findings, r.Keys, r.Notes, r.Err)
	}); err != nil {
		t.Fatal(err)
	}
	return out.String() + res
}

// TestWorkersSameOutput: a partition's search writes the same bytes and
// ends the same way with one batch worker as with several, on every
// message format and codec, in an audit, and on a segment damaged in the
// middle, where the error names the same file and byte.
func TestWorkersSameOutput(t *testing.T) {
	co := auditOptions()
	// A key matcher in text, and a value matcher (find pass first) in an
	// audit in JSON.
	cases := []struct {
		spec  Spec
		audit bool
		f     Format
	}{{Spec{KeyRegexps: []string{"[13]$"}}, false, Format{}}, {Spec{ValueContains: []string{"7"}}, true, Format{JSON: true}}}
	for magic := int8(0); magic <= 2; magic++ {
		for c := codec.None; c <= codec.Zstd; c++ {
			if !c.ValidFor(magic) {
				continue
			}
			for _, damaged := range []bool{false, true} {
				o := gen.Options{Topics: []string{"t"}, Records: 900, Keys: 40, Magic: magic, Compression: c, BatchRecords: 6,
					SegmentBytes: 16 << 10, TombstoneRatio: 0.1, TimeStep: time.Second, Seed: int64(magic)*10 + int64(c)}
				if magic == 2 {
					o.TransactionalRatio, o.AbortRatio = 0.3, 0.3
				}
				dir := genDir(t, o)
				p := partition(t, dir)
				if damaged {
					damage(t, p.Segments[len(p.Segments)/2].Log)
				}
				for ci, tc := range cases {
					defer setUnitBytes(1 << 30)()
					m, err := NewMatcher(tc.spec)
					if err != nil {
						t.Fatal(err)
					}
					t.Run(fmt.Sprintf("v%d-%s-damaged%v-case%d", magic, c, damaged, ci), func(t *testing.T) {
						j := Job{Partition: p}
						if tc.audit {
							j.Audit = &Audit{Cleaner: co}
						}
						ro := Options{Match: m, Range: fetch.DefaultOptions(), KeyMapMemory: 16 << 20, Format: tc.f, Workers: 1}
						want := runRaw(t, j, ro)
						if damaged && !strings.Contains(want, "err "+filepath.Dir(p.Segments[0].Log)) {
							t.Fatalf("the damage went unnoticed: %s", tail(want))
						}
						for _, w := range []int{2, 4} {
							ro.Workers = w
							if got := runRaw(t, j, ro); got != want {
								t.Fatalf("%d workers wrote\n%s\n1 wrote\n%s", w, tail(got), tail(want))
							}
						}
						// Units of one batch each: every order check and
						// error falls on a unit's edge.
						defer setUnitBytes(1)()
						for _, w := range []int{1, 3} {
							ro.Workers = w
							if got := runRaw(t, j, ro); got != want {
								t.Fatalf("units of a batch, %d workers, wrote\n%s\nwhole segments wrote\n%s", w, tail(got), tail(want))
							}
						}
						// Too many transactional versions to hold: the key
						// pass runs again after the first pass.
						defer setMaxTxnKeys(0)()
						ro.Workers = 2
						if got := runRaw(t, j, ro); got != want {
							t.Fatalf("the key pass run again wrote\n%s\nat once wrote\n%s", tail(got), tail(want))
						}
					})
				}
			}
		}
	}
}

// auditOptions is an audit 45 minutes after the generated logs start,
// which their versions of a few minutes apart straddle.
func auditOptions() compact.Options {
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	co := compact.DefaultOptions(start + (45 * time.Minute).Milliseconds())
	co.MaxLag, co.DeleteRetention = (10 * time.Minute).Milliseconds(), (5 * time.Minute).Milliseconds()
	return co
}

func tail(s string) string { return s[max(0, len(s)-2000):] }

// damage flips a byte in the records of the batch in the middle of a
// segment, which its checksum then no longer covers.
func damage(t *testing.T, log string) {
	t.Helper()
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	sr := logfmt.NewSegmentReader(bytes.NewReader(data), int64(len(data)), log)
	var pos []int64
	for sr.Next() {
		pos = append(pos, sr.Batch().Pos+int64(len(sr.Batch().Data)))
	}
	at := pos[len(pos)/2] - 3
	data[at] ^= 0x5a
	if err := os.WriteFile(log, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// setUnitBytes sets the passes' unit size, for a test that does not run in
// parallel, and returns what puts it back.
func setUnitBytes(n int64) func() {
	old := unitBytes
	unitBytes = n
	return func() { unitBytes = old }
}

// setMaxTxnKeys sets maxTxnKeys, for a test that does not run in
// parallel, and returns what puts it back.
func setMaxTxnKeys(n int) func() {
	old := maxTxnKeys
	maxTxnKeys = n
	return func() { maxTxnKeys = old }
}

// writeBatches writes a partition of one segment of v2 batches, each
// given by its base offset and record count, the keys k<offset>. fix,
// when set, edits the segment, given each batch's position, before it is
// written.
func writeBatches(t *testing.T, batches [][2]int64, fix func(seg []byte, at []int)) (dir, log string, at []int) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "t-0")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var seg []byte
	for _, b := range batches {
		at = append(at, len(seg))
		var recs []logfmt.Record
		for off := b[0]; off < b[0]+b[1]; off++ {
			recs = append(recs, logfmt.Record{Offset: off, Timestamp: 1_700_000_000_000 + off, Key: []byte(fmt.Sprintf("k%d", off)), Value: []byte("v")})
		}
		var err error
		if seg, err = logfmt.AppendBatch(seg, logfmt.DefaultBatchOptions(b[0]), recs); err != nil {
			t.Fatal(err)
		}
	}
	if fix != nil {
		fix(seg, at)
	}
	log = filepath.Join(dir, "00000000000000000000.log")
	if err := os.WriteFile(log, seg, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, log, at
}

// reseal gives the v2 batch at the start of b the checksum of its bytes.
func reseal(b []byte) {
	b = b[:logfmt.LogOverhead+int(binary.BigEndian.Uint32(b[8:]))]
	binary.BigEndian.PutUint32(b[17:], logfmt.BatchHeader(b[:logfmt.V2HeaderSize]).ComputeCRC(b))
}

// unitErrors searches dir with units of one batch and then of whole
// segments, each with every number of workers given, and hands check the
// error each search ended with.
func unitErrors(t *testing.T, dir string, o Options, workers []int, check func(units int64, w int, err error)) {
	t.Helper()
	for _, n := range []int64{1, 1 << 30} {
		defer setUnitBytes(n)()
		for _, w := range workers {
			var got error
			o.Workers = w
			if err := Run(io.Discard, []Job{{Partition: partition(t, dir)}}, o, func(r *Result) { got = r.Err }); err != nil {
				t.Fatal(err)
			}
			check(n, w, got)
		}
	}
}

func keyMatcher(t *testing.T, s Spec) *Matcher {
	t.Helper()
	m, err := NewMatcher(s)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestOffsetsOutOfOrder: a batch whose offsets are not above the previous
// batch's stops the search with an error naming its file and byte, the
// same whether the two batches are read by one goroutine or by two. The
// key searched is in the first batch only, so the key pass alone reads
// the others.
func TestOffsetsOutOfOrder(t *testing.T) {
	dir, log, at := writeBatches(t, [][2]int64{{0, 5}, {10, 5}, {12, 5}, {20, 5}}, nil)
	want := fmt.Sprintf("%s: offsets 12 to 16 are not above the previous batch's last offset 14 (at byte %d)", log, at[2])
	o := Options{Match: keyMatcher(t, Spec{Keys: []string{"k1"}}), Range: fetch.DefaultOptions(), KeyMapMemory: 1 << 20}
	unitErrors(t, dir, o, []int{1, 2}, func(n int64, w int, got error) {
		if got == nil || got.Error() != want {
			t.Errorf("units of %d bytes, %d workers: %v, want %q", n, w, got, want)
		}
	})
}

// TestUnitEdgeOffsets: the first batch of a unit is checked against the
// batch before it as any other is, before the work on it: a batch whose
// last offset is below its first is reported with the previous batch's
// last offset, and offsets going backwards come before a record the key
// pass cannot read.
func TestUnitEdgeOffsets(t *testing.T) {
	cases := []struct {
		name   string
		base   int64
		broken bool // the third batch's first record does not parse
		delta  int32
		want   string
	}{
		{"last below first", 20, false, -1, "offsets 20 to 19 are not above the previous batch's last offset 14"},
		{"backwards and unreadable", 12, true, 4, "offsets 12 to 16 are not above the previous batch's last offset 14"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir, log, at := writeBatches(t, [][2]int64{{0, 5}, {10, 5}, {tc.base, 5}, {30, 5}}, func(seg []byte, at []int) {
				b := seg[at[2]:]
				binary.BigEndian.PutUint32(b[23:], uint32(tc.delta))
				if tc.broken {
					b[logfmt.V2HeaderSize] = 1 // a record length of -1
				}
				reseal(b)
			})
			want := fmt.Sprintf("%s: %s (at byte %d)", log, tc.want, at[2])
			o := Options{Match: keyMatcher(t, Spec{Keys: []string{"k1"}}), Range: fetch.DefaultOptions(), KeyMapMemory: 1 << 20}
			unitErrors(t, dir, o, []int{1, 2}, func(n int64, w int, got error) {
				if got == nil || got.Error() != want {
					t.Errorf("units of %d bytes, %d workers: %v, want %q", n, w, got, want)
				}
			})
		})
	}
}

// TestFailedBatchGivesNoKeys: the keys read from a batch before it failed
// are not put in the key map, whatever the unit size: the batch's error is
// reported, not a key map that its keys would fill.
func TestFailedBatchGivesNoKeys(t *testing.T) {
	// The second batch declares a record more than it holds.
	dir, _, _ := writeBatches(t, [][2]int64{{0, 5}, {10, 300}}, func(seg []byte, at []int) {
		binary.BigEndian.PutUint32(seg[at[1]+57:], 301)
		reseal(seg[at[1]:])
	})
	o := Options{Match: keyMatcher(t, Spec{KeyRegexps: []string{"^k"}}), Range: fetch.DefaultOptions(), KeyMapMemory: 100 * 24}
	var want string
	unitErrors(t, dir, o, []int{1}, func(n int64, _ int, got error) {
		if _, ok := logfmt.AsCorrupt(got); !ok {
			t.Fatalf("units of %d bytes: %v, want the batch's corruption", n, got)
		}
		if want == "" {
			want = got.Error()
		} else if got.Error() != want {
			t.Errorf("units of %d bytes: %v, want %s", n, got, want)
		}
	})
}

// TestUnitsOnReusedWindows: units of more than a read window, read at
// once by several goroutines whose readers hand their windows on when
// closed (logfmt), write what one reader of whole segments writes. With
// the race detector on, a unit that kept a batch's bytes past its reader
// would fail here; smaller segments and units never reuse a window.
func TestUnitsOnReusedWindows(t *testing.T) {
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	co := compact.DefaultOptions(start + (3 * time.Hour).Milliseconds())
	co.MaxLag = (10 * time.Minute).Milliseconds()
	dir := genDir(t, gen.Options{Topics: []string{"t"}, Records: 24000, Keys: 3000, ValueBytes: 200, BatchRecords: 20, Magic: 2,
		SegmentBytes: 3 << 20, TombstoneRatio: 0.05, TransactionalRatio: 0.3, AbortRatio: 0.3, TimeStep: 100 * time.Millisecond, Seed: 26})
	j := Job{Partition: partition(t, dir), Audit: &Audit{Cleaner: co}}
	o := Options{Range: fetch.DefaultOptions(), KeyMapMemory: 8 << 20, Format: Format{JSON: true}}
	defer setUnitBytes(1 << 30)()
	o.Workers = 1
	want := runRaw(t, j, o)
	defer setUnitBytes(1<<20 + 1)()
	for _, w := range []int{2, 4} {
		o.Workers = w
		if got := runRaw(t, j, o); got != want {
			t.Fatalf("units over a window, %d workers, wrote\n%s\nwhole segments wrote\n%s", w, tail(got), tail(want))
		}
	}
}

// editBatch edits the v2 batch i of the first segment of dir and gives
// it the checksum of its new bytes.
func editBatch(t *testing.T, dir string, i int, fix func(b []byte)) (log string) {
	t.Helper()
	log = filepath.Join(dir, "00000000000000000000.log")
	seg, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	b := seg[testutil.Batches(t, log)[i].Pos:]
	fix(b)
	reseal(b)
	if err := os.WriteFile(log, seg, 0o644); err != nil {
		t.Fatal(err)
	}
	return log
}

// txnLog writes a partition of one segment: a transaction of producer 7
// with the records given ("k=v"), its marker, and a version of k.
func txnLog(t *testing.T, recs []string, marker logfmt.ControlType) string {
	t.Helper()
	return writeLog(t, []logBatch{{pid: 7, txn: true, keys: recs, ts: 1000}, {pid: 7, isCtl: true, marker: marker, ts: 1001},
		{pid: 5, keys: []string{"k=b"}, ts: 1002}})
}

// TestTxnOffsetOutOfRange: a record of a transactional batch whose offset
// is out of range is corruption only if its transaction committed: an
// aborted one is a version of nothing, as when the key pass ran after the
// first pass and knew the transaction's fate.
func TestTxnOffsetOutOfRange(t *testing.T) {
	for _, marker := range []logfmt.ControlType{logfmt.ControlAbort, logfmt.ControlCommit} {
		// The one record's offset delta is -1: offset -1.
		dir := txnLog(t, []string{"k=a"}, marker)
		log := editBatch(t, dir, 0, func(b []byte) { b[logfmt.V2HeaderSize+3] = 1 })
		var want string
		if marker == logfmt.ControlCommit {
			want = log + ": offset -1 is out of range (at byte 0)"
		}
		o := Options{Match: keyMatcher(t, Spec{Keys: []string{"k"}}), Range: fetch.DefaultOptions(), KeyMapMemory: 1 << 20}
		unitErrors(t, dir, o, []int{1, 2}, func(n int64, w int, got error) {
			if got == nil && want != "" || got != nil && got.Error() != want {
				t.Errorf("marker %v, units of %d bytes, %d workers: %v, want %q", marker, n, w, got, want)
			}
		})
	}
}

// TestTxnKeysFillMapFirst: committed versions that fill the key map before
// a later batch fails end the search with the full key map, as when the
// key pass read them in the log's order.
func TestTxnKeysFillMapFirst(t *testing.T) {
	recs := make([]string, 300)
	for i := range recs {
		recs[i] = fmt.Sprintf("k%d=a", i)
	}
	dir := txnLog(t, recs, logfmt.ControlCommit)
	// The last batch declares a record more than it holds.
	editBatch(t, dir, 2, func(b []byte) { binary.BigEndian.PutUint32(b[57:], 2) })
	o := Options{Match: keyMatcher(t, Spec{KeyRegexps: []string{"^k"}}), Range: fetch.DefaultOptions(), KeyMapMemory: 100 * 24}
	unitErrors(t, dir, o, []int{1, 2}, func(n int64, w int, got error) {
		if !errors.Is(got, compact.ErrKeyMapFull) {
			t.Errorf("units of %d bytes, %d workers: %v, want the full key map", n, w, got)
		}
	})
}

// TestKeyErrorKeepsNotes: a partition whose key pass fails still reports
// what fetch.Open noted (here a torn last entry), as when the key pass ran
// after Open.
func TestKeyErrorKeepsNotes(t *testing.T) {
	// The second batch declares a record more than it holds; the last is
	// cut short.
	dir, log, at := writeBatches(t, [][2]int64{{0, 5}, {10, 5}, {20, 5}}, func(seg []byte, at []int) {
		binary.BigEndian.PutUint32(seg[at[1]+57:], 6)
		reseal(seg[at[1]:])
	})
	if err := os.Truncate(log, int64(at[2]+20)); err != nil {
		t.Fatal(err)
	}
	o := Options{Match: keyMatcher(t, Spec{Keys: []string{"k1"}}), Range: fetch.DefaultOptions(), KeyMapMemory: 1 << 20}
	for _, n := range []int64{1, 1 << 30} {
		defer setUnitBytes(n)()
		var res *Result
		if err := Run(io.Discard, []Job{{Partition: partition(t, dir)}}, o, func(r *Result) { res = r }); err != nil {
			t.Fatal(err)
		}
		if _, ok := logfmt.AsCorrupt(res.Err); !ok || len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "torn") {
			t.Errorf("units of %d bytes: error %v, notes %q; want the second batch's error and the torn entry's note", n, res.Err, res.Notes)
		}
	}
}

// TestTxnVersionsInLogOrder: when record offsets do not rise with the log
// (records outside their batch's offsets, or going backwards in a batch),
// the held transactional versions end in the key map as when the key pass
// read them in the log's order after fetch.Open.
func TestTxnVersionsInLogOrder(t *testing.T) {
	cases := []struct {
		name  string
		keys  []string // of the transactional batch
		batch int      // the batch edited
		delta []byte   // its records' offset deltas, zigzag
		last  string   // the last batch's record
	}{
		{"transactional record past its batch", []string{"k=2"}, 1, []byte{100}, "k=4"},
		{"later record before a transactional one", []string{"k=2"}, 3, []byte{5}, "k=4"},
		{"transactional records backwards", []string{"k=2", "k=3"}, 1, []byte{2, 0}, "j=4"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			const idem, txn = 5, 7
			dir := writeLog(t, []logBatch{{pid: idem, keys: []string{"k=1"}, ts: 1000}, {pid: txn, txn: true, keys: tc.keys, ts: 1001},
				{pid: txn, isCtl: true, marker: logfmt.ControlCommit, ts: 1002}, {pid: idem, keys: []string{tc.last}, ts: 1003}})
			editBatch(t, dir, tc.batch, func(b []byte) {
				p := logfmt.V2HeaderSize
				for _, d := range tc.delta {
					b[p+3] = d // after a one-byte length, attributes and timestamp delta
					p += 1 + int(b[p]>>1)
				}
			})
			j := Job{Partition: partition(t, dir)}
			o := Options{Match: keyMatcher(t, Spec{Keys: []string{"k"}}), Range: fetch.DefaultOptions(), KeyMapMemory: 1 << 20, Workers: 1}
			got := runRaw(t, j, o)
			defer setMaxTxnKeys(0)()
			if want := runRaw(t, j, o); got != want {
				t.Errorf("during the first pass:\n%s\nafter it:\n%s", got, want)
			}
		})
	}
}

// TestHeldVersionsAsAfterOpen: on logs of interleaved transactions whose
// markers fall in later segments, or never come (ongoing), between
// non-transactional versions of the same keys, the key pass run during
// fetch.Open's first pass writes what the one after it writes, in an audit
// too, with units of a batch and of whole segments.
func TestHeldVersionsAsAfterOpen(t *testing.T) {
	for seed := int64(0); seed < 200; seed++ {
		rng := rand.New(rand.NewSource(seed))
		var segs [][]logBatch
		open := map[int64]bool{}
		ts := int64(1000)
		for range 1 + rng.Intn(4) {
			var seg []logBatch
			for range 1 + rng.Intn(6) {
				ts++
				pid := int64(10 + rng.Intn(3))
				switch r := rng.Intn(10); {
				case r < 3:
					var keys []string
					for range 1 + rng.Intn(3) {
						k := fmt.Sprintf("k%d=", rng.Intn(4))
						if rng.Intn(4) > 0 {
							k += "v" // else a tombstone
						}
						keys = append(keys, k)
					}
					seg = append(seg, logBatch{pid: 5, keys: keys, ts: ts})
				case r < 7:
					open[pid] = true
					seg = append(seg, logBatch{pid: pid, txn: true, keys: []string{fmt.Sprintf("k%d=t", rng.Intn(4))}, ts: ts})
				case open[pid]:
					open[pid] = false
					m := []logfmt.ControlType{logfmt.ControlAbort, logfmt.ControlCommit}[rng.Intn(2)]
					seg = append(seg, logBatch{pid: pid, isCtl: true, marker: m, ts: ts})
				}
			}
			if len(seg) > 0 {
				segs = append(segs, seg)
			}
		}
		if len(segs) == 0 {
			continue
		}
		j := Job{Partition: partition(t, writeLog(t, segs...))}
		if seed%2 == 1 {
			co := compact.DefaultOptions(1010)
			co.MaxLag, co.DeleteRetention = 3, 2
			j.Audit = &Audit{Cleaner: co}
		}
		re := []string{".", "k[12]"}[seed%3/2]
		for _, w := range []int{1, 3} {
			for _, n := range []int64{1, 1 << 30} {
				func() {
					defer setUnitBytes(n)()
					o := Options{Match: keyMatcher(t, Spec{KeyRegexps: []string{re}}), Range: fetch.DefaultOptions(), KeyMapMemory: 1 << 20, Workers: w}
					got := runRaw(t, j, o)
					defer setMaxTxnKeys(0)()
					if want := runRaw(t, j, o); got != want {
						t.Fatalf("seed %d, %d workers, units of %d bytes: during the first pass\n%s\nafter it\n%s", seed, w, n, got, want)
					}
				}()
			}
		}
	}
}

// TestPlannedUnitsSameOutput: the key pass on units cut by the indexes,
// which opens the partition from what it read, and the look for an exact
// key's bytes before reading a batch's keys, write what the first pass of
// fetch.Open and a key regular expression write: on every message format,
// with transactions, with indexes that point inside batches or are gone,
// and on a damaged segment, whose error names the same file and byte.
func TestPlannedUnitsSameOutput(t *testing.T) {
	co := auditOptions()
	logs := []struct {
		magic int8
		c     codec.Type
		txn   bool
	}{{0, codec.None, false}, {1, codec.None, false}, {2, codec.None, false}, {2, codec.None, true}, {2, codec.LZ4, false}}
	indexes := map[string]func(t *testing.T, s layout.Segment){
		"as written":     func(*testing.T, layout.Segment) {},
		"inside batches": func(t *testing.T, s layout.Segment) { shiftEntries(t, s.Index, 5) },
		"gone": func(t *testing.T, s layout.Segment) {
			if err := os.Remove(s.Index); err != nil {
				t.Fatal(err)
			}
		},
	}
	// Units of two index entries or so: a plan of units of a batch is
	// refused, its stretches between entries being over two units.
	defer setUnitBytes(4 << 10)()
	for _, l := range logs {
		for _, damaged := range []bool{false, true} {
			for name, fix := range indexes {
				o := gen.Options{Topics: []string{"t"}, Records: 900, Keys: 40, Magic: l.magic, Compression: l.c, BatchRecords: 6,
					SegmentBytes: 16 << 10, TombstoneRatio: 0.1, TimeStep: time.Second, Seed: int64(l.magic)*10 + int64(l.c)}
				if l.txn {
					o.TransactionalRatio, o.AbortRatio = 0.3, 0.3
				}
				dir := genDir(t, o)
				p := partition(t, dir)
				if damaged {
					damage(t, p.Segments[len(p.Segments)/2].Log)
				}
				fix(t, p.Segments[len(p.Segments)/2])
				p = partition(t, dir)
				if _, ok := fetch.NewPlan(p, fetch.Options{UnitBytes: unitBytes, UnitRecords: unitRecords}); ok != (name != "gone") {
					t.Fatalf("index %s: plan made %v", name, ok)
				}
				t.Run(fmt.Sprintf("v%d-%s-txn%v-damaged%v-index-%s", l.magic, l.c, l.txn, damaged, name), func(t *testing.T) {
					for _, keys := range [][]string{{"key-000007"}, {"key-000007", "key-000031"}, {"key-000001", "key-000002", "key-000003"}, {"absent"}} {
						var res []string
						for _, k := range keys {
							res = append(res, "^"+k+"$")
						}
						for _, audit := range []bool{false, true} {
							j := Job{Partition: p}
							if audit {
								j.Audit = &Audit{Cleaner: co}
							}
							ro := Options{Match: keyMatcher(t, Spec{KeyRegexps: res}), Range: fetch.DefaultOptions(), KeyMapMemory: 16 << 20,
								Format: Format{JSON: audit}, Workers: 2}
							planUnits = false
							want := runRaw(t, j, ro)
							planUnits = true
							if damaged != strings.Contains(want, "err "+filepath.Dir(p.Segments[0].Log)) {
								t.Fatalf("damaged %v: %s", damaged, tail(want))
							}
							ro.Match = keyMatcher(t, Spec{Keys: keys})
							for _, w := range []int{1, 2} {
								ro.Workers = w
								if got := runRaw(t, j, ro); got != want {
									t.Fatalf("keys %q, audit %v, %d workers wrote\n%s\nwant\n%s", keys, audit, w, tail(got), tail(want))
								}
							}
						}
					}
				})
			}
		}
	}
}

// TestSkippedBatchChecked: the key pass checks the checksum of a batch
// it does not read because the key sought is not in its bytes, and reads
// the records of one that holds the key's bytes, whose damage under a valid
// checksum it then reports.
func TestSkippedBatchChecked(t *testing.T) {
	flipped, _, _ := writeBatches(t, [][2]int64{{0, 5}, {5, 5}, {10, 5}}, func(seg []byte, at []int) {
		seg[at[1]+70] ^= 1
	})
	// The second batch declares a record more than it holds.
	miscounted, _, _ := writeBatches(t, [][2]int64{{0, 5}, {5, 5}, {10, 5}}, func(seg []byte, at []int) {
		binary.BigEndian.PutUint32(seg[at[1]+57:], 6)
		reseal(seg[at[1]:])
	})
	for _, c := range []struct {
		dir  string
		spec Spec
	}{{flipped, Spec{Keys: []string{"k2"}}}, {miscounted, Spec{Keys: []string{"k6"}}}, {miscounted, Spec{KeyRegexps: []string{"^k2$"}}}} {
		o := Options{Match: keyMatcher(t, c.spec), Range: fetch.DefaultOptions(), KeyMapMemory: 1 << 20}
		unitErrors(t, c.dir, o, []int{1, 2}, func(n int64, w int, got error) {
			if _, ok := logfmt.AsCorrupt(got); !ok {
				t.Errorf("%+v, units of %d bytes, %d workers: %v, want the second batch's corruption", c.spec, n, w, got)
			}
		})
	}
}

// TestProgressEndsReplanned: where the indexes point inside batches, the
// key pass on planned units stops and the log is read as before: the bytes
// announced are the bytes read, with and without transactions (Open then
// runs alongside, and the key pass runs again after it).
func TestProgressEndsReplanned(t *testing.T) {
	defer setUnitBytes(4 << 10)()
	for _, txn := range []bool{false, true} {
		o := gen.Options{Topics: []string{"t"}, Records: 900, Keys: 40, Magic: 2, BatchRecords: 6, SegmentBytes: 16 << 10, Seed: 3}
		if txn {
			o.TransactionalRatio, o.AbortRatio = 0.3, 0.3
		}
		dir := genDir(t, o)
		p := partition(t, dir)
		shiftEntries(t, p.Segments[len(p.Segments)/2].Index, 5)
		if done, todo, err := progressOf(t, partition(t, dir), Spec{Keys: []string{"key-000007"}}); err != nil || done != todo || todo == 0 {
			t.Errorf("transactions %v: %d bytes read of %d announced, %v", txn, done, todo, err)
		}
	}
}

// TestProgressEndsRedoTail: once the key pass must run again after Open
// (too many transactional versions to hold), the planned units left are
// not read; the last of a segment whose tail is zeroed still counts its
// zeros, which settle then counts again as what the units left out.
func TestProgressEndsRedoTail(t *testing.T) {
	defer setUnitBytes(16 << 10)()
	defer setMaxTxnKeys(0)()
	dir := genDir(t, gen.Options{Topics: []string{"t"}, Records: 3000, Keys: 100, Magic: 2, SegmentBytes: 64 << 10, Seed: 8,
		TransactionalRatio: 0.5, AbortRatio: 0.2})
	p := partition(t, dir)
	testutil.AppendBytes(t, p.Segments[0].Log, make([]byte, 10000))
	if done, todo, err := progressOf(t, p, Spec{Keys: []string{"key-000042"}}); err != nil || done != todo || todo == 0 {
		t.Errorf("%d bytes read of %d announced, %v", done, todo, err)
	}
}

// shiftEntries moves the positions of an .index's entries after its first
// by n bytes.
func shiftEntries(t *testing.T, path string, n uint32) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 8; i+8 <= len(b); i += 8 {
		binary.BigEndian.PutUint32(b[i+4:], binary.BigEndian.Uint32(b[i+4:])+n)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestProgressEndsFailing: a partition whose search fails still reads, in
// its progress, the bytes its passes announced, as Options.Progress makes
// a bar of them: when the key pass that runs again after Open (a
// transaction's versions held) meets the damage, with units cut by the
// indexes or not, and when the find pass does.
func TestProgressEndsFailing(t *testing.T) {
	idem := logBatch{pid: 5, keys: []string{"k=x", "j=y"}, ts: 3}
	dir := writeLog(t, []logBatch{{pid: 7, txn: true, keys: []string{"k=a"}, ts: 1}, {pid: 7, isCtl: true, marker: logfmt.ControlCommit, ts: 2}, idem},
		[]logBatch{idem, idem, idem}, []logBatch{idem})
	p := partition(t, dir)
	damage(t, p.Segments[1].Log)
	defer func() { planUnits = true }()
	for _, spec := range []Spec{{Keys: []string{"k"}}, {ValueContains: []string{"x"}}} {
		for _, plan := range []bool{true, false} {
			planUnits = plan
			done, todo, got := progressOf(t, p, spec)
			if _, ok := logfmt.AsCorrupt(got); !ok {
				t.Fatalf("%+v, plan %v: %v, want the damage", spec, plan, got)
			}
			if done != todo || todo == 0 {
				t.Errorf("%+v, plan %v: %d bytes read of %d announced", spec, plan, done, todo)
			}
		}
	}
}

// TestProgressEndsPlanAfterTxn: damage met by the key pass on planned
// units after a transaction that holds no version of the key sought ends
// the search as without a plan, where the key pass fails once, after
// reading what it announced: with a plan the key pass runs again after
// Open, and its progress falls short.
func TestProgressEndsPlanAfterTxn(t *testing.T) {
	idem := logBatch{pid: 5, keys: []string{"k=x", "j=y"}, ts: 3}
	dir := writeLog(t, []logBatch{{pid: 7, txn: true, keys: []string{"j=a"}, ts: 1}, {pid: 7, isCtl: true, marker: logfmt.ControlCommit, ts: 2}, idem},
		[]logBatch{idem, idem, idem}, []logBatch{idem})
	p := partition(t, dir)
	damage(t, p.Segments[1].Log)
	defer func() { planUnits = true }()
	for _, plan := range []bool{false, true} {
		planUnits = plan
		done, todo, got := progressOf(t, p, Spec{Keys: []string{"k"}})
		if _, ok := logfmt.AsCorrupt(got); !ok {
			t.Fatalf("plan %v: %v, want the damage", plan, got)
		}
		if done != todo || todo == 0 {
			t.Errorf("plan %v: %d bytes read of %d announced", plan, done, todo)
		}
	}
}
