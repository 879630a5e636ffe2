package export

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/logtool/logtool/fetch"
	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/internal/testkit/kafkasamples"
	"github.com/logtool/logtool/internal/testkit/kafkatest"
	"github.com/logtool/logtool/internal/testkit/testutil"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/codec"
	"github.com/logtool/logtool/logfmt/layout"
	"github.com/logtool/logtool/logfmt/logseg"
)

// line is an exported line decoded with encoding/json, byte strings decoded.
type line struct {
	Topic           string
	Partition       int32
	Offset          int64
	Timestamp       int64
	TimestampType   string
	Key, Value      []byte
	Headers         []kafkatest.Header
	ProducerID      int64
	ProducerEpoch   int16
	Sequence        int32
	IsTransactional bool
	LeaderEpoch     int32
	Transaction     string
	Control         string
}

func (l line) String() string {
	type plain line // without this method
	return fmt.Sprintf("%+v key=%q value=%q", plain(l), l.Key, l.Value)
}

// decodeBytes reads a key or value as written in either encoding.
func decodeBytes(t *testing.T, raw json.RawMessage, text bool) []byte {
	t.Helper()
	if string(raw) == "null" {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if text {
			return []byte(s)
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			t.Fatalf("bytes %s: %v", raw, err)
		}
		return b
	}
	var m struct{ Base64 string }
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("bytes %s: %v", raw, err)
	}
	b, err := base64.StdEncoding.DecodeString(m.Base64)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func parseLines(t *testing.T, out []byte, utf8 bool) []line {
	t.Helper()
	var got []line
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var raw struct {
			Topic           string
			Partition       int32
			Offset          int64
			Timestamp       int64
			TimestampType   string
			Key, Value      json.RawMessage
			Headers         []struct{ Key, Value json.RawMessage }
			ProducerID      int64
			ProducerEpoch   int16
			Sequence        int32
			IsTransactional bool
			LeaderEpoch     int32
			Transaction     string
			Control         *struct {
				Type             string
				CoordinatorEpoch int32
			}
		}
		d := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		d.DisallowUnknownFields()
		if err := d.Decode(&raw); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		l := line{Topic: raw.Topic, Partition: raw.Partition, Offset: raw.Offset, Timestamp: raw.Timestamp, TimestampType: raw.TimestampType,
			Key: decodeBytes(t, raw.Key, utf8), Value: decodeBytes(t, raw.Value, utf8), ProducerID: raw.ProducerID, ProducerEpoch: raw.ProducerEpoch,
			Sequence: raw.Sequence, IsTransactional: raw.IsTransactional, LeaderEpoch: raw.LeaderEpoch, Transaction: raw.Transaction}
		if raw.Control != nil {
			l.Control = fmt.Sprintf("%s/%d", raw.Control.Type, raw.Control.CoordinatorEpoch)
		}
		for _, h := range raw.Headers {
			var k string
			if json.Unmarshal(h.Key, &k) != nil {
				k = string(decodeBytes(t, h.Key, false))
			}
			l.Headers = append(l.Headers, kafkatest.Header{Key: k, Value: decodeBytes(t, h.Value, utf8)})
		}
		got = append(got, l)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}

// expected is what a consumer sees of a partition, from kmsg's decoding of
// its segments and an independent reading of its transactions.
func expected(t *testing.T, dir string, committed bool, logStart int64) []line {
	t.Helper()
	p, err := layout.ReadPartition(dir)
	if err != nil {
		t.Fatal(err)
	}
	var batches []kafkatest.Batch
	for _, s := range p.Segments {
		data, err := os.ReadFile(s.Log)
		if err != nil {
			t.Fatal(err)
		}
		entries, _ := kafkatest.Entries(data)
		for _, e := range entries {
			b, err := kafkatest.Decode(e)
			if err != nil {
				t.Fatalf("%s: %v", s.Log, err)
			}
			batches = append(batches, b)
		}
	}
	labels, lso := kafkatest.Transactions(batches)
	var want []line
	for i, b := range batches {
		if committed && (b.Control || labels[i] == "aborted") {
			continue
		}
		for _, r := range b.Records {
			if r.Offset < logStart {
				continue
			}
			if committed && lso >= 0 && r.Offset >= lso {
				return want
			}
			l := line{Topic: p.Dir.Topic, Partition: p.Dir.Partition, Offset: r.Offset, Timestamp: r.Timestamp, TimestampType: r.TimestampType,
				Key: r.Key, Value: r.Value, Headers: r.Headers, ProducerID: b.ProducerID, ProducerEpoch: b.ProducerEpoch, Sequence: r.Sequence,
				IsTransactional: b.Transactional, LeaderEpoch: b.LeaderEpoch}
			if !committed && b.Transactional && !b.Control {
				l.Transaction = labels[i]
			}
			if b.Control {
				typ := map[byte]string{0: "ABORT", 1: "COMMIT"}[r.Key[3]]
				l.Control = fmt.Sprintf("%s/%d", typ, int32(uint32(r.Value[2])<<24|uint32(r.Value[3])<<16|uint32(r.Value[4])<<8|uint32(r.Value[5])))
			}
			want = append(want, l)
		}
	}
	return want
}

