package verify

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/internal/testkit/codectest"
	"github.com/logtool/logtool/internal/testkit/testutil"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/codec"
)

// dataBatch returns the n-th batch that is not a control batch.
func dataBatch(t testing.TB, path string, n int) testutil.BatchAt {
	t.Helper()
	for _, b := range testutil.Batches(t, path) {
		if !b.Control {
			if n == 0 {
				return b
			}
			n--
		}
	}
	t.Fatalf("%s has too few data batches", path)
	return testutil.BatchAt{}
}

// fixCRC rewrites the checksum of the entry at the start of e, so that a
// change under it is left for the deeper checks to find.
func fixCRC(e []byte) {
	if e[logfmt.MagicOffset] >= 2 {
		binary.BigEndian.PutUint32(e[17:], crc32.Checksum(e[21:], crc32.MakeTable(crc32.Castagnoli)))
		return
	}
	binary.BigEndian.PutUint32(e[12:], crc32.ChecksumIEEE(e[16:]))
}

// edit applies f to the bytes of path.
func edit(t testing.TB, path string, f func(b []byte) []byte) {
	t.Helper()
	mustWrite(t, path, f(mustRead(t, path)))
}

// segmentLogs returns the .log files of a partition, in offset order.
func segmentLogs(t testing.TB, fx fixture) []string {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join(fx.part, "*.log"))
	if err != nil || len(logs) < 2 {
		t.Fatalf("want at least two segments in %s: %v, %v", fx.part, logs, err)
	}
	return logs
}

// indexed generates a v2 partition whose segments are large enough for
// .index and .timeindex entries, with aborted transactions.
func indexed(t testing.TB) fixture {
	return generate(t, gen.Options{Records: 600, Keys: 50, ValueBytes: 100, BatchRecords: 5, Magic: 2, SegmentBytes: 16 << 10,
		TransactionalRatio: 0.3, AbortRatio: 0.5, Seed: 3})
}

func v2(t testing.TB) fixture     { return small(t, 2, codec.None) }
func v2lz4(t testing.TB) fixture  { return small(t, 2, codec.LZ4) }
func v0gzip(t testing.TB) fixture { return small(t, 0, codec.Gzip) }
func v1(t testing.TB) fixture     { return small(t, 1, codec.None) }
func putInt64(b []byte, v int64)  { binary.BigEndian.PutUint64(b, uint64(v)) }
func putInt32(b []byte, v int32)  { binary.BigEndian.PutUint32(b, uint32(v)) }

