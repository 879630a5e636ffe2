package logseg_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/logtool/logtool/logfmt/logseg"

	"github.com/logtool/logtool/index"
	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/internal/testkit/indextest"
	"github.com/logtool/logtool/internal/testkit/kafkasamples"
	"github.com/logtool/logtool/internal/testkit/kafkatest"
	"github.com/logtool/logtool/internal/testkit/testutil"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/checkpoint"
	"github.com/logtool/logtool/logfmt/codec"
	"github.com/logtool/logtool/logfmt/layout"
)

// Every rule has a test on partitions built here by internal/gen and one on
// real broker data, held to franz-go's decoding of the same bytes.

var samples = kafkasamples.Dir("logdirs")

// generated writes a log directory with one partition, t-0, of several
// segments, and returns the partition's directory.
func generated(t *testing.T, o gen.Options) string {
	t.Helper()
	o.Out, o.Topics, o.Seed = t.TempDir(), []string{"t"}, 7
	if o.Records == 0 {
		o.Records = 400
	}
	if o.SegmentBytes == 0 {
		o.SegmentBytes = 8 << 10
	}
	if _, err := gen.Generate(o); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(o.Out, "t-0")
}

func sampleDirs(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(samples, "*", "*-[0-9]*"))
	if err != nil || len(dirs) == 0 {
		kafkasamples.Skip(t, fmt.Errorf("no partition directories in %s (%v)", samples, err))
	}
	return dirs
}

func open(t *testing.T, dir string) []logseg.Segment {
	t.Helper()
	p, err := layout.ReadPartition(dir)
	if err != nil {
		t.Fatal(err)
	}
	segs, err := logseg.OpenPartition(p)
	if err != nil {
		t.Fatal(err)
	}
	return segs
}

// decoded is what franz-go's kmsg reads in a segment.
type decoded struct {
	batches []kafkatest.Batch
	maxTS   []int64 // each batch's largest record timestamp
}

func decode(t *testing.T, path string) decoded {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d decoded
	entries, _ := kafkatest.Entries(data)
	for _, e := range entries {
		b, err := kafkatest.Decode(e)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		ts := int64(-1)
		for _, r := range b.Records {
			ts = max(ts, r.Timestamp)
		}
		d.batches, d.maxTS = append(d.batches, b), append(d.maxTS, ts)
	}
	return d
}

func (d decoded) next(base int64) int64 {
	if len(d.batches) == 0 {
		return base
	}
	return d.batches[len(d.batches)-1].Last + 1
}

func (d decoded) largest() int64 {
	ts := int64(-1)
	for _, m := range d.maxTS {
		ts = max(ts, m)
	}
	return ts
}

func remove(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
}

func setMtime(t *testing.T, path string, ms int64) {
	t.Helper()
	if err := os.Chtimes(path, time.UnixMilli(ms), time.UnixMilli(ms)); err != nil {
		t.Fatal(err)
	}
}

// copied copies a real partition into a temporary log directory, so that
// a test may change it.
func copied(t *testing.T, dir string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(dir))
	testutil.CopyTree(t, dir, dst)
	return dst
}

