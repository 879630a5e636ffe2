package reindex

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/logtool/logtool/index"
	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/internal/testkit/indextest"
	"github.com/logtool/logtool/internal/testkit/kafkasamples"
	"github.com/logtool/logtool/internal/testkit/testutil"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/codec"
	"github.com/logtool/logtool/logfmt/layout"
)

type batchInfo struct {
	pos, base, last, maxTS int64
}

func batchesOf(t *testing.T, path string) []batchInfo {
	t.Helper()
	seg, err := logfmt.OpenSegment(path)
	if err != nil {
		t.Fatal(err)
	}
	defer seg.Close()
	var out []batchInfo
	for seg.Next() {
		b := seg.Batch()
		out = append(out, batchInfo{b.Pos, b.Header().BaseOffset(), b.LastOffset(), b.MaxTimestamp()})
	}
	return out
}

// checkFixture is a v2 partition whose first segment has enough index
// entries to tamper with.
func checkFixture(t *testing.T) (dir, log, idx, tidx string, base int64) {
	t.Helper()
	dir = genPartition(t, gen.Options{Magic: 2, Records: 1200, Keys: 40, BatchRecords: 6, SegmentBytes: 40000, Compression: codec.Snappy,
		TransactionalRatio: 0.3, AbortRatio: 0.6, Seed: 8, TimeStep: 2 * time.Second})
	stem := filepath.Join(dir, layout.SegmentName(0, ""))
	return dir, stem + layout.LogExt, stem + layout.IndexExt, stem + layout.TimeIndexExt, 0
}

func readOffsets(t *testing.T, path string, base int64) []index.OffsetEntry {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ix, _ := indextest.ParseOffsetIndex(b, base, path)
	return ix.Entries
}

func readTimes(t *testing.T, path string, base int64) []index.TimeEntry {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ix, _ := indextest.ParseTimeIndex(b, base, path)
	return ix.Entries
}

