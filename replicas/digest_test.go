package replicas_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/internal/target"
	"github.com/logtool/logtool/internal/testkit/testutil"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/codec"
	"github.com/logtool/logtool/logfmt/layout"
	"github.com/logtool/logtool/replicas"
)

// digestOf writes the digest of one broker's log directory.
func digestOf(t testing.TB, logDir string, o replicas.Options) string {
	t.Helper()
	set, err := target.Resolve([]string{logDir}, target.Options{Command: "digest", Takes: target.LogDirs})
	if err != nil {
		t.Fatal(err)
	}
	srcs, err := replicas.OpenLogDirs(set, o)
	if err != nil || len(srcs) != 1 {
		t.Fatalf("%d sources: %v", len(srcs), err)
	}
	out := filepath.Join(t.TempDir(), filepath.Base(logDir)+".digest")
	if _, err := replicas.WriteDigest(out, srcs[0]); err != nil {
		t.Fatal(err)
	}
	return out
}

// sameBoth requires the verdicts of the log directories and of their
// digests to be the same, and returns them.
func sameBoth(t *testing.T, lo replicas.Options, o replicas.RunOptions, dirs ...string) []*replicas.Verdict {
	t.Helper()
	fromDirs, _ := runWith(t, lo, o, dirs...)
	var digests []string
	for _, d := range dirs {
		digests = append(digests, digestOf(t, d, lo))
	}
	fromDigests, _ := run(t, o, digests...)
	for _, v := range fromDigests {
		for i := range v.Replicas {
			if v.Replicas[i].Digest == "" {
				t.Errorf("%s: a replica read from a digest does not say so", v.Replicas[i].Broker)
			}
			v.Replicas[i].Digest = ""
		}
	}
	if !reflect.DeepEqual(fromDirs, fromDigests) {
		t.Fatalf("log directories and digests give different verdicts:\n%s\n%s", dumpVerdicts(fromDirs), dumpVerdicts(fromDigests))
	}
	return fromDirs
}

func dumpVerdicts(vs []*replicas.Verdict) string {
	var b strings.Builder
	for _, v := range vs {
		b.WriteString(v.Topic + " " + string(v.Status) + " " + strings.Join(v.Notes, "; ") + "\n")
		for _, r := range v.Replicas {
			b.WriteString("  " + r.Broker + " " + r.Source + "\n")
		}
	}
	return b.String()
}

func TestDigestGivesTheSameVerdict(t *testing.T) {
	dirs := newBrokers(t, gen.Options{TombstoneRatio: 0.1, TransactionalRatio: 0.2}, 3)
	n := batchesOf(t, dirs[0])[12].Base
	electedAt(t, dirs[1], n, 4)
	setRoot(t, dirs[0], layout.ReplicationOffsetCheckpointFile, n+30)
	damageBatch(t, batchesOf(t, dirs[2])[3])
	genBase(t, dirs[2], gen.Options{Topics: []string{"solo"}})

	vs := sameBoth(t, replicas.Options{}, replicas.RunOptions{}, dirs...)
	if len(vs) != 2 || vs[0].Status != replicas.Diverge || !vs[0].Damaged || vs[1].Status != replicas.Single {
		t.Fatalf("the fixture does not give what it is meant to: %s", dumpVerdicts(vs))
	}
	sameBoth(t, replicas.Options{}, replicas.RunOptions{Leader: "1"}, dirs...)
	sameBoth(t, replicas.Options{AllRecords: true}, replicas.RunOptions{}, dirs...)
}

func TestDigestOfCompactedReplicas(t *testing.T) {
	dirs := newBrokers(t, gen.Options{TombstoneRatio: 0.1}, 2)
	compactFixture(t, dirs[0])
	vs := sameBoth(t, replicas.Options{AllRecords: true}, replicas.RunOptions{}, dirs...)
	if vs[0].Status != replicas.Agree || !replicaOf(t, vs[0], "1").Hashed {
		t.Fatalf("%s", dumpVerdicts(vs))
	}
}

