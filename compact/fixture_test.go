package compact

import (
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/logtool/logtool/index"
	"github.com/logtool/logtool/internal/testkit/indextest"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/codec"
	"github.com/logtool/logtool/logfmt/layout"
	"github.com/logtool/logtool/logfmt/snapshot"
)

// t0 is the timestamp of fixture records.
const t0 = int64(1_700_000_000_000)

// largeTimestamp is LogCleanerTest's: delete horizons set at it still fit.
const largeTimestamp = math.MaxInt64 - 86_400_000 - 1

// logBuilder writes a partition directory batch by batch, the way
// LogCleanerTest appends to a log: keys and values are decimal strings,
// every append is one batch, and roll starts a new segment.
type logBuilder struct {
	t        *testing.T
	dir      string
	segs     []*fixtureSeg
	next     int64
	ts       int64
	seqs     map[int64]int32
	txnFirst map[int64]int64
	magic    int8
	codec    codec.Type
	prods    map[int64]*snapshot.Entry // the broker's producer state, written as a snapshot by flush
}

type fixtureSeg struct {
	base    int64
	data    []byte
	aborted []index.AbortedTxn
}

func newLog(t *testing.T) *logBuilder {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "test-0")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b := &logBuilder{t: t, dir: dir, ts: t0, seqs: map[int64]int32{}, txnFirst: map[int64]int64{}, magic: 2, prods: map[int64]*snapshot.Entry{}}
	b.segs = []*fixtureSeg{{base: 0}}
	return b
}

func (b *logBuilder) cur() *fixtureSeg { return b.segs[len(b.segs)-1] }

// roll starts a new segment at the log end offset.
func (b *logBuilder) roll() *logBuilder {
	b.segs = append(b.segs, &fixtureSeg{base: b.next})
	return b
}

// skip leaves a gap of n offsets, as a compacted log has.
func (b *logBuilder) skip(n int64) *logBuilder {
	b.next += n
	return b
}

type kv struct {
	key, value []byte
}

func rec(k int) kv     { s := []byte(strconv.Itoa(k)); return kv{s, s} }
func recv(k, v int) kv { return kv{[]byte(strconv.Itoa(k)), []byte(strconv.Itoa(v))} }
func tomb(k int) kv    { return kv{[]byte(strconv.Itoa(k)), nil} }
func keyless(v int) kv { return kv{nil, []byte(strconv.Itoa(v))} }
func keys(ks ...int) []kv {
	out := make([]kv, len(ks))
	for i, k := range ks {
		out[i] = rec(k)
	}
	return out
}

func (b *logBuilder) records(kvs []kv) []logfmt.Record {
	recs := make([]logfmt.Record, len(kvs))
	for i, r := range kvs {
		b.ts++
		recs[i] = logfmt.Record{Offset: b.next + int64(i), Timestamp: b.ts, Key: r.key, Value: r.value}
		if b.magic == 0 {
			recs[i].Timestamp = logfmt.NoTimestamp
		}
	}
	return recs
}

func (b *logBuilder) write(entry []byte, n int) {
	b.cur().data = append(b.cur().data, entry...)
	b.next += int64(n)
}

// plain appends one batch without a producer; legacy magics write one
// message per record, or one wrapper when a codec is set.
func (b *logBuilder) plain(kvs ...kv) *logBuilder {
	recs := b.records(kvs)
	switch {
	case b.magic == 2:
		o := logfmt.DefaultBatchOptions(b.next)
		o.Compression = b.codec
		b.batch(o, recs)
	case b.codec != codec.None:
		out, err := logfmt.AppendLegacyWrapper(nil, logfmt.LegacyWrapperOptions{Magic: b.magic, Compression: b.codec, TimestampType: logfmt.CreateTime}, recs)
		if err != nil {
			b.t.Fatal(err)
		}
		b.write(out, len(recs))
	default:
		for _, r := range recs {
			b.write(logfmt.AppendLegacyMessage(nil, b.magic, r.Offset, 0, r.Timestamp, r.Key, r.Value), 1)
		}
	}
	return b
}