func writeOffsets(t *testing.T, path string, base int64, es []index.OffsetEntry) {
	t.Helper()
	var b []byte
	for _, e := range es {
		var err error
		if b, err = index.AppendOffsetEntry(b, base, e); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func writeTimes(t *testing.T, path string, base int64, es []index.TimeEntry) {
	t.Helper()
	var b []byte
	for _, e := range es {
		var err error
		if b, err = index.AppendTimeEntry(b, base, e); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// batchHolding returns the index of the batch whose offsets reach o first.
func batchHolding(bs []batchInfo, o int64) int {
	for i, b := range bs {
		if b.last >= o {
			return i
		}
	}
	return -1
}

func TestCheckFindsProblems(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tamper func(t *testing.T, log, idx, tidx string, bs []batchInfo)
		file   string // ".index", ".timeindex", ".txnindex" or ".log"
		entry  int    // -1: not about an entry
		msg    string
	}{{
		name: "offset entry off a batch boundary",
		tamper: func(t *testing.T, log, idx, tidx string, bs []batchInfo) {
			es := readOffsets(t, idx, 0)
			es[1].Position++
			writeOffsets(t, idx, 0, es)
		},
		file: layout.IndexExt, entry: 1, msg: "not where a batch starts",
	}, {
		name: "offset entries out of order",
		tamper: func(t *testing.T, log, idx, tidx string, bs []batchInfo) {
			es := readOffsets(t, idx, 0)
			es[1], es[2] = es[2], es[1]
			writeOffsets(t, idx, 0, es)
		},
		file: layout.IndexExt, entry: 2, msg: "not above the previous entry",
	}, {
		name: "offset entry past the data",
		tamper: func(t *testing.T, log, idx, tidx string, bs []batchInfo) {
			last := bs[len(bs)-1]
			es := append(readOffsets(t, idx, 0), index.OffsetEntry{Offset: last.last + 10, Position: int32(last.pos + 100000)})
			writeOffsets(t, idx, 0, es)
		},
		file: layout.IndexExt, entry: -2, msg: "past the end of the .log",
	}, {
		name: "offset entry below the batch before it",
		tamper: func(t *testing.T, log, idx, tidx string, bs []batchInfo) {
			es := readOffsets(t, idx, 0)
			es[2].Offset = es[1].Offset + 1
			writeOffsets(t, idx, 0, es)
		},
		file: layout.IndexExt, entry: 2, msg: "would start past the batch holding them",
	}, {
		name: "offset entry beyond its batches",
		tamper: func(t *testing.T, log, idx, tidx string, bs []batchInfo) {
			es := readOffsets(t, idx, 0)
			es[len(es)-1].Offset = bs[len(bs)-1].last + 5
			writeOffsets(t, idx, 0, es)
		},
		file: layout.IndexExt, entry: -2, msg: "no batch from byte",
	}, {
		name: "time entry the log does not support",
		tamper: func(t *testing.T, log, idx, tidx string, bs []batchInfo) {
			es := readTimes(t, tidx, 0)
			es[len(es)-1].Timestamp += 1000
			writeTimes(t, tidx, 0, es)
		},
		file: layout.TimeIndexExt, entry: -2, msg: "no record up to offset",
	}, {
		name: "time entry pointing past the batch that reached its timestamp",
		tamper: func(t *testing.T, log, idx, tidx string, bs []batchInfo) {
			es := readTimes(t, tidx, 0)
			es[1].Offset = es[2].Offset
			writeTimes(t, tidx, 0, es)
		},
		file: layout.TimeIndexExt, entry: 1, msg: "already reaches timestamp",
	}, {
		name: "time entry past the data",
		tamper: func(t *testing.T, log, idx, tidx string, bs []batchInfo) {
			es := readTimes(t, tidx, 0)
			last := es[len(es)-1]
			es = append(es, index.TimeEntry{Timestamp: last.Timestamp + 1, Offset: bs[len(bs)-1].last + 1})
			writeTimes(t, tidx, 0, es)
		},
		file: layout.TimeIndexExt, entry: -2, msg: "past the last offset",
	}, {
		name: "garbage after the entries",
		tamper: func(t *testing.T, log, idx, tidx string, bs []batchInfo) {
			testutil.AppendBytes(t, idx, []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 9})
		},
		file: layout.IndexExt, entry: -2, msg: "",
	}, {
		name: "a partial entry",
		tamper: func(t *testing.T, log, idx, tidx string, bs []batchInfo) {
			testutil.AppendBytes(t, tidx, []byte{1, 2, 3})
		},
		file: layout.TimeIndexExt, entry: -2, msg: "do not make a whole entry",
	}, {
		name: "a corrupt batch in the log",
		tamper: func(t *testing.T, log, idx, tidx string, bs []batchInfo) {
			flipByte(t, log, bs[len(bs)/2].pos+70)
		},
		file: layout.LogExt, entry: -1, msg: "checksum mismatch",
	}, {
		name: "a torn last batch",
		tamper: func(t *testing.T, log, idx, tidx string, bs []batchInfo) {
			st, err := os.Stat(log)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(log, st.Size()-10); err != nil {
				t.Fatal(err)
			}
		},
		file: layout.LogExt, entry: -1, msg: "recovery would truncate",
	}, {
		name: "an aborted transaction missing from .txnindex",
		tamper: func(t *testing.T, log, idx, tidx string, bs []batchInfo) {
			path := strings.TrimSuffix(log, layout.LogExt) + layout.TxnIndexExt
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, b[index.TxnEntrySize:], 0o644); err != nil {
				t.Fatal(err)
			}
		},
		file: layout.TxnIndexExt, entry: 0, msg: "read_committed consumers would receive",
	}, {
		name: "a .txnindex entry with no abort in the log",
		tamper: func(t *testing.T, log, idx, tidx string, bs []batchInfo) {
			path := strings.TrimSuffix(log, layout.LogExt) + layout.TxnIndexExt
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			binary.BigEndian.PutUint64(b[18:], binary.BigEndian.Uint64(b[18:])+1)
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
		},
		file: layout.TxnIndexExt, entry: 0, msg: "no transaction is aborted at this offset",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			dir, log, idx, tidx, _ := checkFixture(t)
			bs := batchesOf(t, log)
			tc.tamper(t, log, idx, tidx, bs)
			before := files(t, dir)
			rep := mustPartition(t, dir, all(Check))
			if got := files(t, dir); !equalFiles(got, before) {
				t.Fatalf("--check wrote: %s", diffNames(got, before))
			}
			if rep.Counts[Problem] == 0 {
				t.Fatalf("no problem found:\n%s", findingsText(rep))
			}
			var found bool
			for _, f := range rep.Findings {
				if f.Severity != Problem || !strings.HasSuffix(f.File, tc.file) || !strings.Contains(f.Msg, tc.msg) {
					continue
				}
				if tc.entry >= 0 && f.Entry != tc.entry || tc.entry == -2 && f.Entry < 0 {
					continue
				}
				if f.Pos < 0 && tc.file != layout.TxnIndexExt {
					t.Errorf("problem without a position: %s", f)
				}
				found = true
			}
			if !found {
				t.Errorf("no problem in %s (entry %d) saying %q:\n%s", tc.file, tc.entry, tc.msg, findingsText(rep))
			}
		})
	}
}