func TestLoadRules(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, s layout.Segment)
		want   logseg.Load
		why    string
	}{
		{"as a broker leaves it", func(*testing.T, layout.Segment) {}, logseg.Indexed, ""},
		{"no .index", func(t *testing.T, s layout.Segment) { remove(t, s.Index) }, logseg.Recovered, "no offset index"},
		{"no .timeindex", func(t *testing.T, s layout.Segment) { remove(t, s.TimeIndex) }, logseg.TimeIndexCreated, ""},
		{"neither", func(t *testing.T, s layout.Segment) { remove(t, s.Index, s.TimeIndex) }, logseg.Recovered, "no offset index"},
		{"corrupt .txnindex", func(t *testing.T, s layout.Segment) {
			// A marker below the segment fails TransactionIndex.sanityCheck.
			b := index.AppendAbortedTxn(nil, index.AbortedTxn{ProducerID: 1, FirstOffset: 0, LastOffset: s.Base - 1, LastStableOffset: s.Base - 1})
			if err := os.WriteFile(strings.TrimSuffix(s.Log, ".log")+".txnindex", b, 0o644); err != nil {
				t.Fatal(err)
			}
		}, logseg.Recovered, "below the segment's base offset"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := generated(t, gen.Options{Magic: 2})
			p, err := layout.ReadPartition(dir)
			if err != nil {
				t.Fatal(err)
			}
			tt.change(t, p.Segments[1])
			segs := open(t, dir)
			for i, s := range segs {
				want, why := logseg.Indexed, ""
				if i == 1 {
					want, why = tt.want, tt.why
				}
				if s.Load != want || !strings.Contains(s.Why, why) || (why == "") != (s.Why == "") {
					t.Errorf("segment %d: %v (%q), want %v (%q)", s.Base, s.Load, s.Why, want, why)
				}
			}
		})
	}
	t.Run("index files without a .log", func(t *testing.T) {
		dir := generated(t, gen.Options{Magic: 2})
		p, _ := layout.ReadPartition(dir)
		remove(t, p.Segments[0].Log)
		if segs := open(t, dir); len(segs) != len(p.Segments)-1 || segs[0].Base != p.Segments[1].Base {
			t.Errorf("%d segments from %d, the first at %d; want the orphaned indexes left out", len(segs), segs[0].Base, p.Segments[1].Base)
		}
	})
}

func TestLoadRulesRealBroker(t *testing.T) {
	sampleDirs(t)
	for _, tc := range []struct {
		dir  string
		want []logseg.Load
	}{
		{"volodymyrzee_kafka-2.x-zk/__consumer_offsets-12", []logseg.Load{logseg.Indexed}},
		{"volodymyrzee_kafka-2.x-zk/first_topic-0", []logseg.Load{logseg.Indexed}},
		// Magic-1 data without index files, and an active segment copied
		// without its (preallocated) indexes: recovered.
		{"xpxwo100_kafka-0.10.1.0-magic1/TEST-TOPIC-0", []logseg.Load{logseg.Recovered}},
		{"yashasvi960_kafka-4.1-kraft-streams-config/vehicle.avg.speed-0", []logseg.Load{logseg.Recovered}},
		// The index files of a log that is not there are no segment.
		{"itumelengmogase_kraft-ksqldb-txn/__cluster_metadata-0", nil},
	} {
		var got []logseg.Load
		for _, s := range open(t, filepath.Join(samples, tc.dir)) {
			got = append(got, s.Load)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.dir, got, tc.want)
		}
	}
	dir := copied(t, filepath.Join(samples, "volodymyrzee_kafka-2.x-zk/__consumer_offsets-12"))
	remove(t, filepath.Join(dir, "00000000000000000000.timeindex"))
	if s := open(t, dir)[0]; s.Load != logseg.TimeIndexCreated {
		t.Errorf("without its .timeindex: %v, want %v", s.Load, logseg.TimeIndexCreated)
	}
}

