package retention

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/logtool/logtool/index"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/layout"
)

// memSegment is a segment built in memory: its .log and the indexes
// recovery writes for it.
type memSegment struct {
	base           int64
	log            []byte
	timeIdx, offIx []byte
	starts         []int // byte position of each batch
}

// buildSegment writes one batch per timestamp list, each record 300 bytes
// so that the offset index gets entries. magic 0 ignores the timestamps.
func buildSegment(t testing.TB, base int64, magic int8, batches [][]int64) *memSegment {
	t.Helper()
	return buildSegmentSized(t, base, magic, batches, 300)
}

func buildSegmentSized(t testing.TB, base int64, magic int8, batches [][]int64, valueSize int) *memSegment {
	t.Helper()
	m := &memSegment{base: base}
	rec := index.NewRecovery(base, index.DefaultIntervalBytes)
	off := base
	value := bytes.Repeat([]byte("v"), valueSize)
	for _, tss := range batches {
		start := len(m.log)
		m.starts = append(m.starts, start)
		if magic == 2 {
			var recs []logfmt.Record
			for _, ts := range tss {
				recs = append(recs, logfmt.Record{Offset: off, Timestamp: ts, Value: value})
				off++
			}
			var err error
			if m.log, err = logfmt.AppendBatch(m.log, logfmt.DefaultBatchOptions(recs[0].Offset), recs); err != nil {
				t.Fatal(err)
			}
		} else {
			for _, ts := range tss {
				if magic == 0 {
					ts = logfmt.NoTimestamp
				}
				m.log = logfmt.AppendLegacyMessage(m.log, magic, off, 0, ts, nil, value)
				off++
			}
		}
		// Recovery sees each legacy message as its own batch.
		seg := logfmt.NewSegmentReader(bytes.NewReader(m.log[start:]), int64(len(m.log)-start), "")
		for seg.Next() {
			b := seg.Batch()
			rec.Add(b.LastOffset(), b.MaxTimestamp(), b.Size())
		}
		if seg.Err() != nil {
			t.Fatal(seg.Err())
		}
	}
	rec.Finish()
	var err error
	if m.timeIdx, err = rec.TimeIndexBytes(); err != nil {
		t.Fatal(err)
	}
	if m.offIx, err = rec.OffsetIndexBytes(); err != nil {
		t.Fatal(err)
	}
	return m
}

func (m *memSegment) views() (log, ti, oi view) {
	v := func(b []byte, ext string) view {
		if b == nil {
			return view{}
		}
		return view{r: bytes.NewReader(b), size: int64(len(b)), name: layout.SegmentName(m.base, ext)}
	}
	return v(m.log, layout.LogExt), v(m.timeIdx, layout.TimeIndexExt), v(m.offIx, layout.IndexExt)
}

func ramp(from, n int64) []int64 {
	var out []int64
	for i := int64(0); i < n; i++ {
		out = append(out, from+i)
	}
	return out
}