// Digests that cannot be read are refused, naming the file: another
// format version, a digest cut short, a damaged one.
func TestDigestFaults(t *testing.T) {
	dirs := newBrokers(t, gen.Options{}, 2)
	good := digestOf(t, dirs[0], replicas.Options{})
	other := digestOf(t, dirs[1], replicas.Options{})
	b, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		data []byte
		want string
	}{
		"version":   {append(append([]byte{}, b[:15]...), append([]byte{9}, b[16:]...)...), "format version 9"},
		"truncated": {b[:len(b)-7], ""},
		"damaged":   {flip(b, len(b)/2), ""},
		"not one":   {[]byte("hello\n"), "not a logtool digest"},
	}
	for name, c := range cases {
		path := filepath.Join(t.TempDir(), "bad.digest")
		if err := os.WriteFile(path, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		err := readAll(path, other)
		ie, ok := errors.AsType[*replicas.InputError](err)
		if !ok || !strings.Contains(ie.Error(), path) || !strings.Contains(ie.Error(), c.want) {
			t.Errorf("%s: %v, want an InputError naming %s (%q)", name, err, path, c.want)
		}
	}
	if err := readAll(good, other); err != nil {
		t.Fatalf("the good digest: %v", err)
	}
}

// TestDigestSyncsBehind writes digests with an fsync started behind every
// write (the writes are a buffer's): the digest is the same as one written
// with a single fsync, and an fsync behind that fails fails the digest and
// leaves no file.
func TestDigestSyncsBehind(t *testing.T) {
	dirs := newBrokers(t, gen.Options{}, 1)
	want, err := os.ReadFile(digestOf(t, dirs[0], replicas.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	defer replicas.SetSyncBytes(1)()
	for _, failAt := range []int{0, 1} {
		var syncs int
		restore := safefile.SetFaultHook(func(step safefile.Step, _ string) error {
			if step != safefile.StepSync {
				return nil
			}
			if syncs++; syncs == failAt {
				return safefile.ErrInjected
			}
			return nil
		})
		set, err := target.Resolve([]string{dirs[0]}, target.Options{Command: "digest", Takes: target.LogDirs})
		if err != nil {
			t.Fatal(err)
		}
		srcs, err := replicas.OpenLogDirs(set, replicas.Options{})
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "b.digest")
		_, err = replicas.WriteDigest(out, srcs[0])
		restore()
		if failAt > 0 {
			left, _ := os.ReadDir(filepath.Dir(out))
			if !errors.Is(err, safefile.ErrInjected) || len(left) > 0 {
				t.Fatalf("fsync %d failed: WriteDigest = %v, left %v", failAt, err, left)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if syncs < 2 {
			t.Fatalf("%d fsyncs, want one behind the writes and Commit's", syncs)
		}
		if got, err := os.ReadFile(out); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("digest synced behind differs: %d bytes against %d (%v)", len(got), len(want), err)
		}
	}
}

func flip(b []byte, at int) []byte {
	c := bytes.Clone(b)
	c[at] ^= 0x55
	return c
}

// readAll opens path and compares it with other, reading both whole.
func readAll(path, other string) error {
	var srcs []replicas.Source
	for _, p := range []string{path, other} {
		s, err := replicas.OpenDigest(p)
		if err != nil {
			return err
		}
		defer s.Close()
		srcs = append(srcs, s)
	}
	_, err := replicas.Run(srcs, replicas.RunOptions{}, func(*replicas.Verdict) error { return nil })
	return err
}

// FuzzDigest feeds the digest reader damaged digests: it must return an
// error or partitions, never panic or hang, and every fault is an
// InputError.
func FuzzDigest(f *testing.F) {
	base := f.TempDir()
	genBase(f, base, gen.Options{Records: 60, TombstoneRatio: 0.2})
	dirs := brokers(f, base, 1)
	for _, o := range []replicas.Options{{}, {AllRecords: true}} {
		b, err := os.ReadFile(digestOf(f, dirs[0], o))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "f.digest")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := replicas.OpenDigest(path)
		for err == nil {
			var p *replicas.Partition
			if p, err = s.Next(); p == nil {
				break
			}
		}
		if s != nil {
			s.Close()
		}
		if _, ok := errors.AsType[*replicas.InputError](err); err != nil && !ok {
			t.Fatalf("not an InputError: %v", err)
		}
	})
}