func TestLargestTimestamp(t *testing.T) {
	const mtime = 1_500_000_000_123
	tests := []struct {
		name   string
		magic  int8
		change func(t *testing.T, s layout.Segment)
		want   func(t *testing.T, d decoded, s layout.Segment) int64
		src    logseg.Source
	}{
		{"the time index's last entry", 2, func(*testing.T, layout.Segment) {}, largestOf, logseg.FromTimeIndex},
		// Kafka trusts the index it loaded, even one that says less than
		// the records.
		{"a time index that stops early", 2, func(t *testing.T, s layout.Segment) { truncate(t, s.TimeIndex, index.TimeEntrySize) },
			func(t *testing.T, d decoded, s layout.Segment) int64 {
				if e := firstTimeEntry(t, s); e.Timestamp < d.largest() {
					return e.Timestamp
				}
				t.Fatal("the test needs a first time index entry below the largest timestamp")
				return 0
			}, logseg.FromTimeIndex},
		{"no .timeindex: the modification time", 2, func(t *testing.T, s layout.Segment) { remove(t, s.TimeIndex) }, mtimeOf, logseg.FromMtime},
		{"no .index: recovered from the records", 2, func(t *testing.T, s layout.Segment) { remove(t, s.Index) }, largestOf, logseg.FromRecords},
		{"no index files", 2, func(t *testing.T, s layout.Segment) { remove(t, s.Index, s.TimeIndex) }, largestOf, logseg.FromRecords},
		{"recovered without timestamps", 0, func(t *testing.T, s layout.Segment) { remove(t, s.Index, s.TimeIndex) }, mtimeOf, logseg.FromMtime},
		{"magic 0: an empty time index", 0, func(*testing.T, layout.Segment) {}, mtimeOf, logseg.FromMtime},
		// An index as a broker that died leaves it: preallocated, with
		// zeros after the entries. recoverLog recovers the segment.
		{"a preallocated time index", 2, func(t *testing.T, s layout.Segment) {
			truncate(t, s.TimeIndex, index.TimeEntrySize)
			testutil.AppendBytes(t, s.TimeIndex, make([]byte, 100*index.TimeEntrySize))
		}, largestOf, logseg.FromRecords},
		{"a damaged time index", 2, func(t *testing.T, s layout.Segment) {
			e := firstTimeEntry(t, s)
			b, _ := index.AppendTimeEntry(nil, s.Base, index.TimeEntry{Timestamp: e.Timestamp - 1, Offset: e.Offset})
			testutil.AppendBytes(t, s.TimeIndex, b)
		}, largestOf, logseg.FromRecords},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := generated(t, gen.Options{Magic: tt.magic})
			p, _ := layout.ReadPartition(dir)
			s := p.Segments[1]
			tt.change(t, s)
			setMtime(t, s.Log, mtime)
			seg := open(t, dir)[1]
			ts, src, err := seg.LargestTimestamp()
			if want := tt.want(t, decode(t, s.Log), s); err != nil || ts != want || src != tt.src {
				t.Errorf("%d from %s (%v), want %d from %s", ts, src, err, want, tt.src)
			}
		})
	}
}

func largestOf(_ *testing.T, d decoded, _ layout.Segment) int64 { return d.largest() }
func mtimeOf(*testing.T, decoded, layout.Segment) int64         { return 1_500_000_000_123 }

func firstTimeEntry(t *testing.T, s layout.Segment) index.TimeEntry {
	t.Helper()
	b, err := os.ReadFile(s.TimeIndex)
	if err != nil {
		t.Fatal(err)
	}
	ix, _ := indextest.ParseTimeIndex(b, s.Base, s.TimeIndex)
	if len(ix.Entries) == 0 {
		t.Fatalf("%s has no entries", s.TimeIndex)
	}
	return ix.Entries[0]
}

func truncate(t *testing.T, path string, size int64) {
	t.Helper()
	if err := os.Truncate(path, size); err != nil {
		t.Fatal(err)
	}
}

func TestLargestTimestampRealBroker(t *testing.T) {
	for _, dir := range sampleDirs(t) {
		for _, s := range open(t, dir) {
			d := decode(t, s.Log)
			ts, src, err := s.LargestTimestamp()
			want, wantSrc := d.largest(), logseg.FromTimeIndex
			switch {
			case s.Load == logseg.Recovered:
				wantSrc = logseg.FromRecords
			case s.TimeIndexBytes == 0:
				want = -1 // an empty time index
			}
			if want < 0 {
				want, wantSrc = s.LastModified, logseg.FromMtime
			}
			if err != nil || ts != want || src != wantSrc {
				t.Errorf("%s: %d from %s (%v), want %d from %s", s.Log, ts, src, err, want, wantSrc)
			}
		}
	}
	// Without its time index a loaded segment's age is its file's.
	dir := copied(t, filepath.Join(samples, "volodymyrzee_kafka-2.x-zk/first_topic-0"))
	remove(t, filepath.Join(dir, "00000000000000000000.timeindex"))
	s := open(t, dir)[0]
	if ts, src, err := s.LargestTimestamp(); err != nil || ts != s.LastModified || src != logseg.FromMtime {
		t.Errorf("without the time index: %d from %s (%v), want the mtime %d", ts, src, err, s.LastModified)
	}
}