// corruptions are the classes of damage verify must find. mutate damages
// the fixture and returns the file and byte position the problem must name
// (-1: any position).
var corruptions = []struct {
	name    string
	fixture func(testing.TB) fixture
	deep    bool // only a deep run finds it; a shallow run must find nothing
	mutate  func(t testing.TB, fx fixture) (string, int64)
}{
	{"offset goes backwards", v2, false, func(t testing.TB, fx fixture) (string, int64) {
		log := segmentLogs(t, fx)[0]
		bs := testutil.Batches(t, log)
		edit(t, log, func(b []byte) []byte { copy(b[bs[2].Pos:], b[bs[1].Pos:bs[1].Pos+8]); return b })
		return log, bs[2].Pos
	}},
	{"legacy offset goes backwards", v1, false, func(t testing.TB, fx fixture) (string, int64) {
		log := segmentLogs(t, fx)[0]
		bs := testutil.Batches(t, log)
		edit(t, log, func(b []byte) []byte { putInt64(b[bs[3].Pos:], 0); return b })
		return log, bs[3].Pos
	}},
	{"offset below the segment base", v1, false, func(t testing.TB, fx fixture) (string, int64) {
		log := segmentLogs(t, fx)[1]
		edit(t, log, func(b []byte) []byte { putInt64(b, int64(binary.BigEndian.Uint64(b))-500); return b })
		return log, 0
	}},
	{"offset reaches the next segment", v2, false, func(t testing.TB, fx fixture) (string, int64) {
		logs := segmentLogs(t, fx)
		bs := testutil.Batches(t, logs[0])
		last := bs[len(bs)-1]
		next := mustRead(t, logs[1])[:8]
		edit(t, logs[0], func(b []byte) []byte { copy(b[last.Pos:], next); return b })
		return logs[0], last.Pos
	}},
	{"batch length", v2, false, func(t testing.TB, fx fixture) (string, int64) {
		log := segmentLogs(t, fx)[0]
		bs := testutil.Batches(t, log)
		edit(t, log, func(b []byte) []byte { putInt32(b[bs[1].Pos+8:], int32(bs[1].Size-12+3)); return b })
		return log, bs[1].Pos
	}},
	{"declared length past the end", v2, false, func(t testing.TB, fx fixture) (string, int64) {
		log := segmentLogs(t, fx)[0]
		bs := testutil.Batches(t, log)
		edit(t, log, func(b []byte) []byte { putInt32(b[bs[1].Pos+8:], 1<<30); return b })
		return log, bs[1].Pos
	}},
	{"magic", v2, false, func(t testing.TB, fx fixture) (string, int64) {
		log := segmentLogs(t, fx)[0]
		bs := testutil.Batches(t, log)
		edit(t, log, func(b []byte) []byte { b[bs[2].Pos+16] = 7; return b })
		return log, bs[2].Pos + 16
	}},
	{"magic 2 read as 1", v2, false, func(t testing.TB, fx fixture) (string, int64) {
		log := segmentLogs(t, fx)[0]
		bs := testutil.Batches(t, log)
		edit(t, log, func(b []byte) []byte { b[bs[2].Pos+16] = 1; return b })
		return log, bs[2].Pos
	}},
	{"crc", v2lz4, false, func(t testing.TB, fx fixture) (string, int64) {
		log := segmentLogs(t, fx)[1]
		bs := testutil.Batches(t, log)
		edit(t, log, func(b []byte) []byte { b[bs[0].Pos+19] ^= 0x10; return b })
		return log, bs[0].Pos
	}},
	{"legacy crc", v0gzip, false, func(t testing.TB, fx fixture) (string, int64) {
		log := segmentLogs(t, fx)[0]
		bs := testutil.Batches(t, log)
		edit(t, log, func(b []byte) []byte { b[bs[1].Pos+12] ^= 1; return b })
		return log, bs[1].Pos
	}},
	{"attributes under the checksum", v2, false, func(t testing.TB, fx fixture) (string, int64) {
		log := segmentLogs(t, fx)[0]
		bs := testutil.Batches(t, log)
		edit(t, log, func(b []byte) []byte { b[bs[1].Pos+22] ^= 0x08; return b })
		return log, bs[1].Pos
	}},
	{"compression id never assigned", v2, false, func(t testing.TB, fx fixture) (string, int64) {
		log := segmentLogs(t, fx)[0]
		bs := testutil.Batches(t, log)
		edit(t, log, func(b []byte) []byte {
			e := b[bs[1].Pos : bs[1].Pos+int64(bs[1].Size)]
			e[22] |= 0x07
			fixCRC(e)
			return b
		})
		return log, bs[1].Pos + 21
	}},
	{"negative leader epoch", v2, false, func(t testing.TB, fx fixture) (string, int64) {
		log := segmentLogs(t, fx)[0]
		bs := testutil.Batches(t, log)
		edit(t, log, func(b []byte) []byte { b[bs[1].Pos+12] = 0x80; return b })
		return log, bs[1].Pos + 12
	}},
	{"leader epoch the checkpoint lacks", v2, false, func(t testing.TB, fx fixture) (string, int64) {
		log := segmentLogs(t, fx)[0]
		bs := testutil.Batches(t, log)
		edit(t, log, func(b []byte) []byte { putInt32(b[bs[1].Pos+12:], 5); return b })
		return fx.file("leader-epoch-checkpoint"), 4
	}},
	{"records span more offsets than the batch", v2, false, func(t testing.TB, fx fixture) (string, int64) {
		log := segmentLogs(t, fx)[0]
		b1 := dataBatch(t, log, 1)
		edit(t, log, func(b []byte) []byte {
			e := b[b1.Pos : b1.Pos+int64(b1.Size)]
			putInt32(e[57:], 99)
			fixCRC(e)
			return b
		})
		return log, b1.Pos + 57
	}},
	{"record length varint", v2, true, func(t testing.TB, fx fixture) (string, int64) {
		log := segmentLogs(t, fx)[0]
		b1 := dataBatch(t, log, 1)
		edit(t, log, func(b []byte) []byte {
			e := b[b1.Pos : b1.Pos+int64(b1.Size)]
			e[61] = 0x7f // zigzag -64
			fixCRC(e)
			return b
		})
		return log, b1.Pos + 61
	}},
	{"record key length varint", v2, true, func(t testing.TB, fx fixture) (string, int64) {
		log := segmentLogs(t, fx)[0]
		b1 := dataBatch(t, log, 1)
		edit(t, log, func(b []byte) []byte {
			e := b[b1.Pos : b1.Pos+int64(b1.Size)]
			// length, attributes, timestamp delta 0, offset delta 0, then the key length
			e[61+4] = 0x7e // zigzag 63: past the record
			fixCRC(e)
			return b
		})
		return log, b1.Pos + 61
	}},
	{"compressed payload", v2lz4, true, func(t testing.TB, fx fixture) (string, int64) {
		log := segmentLogs(t, fx)[0]
		b1 := dataBatch(t, log, 1)
		edit(t, log, func(b []byte) []byte {
			e := b[b1.Pos : b1.Pos+int64(b1.Size)]
			e[61] ^= 0xff // the frame's magic number
			fixCRC(e)
			return b
		})
		return log, b1.Pos + 61
	}},
	{"legacy compressed payload", v0gzip, true, func(t testing.TB, fx fixture) (string, int64) {
		log := segmentLogs(t, fx)[0]
		bs := testutil.Batches(t, log)
		edit(t, log, func(b []byte) []byte {
			e := b[bs[1].Pos : bs[1].Pos+int64(bs[1].Size)]
			e[len(e)-5] ^= 0xff // the gzip trailer's checksum
			fixCRC(e)
			return b
		})
		return log, bs[1].Pos
	}},
	{"index entry", indexed, false, func(t testing.TB, fx fixture) (string, int64) {
		ix := fx.file("00000000000000000000.index")
		edit(t, ix, func(b []byte) []byte { b[8+7]++; return b })
		return ix, 8
	}},
	{"time index entry", indexed, false, func(t testing.TB, fx fixture) (string, int64) {
		ix := fx.file("00000000000000000000.timeindex")
		edit(t, ix, func(b []byte) []byte { b[12+2] = 0x7f; return b })
		return ix, 12
	}},
	{"time index partial entry", indexed, false, func(t testing.TB, fx fixture) (string, int64) {
		ix := fx.file("00000000000000000000.timeindex")
		size := int64(len(mustRead(t, ix)))
		edit(t, ix, func(b []byte) []byte { return append(b, 1, 2, 3) })
		return ix, size
	}},
	{"transaction index entry", indexed, false, func(t testing.TB, fx fixture) (string, int64) {
		ix := txnIndexWithEntries(t, fx)
		edit(t, ix, func(b []byte) []byte { b[2+7] ^= 0x01; return b })
		return ix, 0
	}},
	{"transaction index lost", indexed, false, func(t testing.TB, fx fixture) (string, int64) {
		ix := txnIndexWithEntries(t, fx)
		if err := os.Remove(ix); err != nil {
			t.Fatal(err)
		}
		return ix, -1
	}},
	{"recovery point line", v2, false, func(t testing.TB, fx fixture) (string, int64) {
		cp := filepath.Join(fx.dir, "recovery-point-offset-checkpoint")
		edit(t, cp, func(b []byte) []byte { return []byte(strings.Replace(string(b), "t 0 ", "t 0 9", 1)) })
		return cp, 4
	}},
	{"recovery point below the log end after a clean shutdown", v2, false, func(t testing.TB, fx fixture) (string, int64) {
		cp := filepath.Join(fx.dir, "recovery-point-offset-checkpoint")
		mustWrite(t, cp, []byte("0\n1\nt 0 3\n"))
		return cp, 4
	}},
	{"replication checkpoint malformed", v2, false, func(t testing.TB, fx fixture) (string, int64) {
		cp := filepath.Join(fx.dir, "replication-offset-checkpoint")
		mustWrite(t, cp, []byte("0\n1\nt 0 x\n"))
		return cp, 4
	}},
	{"checkpoint names a partition twice", v2, false, func(t testing.TB, fx fixture) (string, int64) {
		cp := filepath.Join(fx.dir, "replication-offset-checkpoint")
		mustWrite(t, cp, []byte("0\n2\nt 0 2\nt 0 3\n"))
		return cp, 10
	}},
	{"log start beyond the log end", v2, false, func(t testing.TB, fx fixture) (string, int64) {
		cp := filepath.Join(fx.dir, "log-start-offset-checkpoint")
		mustWrite(t, cp, []byte("0\n1\nt 0 100000\n"))
		return cp, 4
	}},
	{"cleaner offset beyond the log end", v2, false, func(t testing.TB, fx fixture) (string, int64) {
		cp := filepath.Join(fx.dir, "cleaner-offset-checkpoint")
		mustWrite(t, cp, []byte("0\n1\nt 0 100000\n"))
		return cp, 4
	}},
	{"per-partition cleaner checkpoint", v2, false, func(t testing.TB, fx fixture) (string, int64) {
		cp := fx.file("cleaner-checkpoint")
		mustWrite(t, cp, []byte("1\n100000 -1\n"))
		return cp, 2
	}},
	{"leader epoch beyond the log end", v2, false, func(t testing.TB, fx fixture) (string, int64) {
		cp := fx.file("leader-epoch-checkpoint")
		mustWrite(t, cp, []byte("0\n2\n0 0\n1 100000\n"))
		return cp, 8
	}},
	{"every segment gone", v2, false, func(t testing.TB, fx fixture) (string, int64) {
		for _, log := range segmentLogs(t, fx) {
			if err := os.Remove(log); err != nil {
				t.Fatal(err)
			}
		}
		return fx.part, -1
	}},
	{"clean shutdown marker", v2, false, func(t testing.TB, fx fixture) (string, int64) {
		m := filepath.Join(fx.dir, ".kafka_cleanshutdown")
		mustWrite(t, m, []byte(`{"version":0,"brokerEpoch":"x"}`))
		return m, 0
	}},
	{"leader epochs out of order", v1, false, func(t testing.TB, fx fixture) (string, int64) {
		cp := fx.file("leader-epoch-checkpoint")
		mustWrite(t, cp, []byte("0\n2\n3 0\n2 10\n"))
		return cp, 8
	}},
	{"producer snapshot", v2, false, func(t testing.TB, fx fixture) (string, int64) {
		snaps, _ := filepath.Glob(filepath.Join(fx.part, "*.snapshot"))
		edit(t, snaps[0], func(b []byte) []byte { b[len(b)-1] ^= 1; return b })
		return snaps[0], 2
	}},
	{"partition.metadata", v1, false, func(t testing.TB, fx fixture) (string, int64) {
		pm := fx.file("partition.metadata")
		edit(t, pm, func(b []byte) []byte { return []byte(strings.Replace(string(b), "version: 0", "version: x", 1)) })
		return pm, 0
	}},
	{"meta.properties", v1, false, func(t testing.TB, fx fixture) (string, int64) {
		mp := filepath.Join(fx.dir, "meta.properties")
		b := mustRead(t, mp)
		i := strings.Index(string(b), "version")
		edit(t, mp, func(b []byte) []byte { b[i] ^= 0xff; return b })
		return mp, int64(i)
	}},
	{"leftover .cleaned", v1, false, leftover(".log.cleaned")},
	{"leftover .swap", v2, false, leftover(".index.swap")},
	{"leftover .deleted", v0gzip, false, leftover(".timeindex.deleted")},
	{"torn last batch", v2lz4, false, truncateLast(func(b testutil.BatchAt) int64 { return b.Pos + int64(b.Size)/2 })},
	{"last batch cut inside its header", v1, false, truncateLast(func(b testutil.BatchAt) int64 { return b.Pos + 5 })},
	{"last batch cut off whole", v2, false, func(t testing.TB, fx fixture) (string, int64) {
		logs := segmentLogs(t, fx)
		log := logs[len(logs)-1]
		bs := testutil.Batches(t, log)
		edit(t, log, func(b []byte) []byte { return b[:bs[len(bs)-1].Pos] })
		// Only the checkpoint written at the clean shutdown knows the end.
		return filepath.Join(fx.dir, "recovery-point-offset-checkpoint"), 4
	}},
	{"segment cut inside a batch", v0gzip, false, func(t testing.TB, fx fixture) (string, int64) {
		log := segmentLogs(t, fx)[0]
		bs := testutil.Batches(t, log)
		edit(t, log, func(b []byte) []byte { return b[:bs[2].Pos+30] })
		return log, bs[2].Pos
	}},
	{"zero-filled tail", v1, false, func(t testing.TB, fx fixture) (string, int64) {
		log := segmentLogs(t, fx)[1]
		size := int64(len(mustRead(t, log)))
		edit(t, log, func(b []byte) []byte { return append(b, make([]byte, 4096)...) })
		return log, size
	}},
}