// TestDigestWorkers: a digest made on several workers, partitions at once
// and a large segment's ranges read in parallel, is the one a single
// goroutine makes, byte for byte: with damage inside a range (passed over
// from the damaged batch's start, as one reader does), control batches (read
// whole for their markers), compacted partitions, and partitions made on a
// worker, read in turn, and whose frames outgrow a worker's.
func TestDigestWorkers(t *testing.T) {
	dir := t.TempDir()
	// One partition of two segments of over 4 MiB: ranges of 2 MiB at least,
	// so each segment is read in two or more.
	if _, err := gen.Generate(gen.Options{Out: dir, Topics: []string{"big"}, Records: 70_000, Keys: 70_000, Magic: 2,
		SegmentBytes: 5 << 20, TransactionalRatio: 0.1, AbortRatio: 0.3, Seed: 11}); err != nil {
		t.Fatal(err)
	}
	if _, err := gen.Generate(gen.Options{Out: dir, Topics: []string{topic}, Partitions: 5, Records: 2_000, Keys: 50, Magic: 2,
		SegmentBytes: 64 << 10, TransactionalRatio: 0.2, AbortRatio: 0.5, Seed: 12}); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big-0", "00000000000000000000.log")
	seg, err := os.ReadFile(big)
	if err != nil {
		t.Fatal(err)
	}
	// A byte of a record 3 MiB in: a checksum that fails in the second range.
	seg[3<<20] ^= 0xff
	write(t, big, seg)
	// Cleaned by a broker: its record hashes are read too.
	compactFixture(t, dir)

	one := digestOf(t, dir, replicas.Options{Workers: 1})
	// Blocks of 256 KiB (the default), 4 KiB and 512 bytes: the smaller,
	// the more ranges begin at a block's first batch, so that a worker's
	// first batch starts a frame, not only goes on with one.
	for _, shift := range []int{18, 12, 9} {
		restore := replicas.SetBlockShift(shift)
		want, err := os.ReadFile(digestOf(t, dir, replicas.Options{Workers: 1}))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name   string
			stream int64
			frames int
		}{
			{"default", 8 << 20, 2 << 20},
			{"every partition on a worker", 1 << 40, 2 << 20},
			{"frames outgrow a worker's", 1 << 40, 1 << 10},
		} {
			t.Run(fmt.Sprintf("%s/blocks of %d", c.name, 1<<shift), func(t *testing.T) {
				defer replicas.SetJobBytes(c.stream, c.frames)()
				var read atomic.Int64
				got, err := os.ReadFile(digestOf(t, dir, replicas.Options{Workers: 3, Progress: func(n int64) { read.Add(n) }}))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("a digest on 3 workers differs from one on 1: %d bytes against %d", len(got), len(want))
				}
				if total := dirLogBytes(t, dir); read.Load() > total {
					t.Fatalf("progress told %d bytes of %d", read.Load(), total)
				}
			})
		}
		restore()
	}
	// The damage is in the digest, at the damaged batch.
	src, err := replicas.OpenDigest(one)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	p, err := src.Next()
	if err != nil || p == nil || p.Topic != "big" {
		t.Fatalf("first partition %v: %v", p, err)
	}
	if len(p.Damage) != 1 || p.Damage[0].File != big || p.Damage[0].Pos > 3<<20 || p.Damage[0].Pos < 2<<20 {
		t.Fatalf("damage %+v, want one batch before byte %d", p.Damage, 3<<20)
	}
}