func TestFirstBatchTimestamp(t *testing.T) {
	for _, magic := range []int8{0, 1, 2} {
		dir := generated(t, gen.Options{Magic: magic})
		for _, s := range open(t, dir) {
			d := decode(t, s.Log)
			want := d.maxTS[0]
			if want < 0 {
				want = math.MaxInt64
			}
			if ts, err := s.FirstBatchTimestamp(); err != nil || ts != want {
				t.Errorf("magic %d, %s: %d (%v), want %d", magic, s.Log, ts, err, want)
			}
		}
	}
	empty := logseg.Segment{Segment: layout.Segment{Log: filepath.Join(t.TempDir(), "00000000000000000000.log")}}
	if err := os.WriteFile(empty.Log, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if ts, err := empty.FirstBatchTimestamp(); err != nil || ts != math.MaxInt64 {
		t.Errorf("empty segment: %d (%v), want math.MaxInt64", ts, err)
	}
}

func TestFirstBatchTimestampRealBroker(t *testing.T) {
	for _, dir := range sampleDirs(t) {
		for _, s := range open(t, dir) {
			d := decode(t, s.Log)
			want := int64(math.MaxInt64)
			if len(d.maxTS) > 0 && d.maxTS[0] >= 0 {
				want = d.maxTS[0]
			}
			if ts, err := s.FirstBatchTimestamp(); err != nil || ts != want {
				t.Errorf("%s: %d (%v), want %d", s.Log, ts, err, want)
			}
		}
	}
}

func TestNextOffset(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, s layout.Segment)
		err    string
	}{
		{"from the last index entry", func(*testing.T, layout.Segment) {}, ""},
		{"no .index", func(t *testing.T, s layout.Segment) { remove(t, s.Index) }, ""},
		// A last entry that points into a batch is not used.
		{"a last entry off its batch", func(t *testing.T, s layout.Segment) {
			b, _ := os.ReadFile(s.Index)
			pos := len(b) - index.OffsetEntrySize + 4
			binary.BigEndian.PutUint32(b[pos:], binary.BigEndian.Uint32(b[pos:])+1)
			if err := os.WriteFile(s.Index, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}, ""},
		{"a preallocated .log", func(t *testing.T, s layout.Segment) { testutil.AppendBytes(t, s.Log, make([]byte, 1000)) }, ""},
		{"a torn last batch", func(t *testing.T, s layout.Segment) {
			fi, _ := os.Stat(s.Log)
			truncate(t, s.Log, fi.Size()-3)
		}, "torn entry"},
		{"a bad checksum", func(t *testing.T, s layout.Segment) {
			fi, _ := os.Stat(s.Log)
			testutil.FlipByte(t, s.Log, int(fi.Size())-1)
		}, "checksum"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := generated(t, gen.Options{Magic: 2, Records: 1000, SegmentBytes: 64 << 10})
			p, _ := layout.ReadPartition(dir)
			s := p.Segments[1]
			if fi, _ := os.Stat(s.Index); fi.Size() == 0 {
				t.Fatal("the test needs an offset index with entries")
			}
			want := decode(t, s.Log).next(s.Base)
			tt.change(t, s)
			got, err := open(t, dir)[1].NextOffset()
			if tt.err != "" {
				if _, ok := logfmt.AsCorrupt(err); !ok || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("%d, %v; want a CorruptError saying %q", got, err, tt.err)
				}
				return
			}
			if err != nil || got != want || got != p.Segments[2].Base {
				t.Errorf("%d (%v), want %d, the next segment's base", got, err, want)
			}
		})
	}
}

func TestNextOffsetRealBroker(t *testing.T) {
	for _, dir := range sampleDirs(t) {
		for _, s := range open(t, dir) {
			if got, err := s.NextOffset(); err != nil || got != decode(t, s.Log).next(s.Base) {
				t.Errorf("%s: %d (%v), want %d", s.Log, got, err, decode(t, s.Log).next(s.Base))
			}
		}
	}
	// A broker that shut down cleanly checkpointed its log end offsets as
	// high watermarks and recovery points.
	dir := filepath.Join(samples, "volodymyrzee_kafka-2.x-zk")
	parts, _ := filepath.Glob(filepath.Join(dir, "*-[0-9]*"))
	for _, pd := range parts {
		p, _ := layout.ReadPartition(pd)
		segs := open(t, pd)
		leo, err := segs[len(segs)-1].NextOffset()
		for _, name := range []string{layout.ReplicationOffsetCheckpointFile, layout.RecoveryPointCheckpointFile} {
			if off, ok, cerr := logseg.RootOffset(p, name); err != nil || cerr != nil || !ok || off != leo {
				t.Errorf("%s: %s has %d (%v %v), log end offset %d (%v)", pd, name, off, ok, cerr, leo, err)
			}
		}
	}
}