func sameLines(t *testing.T, what string, got, want []line) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d lines, want %d", what, len(got), len(want))
	}
	for i := range min(len(got), len(want)) {
		g, w := got[i], want[i]
		if g.String() != w.String() || (g.Key == nil) != (w.Key == nil) || (g.Value == nil) != (w.Value == nil) {
			t.Fatalf("%s: line %d:\n got %v\nwant %v", what, i, g, w)
		}
	}
}

func exportDir(t *testing.T, dir string, o Options) ([]byte, fetch.Stats) {
	t.Helper()
	p, err := layout.ReadPartition(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	st, err := Partition(&out, p, o)
	if err != nil {
		t.Fatal(err)
	}
	return out.Bytes(), st
}

func genPartition(t *testing.T, o gen.Options) string {
	t.Helper()
	o.Out = t.TempDir()
	parts, err := gen.Generate(o)
	if err != nil {
		t.Fatal(err)
	}
	return parts[0].Dir
}

// TestRoundTrip: every field of every record of every generated shape (v0,
// v1, v2, every codec, transactions with aborts spanning segments,
// tombstones, headers, null keys) is exported as kmsg decodes it, under
// both isolation levels.
func TestRoundTrip(t *testing.T) {
	for magic := int8(0); magic <= 2; magic++ {
		for c := codec.None; c <= codec.Zstd; c++ {
			if !c.ValidFor(magic) {
				continue
			}
			for _, keys := range []int{0, 40} {
				name := fmt.Sprintf("v%d-%s-keys%d", magic, c, keys)
				t.Run(name, func(t *testing.T) {
					o := gen.Options{Topics: []string{"events"}, Records: 600, Keys: keys, ValueBytes: 50,
						BatchRecords: 9, SegmentBytes: 5000, Magic: magic, Compression: c, TombstoneRatio: 0.2, Seed: int64(magic)*10 + int64(c)}
					if magic == 2 {
						o.TransactionalRatio, o.AbortRatio = 0.4, 0.4
					}
					dir := genPartition(t, o)
					for _, iso := range []fetch.Isolation{fetch.ReadCommitted, fetch.ReadUncommitted} {
						o := Options{Fetch: fetch.DefaultOptions()}
						o.Fetch.Isolation = iso
						out, _ := exportDir(t, dir, o)
						sameLines(t, iso.String(), parseLines(t, out, false), expected(t, dir, iso == fetch.ReadCommitted, 0))
						// In small units on several goroutines: the same bytes.
						o.Workers, o.Fetch.UnitBytes = 3, 700
						p, _ := layout.ReadPartition(dir)
						var par bytes.Buffer
						if err := Run(&par, []*layout.Partition{p}, o, func(Result) {}); err != nil || !bytes.Equal(par.Bytes(), out) {
							t.Fatalf("%s in units: %v, %d bytes, want %d", iso, err, par.Len(), len(out))
						}
					}
				})
			}
		}
	}
}

// txnLog writes a partition directory by hand: segments of batches, each
// batch given as (producer, transactional, control type or -1, records).
type txnBatch struct {
	pid     int64
	txn     bool
	control logfmt.ControlType // with isControl
	isCtl   bool
	n       int
}

func writeTxnLog(t *testing.T, segments ...[]txnBatch) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "orders-3")
	var segs [][]testutil.Batch
	offset := int64(0)
	for _, seg := range segments {
		var bs []testutil.Batch
		for _, b := range seg {
			o := logfmt.DefaultBatchOptions(0)
			o.PartitionLeaderEpoch, o.ProducerID, o.ProducerEpoch, o.BaseSequence = 3, b.pid, 1, 0
			o.Transactional, o.Control = b.txn, b.isCtl
			var recs []logfmt.Record
			if b.isCtl {
				recs = []logfmt.Record{{Timestamp: 1000 + offset, Key: logfmt.ControlKey(b.control),
					Value: logfmt.AppendEndTxnMarker(nil, logfmt.EndTxnMarker{CoordinatorEpoch: 7})}}
			} else {
				for i := range b.n {
					recs = append(recs, logfmt.Record{Timestamp: 1000 + offset + int64(i),
						Key: fmt.Appendf(nil, "k%d", offset+int64(i)), Value: []byte("v")})
				}
			}
			bs = append(bs, testutil.Batch{Options: o, Records: recs})
			offset += int64(len(recs))
		}
		segs = append(segs, bs)
	}
	testutil.WriteLog(t, dir, segs...)
	return dir
}