func txnIndexWithEntries(t testing.TB, fx fixture) string {
	t.Helper()
	ixs, _ := filepath.Glob(filepath.Join(fx.part, "*.txnindex"))
	for _, ix := range ixs {
		if len(mustRead(t, ix)) > 0 {
			return ix
		}
	}
	t.Fatalf("no .txnindex with entries in %s", fx.part)
	return ""
}

func leftover(suffix string) func(testing.TB, fixture) (string, int64) {
	return func(t testing.TB, fx fixture) (string, int64) {
		path := fx.file("00000000000000000000" + suffix)
		mustWrite(t, path, []byte("x"))
		return path, 0
	}
}

func truncateLast(at func(testutil.BatchAt) int64) func(testing.TB, fixture) (string, int64) {
	return func(t testing.TB, fx fixture) (string, int64) {
		logs := segmentLogs(t, fx)
		log := logs[len(logs)-1]
		bs := testutil.Batches(t, log)
		last := bs[len(bs)-1]
		edit(t, log, func(b []byte) []byte { return b[:at(last)] })
		return log, last.Pos
	}
}

func TestCorruptions(t *testing.T) {
	for _, tc := range corruptions {
		t.Run(tc.name, func(t *testing.T) {
			fx := tc.fixture(t)
			file, pos := tc.mutate(t, fx)
			if tc.deep {
				if r := run(t, Options{StrictIndexes: true}, fx.dir); r.problems != 0 {
					t.Fatalf("a shallow run finds %d problems, want none (the damage is under a good checksum):\n%s", r.problems, r)
				}
			}
			r := run(t, Options{Deep: tc.deep}, fx.dir)
			if len(r.failures) > 0 {
				t.Fatalf("failures: %v", r.failures)
			}
			found := r.problemsAbout(file)
			for _, f := range found {
				if pos < 0 || f.Pos == pos {
					return
				}
			}
			t.Errorf("no problem about %s at byte %d; found:\n%s", file, pos, r)
		})
	}
}