// dirLogBytes is the size of the .log files under dir.
func dirLogBytes(t *testing.T, dir string) int64 {
	var n int64
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, ".log") {
			fi, err := d.Info()
			if err != nil {
				return err
			}
			n += fi.Size()
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A digest holds a frame, not the partition: what it allocates does not grow
// with the log.
func TestDigestMemoryDoesNotGrow(t *testing.T) {
	// On one goroutine, batches of 2; on two, batches of 10, which a
	// range reads whole (a range notes up to 8192 batches; more, and one
	// goroutine reads on).
	for _, c := range []struct{ workers, batch int }{{1, 2}, {2, 10}} {
		t.Run(fmt.Sprintf("workers=%d", c.workers), func(t *testing.T) { digestMemory(t, c.workers, c.batch) })
	}
}

func digestMemory(t *testing.T, workers, batch int) {
	// alloc returns the bytes and the allocations of a digest of records.
	alloc := func(records int) [2]uint64 {
		dir := t.TempDir()
		if _, err := gen.Generate(gen.Options{Out: dir, Topics: []string{"big"}, Records: records, Keys: records, Magic: 2, BatchRecords: batch, Seed: 5}); err != nil {
			t.Fatal(err)
		}
		set, err := target.Resolve([]string{dir}, target.Options{Command: "digest", Takes: target.LogDirs})
		if err != nil {
			t.Fatal(err)
		}
		srcs, err := replicas.OpenLogDirs(set, replicas.Options{Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		if _, err := replicas.WriteDigest(filepath.Join(t.TempDir(), "d"), srcs[0]); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return [2]uint64{after.TotalAlloc - before.TotalAlloc, after.Mallocs - before.Mallocs}
	}
	least := func(a, b [2]uint64) [2]uint64 { return [2]uint64{min(a[0], b[0]), min(a[1], b[1])} }
	// The ranges' buffers are kept for the next reader: a first run fills
	// them, a few MiB whatever the log. How many a run holds at once
	// depends on how its ranges are scheduled, and a run holding more
	// than any before it allocates a few MiB more (which failed one run
	// in four): the bytes may grow by 4 MiB, the allocations by what the
	// ranges (2 MiB each) take, far from the 16,000 or more a cost per
	// batch would add.
	alloc(160_000)
	small, big := least(alloc(20_000), alloc(20_000)), least(alloc(160_000), alloc(160_000))
	t.Logf("allocated %d and %d bytes, %d and %d times", small[0], big[0], small[1], big[1])
	if big[0] > small[0]+small[0]/2+4<<20 || big[1] > 2*small[1]+1000 {
		t.Fatalf("a digest of 8 times the batches allocated %d bytes %d times against %d bytes %d times", big[0], big[1], small[0], small[1])
	}
}

// TestDigestRoundTrip: what a digest gives back of each partition is what
// reading the log directory gives, every field of every batch and record
// hash, over legacy wrappers, transactions and their markers, compacted
// batches, and batches whose fields jump back and forth between their
// extremes, which the digest's deltas must carry.
func TestDigestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	genBase(t, dir, gen.Options{Topics: []string{"txn"}, TombstoneRatio: 0.2, TransactionalRatio: 0.4, AbortRatio: 0.5})
	for _, m := range []int8{0, 1} {
		o := gen.Options{Out: dir, Topics: []string{fmt.Sprintf("legacy%d", m)}, Records: 80, Keys: 20, Magic: m, Seed: int64(m)}
		if m == 1 {
			o.Compression = codec.Gzip
		}
		if _, err := gen.Generate(o); err != nil {
			t.Fatal(err)
		}
	}
	part := filepath.Join(dir, "txn-0")
	next := testutil.PartitionBatches(t, part)[len(testutil.PartitionBatches(t, part))-1].Last + 1
	var buf []byte
	for i, f := range []struct {
		epoch int32
		pid   int64
		seq   int32
		ts    int64
		skip  int64 // offsets left out before the batch
	}{
		{7, 1 << 40, math.MaxInt32 - 4, math.MaxInt64 / 2, 0},
		{-1, -1, -1, -1, 3},
		{math.MaxInt32, math.MaxInt64, 0, 0, 0},
		{0, 0, math.MaxInt32, math.MinInt64 / 2, 1 << 40},
		{2, 5, 3, 1_700_000_000_000, 0},
	} {
		next += f.skip
		o := logfmt.DefaultBatchOptions(next)
		o.PartitionLeaderEpoch, o.ProducerID, o.BaseSequence = f.epoch, f.pid, f.seq
		recs := []logfmt.Record{{Offset: next, Timestamp: f.ts, Key: []byte{'k', byte(i)}, Value: []byte("v")}}
		if i == 2 {
			// Three offsets, one record: a batch the cleaner rewrote.
			o.LastOffsetDelta = 2
		}
		var err error
		if buf, err = logfmt.AppendBatch(buf, o, recs); err != nil {
			t.Fatal(err)
		}
		next += int64(max(1, o.LastOffsetDelta+1))
	}
	testutil.AppendLog(t, part, buf)
	brokerDir := brokers(t, dir, 1)[0]
	for _, o := range []replicas.Options{{}, {AllRecords: true}} {
		if n := sameBack(t, brokerDir, o); n != 3 {
			t.Fatalf("%d partitions compared, want 3", n)
		}
	}
}

// TestDigestRangesReadAsOne: a digest made on workers, whose ranges code
// their own batches and note what headers learns of them, gives back what
// one reader of the log directory gives: epochs that rise, and fall, within
// ranges and between them, above a checkpoint that knows only the first;
// offsets missing between two batches of a range, the only sign of a
// cleaner; damage at the end of one segment, ended by the next segment's
// first range.
func TestDigestRangesReadAsOne(t *testing.T) {
	base := t.TempDir()
	genBase(t, base, gen.Options{Records: 110_000, Keys: 110_000, SegmentBytes: 5 << 20})
	dirs := brokers(t, base, 2)
	bs := batchesOf(t, dirs[0])
	segs := map[string]bool{}
	last := map[string]int{} // each segment's last batch
	for i, b := range bs {
		segs[b.Segment] = true
		last[b.Segment] = i
	}
	if len(segs) < 2 || bs[len(bs)-1].Pos < 4<<20 {
		t.Fatalf("%d segments, the last to byte %d: want two or more of over 4 MiB", len(segs), bs[len(bs)-1].Pos)
	}
	gapAt := len(bs) - 200
	for d, dir := range dirs {
		// Neither a batch's base offset nor its leader epoch is under its
		// checksum: both change in place.
		for i, b := range batchesOf(t, dir) {
			epoch := int32(3 + i/97)
			if i%500 == 250 {
				epoch -= 2
			}
			base := b.Base
			if d == 0 && i >= gapAt {
				base += 3
			}
			f, err := os.OpenFile(b.Segment, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			var hdr [16]byte // base offset, length, epoch
			if _, err := f.ReadAt(hdr[:], b.Pos); err != nil {
				t.Fatal(err)
			}
			binary.BigEndian.PutUint64(hdr[:], uint64(base))
			binary.BigEndian.PutUint32(hdr[12:], uint32(epoch))
			if _, err := f.WriteAt(hdr[:], b.Pos); err != nil {
				t.Fatal(err)
			}
			f.Close()
		}
	}
	damageBatch(t, batchesOf(t, dirs[1])[last[bs[0].Segment]])
	for d, dir := range dirs {
		for _, o := range []replicas.Options{{Workers: 3}, {Workers: 2, AllRecords: true}} {
			if n := sameBack(t, dir, o); n != 1 {
				t.Fatalf("%d partitions compared, want 1", n)
			}
		}
		p, err := open(t, replicas.Options{Workers: 2}, dir)[0].Next()
		if err != nil {
			t.Fatal(err)
		}
		if d == 0 && !p.Compacted || d == 1 && len(p.Damage) != 1 || len(p.Epochs) < 2 {
			t.Fatalf("broker %d: compacted %v, damage %v, %d epochs", d, p.Compacted, p.Damage, len(p.Epochs))
		}
	}
}

// TestDigestRangeWithoutBatches: a range whose first batch does not code
// (damage, zeros from a position the .index names) is read on one
// goroutine from there. It was spliced in as a batch of zeros: the damage
// began at offset 1, the log ended at 1, and where the segment before ended
// within its first block the zero batch went into that frame, past the
// count its digest's reader checks (adversary's findings).
func TestDigestRangeWithoutBatches(t *testing.T) {
	second := func(bs []at) int {
		for i := range bs {
			if bs[i].Segment != bs[0].Segment {
				return i
			}
		}
		t.Fatal("one segment")
		return 0
	}
	for _, c := range []struct {
		name   string
		shape  func(t *testing.T, dir string)
		damage bool
	}{
		{"damaged first batch of a segment", func(t *testing.T, dir string) {
			bs := batchesOf(t, dir)
			damageBatch(t, bs[second(bs)])
		}, true},
		{"damaged first batch after a segment within one block", func(t *testing.T, dir string) {
			bs := batchesOf(t, dir)
			n := second(bs)
			var cut int64
			for _, b := range bs[:n] {
				if b.Pos < 64<<10 {
					cut = b.Pos
				}
			}
			if err := os.Truncate(bs[0].Segment, cut); err != nil {
				t.Fatal(err)
			}
			damageBatch(t, bs[n])
		}, true},
		{"zeros from a position the index names", func(t *testing.T, dir string) {
			seg := batchesOf(t, dir)[0].Segment
			cut := rangeCut(t, seg)
			b, err := os.ReadFile(seg)
			if err != nil || cut == 0 || int64(len(b)) < cut+2<<20 {
				t.Fatalf("want an index position past 2 MiB and 2 MiB after it: %d of %d bytes (%v)", cut, len(b), err)
			}
			clear(b[cut:])
			write(t, seg, b)
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := t.TempDir()
			genBase(t, base, gen.Options{Records: 110_000, Keys: 110_000, SegmentBytes: 5 << 20})
			dir := brokers(t, base, 1)[0]
			c.shape(t, dir)
			sameAtWorkers(t, dir)
			sameBack(t, dir, replicas.Options{Workers: 3})
			p, err := open(t, replicas.Options{}, dir)[0].Next()
			if err != nil {
				t.Fatal(err)
			}
			if damaged := len(p.Damage) > 0; damaged != c.damage || p.LogEndOffset < 30_000 {
				t.Fatalf("damage %+v, log end %d", p.Damage, p.LogEndOffset)
			}
		})
	}
}

// sameAtWorkers requires the digests of logDir on one worker and on three
// to be the same bytes.
func sameAtWorkers(t *testing.T, logDir string) {
	t.Helper()
	one, err := os.ReadFile(digestOf(t, logDir, replicas.Options{Workers: 1}))
	if err != nil {
		t.Fatal(err)
	}
	three, err := os.ReadFile(digestOf(t, logDir, replicas.Options{Workers: 3}))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(one, three) {
		t.Errorf("a digest on 3 workers differs from one on 1: %d bytes against %d", len(three), len(one))
	}
}

// rangeCut is the first position past 2 MiB that seg's .index names: where
// a range of a header reader begins.
func rangeCut(t *testing.T, seg string) int64 {
	t.Helper()
	idx, err := os.ReadFile(strings.TrimSuffix(seg, ".log") + ".index")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+8 <= len(idx); i += 8 {
		if p := int64(binary.BigEndian.Uint32(idx[i+4:])); p >= 2<<20 {
			return p
		}
	}
	return 0
}

// setBase changes a batch's base offset in place: it is not under the
// batch's checksum.
func setBase(t *testing.T, b at, base int64) {
	t.Helper()
	f, err := os.OpenFile(b.Segment, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(binary.BigEndian.AppendUint64(nil, uint64(base)), b.Pos); err != nil {
		t.Fatal(err)
	}
}

// TestBatchOutOfOrderIsDamage: a batch whose offsets go back to or before
// offsets already read is damage of the replica and left out, as salvage
// leaves it out, wherever it lies for the ranges of the workers: at a
// range's start, within one, or read one batch at a time. Such a batch
// set the log's end back to its own (a copy of the first batch appended:
// a log end of 2 for 200 records), and replicas said agree, exit 0. A batch
// whose base offset jumped ahead (outside its checksum: one flipped bit)
// is the one left out, not every batch after it (adversary's finding: the
// log end went to 2^40 and 20,120 batches were damage), whether it was
// read alone or coded on a worker, last or not in its frame and its range.
// The offsets it left out made the replica look compacted.
func TestBatchOutOfOrderIsDamage(t *testing.T) {
	base := t.TempDir()
	genBase(t, base, gen.Options{Records: 30_000, Keys: 30_000, SegmentBytes: 5 << 20})
	// cutAt is the index of the batch at the first range cut.
	cutAt := func(t *testing.T, bs []at) int {
		cut := rangeCut(t, bs[0].Segment)
		i := slices.IndexFunc(bs, func(b at) bool { return b.Segment == bs[0].Segment && b.Pos == cut })
		if i < 1 {
			t.Fatalf("no batch at the range cut %d", cut)
		}
		return i
	}
	within := func(t *testing.T, bs []at) int {
		cut := rangeCut(t, bs[0].Segment)
		return slices.IndexFunc(bs, func(b at) bool { return b.Segment == bs[0].Segment && b.Pos > cut+64<<10 })
	}
	ahead := func(pick func(t *testing.T, bs []at) int, by int64) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			bs := batchesOf(t, dir)
			b := bs[pick(t, bs)]
			setBase(t, b, b.Base+by)
		}
	}
	for _, c := range []struct {
		name  string
		shape func(t *testing.T, dir string)
		msg   string
		more  int // damaged batches besides
	}{
		{"a range's first batch going back", func(t *testing.T, dir string) {
			bs := batchesOf(t, dir)
			i := cutAt(t, bs)
			setBase(t, bs[i], bs[i-1].Base)
		}, "goes back", 0},
		{"a batch going back within a range", func(t *testing.T, dir string) {
			bs := batchesOf(t, dir)
			i := within(t, bs)
			setBase(t, bs[i], bs[i-3].Base)
		}, "goes back", 0},
		{"a copy of the first batch at the end", func(t *testing.T, dir string) {
			first := batchesOf(t, dir)[0]
			b, err := os.ReadFile(first.Segment)
			if err != nil {
				t.Fatal(err)
			}
			appendRaw(t, dir, b[:12+binary.BigEndian.Uint32(b[8:])])
		}, "goes back", 0},
		{"an early batch jumping ahead", ahead(func(*testing.T, []at) int { return 10 }, 1<<40), "jumps ahead", 0},
		{"a batch jumping ahead within a range", ahead(within, 1<<20), "jumps ahead", 0},
		{"a range's first batch jumping ahead", ahead(cutAt, 1<<20), "jumps ahead", 0},
		{"a range's last batch jumping ahead", ahead(func(t *testing.T, bs []at) int { return cutAt(t, bs) - 1 }, 1<<20), "jumps ahead", 0},
		{"a batch of the last segment jumping ahead", ahead(func(_ *testing.T, bs []at) int { return len(bs) - 5 }, 1000), "jumps ahead", 0},
		{"the first batch jumping ahead", ahead(func(*testing.T, []at) int { return 0 }, 1<<40), "jumps ahead", 0},
		{"a batch jumping ahead after damage", func(t *testing.T, dir string) {
			bs := batchesOf(t, dir)
			damageBatch(t, bs[3000])
			setBase(t, bs[3001], bs[3001].Base+1<<40)
		}, "jumps ahead", 1},
		{"a batch jumping ahead before damage", func(t *testing.T, dir string) {
			bs := batchesOf(t, dir)
			setBase(t, bs[3000], bs[3000].Base+1<<40)
			damageBatch(t, bs[3001])
		}, "jumps ahead", 1},
		{"a batch jumping ahead between damage", func(t *testing.T, dir string) {
			bs := batchesOf(t, dir)
			damageBatch(t, bs[2999])
			setBase(t, bs[3000], bs[3000].Base+1<<40)
			damageBatch(t, bs[3001])
		}, "jumps ahead", 2},
	} {
		for _, shift := range []int{18, 9} {
			t.Run(fmt.Sprintf("%s/blocks=%d", c.name, 1<<shift), func(t *testing.T) {
				defer replicas.SetBlockShift(shift)()
				dir := brokers(t, base, 1)[0]
				end := logEnd(t, dir)
				c.shape(t, dir)
				n := len(batchesOf(t, dir))
				sameAtWorkers(t, dir)
				sameBack(t, dir, replicas.Options{Workers: 3})
				sameBack(t, dir, replicas.Options{Workers: 2, AllRecords: true})
				for _, o := range []replicas.Options{{Workers: 3}, {Workers: 1, AllRecords: true}} {
					p, err := open(t, o, dir)[0].Next()
					if err != nil {
						t.Fatal(err)
					}
					gone := 1 + c.more
					said := slices.IndexFunc(p.Damage, func(d replicas.Damage) bool { return strings.Contains(d.Msg, c.msg) })
					if len(p.Damage) != gone || said < 0 || p.LogEndOffset != end || len(p.Batches) != n-gone {
						t.Fatalf("%+v: damage %+v, log end %d (want %d), %d batches (want %d)", o, p.Damage, p.LogEndOffset, end, len(p.Batches), n-gone)
					}
					for i, d := range p.Damage {
						// None runs to the log's end: every shape has good batches after it.
						if d.From >= end || d.To >= end || d.To >= 0 && d.From > d.To || d.From >= 0 && d.To < 0 {
							t.Errorf("%+v: damage %+v: offsets out of the log", o, d)
						}
						// Each unknown offset is named once.
						for _, e := range p.Damage[:i] {
							if d.From >= 0 && e.From >= 0 && d.From <= e.To && e.From <= d.To {
								t.Errorf("%+v: damage %+v and %+v name the same offsets", o, e, d)
							}
						}
					}
					// Neither the offsets it left out nor the damage's are a cleaner's.
					if p.Compacted {
						t.Errorf("%+v: compacted", o)
					}
					if e := p.Epochs; len(e) == 0 || e[len(e)-1].StartOffset >= end {
						t.Errorf("%+v: epochs %+v", o, e)
					}
				}
			})
		}
	}
}

// sameBack requires every partition a digest of logDir, made with o, gives
// back to be the one reading logDir on one goroutine gives, and returns how
// many there were.
func sameBack(t *testing.T, logDir string, o replicas.Options) int {
	t.Helper()
	one := o
	one.Workers = 1
	fromDir := open(t, one, logDir)[0]
	defer fromDir.Close()
	fromDigest, err := replicas.OpenDigest(digestOf(t, logDir, o))
	if err != nil {
		t.Fatal(err)
	}
	defer fromDigest.Close()
	n := 0
	for {
		want, err := fromDir.Next()
		if err != nil {
			t.Fatal(err)
		}
		got, err := fromDigest.Next()
		if err != nil {
			t.Fatal(err)
		}
		if want == nil || got == nil {
			if want != got {
				t.Fatalf("the log directory gives %v, the digest %v", want, got)
			}
			return n
		}
		if !reflect.DeepEqual(want, got) {
			t.Errorf("%s: the digest gives back\n%+v\nwhere the log directory gives\n%+v", want.Topic, got, want)
		}
		n++
	}
}

// TestDigestFramesStayBounded: a batch of more records than a frame holds
// hashes of, and more damaged ranges than a frame holds, are cut into
// frames a reader takes (they were one frame each, over the bound, which
// the reader refused as damaged though logtool had written it).
func TestDigestFramesStayBounded(t *testing.T) {
	defer replicas.SetMaxFrame(256 << 10)()
	t.Run("a batch of 30,000 records", func(t *testing.T) {
		base := t.TempDir()
		genBase(t, base, gen.Options{Records: 20})
		part := filepath.Join(base, topic+"-0")
		bs := testutil.PartitionBatches(t, part)
		next := bs[len(bs)-1].Last + 1
		recs := make([]logfmt.Record, 30_000)
		for i := range recs {
			recs[i] = logfmt.Record{Offset: next + int64(i), Timestamp: 1_700_000_000_000, Key: []byte{byte(i)}}
		}
		o := logfmt.DefaultBatchOptions(next)
		o.PartitionLeaderEpoch, o.Compression = 0, codec.Zstd
		buf, err := logfmt.AppendBatch(nil, o, recs)
		if err != nil {
			t.Fatal(err)
		}
		testutil.AppendLog(t, part, buf)
		sameBack(t, brokers(t, base, 1)[0], replicas.Options{AllRecords: true})
	})
	t.Run("3,000 damaged ranges", func(t *testing.T) {
		base := t.TempDir()
		genBase(t, base, gen.Options{Records: 6000, BatchRecords: 1, SegmentBytes: 1 << 30})
		dir := brokers(t, base, 1)[0]
		for i, b := range batchesOf(t, dir) {
			if i%2 == 1 {
				damageBatch(t, b)
			}
		}
		sameBack(t, dir, replicas.Options{})
	})
}