func offsetsOf(lines []line) []int64 {
	var out []int64
	for _, l := range lines {
		out = append(out, l.Offset)
	}
	return out
}

// TestTransactions: aborted transactions are left out across segments, an
// ongoing one (no marker: the coordinator's ABORT never reached this log)
// stops read_committed at the last stable offset, interleaved producers
// are told apart, and a range starting inside an aborted transaction still
// leaves it out.
func TestTransactions(t *testing.T) {
	const a, b, c, idem = 11, 12, 13, 20
	dir := writeTxnLog(t,
		[]txnBatch{{pid: a, txn: true, n: 2}, {pid: idem, n: 1}, {pid: b, txn: true, n: 2}}, // 0-1 a, 2 idem, 3-4 b
		[]txnBatch{{pid: a, txn: true, n: 1}, {pid: a, isCtl: true, control: logfmt.ControlAbort}, // 5 a, 6 abort a
			{pid: b, isCtl: true, control: logfmt.ControlCommit}, {pid: idem, n: 2}}, // 7 commit b, 8-9 idem
		[]txnBatch{{pid: c, txn: true, n: 2}, {pid: idem, n: 1}, {pid: a, txn: true, n: 1}, // 10-11 c (never ends), 12 idem, 13 a
			{pid: a, isCtl: true, control: logfmt.ControlCommit}, {pid: idem, n: 1}}) // 14 commit a, 15 idem
	run := func(iso fetch.Isolation, from int64) ([]line, fetch.Stats) {
		o := Options{Fetch: fetch.DefaultOptions()}
		o.Fetch.Isolation, o.Fetch.FromOffset = iso, from
		out, st := exportDir(t, dir, o)
		return parseLines(t, out, false), st
	}
	got, st := run(fetch.ReadCommitted, fetch.NoOffset)
	if want := []int64{2, 3, 4, 8, 9}; !slices.Equal(offsetsOf(got), want) {
		t.Errorf("read_committed: offsets %v, want %v", offsetsOf(got), want)
	}
	if st.LastStableOffset != 10 || st.OngoingProducer != c || !st.StoppedAtLSO || st.LogEndOffset != 16 || st.AbortedRecords != 3 {
		t.Errorf("stats %+v", st)
	}
	sameLines(t, "read_committed vs kmsg", got, expected(t, dir, true, 0))

	got, _ = run(fetch.ReadUncommitted, fetch.NoOffset)
	sameLines(t, "read_uncommitted vs kmsg", got, expected(t, dir, false, 0))
	txn := map[int64]string{}
	for _, l := range got {
		txn[l.Offset] = l.Transaction + l.Control
	}
	for off, want := range map[int64]string{0: "aborted", 5: "aborted", 3: "committed", 6: "ABORT/7", 10: "ongoing", 13: "committed", 2: ""} {
		if txn[off] != want {
			t.Errorf("read_uncommitted offset %d: %q, want %q", off, txn[off], want)
		}
	}

	got, _ = run(fetch.ReadCommitted, 5)
	if want := []int64{8, 9}; !slices.Equal(offsetsOf(got), want) {
		t.Errorf("from offset 5: %v, want %v", offsetsOf(got), want)
	}
}

