package upgrade

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/logtool/logtool/index"
	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/internal/target"
	"github.com/logtool/logtool/internal/testkit/codectest"
	"github.com/logtool/logtool/internal/testkit/testutil"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/codec"
	"github.com/logtool/logtool/logfmt/layout"
)

// upgradeTargets resolves paths as logtool upgrade does.
func upgradeTargets(t testing.TB, paths ...string) *target.Set {
	t.Helper()
	set, err := target.Resolve(paths, target.Options{Command: "upgrade", Takes: target.Partitions | target.LogDirs})
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// upgradeRecord is what a reader sees of one record: what upgrade must keep.
type upgradeRecord struct {
	Offset    int64
	Timestamp int64
	Type      logfmt.TimestampType
	Magic     int8
	Key       string
	Value     string
	NullKey   bool
	NullValue bool
	Headers   int
}

// upgradeReadPartition deep-reads every segment of a partition with
// logfmt's own reader, checking every checksum on the way.
func upgradeReadPartition(t *testing.T, dir string) []upgradeRecord {
	t.Helper()
	p, err := layout.ReadPartition(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []upgradeRecord
	for _, s := range p.Segments {
		if s.Log != "" {
			out = append(out, upgradeReadSegment(t, s.Log)...)
		}
	}
	return out
}

func upgradeReadSegment(t *testing.T, path string) []upgradeRecord {
	t.Helper()
	seg, err := logfmt.OpenSegment(path)
	if err != nil {
		t.Fatal(err)
	}
	defer seg.Close()
	var out []upgradeRecord
	var it logfmt.RecordIter
	for seg.Next() {
		b := seg.Batch()
		if err := b.Validate(); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if err := it.Reset(b); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for it.Next() {
			r := it.Record()
			if !r.CRCValid {
				t.Fatalf("%s: record %d: bad inner checksum", path, r.Offset)
			}
			out = append(out, upgradeRecord{Offset: r.Offset, Timestamp: r.Timestamp, Type: r.TimestampType, Magic: b.Magic(),
				Key: string(r.Key), Value: string(r.Value), NullKey: r.Key == nil, NullValue: r.Value == nil, Headers: len(r.Headers)})
		}
		if err := it.Err(); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	if err := seg.Err(); err != nil || seg.End() != logfmt.EndClean {
		t.Fatalf("%s: %v, end %v", path, err, seg.End())
	}
	return out
}

// upgradeExpect is what the records must read as after upgrading with the
// given rules: magic-0 records take the run's timestamp, others keep theirs.
func upgradeExpect(before []upgradeRecord, toMagic int8, typ logfmt.TimestampType, appendTime func(offset int64) int64) []upgradeRecord {
	out := slices.Clone(before)
	for i := range out {
		r := &out[i]
		if r.Magic < toMagic {
			if r.Type == logfmt.NoTimestampType {
				r.Timestamp, r.Type = logfmt.NoTimestamp, logfmt.CreateTime
				if typ == logfmt.LogAppendTime {
					r.Timestamp, r.Type = appendTime(r.Offset), logfmt.LogAppendTime
				}
			}
			r.Magic = toMagic
		}
	}
	return out
}

// upgradeSnapshot maps every file under dir (relative path) to its content
// and modification time.
func upgradeSnapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		m[rel] = fmt.Sprintf("%s@%d", b, fi.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func upgradeSameSnapshot(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	for name, w := range want {
		g, ok := got[name]
		switch {
		case !ok:
			t.Errorf("%s: %s is gone", what, name)
		case g != w:
			t.Errorf("%s: %s changed", what, name)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s: %s appeared", what, name)
		}
	}
}

// upgradeGen generates a one-partition log directory and returns it with
// the partition directory.
func upgradeGen(t *testing.T, o gen.Options) (logDir, partDir string) {
	t.Helper()
	if o.Out == "" {
		o.Out = t.TempDir()
	}
	if len(o.Topics) == 0 {
		o.Topics = []string{"legacy"}
	}
	if o.SegmentBytes == 0 {
		o.SegmentBytes = 10 << 10
	}
	if o.Records == 0 {
		o.Records = 1000
	}
	if o.ValueBytes == 0 {
		o.ValueBytes = 60
	}
	if o.Keys == 0 {
		o.Keys = 50
	}
	o.Seed = 3
	parts, err := gen.Generate(o)
	if err != nil {
		t.Fatal(err)
	}
	return o.Out, parts[0].Dir
}

func upgradeCodecs(magic int8) []codec.Type {
	cs := []codec.Type{codec.None, codec.Gzip, codec.Snappy, codec.LZ4}
	if magic == 2 {
		cs = append(cs, codec.Zstd)
	}
	return cs
}

// TestUpgradeFixtures converts generated partitions of every source magic
// and codec to both targets under both timestamp types, in place, and
// checks the records, the indexes, the files left alone and a second run.
func TestUpgradeFixtures(t *testing.T) {
	t.Parallel()
	for _, from := range []int8{0, 1} {
		for _, c := range upgradeCodecs(from) {
			for _, to := range []int8{1, 2} {
				for _, typ := range []logfmt.TimestampType{logfmt.CreateTime, logfmt.LogAppendTime} {
					name := fmt.Sprintf("v%d-%s-to-v%d-%v", from, c, to, typ)
					t.Run(name, func(t *testing.T) {
						t.Parallel()
						upgradeCheckFixture(t, from, c, to, typ)
					})
				}
			}
		}
	}
}

func upgradeCheckFixture(t *testing.T, from int8, c codec.Type, to int8, typ logfmt.TimestampType) {
	logDir, dir := upgradeGen(t, gen.Options{Magic: from, Compression: c, TombstoneRatio: 0.1})
	before := upgradeReadPartition(t, dir)
	snap := upgradeSnapshot(t, dir)
	p, err := layout.ReadPartition(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Segments) < 2 {
		t.Fatalf("fixture has %d segments; want several", len(p.Segments))
	}
	mtimes := map[int64]int64{}
	segOf := func(offset int64) int64 {
		base := p.Segments[0].Base
		for _, s := range p.Segments {
			if s.Base <= offset {
				base = s.Base
			}
		}
		return base
	}
	for _, s := range p.Segments {
		fi, err := os.Stat(s.Log)
		if err != nil {
			t.Fatal(err)
		}
		mtimes[s.Base] = fi.ModTime().UnixMilli()
	}

	rep, err := Run(Options{Targets: upgradeTargets(t, logDir), ToMagic: to, TimestampType: typ, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	after := upgradeReadPartition(t, dir)
	want := upgradeExpect(before, to, typ, func(off int64) int64 { return mtimes[segOf(off)] })
	if !slices.Equal(after, want) {
		t.Fatalf("records after upgrade differ:\n got %v\nwant %v", upgradeFirstDiff(after, want), upgradeFirstDiff(want, after))
	}
	if len(rep.Partitions) != 1 {
		t.Fatalf("report has %d partitions", len(rep.Partitions))
	}
	pr := rep.Partitions[0]
	if from >= to {
		if pr.SegmentsRewritten != 0 || pr.MessagesConverted != 0 {
			t.Fatalf("nothing to do, yet %+v", pr)
		}
		upgradeSameSnapshot(t, "already at target", upgradeSnapshot(t, dir), snap)
		return
	}
	if pr.SegmentsRewritten != len(p.Segments) || pr.MessagesConverted != int64(len(before)) {
		t.Fatalf("report: %d of %d segments, %d of %d messages", pr.SegmentsRewritten, len(p.Segments), pr.MessagesConverted, len(before))
	}
	// Everything but the segments is untouched; the segments keep their
	// modification times and get the indexes recovery would build.
	now := upgradeSnapshot(t, dir)
	for name, old := range snap {
		if strings.HasSuffix(name, ".log") || strings.HasSuffix(name, "index") {
			continue
		}
		if now[name] != old {
			t.Errorf("%s changed", name)
		}
	}
	for name := range now {
		if _, ok := snap[name]; !ok {
			t.Errorf("%s appeared", name)
		}
	}
	var bytesAfter int64
	for _, s := range p.Segments {
		fi, err := os.Stat(s.Log)
		if err != nil {
			t.Fatal(err)
		}
		bytesAfter += fi.Size()
		if fi.ModTime().UnixMilli() != mtimes[s.Base] {
			t.Errorf("%s: modification time not kept", s.Log)
		}
		upgradeCheckIndexes(t, s)
		upgradeCheckIndependently(t, s.Log, to)
	}
	if pr.BytesAfter != bytesAfter {
		t.Errorf("report says %d bytes after, the files hold %d", pr.BytesAfter, bytesAfter)
	}
	// A second run finds nothing to do.
	again := upgradeSnapshot(t, dir)
	rep, err = Run(Options{Targets: upgradeTargets(t, dir), ToMagic: to, TimestampType: typ})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Partitions[0].SegmentsRewritten != 0 {
		t.Fatalf("second run rewrote %d segments", rep.Partitions[0].SegmentsRewritten)
	}
	upgradeSameSnapshot(t, "second run", upgradeSnapshot(t, dir), again)
}

func upgradeFirstDiff(a, b []upgradeRecord) string {
	for i := range a {
		if i >= len(b) || a[i] != b[i] {
			return fmt.Sprintf("record %d of %d: %+v", i, len(a), a[i])
		}
	}
	return fmt.Sprintf("%d records", len(a))
}

// upgradeCheckIndexes compares a segment's .index and .timeindex with what
// testutil.RebuildSegment (LogSegment.recover's rule) builds from its .log.
func upgradeCheckIndexes(t *testing.T, s layout.Segment) {
	t.Helper()
	r, err := testutil.RebuildSegment(s.Log, s.Base, index.DefaultIntervalBytes, nil)
	if err != nil || r.Stop != nil {
		t.Fatalf("%s: %v %v", s.Log, err, r.Stop)
	}
	ib, _ := r.OffsetIndexBytes()
	tb, _ := r.TimeIndexBytes()
	for path, want := range map[string][]byte{s.Index: ib, s.TimeIndex: tb} {
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: %d bytes, recovery would write %d", path, len(got), len(want))
		}
	}
}

// upgradeCheckIndependently parses every entry of a rewritten segment with
// franz-go's kmsg and the standard gzip and pierrec lz4 readers, an
// implementation of the formats that shares nothing with logfmt. pierrec
// checks the lz4 header checksum, which a magic-1 frame must get right.
func upgradeCheckIndependently(t *testing.T, path string, to int8) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for len(data) > 0 {
		size := int(int32(uint32(data[8])<<24|uint32(data[9])<<16|uint32(data[10])<<8|uint32(data[11]))) + 12
		entry := data[:size]
		data = data[size:]
		if int8(entry[16]) < to {
			t.Fatalf("%s: entry of magic %d", path, entry[16])
		}
		if entry[16] == 2 {
			var kb kmsg.RecordBatch
			if err := kb.ReadFrom(entry); err != nil {
				t.Fatal(err)
			}
			if uint32(kb.CRC) != crc32.Checksum(entry[21:], crc32.MakeTable(crc32.Castagnoli)) || kb.ProducerID != -1 || kb.PartitionLeaderEpoch != -1 {
				t.Fatalf("%s: batch %+v", path, kb)
			}
			upgradeIndependentDecompress(t, codec.Type(kb.Attributes&7), kb.Records)
			continue
		}
		var m kmsg.MessageV1
		if err := m.ReadFrom(entry); err != nil {
			t.Fatal(err)
		}
		if uint32(m.CRC) != crc32.ChecksumIEEE(entry[16:]) {
			t.Fatalf("%s: message at offset %d: bad checksum", path, m.Offset)
		}
		if c := codec.Type(m.Attributes & 7); c != codec.None {
			inner := upgradeIndependentDecompress(t, c, m.Value)
			var last kmsg.MessageV1
			for len(inner) > 0 {
				n := int(int32(uint32(inner[8])<<24|uint32(inner[9])<<16|uint32(inner[10])<<8|uint32(inner[11]))) + 12
				if err := last.ReadFrom(inner[:n]); err != nil {
					t.Fatal(err)
				}
				inner = inner[n:]
			}
			if last.Offset > m.Offset {
				t.Fatalf("%s: wrapper at %d: last relative offset %d", path, m.Offset, last.Offset)
			}
		}
	}
}

func upgradeIndependentDecompress(t *testing.T, c codec.Type, b []byte) []byte {
	t.Helper()
	var r io.Reader
	switch c {
	case codec.None:
		return b
	case codec.Gzip:
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	case codec.LZ4:
		r = lz4.NewReader(bytes.NewReader(b))
	default:
		// No independent reader for Kafka's snappy framing or needed for zstd
		// here; logfmt's reader has already checked these.
		out, err := codectest.Decompress(nil, c, b, 2, 0)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("%s: %v", c, err)
	}
	return out
}

// upgradeWritePartition writes one segment file holding data into a new
// partition directory of a new log directory.
func upgradeWritePartition(t *testing.T, base int64, data []byte) (dir, log string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "old-0")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	log = filepath.Join(dir, layout.SegmentName(base, layout.LogExt))
	if err := os.WriteFile(log, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, log
}

func upgradeRecs(offsets ...int64) []logfmt.Record {
	var recs []logfmt.Record
	for i, o := range offsets {
		r := logfmt.Record{Offset: o, Timestamp: logfmt.NoTimestamp, Key: fmt.Appendf(nil, "k%d", o), Value: fmt.Appendf(nil, "value-%d", o)}
		switch i % 3 {
		case 1:
			r.Key = nil
		case 2:
			r.Value = []byte{}
		}
		recs = append(recs, r)
	}
	return recs
}

func upgradeWrapper(t *testing.T, c codec.Type, recs []logfmt.Record) []byte {
	t.Helper()
	b, err := logfmt.AppendLegacyWrapper(nil, logfmt.LegacyWrapperOptions{Magic: 0, Compression: c}, recs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// upgradeInner decompresses a legacy wrapper and returns its inner messages.
func upgradeInner(t *testing.T, entry []byte) []logfmt.LegacyMessage {
	t.Helper()
	m := logfmt.LegacyMessage(entry)
	_, value, err := m.KeyValue()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := codectest.Decompress(nil, m.Compression(), value, m.Magic(), 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []logfmt.LegacyMessage
	for len(raw) > 0 {
		n := int(logfmt.LegacyMessage(raw).Size()) + logfmt.LogOverhead
		out = append(out, logfmt.LegacyMessage(raw[:n]))
		raw = raw[n:]
	}
	return out
}

// A compacted v0 wrapper (holes between its offsets) keeps every offset:
// magic 1 gets relative inner offsets with the same holes and the last
// offset as the wrapper's; magic 2 gets the holes as offset deltas.
func TestUpgradeKeepsHoles(t *testing.T) {
	t.Parallel()
	recs := upgradeRecs(100, 102, 103, 107)
	for _, c := range []codec.Type{codec.Gzip, codec.Snappy, codec.LZ4} {
		for _, to := range []int8{1, 2} {
			t.Run(fmt.Sprintf("%s-v%d", c, to), func(t *testing.T) {
				t.Parallel()
				data := slices.Concat(logfmt.AppendLegacyMessage(nil, 0, 99, 0, -1, []byte("a"), []byte("b")), upgradeWrapper(t, c, recs),
					logfmt.AppendLegacyMessage(nil, 0, 110, 0, -1, nil, nil))
				dir, log := upgradeWritePartition(t, 99, data)
				before := upgradeReadSegment(t, log)
				if _, err := Run(Options{Targets: upgradeTargets(t, dir), ToMagic: to}); err != nil {
					t.Fatal(err)
				}
				after := upgradeReadSegment(t, log)
				if want := upgradeExpect(before, to, logfmt.CreateTime, nil); !slices.Equal(after, want) {
					t.Fatalf("got %+v\nwant %+v", after, want)
				}
				seg, err := logfmt.OpenSegment(log)
				if err != nil {
					t.Fatal(err)
				}
				defer seg.Close()
				var entries [][]byte
				for seg.Next() {
					entries = append(entries, slices.Clone(seg.Batch().Data))
				}
				if len(entries) != 3 {
					t.Fatalf("%d entries, want the message, the wrapper, the message", len(entries))
				}
				w := entries[1]
				if to == 2 {
					h := logfmt.BatchHeader(w)
					if h.BaseOffset() != 100 || h.LastOffsetDelta() != 7 || h.RecordCount() != 4 || h.Compression() != c ||
						h.MaxTimestamp() != -1 || h.BaseTimestamp() != -1 || h.ProducerID() != -1 || h.PartitionLeaderEpoch() != -1 {
						t.Fatalf("batch header %x", w[:logfmt.V2HeaderSize])
					}
					return
				}
				m := logfmt.LegacyMessage(w)
				if m.Offset() != 107 || m.Magic() != 1 || m.Compression() != c || m.Timestamp() != -1 || m.TimestampType() != logfmt.CreateTime {
					t.Fatalf("wrapper %x", w[:26])
				}
				var rel []int64
				for _, in := range upgradeInner(t, w) {
					if in.Magic() != 1 || in.Timestamp() != -1 || in.Attributes() != 0 || in.CRC() != in.ComputeCRC() {
						t.Fatalf("inner message %x", in)
					}
					rel = append(rel, in.Offset())
				}
				if !slices.Equal(rel, []int64{0, 2, 3, 7}) {
					t.Fatalf("inner relative offsets %v, want 0 2 3 7", rel)
				}
				if c == codec.LZ4 {
					_, value, _ := m.KeyValue()
					if !bytes.Equal(value[:7], []byte{0x04, 0x22, 0x4d, 0x18, 0x60, 0x40, 0x82}) {
						t.Fatalf("lz4 frame header % x, want Kafka's with the correct checksum 82", value[:7])
					}
				}
			})
		}
	}
}

// An uncompressed v0 message becomes the v1 message a broker writes: the
// same key and value bytes behind an 8-byte timestamp, a new CRC.
func TestUpgradeMessageBytes(t *testing.T) {
	t.Parallel()
	v0 := logfmt.AppendLegacyMessage(nil, 0, 5, 0, -1, nil, []byte("hello"))
	for _, tc := range []struct {
		typ  logfmt.TimestampType
		attr byte
		ts   int64
	}{{logfmt.CreateTime, 0, -1}, {logfmt.LogAppendTime, 0x08, 1_500_000_000_123}} {
		dir, log := upgradeWritePartition(t, 5, v0)
		if _, err := Run(Options{Targets: upgradeTargets(t, dir), TimestampType: tc.typ, AppendTime: tc.ts}); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(log)
		if err != nil {
			t.Fatal(err)
		}
		want := slices.Concat(v0[:8], []byte{0, 0, 0, byte(v0[11] + 8), 0, 0, 0, 0, 1, tc.attr},
			[]byte{byte(tc.ts >> 56), byte(tc.ts >> 48), byte(tc.ts >> 40), byte(tc.ts >> 32), byte(tc.ts >> 24), byte(tc.ts >> 16), byte(tc.ts >> 8), byte(tc.ts)},
			v0[18:])
		crc := crc32.ChecksumIEEE(want[16:])
		want[12], want[13], want[14], want[15] = byte(crc>>24), byte(crc>>16), byte(crc>>8), byte(crc)
		if !bytes.Equal(got, want) {
			t.Fatalf("%v:\n got % x\nwant % x", tc.typ, got, want)
		}
	}
}

// --output leaves the source alone and writes the converted partition,
// every other file copied, and the log directory's root files; it never
// overwrites an existing partition directory.
func TestUpgradeOutput(t *testing.T) {
	t.Parallel()
	logDir, dir := upgradeGen(t, gen.Options{Magic: 0, Compression: codec.Gzip, Topics: []string{"a", "b"}, Partitions: 2})
	// A magic-1 segment among them is copied, not rewritten.
	v1 := filepath.Join(logDir, "b-1", layout.SegmentName(1000, layout.LogExt))
	if err := os.WriteFile(v1, logfmt.AppendLegacyMessage(nil, 1, 1000, 0, 77, nil, []byte("v1")), 0o644); err != nil {
		t.Fatal(err)
	}
	snap := upgradeSnapshot(t, logDir)
	before := upgradeReadPartition(t, dir)
	out := filepath.Join(t.TempDir(), "new-logs")
	rep, err := Run(Options{Targets: upgradeTargets(t, logDir), Output: out})
	if err != nil {
		t.Fatal(err)
	}
	upgradeSameSnapshot(t, "source", upgradeSnapshot(t, logDir), snap)
	if len(rep.Partitions) != 4 || len(rep.RootFiles) != 6 {
		t.Fatalf("%d partitions, root files %v", len(rep.Partitions), rep.RootFiles)
	}
	got := upgradeSnapshot(t, out)
	for name, v := range snap {
		switch {
		case strings.HasSuffix(name, ".log") && !strings.HasSuffix(name, layout.SegmentName(1000, layout.LogExt)),
			strings.HasSuffix(name, ".index"), strings.HasSuffix(name, ".timeindex"):
			if _, ok := got[name]; !ok {
				t.Errorf("%s missing from the output", name)
			}
		case got[name] != v:
			t.Errorf("%s: not copied as it was", name)
		}
	}
	for name := range got {
		if _, ok := snap[name]; !ok {
			t.Errorf("%s: in the output only", name)
		}
	}
	if after := upgradeReadPartition(t, filepath.Join(out, filepath.Base(dir))); !slices.Equal(after, upgradeExpect(before, 1, logfmt.CreateTime, nil)) {
		t.Fatal("converted records differ")
	}
	p, err := layout.ReadPartition(filepath.Join(out, filepath.Base(dir)))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range p.Segments {
		upgradeCheckIndexes(t, s)
	}

	// Again: every partition directory exists, nothing is written.
	outSnap := upgradeSnapshot(t, out)
	if _, err := Run(Options{Targets: upgradeTargets(t, dir), Output: out}); !errors.Is(err, ErrRefused) {
		t.Fatalf("second run: %v", err)
	}
	upgradeSameSnapshot(t, "refused output", upgradeSnapshot(t, out), outSnap)

	// Into an existing log directory: the partition only, root files kept.
	other, _ := upgradeGen(t, gen.Options{Magic: 2, Topics: []string{"c"}})
	rootBefore := upgradeRootFiles(t, other)
	rep, err = Run(Options{Targets: upgradeTargets(t, logDir), Output: other})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.RootFiles) != 0 {
		t.Fatalf("root files copied over an existing log directory: %v", rep.RootFiles)
	}
	upgradeSameSnapshot(t, "root files of the existing log directory", upgradeRootFiles(t, other), rootBefore)
}

// A dry run writes nothing, not even a lock file, and predicts the sizes
// the real run produces.
func TestUpgradeDryRun(t *testing.T) {
	t.Parallel()
	for _, to := range []int8{1, 2} {
		logDir, _ := upgradeGen(t, gen.Options{Magic: 0, Compression: codec.LZ4})
		snap := upgradeSnapshot(t, logDir)
		dry, err := Run(Options{Targets: upgradeTargets(t, logDir), ToMagic: to, DryRun: true, TimestampType: logfmt.LogAppendTime})
		if err != nil {
			t.Fatal(err)
		}
		upgradeSameSnapshot(t, "dry run", upgradeSnapshot(t, logDir), snap)
		real, err := Run(Options{Targets: upgradeTargets(t, logDir), ToMagic: to, TimestampType: logfmt.LogAppendTime})
		if err != nil {
			t.Fatal(err)
		}
		d, r := dry.Partitions[0], real.Partitions[0]
		if d.SegmentsRewritten == 0 || !slices.Equal(d.Segments, r.Segments) {
			t.Fatalf("dry run %+v\nreal run %+v", d, r)
		}
	}
}

// Entries already at the target are copied byte for byte among converted
// ones; magic-1 messages keep their timestamps, LogAppendTime included.
func TestUpgradeMixedSegment(t *testing.T) {
	t.Parallel()
	v2, err := logfmt.AppendBatch(nil, logfmt.DefaultBatchOptions(3), []logfmt.Record{{Offset: 3, Timestamp: 500, Value: []byte("v2")},
		{Offset: 5, Timestamp: 400, Value: []byte("v2b"), Headers: []logfmt.Header{{Key: []byte("h"), Value: nil}}}})
	if err != nil {
		t.Fatal(err)
	}
	v1wrap, err := logfmt.AppendLegacyWrapper(nil, logfmt.LegacyWrapperOptions{Magic: 1, Compression: codec.Gzip, TimestampType: logfmt.LogAppendTime, LogAppendTime: 900},
		[]logfmt.Record{{Offset: 10, Value: []byte("x")}, {Offset: 11, Value: []byte("y")}})
	if err != nil {
		t.Fatal(err)
	}
	entries := [][]byte{
		logfmt.AppendLegacyMessage(nil, 1, 0, 0, 100, []byte("k"), []byte("v1")),
		logfmt.AppendLegacyMessage(nil, 0, 1, 0, -1, []byte("k"), []byte("v0")),
		logfmt.AppendLegacyMessage(nil, 1, 2, upgradeLATBit, 300, nil, []byte("lat")),
		v2,
		upgradeWrapper(t, codec.Snappy, upgradeRecs(6, 8)),
		v1wrap,
		logfmt.AppendLegacyMessage(nil, 1, 12, upgradeLATBit, 301, nil, []byte("lat2")),
	}
	for _, to := range []int8{1, 2} {
		dir, log := upgradeWritePartition(t, 0, slices.Concat(entries...))
		before := upgradeReadSegment(t, log)
		if _, err := Run(Options{Targets: upgradeTargets(t, dir), ToMagic: to}); err != nil {
			t.Fatal(err)
		}
		after := upgradeReadSegment(t, log)
		if want := upgradeExpect(before, to, logfmt.CreateTime, nil); !slices.Equal(after, want) {
			t.Fatalf("to v%d:\n got %+v\nwant %+v", to, after, want)
		}
		data, err := os.ReadFile(log)
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range entries {
			if int8(e[16]) >= to && !bytes.Contains(data, e) {
				t.Errorf("to v%d: entry %d (magic %d) not copied byte for byte", to, i, e[16])
			}
		}
		if to == 2 {
			// The first two share a CreateTime batch; the LogAppendTime
			// messages have different times, so they cannot share one.
			if n := len(upgradeEntries(t, log)); n != len(entries)-1 {
				t.Errorf("to v2: %d batches, want %d", n, len(entries)-1)
			}
		}
	}
}

func upgradeEntries(t *testing.T, path string) []logfmt.Batch {
	t.Helper()
	seg, err := logfmt.OpenSegment(path)
	if err != nil {
		t.Fatal(err)
	}
	defer seg.Close()
	var out []logfmt.Batch
	for seg.Next() {
		b := *seg.Batch()
		b.Data = slices.Clone(b.Data)
		out = append(out, b)
	}
	return out
}

// Runs of uncompressed messages become batches of bounded size (magic 2),
// or wrappers when --compression asks for a codec (magic 1); a codec of
// none unpacks wrappers into single messages.
func TestUpgradeGrouping(t *testing.T) {
	t.Parallel()
	var data []byte
	for i := int64(0); i < 1200; i++ {
		v := bytes.Repeat([]byte{'a' + byte(i%26)}, int(i%7)*20)
		data = logfmt.AppendLegacyMessage(data, 0, i, 0, -1, nil, v)
	}
	data = append(data, upgradeWrapper(t, codec.Gzip, upgradeRecs(1200, 1201, 1205))...)
	gz, none := codec.Gzip, codec.None
	for _, tc := range []struct {
		to   int8
		comp *codec.Type
		// check looks at every entry but the last (the wrapper's).
		check func(b logfmt.Batch) string
		last  func(b logfmt.Batch) string
	}{
		{2, nil, func(b logfmt.Batch) string {
			h := b.Header()
			if h.RecordCount() > upgradeRunRecords || h.Compression() != codec.None || b.Size() > upgradeRunBytes+int(h.RecordCount())*40+logfmt.V2HeaderSize {
				return fmt.Sprintf("batch of %d records, %d bytes, %s", h.RecordCount(), b.Size(), h.Compression())
			}
			return ""
		}, func(b logfmt.Batch) string {
			if h := b.Header(); h.Compression() != codec.Gzip || h.RecordCount() != 3 || h.LastOffsetDelta() != 5 {
				return "wrapper not one gzip batch"
			}
			return ""
		}},
		{1, &gz, func(b logfmt.Batch) string {
			if b.Compression() != codec.Gzip {
				return "run not compressed"
			}
			return ""
		}, func(b logfmt.Batch) string { return "" }},
		{1, &none, func(b logfmt.Batch) string {
			if b.Compression() != codec.None {
				return "compressed"
			}
			return ""
		}, func(b logfmt.Batch) string {
			if b.Compression() != codec.None || b.LastOffset() != 1205 {
				return "wrapper not unpacked"
			}
			return ""
		}},
	} {
		dir, log := upgradeWritePartition(t, 0, data)
		before := upgradeReadSegment(t, log)
		if _, err := Run(Options{Targets: upgradeTargets(t, dir), ToMagic: tc.to, Compression: tc.comp}); err != nil {
			t.Fatal(err)
		}
		if after := upgradeReadSegment(t, log); !slices.Equal(after, upgradeExpect(before, tc.to, logfmt.CreateTime, nil)) {
			t.Fatalf("v%d %v: records differ", tc.to, tc.comp)
		}
		entries := upgradeEntries(t, log)
		if len(entries) < 3 || (tc.comp == &none && len(entries) != len(before)) {
			t.Fatalf("v%d %v: %d entries", tc.to, tc.comp, len(entries))
		}
		for i, b := range entries[:len(entries)-1] {
			if msg := tc.check(b); msg != "" {
				t.Fatalf("v%d %v: entry %d: %s", tc.to, tc.comp, i, msg)
			}
		}
		if msg := tc.last(entries[len(entries)-1]); msg != "" {
			t.Fatalf("v%d %v: last entry: %s", tc.to, tc.comp, msg)
		}
	}
}

// An empty key or value stays empty and a null one null, also when a set
// holds nothing else (the fuzzer's find).
func TestUpgradeEmptyIsNotNull(t *testing.T) {
	t.Parallel()
	gz := codec.Gzip
	for _, tc := range []struct {
		to   int8
		comp *codec.Type
	}{{2, nil}, {1, &gz}, {2, &gz}} {
		for _, m := range [][]byte{
			logfmt.AppendLegacyMessage(nil, 0, 0, 0, -1, []byte{}, nil),
			logfmt.AppendLegacyMessage(nil, 0, 0, 0, -1, nil, []byte{}),
		} {
			dir, log := upgradeWritePartition(t, 0, m)
			before := upgradeReadSegment(t, log)
			if _, err := Run(Options{Targets: upgradeTargets(t, dir), ToMagic: tc.to, Compression: tc.comp}); err != nil {
				t.Fatal(err)
			}
			if after := upgradeReadSegment(t, log); !slices.Equal(after, upgradeExpect(before, tc.to, logfmt.CreateTime, nil)) {
				t.Fatalf("v%d: got %+v from %+v", tc.to, after, before)
			}
		}
	}
}

// --output copies a source only when it is consistent: not halfway through
// a segment swap. Files merely waiting for deletion are left behind.
func TestUpgradeOutputLeftovers(t *testing.T) {
	t.Parallel()
	_, dir := upgradeGen(t, gen.Options{Magic: 0})
	p, err := layout.ReadPartition(dir)
	if err != nil {
		t.Fatal(err)
	}
	deleted := p.Segments[0].Index + layout.DeletedSuffix
	if err := os.WriteFile(deleted, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if _, err := Run(Options{Targets: upgradeTargets(t, dir), Output: out}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out, filepath.Base(dir), filepath.Base(deleted))); err == nil {
		t.Fatal("a .deleted file was copied")
	}
	swap := p.Segments[1].Log + layout.SwapSuffix
	if err := os.WriteFile(swap, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out = t.TempDir()
	if _, err := Run(Options{Targets: upgradeTargets(t, dir), Output: out}); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), filepath.Base(swap)) {
		t.Fatalf("source with a .swap file: %v", err)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Fatalf("output holds %v", entries)
	}
}

// TestUpgradeStageName: the staging directory of --output has a name a
// broker loads as a deleted topic's directory (and deletes) instead of
// refusing to start; only logtool's own are taken for stages.
func TestUpgradeStageName(t *testing.T) {
	long := strings.Repeat("t", layout.MaxTopicLength)
	for _, name := range []string{"orders-0", "legacy.events-v0-12", long + "-2147483647"} {
		stage := upgradeStageName(name)
		pd, err := layout.ParsePartitionDir(stage)
		want, _ := layout.ParsePartitionDir(name)
		if err != nil || pd.Kind != layout.Delete || pd.Partition != want.Partition || !strings.HasPrefix(want.Topic, pd.Topic) ||
			len(stage) > 255 || !isUpgradeStage(stage) {
			t.Errorf("%s: stage %q (%+v, %v)", name, stage, pd, err)
		}
	}
	if upgradeStageName(long+"1-0") == upgradeStageName(long+"2-0") {
		t.Error("two long topics share a stage")
	}
	for name, want := range map[string]bool{
		"orders-0.upgrade.tmp":                             false, // earlier versions' or a user's: left
		"orders-0.0123456789abcdef0123456789abcdef-delete": false, // Kafka's
		"orders-0": false,
	} {
		if isUpgradeStage(name) != want {
			t.Errorf("isUpgradeStage(%q) = %v", name, !want)
		}
	}
}

// TestUpgradeOutputRemovesStages: the staging directories a killed run left
// in the output are removed by the next run, and only those.
func TestUpgradeOutputRemovesStages(t *testing.T) {
	logDir, _ := upgradeGen(t, gen.Options{Magic: 0, Compression: codec.None, Records: 20})
	out := t.TempDir()
	kafkas := "orders-0.0123456789abcdef0123456789abcdef-delete"
	for _, d := range []string{upgradeStageName("legacy-0"), upgradeStageName("gone-3"), "legacy-0.upgrade.tmp", kafkas} {
		if err := os.MkdirAll(filepath.Join(out, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, d, "00000000000000000000.log"), []byte("half"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := Run(Options{Targets: upgradeTargets(t, logDir), Output: out})
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(out)
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, e.Name())
		}
	}
	if !slices.Equal(dirs, []string{"legacy-0", "legacy-0.upgrade.tmp", kafkas}) {
		t.Errorf("output holds %q", dirs)
	}
	if len(rep.Notes) != 2 {
		t.Errorf("notes %q", rep.Notes)
	}
}