func (b *logBuilder) batch(o logfmt.BatchOptions, recs []logfmt.Record) {
	out, err := logfmt.AppendBatch(nil, o, recs)
	if err != nil {
		b.t.Fatal(err)
	}
	b.write(out, len(recs))
}

// producerBatch appends one batch of an idempotent or transactional producer.
func (b *logBuilder) producerBatch(pid int64, epoch int16, txn bool, kvs ...kv) *logBuilder {
	o := logfmt.DefaultBatchOptions(b.next)
	o.ProducerID, o.ProducerEpoch, o.BaseSequence, o.Transactional = pid, epoch, b.seqs[pid], txn
	o.Compression = b.codec
	if _, open := b.txnFirst[pid]; txn && !open {
		b.txnFirst[pid] = b.next
	}
	b.seqs[pid] += int32(len(kvs))
	recs := b.records(kvs)
	b.batch(o, recs)
	e := b.producer(pid, epoch)
	e.LastOffset, e.LastSequence, e.Timestamp = b.next-1, b.seqs[pid]-1, recs[len(recs)-1].Timestamp
	if txn && e.CurrentTxnFirstOffset < 0 {
		e.CurrentTxnFirstOffset = o.BaseOffset
	}
	return b
}

// producer is the state entry of pid, reset the way a new epoch resets it.
func (b *logBuilder) producer(pid int64, epoch int16) *snapshot.Entry {
	e := b.prods[pid]
	if e == nil || e.Epoch != epoch {
		e = &snapshot.Entry{ProducerID: pid, Epoch: epoch, LastSequence: -1, LastOffset: -1, CurrentTxnFirstOffset: -1}
		b.prods[pid] = e
	}
	return e
}

func (b *logBuilder) txn(pid int64, ks ...int) *logBuilder {
	return b.producerBatch(pid, 0, true, keys(ks...)...)
}
func (b *logBuilder) idem(pid int64, ks ...int) *logBuilder {
	return b.producerBatch(pid, 0, false, keys(ks...)...)
}

// marker appends a COMMIT or ABORT marker; an abort is indexed in the
// segment's .txnindex as the broker would.
func (b *logBuilder) marker(pid int64, commit bool) *logBuilder {
	t := logfmt.ControlAbort
	if commit {
		t = logfmt.ControlCommit
	}
	o := logfmt.DefaultBatchOptions(b.next)
	o.ProducerID, o.ProducerEpoch, o.Transactional, o.Control = pid, 0, true, true
	first, open := b.txnFirst[pid]
	delete(b.txnFirst, pid)
	if !commit && open {
		lso := b.next + 1
		for _, f := range b.txnFirst {
			lso = min(lso, f)
		}
		b.cur().aborted = append(b.cur().aborted, index.AbortedTxn{ProducerID: pid, FirstOffset: first, LastOffset: b.next, LastStableOffset: lso})
	}
	b.ts++
	b.batch(o, []logfmt.Record{{Offset: b.next, Timestamp: b.ts, Key: logfmt.ControlKey(t), Value: logfmt.AppendEndTxnMarker(nil, logfmt.EndTxnMarker{})}})
	e := b.producer(pid, 0)
	e.CurrentTxnFirstOffset, e.Timestamp = -1, b.ts
	return b
}

func (b *logBuilder) commit(pid int64) *logBuilder { return b.marker(pid, true) }
func (b *logBuilder) abort(pid int64) *logBuilder  { return b.marker(pid, false) }