// checkFloors holds OffsetFloor and TimeFloor to a search of the parsed
// index files, for every offset and timestamp of the segment and one past.
func checkFloors(t *testing.T, s logseg.Segment) {
	t.Helper()
	d := decode(t, s.Log)
	ob, _ := os.ReadFile(s.Index)
	tb, _ := os.ReadFile(s.TimeIndex)
	oix, _ := indextest.ParseOffsetIndex(ob, s.Base, s.Index)
	tix, _ := indextest.ParseTimeIndex(tb, s.Base, s.TimeIndex)
	for _, b := range d.batches {
		for o := b.First; o <= b.Last+1; o++ {
			want, wantOK := oix.Lookup(o)
			e, ok, why := s.OffsetFloor(o)
			if why != "" || e != want || ok != wantOK {
				t.Fatalf("%s: offset floor of %d: %+v %v %q, want %+v %v", s.Index, o, e, ok, why, want, wantOK)
			}
		}
		for _, r := range b.Records {
			for _, ts := range []int64{r.Timestamp - 1, r.Timestamp, r.Timestamp + 1} {
				want, wantOK := tix.Lookup(ts)
				if e, ok, why := s.TimeFloor(ts); why != "" || e != want || ok != wantOK {
					t.Fatalf("%s: time floor of %d: %+v %v %q, want %+v %v", s.TimeIndex, ts, e, ok, why, want, wantOK)
				}
			}
		}
	}
}