func flipByte(t *testing.T, path string, pos int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[pos] ^= 0xff
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCheckLegitimateDifferences: what a live broker writes differently
// is a difference, not a problem, and fails only under Strict.
func TestCheckLegitimateDifferences(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tamper func(t *testing.T, log, idx, tidx string, bs []batchInfo)
		msg    string
	}{{
		name: "preallocated zero tail",
		tamper: func(t *testing.T, log, idx, tidx string, bs []batchInfo) {
			testutil.AppendBytes(t, idx, make([]byte, 8*1000))
			testutil.AppendBytes(t, tidx, make([]byte, 12*1000))
		},
		msg: "preallocated index of an active segment",
	}, {
		name: "exact offset of the largest timestamp",
		tamper: func(t *testing.T, log, idx, tidx string, bs []batchInfo) {
			es := readTimes(t, tidx, 0)
			for i, e := range es {
				if b := bs[batchHolding(bs, e.Offset)]; b.base < b.last {
					es[i].Offset = b.base
				}
			}
			writeTimes(t, tidx, 0, es)
		},
		msg: "exact offset of the record with the largest timestamp",
	}, {
		name: "entries of a broker that restarted",
		tamper: func(t *testing.T, log, idx, tidx string, bs []batchInfo) {
			es := readOffsets(t, idx, 0)
			writeOffsets(t, idx, 0, append(es[:1:1], es[2:]...))
			ts := readTimes(t, tidx, 0)
			writeTimes(t, tidx, 0, append(ts[:1:1], ts[2:]...))
		},
		msg: "is missing an entry recovery writes",
	}, {
		name: "a follower's append of several batches",
		tamper: func(t *testing.T, log, idx, tidx string, bs []batchInfo) {
			es := readOffsets(t, idx, 0)
			i := batchHolding(bs, es[1].Offset)
			// The entry indexes the last offset of the batch after its own,
			// as if both came in one append.
			es[1].Offset = bs[i+1].last
			writeOffsets(t, idx, 0, es)
		},
		msg: "is an entry recovery does not write",
	}, {
		name: "an old leader indexing first offsets",
		tamper: func(t *testing.T, log, idx, tidx string, bs []batchInfo) {
			es := readOffsets(t, idx, 0)
			for i := range es {
				es[i].Offset = bs[batchHolding(bs, es[i].Offset)].base
			}
			writeOffsets(t, idx, 0, es)
		},
		msg: "is an entry recovery does not write",
	}, {
		name: "a close entry from a shutdown",
		tamper: func(t *testing.T, log, idx, tidx string, bs []batchInfo) {
			ts := readTimes(t, tidx, 0)
			// The running maximum at some batch between the first two
			// entries, as a broker stopping there would have written it.
			max, at := ts[0].Timestamp, ts[0].Offset
			for _, b := range bs[batchHolding(bs, ts[0].Offset)+1 : batchHolding(bs, ts[1].Offset)] {
				if b.maxTS > max {
					max, at = b.maxTS, b.last
				}
			}
			if at == ts[0].Offset {
				t.Skip("no batch between the first two entries raises the timestamp")
			}
			writeTimes(t, tidx, 0, append([]index.TimeEntry{ts[0], {Timestamp: max, Offset: at}}, ts[1:]...))
		},
		msg: "is an entry recovery does not write",
	}, {
		name: "a missing .index",
		tamper: func(t *testing.T, log, idx, tidx string, bs []batchInfo) {
			if err := os.Remove(idx); err != nil {
				t.Fatal(err)
			}
		},
		msg: "absent; a broker rebuilds it",
	}, {
		name: "a missing .timeindex",
		tamper: func(t *testing.T, log, idx, tidx string, bs []batchInfo) {
			if err := os.Remove(tidx); err != nil {
				t.Fatal(err)
			}
		},
		msg: "absent; a broker creates it empty",
	}, {
		// The loader recovers a segment without its offset index, which
		// rebuilds the time index too.
		name: "a missing .index and .timeindex",
		tamper: func(t *testing.T, log, idx, tidx string, bs []batchInfo) {
			if err := errors.Join(os.Remove(idx), os.Remove(tidx)); err != nil {
				t.Fatal(err)
			}
		},
		msg: "absent; a broker recovers the segment when it loads it (no offset index), which rebuilds both",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			dir, log, idx, tidx, _ := checkFixture(t)
			tc.tamper(t, log, idx, tidx, batchesOf(t, log))
			rep := mustPartition(t, dir, all(Check))
			if rep.Counts[Problem] != 0 || !strings.Contains(findingsText(rep), tc.msg) {
				t.Fatalf("want no problem and a finding saying %q:\n%s", tc.msg, findingsText(rep))
			}
			o := all(Check)
			o.Strict = true
			if rep := mustPartition(t, dir, o); rep.Counts[Problem] == 0 {
				t.Errorf("--strict: no problem:\n%s", findingsText(rep))
			}
		})
	}
}