func TestLargestIn(t *testing.T) {
	batches := [][]int64{ramp(1000, 5), {900, 950}, ramp(2000, 5), ramp(1500, 5), ramp(1800, 5), ramp(1700, 5)}
	const max = 2004

	full := func() *memSegment { return buildSegment(t, 100, 2, batches) }
	// An index as a live broker leaves it when it dies before writing the
	// final entry: it ends at the third batch, and the fourth is newer.
	stale := func() *memSegment {
		newer := [][]int64{ramp(1000, 5), {900, 950}, ramp(1500, 5), ramp(2000, 5)}
		m := buildSegment(t, 100, 2, newer)
		idx := buildSegment(t, 100, 2, newer[:3])
		m.timeIdx, m.offIx = idx.timeIdx, idx.offIx
		return m
	}
	torn := func() *memSegment {
		m := buildSegment(t, 100, 2, [][]int64{ramp(1000, 5), ramp(3000, 5)})
		m.log, m.timeIdx = m.log[:len(m.log)-10], nil
		return m
	}
	tests := []struct {
		name    string
		seg     func() *memSegment
		wantMs  int64
		wantSrc Source
		warning string
	}{
		{"from the time index", full, max, SourceTimeIndex, ""},
		{"no time index", func() *memSegment { m := full(); m.timeIdx = nil; return m }, max, SourceRecords, ""},
		{"empty time index", func() *memSegment { m := full(); m.timeIdx = []byte{}; return m }, max, SourceRecords, ""},
		{"no offset index: scan from the start", func() *memSegment { m := full(); m.offIx = nil; return m }, max, SourceTimeIndex, ""},
		{"newer batches after the last entry", stale, 2004, SourceRecords, ""},
		{"preallocated zeros after the entries", func() *memSegment {
			m := full()
			m.timeIdx = append(m.timeIdx, make([]byte, 10*index.TimeEntrySize)...)
			m.offIx = append(m.offIx, make([]byte, 10*index.OffsetEntrySize)...)
			return m
		}, max, SourceTimeIndex, ""},
		{"entry beyond the log", func() *memSegment {
			m := full()
			m.log = m.log[:m.starts[2]]
			return m
		}, 1004, SourceRecords, "does not match the batches"},
		{"entry timestamp no batch has", func() *memSegment {
			m := full()
			binary.BigEndian.PutUint64(m.timeIdx[len(m.timeIdx)-index.TimeEntrySize:], 3000)
			return m
		}, max, SourceRecords, "does not match the batches"},
		{"damaged time index", func() *memSegment {
			m := full()
			m.timeIdx = append(m.timeIdx, 1, 2, 3)
			return m
		}, max, SourceRecords, "do not make a whole entry"},
		{"offset index pointing into a batch", func() *memSegment {
			m := full()
			m.offIx = nil
			for _, e := range []index.OffsetEntry{{Offset: 100, Position: 7}} {
				m.offIx, _ = index.AppendOffsetEntry(m.offIx, 100, e)
			}
			return m
		}, max, SourceRecords, "does not match the batches"},
		{"magic 1", func() *memSegment { return buildSegment(t, 0, 1, batches) }, max, SourceTimeIndex, ""},
		{"magic 1 without timestamps", func() *memSegment { return buildSegment(t, 0, 1, [][]int64{{-1, -1}}) }, -1, SourceRecords, ""},
		{"magic 0", func() *memSegment { return buildSegment(t, 0, 0, batches) }, -1, SourceRecords, ""},
		{"empty segment", func() *memSegment { return &memSegment{log: []byte{}} }, -1, SourceRecords, ""},
		{"torn last batch", torn, 1004, SourceRecords, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := tt.seg()
			lv, tv, ov := m.views()
			ts, warning, err := largestIn(m.base, lv, tv, ov)
			if err != nil {
				t.Fatal(err)
			}
			if ts.Ms != tt.wantMs || ts.Source != tt.wantSrc {
				t.Errorf("got %+v, want %d from %s", ts, tt.wantMs, tt.wantSrc)
			}
			if tt.warning == "" && warning != "" || !strings.Contains(warning, tt.warning) {
				t.Errorf("warning %q, want one containing %q", warning, tt.warning)
			}
		})
	}
}

func TestLargestInCorrupt(t *testing.T) {
	batches := [][]int64{ramp(1000, 5), ramp(1100, 5), ramp(1200, 5), ramp(1300, 5)}
	tests := []struct {
		name    string
		mangle  func(m *memSegment)
		wantPos func(m *memSegment) int64
		msg     string
	}{
		{"bad checksum in the tail", func(m *memSegment) { m.log[len(m.log)-1] ^= 1 },
			func(m *memSegment) int64 { return int64(m.starts[3]) }, "checksum"},
		{"bad checksum without indexes", func(m *memSegment) { m.log[m.starts[1]+100] ^= 1; m.timeIdx, m.offIx = nil, nil },
			func(m *memSegment) int64 { return int64(m.starts[1]) }, "checksum"},
		{"unknown magic", func(m *memSegment) { m.log[m.starts[2]+logfmt.MagicOffset] = 7; m.timeIdx = nil },
			func(m *memSegment) int64 { return int64(m.starts[2] + logfmt.MagicOffset) }, "magic"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := buildSegment(t, 0, 2, batches)
			tt.mangle(m)
			lv, tv, ov := m.views()
			_, _, err := largestIn(m.base, lv, tv, ov)
			ce, ok := logfmt.AsCorrupt(err)
			if !ok {
				t.Fatalf("error %v, want a CorruptError", err)
			}
			if ce.File != lv.name || ce.Pos != tt.wantPos(m) || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %v (file %q, pos %d); want %s at %d in %s", err, ce.File, ce.Pos, tt.msg, tt.wantPos(m), lv.name)
			}
		})
	}
	t.Run("offset below the base", func(t *testing.T) {
		m := buildSegment(t, 0, 2, batches)
		lv, tv, ov := m.views()
		_, _, err := largestIn(50, lv, tv, ov)
		if ce, ok := logfmt.AsCorrupt(err); !ok || ce.Pos != 0 || !strings.Contains(err.Error(), "below the segment's base offset") {
			t.Errorf("error %v, want the first batch below base 50", err)
		}
	})
}