func TestFloors(t *testing.T) {
	dir := generated(t, gen.Options{Magic: 2, Records: 1000, SegmentBytes: 64 << 10})
	segs := open(t, dir)
	for _, s := range segs {
		checkFloors(t, s)
	}
	s := segs[1]
	e, ok, _ := s.OffsetFloor(math.MaxInt64)
	if !ok {
		t.Fatal("the test needs an offset index with entries")
	}
	for _, tc := range []struct {
		name  string
		entry index.OffsetEntry
		why   string
	}{
		{"inside a batch", index.OffsetEntry{Offset: e.Offset, Position: e.Position + 1}, "where no"},
		{"past the data", index.OffsetEntry{Offset: e.Offset, Position: int32(s.Size)}, "past the data"},
		{"at a batch starting later", index.OffsetEntry{Offset: s.Base, Position: e.Position}, "where the batch starts at offset"},
	} {
		b, _ := index.AppendOffsetEntry(nil, s.Base, tc.entry)
		if err := os.WriteFile(s.Index, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if got, ok, why := s.OffsetFloor(tc.entry.Offset); ok || !strings.Contains(why, tc.why) {
			t.Errorf("%s: %+v %v %q, want no entry and why saying %q", tc.name, got, ok, why, tc.why)
		}
	}
	remove(t, s.Index, s.TimeIndex)
	if _, ok, why := s.OffsetFloor(s.Base); ok || why == "" {
		t.Errorf("a removed .index gave an entry or no reason (%q)", why)
	}
	s.Index, s.TimeIndex = "", ""
	if _, ok, why := s.OffsetFloor(s.Base); ok || why != "no .index" {
		t.Errorf("no .index: %v %q", ok, why)
	}
	if _, ok, why := s.TimeFloor(math.MaxInt64); ok || why != "no .timeindex" {
		t.Errorf("no .timeindex: %v %q", ok, why)
	}
}

func TestFloorsRealBroker(t *testing.T) {
	n := 0
	for _, dir := range sampleDirs(t) {
		for _, s := range open(t, dir) {
			if s.Load == logseg.Indexed && s.OffsetIndexBytes > 0 {
				checkFloors(t, s)
				n++
			}
		}
	}
	if n < 5 {
		t.Errorf("%d segments with offset index entries; the samples have more", n)
	}
}

func TestRootOffset(t *testing.T) {
	dir := generated(t, gen.Options{Magic: 2})
	logDir := filepath.Dir(dir)
	write := func(name string, entries ...checkpoint.OffsetEntry) {
		if err := os.WriteFile(filepath.Join(logDir, name), checkpoint.AppendOffsets(nil, entries), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(layout.LogStartOffsetCheckpointFile, checkpoint.OffsetEntry{Topic: "u", Partition: 0, Offset: 5}, checkpoint.OffsetEntry{Topic: "t", Partition: 0, Offset: 42})
	p, _ := layout.ReadPartition(dir)
	if off, err := logseg.LogStartOffset(p); err != nil || off != 42 {
		t.Errorf("log start %d (%v), want 42", off, err)
	}
	write(layout.LogStartOffsetCheckpointFile, checkpoint.OffsetEntry{Topic: "u", Partition: 0, Offset: 5})
	if off, ok, err := logseg.RootOffset(p, layout.LogStartOffsetCheckpointFile); err != nil || ok || off != 0 {
		t.Errorf("no entry: %d %v (%v)", off, ok, err)
	}
	if err := os.WriteFile(filepath.Join(logDir, layout.LogStartOffsetCheckpointFile), []byte("0\n2\nt 0 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := logseg.RootOffset(p, layout.LogStartOffsetCheckpointFile); err == nil || ok {
		t.Errorf("a malformed checkpoint gave %v, %v", ok, err)
	}
	if _, ok, err := logseg.RootOffset(p, "absent-checkpoint"); err != nil || ok {
		t.Errorf("an absent checkpoint gave %v, %v", ok, err)
	}
	renamed := filepath.Join(logDir, "copy")
	if err := os.Rename(dir, renamed); err != nil {
		t.Fatal(err)
	}
	p, _ = layout.ReadPartition(renamed)
	if _, ok, err := logseg.RootOffset(p, layout.ReplicationOffsetCheckpointFile); err != nil || ok {
		t.Errorf("a directory not named for its partition gave %v, %v", ok, err)
	}
}

// BenchmarkRecordsMaxTimestamp is the scan of a segment that has to be
// recovered for its timestamps: no index files, or magic 0.
func BenchmarkRecordsMaxTimestamp(b *testing.B) {
	o := gen.Options{Out: b.TempDir(), Topics: []string{"t"}, Magic: 2, Records: 60000, Keys: 100, SegmentBytes: 1 << 30, Compression: codec.LZ4, Seed: 1}
	if _, err := gen.Generate(o); err != nil {
		b.Fatal(err)
	}
	p, err := layout.ReadPartition(filepath.Join(o.Out, "t-0"))
	if err != nil {
		b.Fatal(err)
	}
	s, err := logseg.Open(p.Segments[0])
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(s.Size)
	for b.Loop() {
		if _, err := s.RecordsMaxTimestamp(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestIndexPositions: the positions of an .index as far as they rise, the
// preallocated zeros after them not read as entries, and nothing for a
// missing file.
func TestIndexPositions(t *testing.T) {
	dir := t.TempDir()
	var b []byte
	for i, p := range []uint32{4100, 8300, 70000, 70000, 90000} {
		b = binary.BigEndian.AppendUint32(b, uint32(i*10))
		b = binary.BigEndian.AppendUint32(b, p)
	}
	b = append(b, make([]byte, 3*64<<10+3)...) // zeros past a read, and a partial entry
	path := filepath.Join(dir, "00000000000000000000.index")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	got := slices.Collect(logseg.IndexPositions(layout.Segment{Index: path}))
	if want := []int64{4100, 8300, 70000}; !slices.Equal(got, want) {
		t.Errorf("positions %v, want %v", got, want)
	}
	if got := slices.Collect(logseg.IndexPositions(layout.Segment{Index: filepath.Join(dir, "missing.index")})); got != nil {
		t.Errorf("a missing index yields %v", got)
	}
}
