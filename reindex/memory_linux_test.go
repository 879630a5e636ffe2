package reindex

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/logfmt/layout"
)

// TestPartitionMemoryGrowingSegments: the rebuilt entries of a segment are
// reused by the next; a segment a little larger than every one before must
// not leave the tables of those before mapped until the partition ends, or
// a partition of growing segments (rolled by time as traffic rises) holds
// memory in proportion to its number of segments.
func TestPartitionMemoryGrowingSegments(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 80 MB")
	}
	// One segment of 47,000 batches of one tiny record: 3.6 MB, whose
	// entries with index.interval.bytes 0 take tables of 2 MiB or more.
	src := genPartition(t, gen.Options{Records: 47000, ValueBytes: 1, BatchRecords: 1, Magic: 2, SegmentBytes: 1 << 30, Seed: 3})
	data, err := os.ReadFile(filepath.Join(src, layout.SegmentName(0, layout.LogExt)))
	if err != nil {
		t.Fatal(err)
	}
	var ends []int // where each batch ends
	for p := 0; p+12 <= len(data); {
		p += 12 + int(binary.BigEndian.Uint32(data[p+8:]))
		ends = append(ends, p)
	}
	// Segments each a batch longer than the one before, their batches
	// moved to offsets of their own (a v2 checksum does not cover the base
	// offset).
	const segs = 24
	dir := filepath.Join(t.TempDir(), "t-0")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range segs {
		base := int64(i) * 1_000_000
		seg := bytes.Clone(data[:ends[len(ends)-segs+i]])
		for p := 0; p < len(seg); p += 12 + int(binary.BigEndian.Uint32(seg[p+8:])) {
			binary.BigEndian.PutUint64(seg[p:], binary.BigEndian.Uint64(seg[p:])+uint64(base))
		}
		if err := os.WriteFile(filepath.Join(dir, layout.SegmentName(base, layout.LogExt)), seg, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before := procStatus(t, "VmRSS")
	// Writing 5 resets the peak resident size (Linux 4.0 and later).
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Skip(err)
	}
	rep, err := Partition(dir, Options{Mode: Check, Offset: true, Time: true, IntervalBytes: 0})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Segments) != segs || rep.Segments[segs-1].Batches != len(ends) {
		t.Fatalf("%d segments read, the last with %d batches", len(rep.Segments), rep.Segments[len(rep.Segments)-1].Batches)
	}
	// The entries of one segment take 1.5 MB (4 MiB in huge pages); all of
	// them kept, 36-96 MB.
	if grew := procStatus(t, "VmHWM") - before; grew > 24<<20 {
		t.Errorf("peak resident memory grew by %d MiB over %d segments", grew>>20, segs)
	}
}

// procStatus is a size in /proc/self/status, in bytes.
func procStatus(t *testing.T, key string) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), key+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Skipf("no %s in /proc/self/status", key)
	return 0
}