// TestCheckV0TimeIndex: a magic 0 segment has no timestamps, so any time
// index entry is unsupported.
func TestCheckV0TimeIndex(t *testing.T) {
	dir := genPartition(t, gen.Options{Magic: 0, Records: 300, SegmentBytes: 1 << 20, Seed: 2})
	tidx := filepath.Join(dir, layout.SegmentName(0, layout.TimeIndexExt))
	if b, err := os.ReadFile(tidx); err != nil || len(b) != 0 {
		t.Fatalf("gen's v0 .timeindex: %d bytes, %v; want empty", len(b), err)
	}
	writeTimes(t, tidx, 0, []index.TimeEntry{{Timestamp: 5, Offset: 3}})
	rep := mustPartition(t, dir, all(Check))
	if rep.Counts[Problem] != 1 || !strings.Contains(findingsText(rep), "no record up to offset 3") {
		t.Errorf("want one unsupported-timestamp problem:\n%s", findingsText(rep))
	}
}

// TestCheckKafkaSamples: every real broker log directory passes --check.
// Their indexes were written by live brokers, so differences are expected;
// problems are not.
func TestCheckKafkaSamples(t *testing.T) {
	root := kafkasamples.Dir("logdirs")
	dirs, err := filepath.Glob(filepath.Join(root, "*", "*"))
	if err != nil || len(dirs) == 0 {
		kafkasamples.Skip(t, err)
	}
	n, both := 0, 0
	for _, d := range dirs {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			continue
		}
		p, err := layout.ReadPartition(d)
		if err != nil || len(p.Segments) == 0 {
			continue
		}
		n++
		rep := mustPartition(t, d, all(Check))
		if rep.Counts[Problem] != 0 {
			t.Errorf("%s:\n%s", d, findingsText(rep))
		}
		// Most samples lack the active segment's indexes: the broker
		// recovers such a segment, so no time index is left empty.
		if s := p.Segments[0]; s.Log != "" && s.Index == "" && s.TimeIndex == "" {
			both++
			if text := findingsText(rep); !strings.Contains(text, "rebuilds both") || strings.Contains(text, "creates it empty") {
				t.Errorf("%s: both indexes absent:\n%s", d, text)
			}
		}
	}
	if both == 0 {
		t.Error("no sample segment without its indexes")
	}
	if n < 20 {
		t.Errorf("only %d sample partitions checked", n)
	}
	t.Logf("%d sample partitions checked", n)
}