// TestUTF8: valid UTF-8 is written as text, escaped as JSON needs, and
// anything else is marked, so both decode back to the same bytes.
func TestUTF8(t *testing.T) {
	vals := [][]byte{[]byte("plain"), []byte("quote \" back \\ nl \n tab \t nul \x00 del \x7f é ✓"), {0xff, 0xfe, 'x'}, {}, nil}
	var recs []logfmt.Record
	for i, v := range vals {
		recs = append(recs, logfmt.Record{Offset: int64(i), Timestamp: 5, Key: v, Value: v,
			Headers: []logfmt.Header{{Key: v, Value: v}}})
	}
	recs[4].Headers[0].Key = []byte{}
	data, err := logfmt.AppendBatch(nil, logfmt.DefaultBatchOptions(0), recs)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "text-0")
	os.MkdirAll(dir, 0o755)
	if err := os.WriteFile(filepath.Join(dir, layout.SegmentName(0, ".log")), data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, enc := range []Encoding{Base64, UTF8} {
		out, _ := exportDir(t, dir, Options{Fetch: fetch.DefaultOptions(), Encoding: enc})
		if !jsonLines(out) {
			t.Fatalf("encoding %d: invalid JSON:\n%s", enc, out)
		}
		sameLines(t, fmt.Sprint("encoding ", enc), parseLines(t, out, enc == UTF8), expected(t, dir, true, 0))
		if enc == UTF8 && !bytes.Contains(out, []byte(`"value":"quote \" back \\ nl \n tab \t nul \u0000 del `+"\x7f é ✓\"")) ||
			enc == UTF8 && !bytes.Contains(out, []byte(`"value":{"base64":"//54"}`)) {
			t.Errorf("utf8 encoding:\n%s", out)
		}
	}
}

func jsonLines(out []byte) bool {
	for _, l := range bytes.Split(bytes.TrimSuffix(out, []byte("\n")), []byte("\n")) {
		if !json.Valid(l) {
			return false
		}
	}
	return true
}

// TestRanges: offset and time bounds give the contiguous offset range a
// consumer seeking with offsetsForTimes reads.
func TestRanges(t *testing.T) {
	dir := genPartition(t, gen.Options{Topics: []string{"events"}, Records: 500, Keys: 20, ValueBytes: 40, BatchRecords: 7,
		SegmentBytes: 4000, Magic: 2, Compression: codec.LZ4, TransactionalRatio: 0.3, AbortRatio: 0.5, Seed: 3})
	all := expected(t, dir, true, 0)
	for _, tc := range []struct {
		from, to int64
		fromT    int64
		toT      int64
	}{
		{from: 100, to: 250, fromT: fetch.NoTime, toT: fetch.NoTime},
		{from: fetch.NoOffset, to: fetch.NoOffset, fromT: all[50].Timestamp, toT: all[300].Timestamp},
		{from: 400, to: fetch.NoOffset, fromT: fetch.NoTime, toT: fetch.NoTime},
		{from: 10_000, to: fetch.NoOffset, fromT: fetch.NoTime, toT: fetch.NoTime},
	} {
		o := Options{Fetch: fetch.DefaultOptions()}
		o.Fetch.FromOffset, o.Fetch.ToOffset, o.Fetch.FromTime, o.Fetch.ToTime = tc.from, tc.to, tc.fromT, tc.toT
		out, _ := exportDir(t, dir, o)
		// The range in offsets, from an independent scan of the timestamps.
		lo, hi := int64(0), int64(1<<62)
		if tc.from != fetch.NoOffset {
			lo = tc.from
		}
		if tc.to != fetch.NoOffset {
			hi = tc.to + 1
		}
		if tc.fromT != fetch.NoTime {
			lo = max(lo, firstAtOrAfter(all, tc.fromT))
		}
		if tc.toT != fetch.NoTime {
			hi = min(hi, firstAtOrAfter(all, tc.toT+1))
		}
		var want []line
		for _, l := range all {
			if l.Offset >= lo && l.Offset < hi {
				want = append(want, l)
			}
		}
		sameLines(t, fmt.Sprintf("%+v", tc), parseLines(t, out, false), want)
	}
}

// firstAtOrAfter is the offset ListOffsets gives for ts; the records given
// are those a consumer sees, which holds that offset in generated data.
func firstAtOrAfter(all []line, ts int64) int64 {
	for _, l := range all {
		if l.Timestamp >= ts {
			return l.Offset
		}
	}
	return 1 << 62
}

