package reindex

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/logtool/logtool/index"
	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/logfmt/layout"
)

// genPartition writes a one-partition log directory with gen and returns
// the partition directory.
func genPartition(t testing.TB, o gen.Options) string {
	t.Helper()
	if o.Out == "" {
		o.Out = t.TempDir()
	}
	if len(o.Topics) == 0 {
		o.Topics = []string{"t"}
	}
	parts, err := gen.Generate(o)
	if err != nil {
		t.Fatal(err)
	}
	return parts[0].Dir
}

// files returns the contents of every regular file in dir by name.
func files(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string][]byte{}
	for _, e := range entries {
		if e.Type().IsRegular() {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			m[e.Name()] = b
		}
	}
	return m
}

// removeIndexes deletes the index files of the given kinds, by extension.
func removeIndexes(t testing.TB, dir string, exts ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if slices.Contains(exts, filepath.Ext(e.Name())) {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func segmentBases(t testing.TB, dir string) []int64 {
	t.Helper()
	p, err := layout.ReadPartition(dir)
	if err != nil {
		t.Fatal(err)
	}
	var bases []int64
	for _, s := range p.Segments {
		bases = append(bases, s.Base)
	}
	return bases
}

// independentIndexes applies LogSegment.recover's index rule to the bytes
// of a valid .log, parsing them by hand rather than with logfmt or
// index.Recovery, so that the tests compare two implementations of the rule:
//
//	for each shallow entry: take its last offset and max timestamp (v2 header
//	fields; the entry offset and, for v1, the timestamp of a legacy message);
//	remember (max timestamp, last offset) when the timestamp is the largest
//	yet; when more than interval bytes lie between the last entry's position
//	and this entry's, write the offset entry (last offset, position) and a
//	time entry with the remembered pair if its timestamp is above the last
//	time entry's; at the end write that time entry once more.
func independentIndexes(log []byte, base, interval int64) (offsets, times []byte) {
	be := binary.BigEndian
	maxTS, maxOffset, lastWritten := int64(-1), base, int64(-1)
	timeEntry := func() {
		if maxTS > lastWritten {
			times = be.AppendUint64(times, uint64(maxTS))
			times = be.AppendUint32(times, uint32(maxOffset-base))
			lastWritten = maxTS
		}
	}
	var position, lastEntryAt int64
	for p := 0; p+17 <= len(log); {
		offset := int64(be.Uint64(log[p:]))
		next := p + 12 + int(be.Uint32(log[p+8:]))
		last, ts := offset, int64(-1)
		switch log[p+16] {
		case 2:
			last = offset + int64(int32(be.Uint32(log[p+23:])))
			ts = int64(be.Uint64(log[p+35:]))
		case 1:
			ts = int64(be.Uint64(log[p+18:]))
		}
		if ts > maxTS {
			maxTS, maxOffset = ts, last
		}
		if position-lastEntryAt > interval {
			offsets = be.AppendUint32(offsets, uint32(last-base))
			offsets = be.AppendUint32(offsets, uint32(position))
			timeEntry()
			lastEntryAt = position
		}
		position += int64(next - p)
		p = next
	}
	timeEntry()
	return offsets, times
}

// checkAgainstIndependent compares every segment's .index and .timeindex in
// dir with independentIndexes.
func checkAgainstIndependent(t *testing.T, dir string, interval int64) {
	t.Helper()
	got := files(t, dir)
	n := 0
	for name, log := range got {
		if !strings.HasSuffix(name, layout.LogExt) {
			continue
		}
		n++
		stem := strings.TrimSuffix(name, layout.LogExt)
		base := layout.ParseFileName(name).Base
		wantIdx, wantTime := independentIndexes(log, base, interval)
		if g := got[stem+layout.IndexExt]; !slices.Equal(g, wantIdx) {
			t.Errorf("%s: .index differs from the independent rule: got %d bytes %x, want %d bytes %x", name, len(g), head(g), len(wantIdx), head(wantIdx))
		}
		if g := got[stem+layout.TimeIndexExt]; !slices.Equal(g, wantTime) {
			t.Errorf("%s: .timeindex differs from the independent rule: got %d bytes %x, want %d bytes %x", name, len(g), head(g), len(wantTime), head(wantTime))
		}
	}
	if n == 0 {
		t.Fatalf("%s: no segments", dir)
	}
}

func head(b []byte) []byte { return b[:min(len(b), 48)] }

// all selects every index kind with Kafka's default interval.
func all(m Mode) Options {
	return Options{Mode: m, Offset: true, Time: true, Txn: true, IntervalBytes: index.DefaultIntervalBytes}
}

func mustPartition(t testing.TB, dir string, o Options) *PartitionReport {
	t.Helper()
	rep, err := Partition(dir, o)
	if err != nil {
		t.Fatalf("Partition(%s): %v", dir, err)
	}
	return rep
}

func findingsText(rep *PartitionReport) string {
	var b strings.Builder
	for _, f := range rep.Findings {
		b.WriteString(f.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// independentTxnIndexes replays the v2 batches of every segment of a
// partition in order, parsed by hand, and returns the .txnindex bytes each
// segment should have, by base offset: a transaction opens at the base
// offset of its producer's first transactional data batch and closes at a
// marker; an ABORT of an open transaction is indexed in the marker's
// segment with the last stable offset of that moment, the first offset of
// the earliest other open transaction, else the marker's offset plus one.
// Control batches are read uncompressed, as brokers write them.
func independentTxnIndexes(t testing.TB, dir string) map[int64][]byte {
	t.Helper()
	be := binary.BigEndian
	varint := func(b []byte, p *int) int64 {
		var u uint64
		for shift := 0; ; shift += 7 {
			c := b[*p]
			*p++
			u |= uint64(c&0x7f) << shift
			if c < 0x80 {
				return int64(u>>1) ^ -int64(u&1)
			}
		}
	}
	open := map[int64]int64{}
	out := map[int64][]byte{}
	for _, base := range segmentBases(t, dir) {
		log, err := os.ReadFile(filepath.Join(dir, layout.SegmentName(base, layout.LogExt)))
		if err != nil {
			t.Fatal(err)
		}
		for p := 0; p+17 <= len(log); p += 12 + int(be.Uint32(log[p+8:])) {
			if log[p+16] != 2 {
				continue
			}
			first, attrs, pid := int64(be.Uint64(log[p:])), be.Uint16(log[p+21:]), int64(be.Uint64(log[p+43:]))
			if pid < 0 {
				continue
			}
			since, isOpen := open[pid]
			if attrs&0x20 == 0 {
				if attrs&0x10 != 0 && !isOpen {
					open[pid] = first
				}
				continue
			}
			if be.Uint32(log[p+57:]) == 0 || !isOpen {
				continue
			}
			q := p + 61
			varint(log, &q) // record length
			q++             // attributes
			varint(log, &q) // timestamp delta
			varint(log, &q) // offset delta
			varint(log, &q) // key length, 4 for a marker key
			abort := be.Uint16(log[q+2:]) == 0
			lso := first + 1
			for other, f := range open {
				if other != pid && f < lso {
					lso = f
				}
			}
			delete(open, pid)
			if abort {
				out[base] = index.AppendAbortedTxn(out[base], index.AbortedTxn{ProducerID: pid, FirstOffset: since, LastOffset: first, LastStableOffset: lso})
			}
		}
	}
	return out
}