// Without any record timestamp the .log modification time decides, as in
// Kafka; with one, the modification time is ignored.
func TestLargestTimestampFiles(t *testing.T) {
	dir := t.TempDir()
	mtime := time.UnixMilli(1_600_000_000_123)
	write := func(m *memSegment) layout.Segment {
		s := layout.Segment{Base: m.base, Log: filepath.Join(dir, layout.SegmentName(m.base, layout.LogExt))}
		if err := os.WriteFile(s.Log, m.log, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(s.Log, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		s.TimeIndex = filepath.Join(dir, layout.SegmentName(m.base, layout.TimeIndexExt))
		if err := os.WriteFile(s.TimeIndex, m.timeIdx, 0o644); err != nil {
			t.Fatal(err)
		}
		// The offset index is named but absent, as after a lost file.
		s.Index = filepath.Join(dir, layout.SegmentName(m.base, layout.IndexExt))
		return s
	}
	v0 := write(buildSegment(t, 0, 0, [][]int64{ramp(0, 3), ramp(0, 3)}))
	ts, _, err := largestTimestamp(v0)
	if err != nil || ts != (Timestamp{Ms: 1_600_000_000_123, Source: SourceMtime}) {
		t.Errorf("magic 0: %+v, %v; want the mtime", ts, err)
	}
	v2 := write(buildSegment(t, 100, 2, [][]int64{ramp(5000, 3)}))
	ts, _, err = largestTimestamp(v2)
	if err != nil || ts != (Timestamp{Ms: 5002, Source: SourceTimeIndex}) {
		t.Errorf("magic 2: %+v, %v; want 5002 from the time index", ts, err)
	}
	if _, _, err := largestTimestamp(layout.Segment{Log: filepath.Join(dir, "missing.log")}); err == nil {
		t.Error("a missing .log gave no error")
	}
}

func FuzzLargestIn(f *testing.F) {
	// Small inputs keep the fuzzer's minimization quick, so the offset index
	// is made by hand rather than by 4 KiB of records.
	m := buildSegmentSized(f, 0, 2, [][]int64{ramp(1000, 3), {900}, ramp(2000, 3), ramp(1500, 2)}, 8)
	var err error
	if m.offIx, err = index.AppendOffsetEntry(nil, 0, index.OffsetEntry{Offset: 3, Position: int32(m.starts[1])}); err != nil {
		f.Fatal(err)
	}
	f.Add(m.log, m.timeIdx, m.offIx, int64(0))
	f.Add(m.log[:len(m.log)/2], m.timeIdx, m.offIx, int64(0))
	v1 := buildSegmentSized(f, 7, 1, [][]int64{ramp(10, 3)}, 8)
	f.Add(v1.log, v1.timeIdx, v1.offIx, int64(7))
	f.Add([]byte{}, []byte{}, []byte{}, int64(0))
	f.Fuzz(func(t *testing.T, log, ti, oi []byte, base int64) {
		v := func(b []byte, name string) view { return view{r: bytes.NewReader(b), size: int64(len(b)), name: name} }
		ts, _, err := largestIn(base, v(log, "x.log"), v(ti, "x.timeindex"), v(oi, "x.index"))
		if err != nil {
			if ce, ok := logfmt.AsCorrupt(err); !ok || ce.File != "x.log" || ce.Pos < 0 || ce.Pos >= int64(len(log)) {
				t.Fatalf("error %v: want a CorruptError in x.log at a byte of it", err)
			}
			return
		}
		if ts.Ms < -1 || ts.Source != SourceRecords && ts.Source != SourceTimeIndex {
			t.Fatalf("got %+v", ts)
		}
	})
}