// flush writes every segment with the indexes recovery builds. It can be
// called again after more appends: segments are rewritten whole.
func (b *logBuilder) flush() string {
	b.t.Helper()
	for _, s := range b.segs {
		name := func(ext string) string { return filepath.Join(b.dir, layout.SegmentName(s.base, ext)) }
		if err := os.WriteFile(name(layout.LogExt), s.data, 0o644); err != nil {
			b.t.Fatal(err)
		}
		rec := index.NewRecovery(s.base, index.DefaultIntervalBytes)
		for pos := 0; pos < len(s.data); {
			n := int(int32(uint32(s.data[pos+8])<<24|uint32(s.data[pos+9])<<16|uint32(s.data[pos+10])<<8|uint32(s.data[pos+11]))) + logfmt.LogOverhead
			bt := logfmt.Batch{Data: s.data[pos : pos+n]}
			rec.Add(bt.LastOffset(), bt.MaxTimestamp(), n)
			pos += n
		}
		rec.Finish()
		ib, err := rec.OffsetIndexBytes()
		if err != nil {
			b.t.Fatal(err)
		}
		tb, err := rec.TimeIndexBytes()
		if err != nil {
			b.t.Fatal(err)
		}
		if err := os.WriteFile(name(layout.IndexExt), ib, 0o644); err != nil {
			b.t.Fatal(err)
		}
		if err := os.WriteFile(name(layout.TimeIndexExt), tb, 0o644); err != nil {
			b.t.Fatal(err)
		}
		if len(s.aborted) > 0 {
			var xb []byte
			for _, a := range s.aborted {
				xb = index.AppendAbortedTxn(xb, a)
			}
			if err := os.WriteFile(name(layout.TxnIndexExt), xb, 0o644); err != nil {
				b.t.Fatal(err)
			}
		}
	}
	// A broker that shuts down cleanly snapshots its producer state.
	var entries []snapshot.Entry
	for _, pid := range slices.Sorted(maps.Keys(b.prods)) {
		entries = append(entries, *b.prods[pid])
	}
	if err := os.WriteFile(filepath.Join(b.dir, layout.SegmentName(b.next, layout.SnapshotExt)), snapshot.Append(nil, entries), 0o644); err != nil {
		b.t.Fatal(err)
	}
	// The fixture's log was cleaned never: only later runs write segments.
	b.segs = b.segs[len(b.segs)-1:]
	b.segs[0].data, b.segs[0].aborted = nil, nil
	b.reopen()
	return b.dir
}

// reopen makes further appends go after whatever the directory's last
// segment holds now, so a test can clean, append, and clean again.
func (b *logBuilder) reopen() {
	p, err := layout.ReadPartition(b.dir)
	if err != nil {
		b.t.Fatal(err)
	}
	last := p.Segments[len(p.Segments)-1]
	data, err := os.ReadFile(last.Log)
	if err != nil {
		b.t.Fatal(err)
	}
	var aborted []index.AbortedTxn
	if last.TxnIndex != "" {
		x, err := os.ReadFile(last.TxnIndex)
		if err != nil {
			b.t.Fatal(err)
		}
		aborted, _ = indextest.ParseTxnIndex(x, last.TxnIndex)
	}
	b.segs = []*fixtureSeg{{base: last.Base, data: data, aborted: aborted}}
}

// view is a partition's content, read back for assertions.
type view struct {
	batches []viewBatch
}

type viewBatch struct {
	base, last    int64
	count         int
	magic         int8
	pid           int64
	lastSeq       int32
	control, txn  bool
	horizon       int64
	data          []byte
	recs          []viewRec
	file          string
	pos           int64
	maxTimestamp  int64
	compression   codec.Type
	baseTimestamp int64
}

type viewRec struct {
	offset     int64
	key, value []byte
	ts         int64
}