// TestDeepRecordSets covers damage that only a crafted record set shows
// under good outer checksums: inner legacy messages, record offsets,
// control records.
func TestDeepRecordSets(t *testing.T) {
	inner := func(t *testing.T, magic int8, mutate func(set []byte) []byte) []byte {
		var set []byte
		for i := int64(0); i < 3; i++ {
			set = logfmt.AppendLegacyMessage(set, magic, i, 0, 1_700_000_000_000+i, nil, fmt.Appendf(nil, "v%d", i))
		}
		compressed, err := codectest.Compress(nil, codec.Gzip, mutate(set), 1)
		if err != nil {
			t.Fatal(err)
		}
		return logfmt.AppendLegacyMessage(nil, 1, 102, int8(codec.Gzip), 1_700_000_000_002, nil, compressed)
	}
	v2batch := func(t *testing.T, o logfmt.BatchOptions, recs []logfmt.Record) []byte {
		b, err := logfmt.AppendBatch(nil, o, recs)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	control := logfmt.DefaultBatchOptions(7)
	control.Control, control.Transactional, control.ProducerID, control.ProducerEpoch = true, true, 9, 0
	gapped := logfmt.DefaultBatchOptions(20)
	gapped.LastOffsetDelta = 2
	for _, tc := range []struct {
		name string
		set  func(t *testing.T) []byte
		want string
	}{
		{"inner message checksum", func(t *testing.T) []byte {
			return inner(t, 1, func(set []byte) []byte { set[12+3] ^= 1; return set })
		}, "checksum mismatch"},
		{"inner message magic", func(t *testing.T) []byte {
			return inner(t, 0, func(set []byte) []byte { return set })
		}, "magic 0 inside a magic 1 wrapper"},
		{"inner offsets out of order", func(t *testing.T) []byte {
			return inner(t, 1, func(set []byte) []byte { putInt64(set, 5); return set })
		}, "offsets must increase"},
		{"record beyond the batch's last offset", func(t *testing.T) []byte {
			return v2batch(t, gapped, []logfmt.Record{{Offset: 20, Value: []byte("a")}, {Offset: 25, Value: []byte("b")}})
		}, "outside its batch's offsets"},
		{"control record key", func(t *testing.T) []byte {
			return v2batch(t, control, []logfmt.Record{{Offset: 7, Key: []byte{0, 0}, Value: []byte{0, 0, 0, 0, 0, 0}}})
		}, "control record key has 2 bytes"},
		{"transaction marker value", func(t *testing.T) []byte {
			return v2batch(t, control, []logfmt.Record{{Offset: 7, Key: logfmt.ControlKey(logfmt.ControlAbort), Value: []byte{0}}})
		}, "end transaction marker value has 1 bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "damaged.records")
			mustWrite(t, path, tc.set(t))
			if r := run(t, Options{}, path); r.problems != 0 {
				t.Fatalf("shallow: %d problems, want none:\n%s", r.problems, r)
			}
			r := run(t, Options{Deep: true}, path)
			if r.problems != 1 || len(r.findings) != 1 || !strings.Contains(r.findings[0].Msg, tc.want) || r.findings[0].Pos != 0 || r.findings[0].File != path {
				t.Fatalf("deep: want one problem at byte 0 saying %q, got:\n%s", tc.want, r)
			}
		})
	}
}