// TestOutput: a file is written only when the export succeeds, and a .zst
// name gets zstd of the same lines.
func TestOutput(t *testing.T) {
	dirs := []string{
		genPartition(t, gen.Options{Topics: []string{"a"}, Records: 300, Keys: 10, Magic: 2, Seed: 1}),
		genPartition(t, gen.Options{Topics: []string{"b"}, Records: 300, Keys: 10, Magic: 1, Compression: codec.Gzip, Seed: 2}),
	}
	var parts []*layout.Partition
	var want []byte
	for _, d := range dirs {
		p, _ := layout.ReadPartition(d)
		parts = append(parts, p)
		out, _ := exportDir(t, d, Options{Fetch: fetch.DefaultOptions()})
		want = append(want, out...)
	}
	tmp := t.TempDir()
	for _, name := range []string{"out.jsonl", "out.jsonl.zst"} {
		path := filepath.Join(tmp, name)
		out, err := Create(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		var done []string
		// Small units, so that partitions are encoded in several pieces at once.
		o := Options{Fetch: fetch.DefaultOptions(), Workers: 3}
		o.Fetch.UnitBytes = 2000
		err = Run(out, parts, o, func(r Result) { done = append(done, r.Partition.Dir.Topic) })
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(path); err == nil {
			t.Fatalf("%s visible before Commit", name)
		}
		if err := out.Commit(); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(name, ".zst") {
			zr, err := zstd.NewReader(bytes.NewReader(got))
			if err != nil {
				t.Fatal(err)
			}
			got, err = io.ReadAll(zr)
			zr.Close()
			if err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(got, want) || !slices.Equal(done, []string{"a", "b"}) {
			t.Errorf("%s: %d bytes (want %d), done %v", name, len(got), len(want), done)
		}
	}
	// A failed run leaves nothing behind.
	logPath := filepath.Join(dirs[1], layout.SegmentName(0, ".log"))
	b, _ := os.ReadFile(logPath)
	b[len(b)/2] ^= 0xff
	os.WriteFile(logPath, b, 0o644)
	path := filepath.Join(tmp, "failed.jsonl")
	out, _ := Create(path, nil)
	err := Run(out, parts, Options{Fetch: fetch.DefaultOptions(), Workers: 2}, func(Result) {})
	if _, ok := logfmt.AsCorrupt(err); !ok {
		t.Fatalf("damaged log: %v, want a CorruptError", err)
	}
	out.Abort()
	if left, _ := filepath.Glob(filepath.Join(tmp, "failed*")); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
	// So does a Commit that fails before its rename.
	path = filepath.Join(tmp, "uncommitted.jsonl")
	out, _ = Create(path, nil)
	fmt.Fprintln(out, "{}")
	defer safefile.SetFaultHook(func(step safefile.Step, p string) error {
		if step == safefile.StepRename {
			return errors.New("injected")
		}
		return nil
	})()
	if err := out.Commit(); err == nil {
		t.Fatal("Commit with a failing rename succeeded")
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "uncommitted*")); len(left) > 0 {
		t.Errorf("left behind by a failed Commit: %v", left)
	}
}

// TestSamples exports real brokers' partitions and compares with kmsg.
func TestSamples(t *testing.T) {
	samples := kafkasamples.Dir("logdirs")
	dirs, _ := filepath.Glob(filepath.Join(samples, "*", "*-[0-9]*"))
	if len(dirs) == 0 {
		kafkasamples.Skip(t, errors.New("no samples at "+samples))
	}
	n := 0
	for _, dir := range dirs {
		if strings.Contains(dir, "__cluster_metadata") {
			continue
		}
		p, err := layout.ReadPartition(dir)
		if err != nil || len(p.Segments) == 0 {
			continue
		}
		logStart, _ := logseg.LogStartOffset(p)
		for _, iso := range []fetch.Isolation{fetch.ReadCommitted, fetch.ReadUncommitted} {
			o := Options{Fetch: fetch.DefaultOptions()}
			o.Fetch.Isolation = iso
			out, _ := exportDir(t, dir, o)
			got := parseLines(t, out, false)
			n += len(got)
			sameLines(t, dir+" "+iso.String(), got, expected(t, dir, iso == fetch.ReadCommitted, max(logStart, p.Segments[0].Base)))
		}
	}
	t.Logf("%d records from %d partitions", n, len(dirs))
}