func readView(t *testing.T, dir string) view {
	t.Helper()
	p, err := layout.ReadPartition(dir)
	if err != nil {
		t.Fatal(err)
	}
	var v view
	var it logfmt.RecordIter
	for _, s := range p.Segments {
		f, err := logfmt.OpenSegment(s.Log)
		if err != nil {
			t.Fatal(err)
		}
		for f.Next() {
			b := f.Batch()
			if err := b.Validate(); err != nil {
				t.Fatalf("%s: %v", s.Log, err)
			}
			vb := viewBatch{base: b.EntryOffset(), last: b.LastOffset(), magic: b.Magic(), pid: -1, horizon: -1,
				data: slices.Clone(b.Data), file: s.Log, pos: b.Pos, maxTimestamp: b.MaxTimestamp(), compression: b.Compression()}
			if b.Magic() >= 2 {
				h := b.Header()
				vb.pid, vb.lastSeq, vb.control, vb.txn, vb.horizon = h.ProducerID(), h.LastSequence(), h.IsControl(), h.IsTransactional(), h.DeleteHorizon()
				vb.baseTimestamp = h.BaseTimestamp()
			}
			if err := it.Reset(b); err != nil {
				t.Fatal(err)
			}
			first := true
			for it.Next() {
				r := it.Record()
				if first && b.Magic() < 2 {
					vb.base = r.Offset
				}
				first = false
				vb.recs = append(vb.recs, viewRec{offset: r.Offset, key: slices.Clone(r.Key), value: cloneValue(r.Value), ts: r.Timestamp})
			}
			if err := it.Err(); err != nil {
				t.Fatal(err)
			}
			vb.count = len(vb.recs)
			v.batches = append(v.batches, vb)
		}
		if err := f.Err(); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	return v
}

func cloneValue(b []byte) []byte {
	if b == nil {
		return nil
	}
	return slices.Clone(b)
}

// keys is LogTestUtils.keysInLog: keys of data records with a value.
func (v view) keys() []string {
	var out []string
	for _, b := range v.batches {
		if b.control {
			continue
		}
		for _, r := range b.recs {
			if r.key != nil && r.value != nil {
				out = append(out, string(r.key))
			}
		}
	}
	return out
}

// offsets is LogCleanerTest.offsetsInLog: offsets of records with a key and
// a value, markers included.
func (v view) offsets() []int64 {
	var out []int64
	for _, b := range v.batches {
		for _, r := range b.recs {
			if r.key != nil && r.value != nil {
				out = append(out, r.offset)
			}
		}
	}
	return out
}

// lastOffsets is lastOffsetsPerBatchInLog, empty batches included.
func (v view) lastOffsets() []int64 {
	var out []int64
	for _, b := range v.batches {
		out = append(out, b.last)
	}
	return out
}

func (v view) bases() []int64 {
	var out []int64
	for _, b := range v.batches {
		out = append(out, b.base)
	}
	return out
}

// lastSeqs is lastSequencesInLog: each producer's last sequence.
func (v view) lastSeqs() map[int64]int32 {
	out := map[int64]int32{}
	for _, b := range v.batches {
		if b.pid >= 0 && !b.control {
			out[b.pid] = b.lastSeq
		}
	}
	return out
}

func (v view) allKeys() []string {
	var out []string
	for _, b := range v.batches {
		for _, r := range b.recs {
			if !b.control {
				out = append(out, string(r.key))
			}
		}
	}
	return out
}

func ints(ks ...int) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = strconv.Itoa(k)
	}
	return out
}

func offs(os ...int64) []int64 { return os }

// testOptions keep every producer active, as LogCleanerTest's mock clock does.
func testOptions(now int64) Options {
	o := DefaultOptions(now)
	o.ProducerIDExpiration = math.MaxInt64
	o.MinCleanableRatio = 0
	o.OffsetMapMemory = 1 << 20
	return o
}

// cleanOnce is Cleaner.doClean(LogToClean(log, firstDirty, activeBase), now)
// with a map of the given number of slots (0: 1 MiB worth): one pass up to
// the active segment, whatever the eligibility. It returns the end offset.
func cleanOnce(t *testing.T, dir string, firstDirty, now int64, slots int64) int64 {
	t.Helper()
	o := testOptions(now)
	if slots > 0 {
		o.OffsetMapMemory = slots * bytesPerEntry
	}
	p, err := loadPartition(dir, &o)
	if err != nil {
		t.Fatal(err)
	}
	m := newTestMap(t, o.OffsetMapMemory)
	ps := &pass{c: &cleaner{o: &o, m: m}, p: p, firstDirty: firstDirty, upper: p.segs[len(p.segs)-1].Base,
		rewritten: map[int64]bool{}, legacy: newLegacyRule(p.segs, firstDirty, -1, &o)}
	if err := ps.run(); err != nil {
		t.Fatal(err)
	}
	return ps.stats.end
}

// twoPass is LogCleanerTest.runTwoPassClean: the same clean at now and
// after the delete retention.
func twoPass(t *testing.T, dir string, firstDirty, now int64) int64 {
	cleanOnce(t, dir, firstDirty, now, 0)
	return cleanOnce(t, dir, firstDirty, now+86_400_001, 0)
}

func eq[T comparable](t *testing.T, what string, got, want []T) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}
