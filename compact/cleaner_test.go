package compact

import (
	"fmt"
	"maps"
	"testing"
)

// Ports of the scenarios of Kafka's LogCleanerTest that apply to an offline
// log: the same appends, the same cleans, the same surviving offsets and keys.

func TestDuplicateCheckAfterCleaning(t *testing.T) {
	b := newLog(t)
	b.idem(1, 1, 2, 3).idem(2, 3, 1, 4).idem(3, 1, 4).roll()
	dir := b.flush()
	cleanOnce(t, dir, 0, t0+1000, 0)
	v := readView(t, dir)
	eq(t, "last offsets", v.lastOffsets(), offs(2, 5, 7))
	if got, want := v.lastSeqs(), map[int64]int32{1: 2, 2: 2, 3: 1}; !maps.Equal(got, want) {
		t.Errorf("last sequences = %v, want %v", got, want)
	}
	eq(t, "keys", v.keys(), ints(2, 3, 1, 4))
	eq(t, "offsets", v.offsets(), offs(1, 3, 6, 7))

	// Another producer overwrites key 2: producer 1's batch empties but stays.
	b.idem(4, 2).roll()
	b.flush()
	cleanOnce(t, dir, 0, t0+2000, 0)
	v = readView(t, dir)
	if got, want := v.lastSeqs(), map[int64]int32{1: 2, 2: 2, 3: 1, 4: 0}; !maps.Equal(got, want) {
		t.Errorf("last sequences = %v, want %v", got, want)
	}
	eq(t, "last offsets", v.lastOffsets(), offs(2, 5, 7, 8))
	eq(t, "keys", v.keys(), ints(3, 1, 4, 2))
	eq(t, "offsets", v.offsets(), offs(3, 6, 7, 8))
}

func TestMultiPassSegmentCleaningWithAbortedTransactions(t *testing.T) {
	b := newLog(t)
	b.txn(1, 1, 2).txn(2, 2, 3).txn(1, 3, 4).commit(1).commit(2) // [0,1] [2,3] [4,5] 6 7
	b.txn(1, 2, 3).abort(1)                                      // [8,9] 10
	b.txn(2, 4, 5).txn(1, 5, 6).commit(1).abort(2)               // [11,12] [13,14] 15 16
	b.txn(2, 6, 7).commit(2).roll()                              // [17,18] 19
	dir := b.flush()
	want := []string{"1:8-10/11", "2:11-16/17"}
	eq(t, "aborted", abortedIn(t, dir), want)

	const retention = 50_000
	pass := func(firstDirty, now int64) int64 {
		o := testOptions(now)
		o.DeleteRetention = retention
		o.OffsetMapMemory = 4 * bytesPerEntry
		p, err := loadPartition(dir, &o)
		if err != nil {
			t.Fatal(err)
		}
		m := newTestMap(t, o.OffsetMapMemory)
		ps := &pass{c: &cleaner{o: &o, m: m}, p: p, firstDirty: firstDirty, upper: 20, rewritten: map[int64]bool{},
			legacy: newLegacyRule(p.segs, firstDirty, -1, &o)}
		if err := ps.run(); err != nil {
			t.Fatal(err)
		}
		return ps.stats.end
	}

	// Aborted data goes at once; the markers stay, and so does the index.
	dirty := pass(0, t0+1000)
	if dirty != 4 {
		t.Errorf("first pass ends at %d, want 4", dirty)
	}
	v := readView(t, dir)
	eq(t, "bases", v.bases(), offs(0, 2, 4, 6, 7, 10, 13, 15, 16, 17, 19))
	eq(t, "offsets", v.offsets(), offs(0, 2, 3, 4, 5, 6, 7, 10, 13, 14, 15, 16, 17, 18, 19))
	eq(t, "aborted", abortedIn(t, dir), want)

	// No aborted data is left: the markers stay but are no longer indexed.
	if dirty = pass(dirty, t0+1000); dirty != 14 {
		t.Errorf("second pass ends at %d, want 14", dirty)
	}
	v = readView(t, dir)
	eq(t, "bases", v.bases(), offs(0, 2, 4, 6, 7, 10, 13, 15, 16, 17, 19))
	eq(t, "offsets", v.offsets(), offs(0, 2, 4, 5, 6, 7, 10, 13, 14, 15, 16, 17, 18, 19))
	eq(t, "aborted", abortedIn(t, dir), nil)

	// After the delete retention the abort markers at 10 and 16 go.
	if dirty = pass(dirty, t0+1000+retention); dirty != 20 {
		t.Errorf("third pass ends at %d, want 20", dirty)
	}
	v = readView(t, dir)
	eq(t, "bases", v.bases(), offs(0, 2, 4, 6, 7, 13, 15, 17, 19))
	eq(t, "offsets", v.offsets(), offs(0, 2, 4, 5, 6, 7, 13, 15, 17, 18, 19))
	eq(t, "aborted", abortedIn(t, dir), nil)
}

func TestBasicTransactionAwareCleaning(t *testing.T) {
	b := newLog(t)
	b.txn(1, 1, 2).txn(2, 2, 3).txn(1, 3, 4).abort(1).commit(2).txn(1, 2).commit(1).roll()
	dir := b.flush()
	before := abortedIn(t, dir)
	cleanOnce(t, dir, 0, t0+1000, 0)
	v := readView(t, dir)
	eq(t, "keys", v.keys(), ints(3, 2))
	eq(t, "offsets", v.offsets(), offs(3, 6, 7, 8, 9))
	eq(t, "aborted", abortedIn(t, dir), before)
}

func TestCleanWithTransactionsSpanningSegments(t *testing.T) {
	b := newLog(t)
	b.txn(1, 1, 2).txn(3, 2, 3).txn(2, 3, 4).roll()
	b.txn(2, 5, 6).txn(3, 6, 7).txn(1, 7, 8).abort(2).txn(3, 8, 9).commit(3).txn(1, 9, 10).abort(1)
	dir := b.flush()
	// Only the first segment is cleanable; pid 1's transaction is undecided there.
	dirty := cleanOnce(t, dir, 0, t0+1000, 0)
	eq(t, "keys", readView(t, dir).keys(), ints(2, 3, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10))
	b.roll().txn(2, 11).txn(1, 12)
	b.flush()
	cleanOnce(t, dir, dirty, t0+2000, 0)
	eq(t, "keys", readView(t, dir).keys(), ints(2, 3, 6, 7, 8, 9, 11, 12))
}

func TestCommitMarkerRemoval(t *testing.T) {
	b := newLog(t)
	b.txn(1, 1).txn(1, 2, 3).commit(1).txn(1, 2).commit(1).roll()
	dir := b.flush()
	// The marker stays while records of its transaction do.
	dirty := cleanOnce(t, dir, 0, largeTimestamp, 0)
	v := readView(t, dir)
	eq(t, "keys", v.keys(), ints(1, 3, 2))
	eq(t, "offsets", v.offsets(), offs(0, 2, 3, 4, 5))

	b.txn(1, 1, 3).commit(1).roll()
	b.flush()
	dirty = cleanOnce(t, dir, dirty, largeTimestamp, 0)
	v = readView(t, dir)
	eq(t, "keys", v.keys(), ints(2, 1, 3))
	eq(t, "offsets", v.offsets(), offs(3, 4, 5, 6, 7, 8))

	// With nothing dirty the pass recopies the clean section: at the same
	// time the marker's horizon holds, at the end of time it has passed.
	dirty = cleanOnce(t, dir, dirty, largeTimestamp, 0)
	eq(t, "offsets", readView(t, dir).offsets(), offs(3, 4, 5, 6, 7, 8))
	cleanOnce(t, dir, dirty, 1<<63-1, 0)
	v = readView(t, dir)
	eq(t, "keys", v.keys(), ints(2, 1, 3))
	eq(t, "offsets", v.offsets(), offs(4, 5, 6, 7, 8))
}

func TestCommitMarkerRetentionWithEmptyBatch(t *testing.T) {
	b := newLog(t)
	b.txn(1, 2, 3).roll()                          // 0, 1
	b.txn(2, 2, 3).commit(2).roll()                // 2, 3, 4
	b.plain(rec(2)).plain(rec(3)).commit(1).roll() // 5, 6, 7
	dir := b.flush()

	dirty := cleanOnce(t, dir, 0, largeTimestamp, 0)
	v := readView(t, dir)
	eq(t, "keys", v.keys(), ints(2, 3))
	eq(t, "offsets", v.offsets(), offs(4, 5, 6, 7))
	eq(t, "last offsets", v.lastOffsets(), offs(1, 3, 4, 5, 6, 7))

	// The empty batches hold the producers' last sequences.
	dirty = cleanOnce(t, dir, dirty, largeTimestamp, 0)
	v = readView(t, dir)
	eq(t, "offsets", v.offsets(), offs(4, 5, 6, 7))
	eq(t, "last offsets", v.lastOffsets(), offs(1, 3, 4, 5, 6, 7))

	b.txn(2, 1).commit(2).roll() // 8, 9
	b.flush()
	dirty = cleanOnce(t, dir, dirty, largeTimestamp, 0)
	v = readView(t, dir)
	eq(t, "keys", v.keys(), ints(2, 3, 1))
	eq(t, "offsets", v.offsets(), offs(4, 5, 6, 7, 8, 9))
	eq(t, "last offsets", v.lastOffsets(), offs(1, 4, 5, 6, 7, 8, 9))

	twoPass(t, dir, dirty, largeTimestamp)
	v = readView(t, dir)
	eq(t, "keys", v.keys(), ints(2, 3, 1))
	eq(t, "offsets", v.offsets(), offs(5, 6, 7, 8, 9))
	eq(t, "last offsets", v.lastOffsets(), offs(1, 5, 6, 7, 8, 9))
}

func TestCleanEmptyControlBatch(t *testing.T) {
	b := newLog(t)
	b.commit(1).plain(rec(2)).plain(rec(3)).roll()
	dir := b.flush()
	dirty := twoPass(t, dir, 0, largeTimestamp)
	v := readView(t, dir)
	eq(t, "keys", v.keys(), ints(2, 3))
	eq(t, "offsets", v.offsets(), offs(1, 2))
	eq(t, "last offsets", v.lastOffsets(), offs(0, 1, 2))
	cleanOnce(t, dir, dirty, 1<<63-1, 0)
	v = readView(t, dir)
	eq(t, "offsets", v.offsets(), offs(1, 2))
	eq(t, "last offsets", v.lastOffsets(), offs(0, 1, 2))
}

func TestCommittedTransactionSpanningSegments(t *testing.T) {
	b := newLog(t)
	b.txn(1, 1).roll().commit(1).roll()
	dir := b.flush()
	twoPass(t, dir, 0, largeTimestamp)
	v := readView(t, dir)
	eq(t, "offsets", v.offsets(), offs(0, 1))
	eq(t, "last offsets", v.lastOffsets(), offs(0, 1))
}

func TestAbortedTransactionSpanningSegments(t *testing.T) {
	b := newLog(t)
	b.txn(1, 1).roll().abort(1).roll()
	dir := b.flush()
	cleanOnce(t, dir, 0, largeTimestamp, 0)
	v := readView(t, dir)
	eq(t, "offsets", v.offsets(), offs(1))
	eq(t, "last offsets", v.lastOffsets(), offs(0, 1))
	cleanOnce(t, dir, 0, 1<<63-1, 0)
	v = readView(t, dir)
	eq(t, "offsets", v.offsets(), offs(1))
	eq(t, "last offsets", v.lastOffsets(), offs(0, 1))
}

func TestAbortMarkerRemoval(t *testing.T) {
	b := newLog(t)
	b.txn(1, 1).txn(1, 2, 3).abort(1).txn(1, 3).commit(1).roll()
	dir := b.flush()
	dirty := cleanOnce(t, dir, 0, largeTimestamp, 0)
	v := readView(t, dir)
	eq(t, "keys", v.keys(), ints(3))
	eq(t, "offsets", v.offsets(), offs(3, 4, 5))
	twoPass(t, dir, dirty, largeTimestamp)
	v = readView(t, dir)
	eq(t, "keys", v.keys(), ints(3))
	eq(t, "offsets", v.offsets(), offs(4, 5))
}

func TestEmptyBatchRemovalWithSequenceReuse(t *testing.T) {
	b := newLog(t)
	b.txn(1, 1).commit(1)
	b.seqs[1] = 0 // the group coordinator starts every transaction at sequence 0
	b.txn(1, 2).commit(1).plain(recv(1, 1)).plain(recv(2, 1)).roll()
	dir := b.flush()
	cleanOnce(t, dir, 0, largeTimestamp, 0)
	v := readView(t, dir)
	eq(t, "offsets", v.offsets(), offs(1, 3, 4, 5))
	eq(t, "last offsets", v.lastOffsets(), offs(1, 2, 3, 4, 5))
	twoPass(t, dir, 0, largeTimestamp)
	v = readView(t, dir)
	eq(t, "offsets", v.offsets(), offs(3, 4, 5))
	eq(t, "last offsets", v.lastOffsets(), offs(2, 3, 4, 5))
}

func TestAbortMarkerRetentionWithEmptyBatch(t *testing.T) {
	b := newLog(t)
	b.txn(1, 2, 3).abort(1).roll()
	dir := b.flush()
	indexed := []string{"1:0-2/3"}
	dirty := cleanOnce(t, dir, 0, largeTimestamp, 0)
	eq(t, "aborted", abortedIn(t, dir), indexed)
	v := readView(t, dir)
	eq(t, "keys", v.keys(), nil)
	eq(t, "offsets", v.offsets(), offs(2))
	eq(t, "last offsets", v.lastOffsets(), offs(1, 2))

	dirty = twoPass(t, dir, dirty, largeTimestamp)
	eq(t, "aborted", abortedIn(t, dir), indexed)
	v = readView(t, dir)
	eq(t, "offsets", v.offsets(), offs(2))
	eq(t, "last offsets", v.lastOffsets(), offs(1, 2))

	b.txn(1, 1).roll()
	b.flush()
	dirty = cleanOnce(t, dir, dirty, largeTimestamp, 0)
	eq(t, "aborted", abortedIn(t, dir), indexed)
	v = readView(t, dir)
	eq(t, "keys", v.keys(), ints(1))
	eq(t, "offsets", v.offsets(), offs(2, 3))
	eq(t, "last offsets", v.lastOffsets(), offs(2, 3))

	twoPass(t, dir, dirty, largeTimestamp)
	v = readView(t, dir)
	eq(t, "keys", v.keys(), ints(1))
	eq(t, "offsets", v.offsets(), offs(3))
	eq(t, "last offsets", v.lastOffsets(), offs(3))
	eq(t, "aborted", abortedIn(t, dir), nil)
}

func TestCleaningWithDeletes(t *testing.T) {
	b := newLog(t)
	for k := 0; k < 20; k++ {
		b.plain(rec(k))
	}
	b.roll()
	for k := 0; k < 20; k += 2 {
		b.plain(tomb(k))
	}
	b.roll()
	for k := 30; k < 35; k++ {
		b.plain(rec(k))
	}
	b.roll()
	dir := b.flush()
	cleanOnce(t, dir, 0, t0+1000, 0)
	left := map[string]bool{}
	for _, k := range readView(t, dir).keys() {
		left[k] = true
	}
	for k := 0; k < 20; k += 2 {
		if left[ints(k)[0]] {
			t.Errorf("deleted key %d still has a value", k)
		}
	}
}

func TestLogCleanerStats(t *testing.T) {
	b := newLog(t)
	b.plain(rec(0)).plain(rec(1)).plain(rec(0)).plain(rec(1)).plain(rec(0)).roll()
	dir := b.flush()
	o := testOptions(t0 + 1000)
	o.OffsetMapMemory = 4 * bytesPerEntry
	p, err := loadPartition(dir, &o)
	if err != nil {
		t.Fatal(err)
	}
	m := newTestMap(t, o.OffsetMapMemory)
	ps := &pass{c: &cleaner{o: &o, m: m}, p: p, firstDirty: 2, upper: 5, rewritten: map[int64]bool{}, legacy: newLegacyRule(p.segs, 2, -1, &o)}
	if err := ps.run(); err != nil {
		t.Fatal(err)
	}
	if ps.stats.end != 5 || ps.stats.readOriginal != 5 || ps.stats.written != 2 {
		t.Errorf("end %d, read %d, written %d; want 5, 5, 2", ps.stats.end, ps.stats.readOriginal, ps.stats.written)
	}
}

func TestLogCleanerRetainsProducerLastSequence(t *testing.T) {
	b := newLog(t)
	b.plain(rec(0))
	b.producerBatch(1, 0, false, recv(0, 1))
	b.producerBatch(2, 0, false, recv(0, 2))
	b.producerBatch(3, 0, false, recv(0, 3))
	b.seqs[2] = 1
	b.producerBatch(2, 0, false, recv(1, 1))
	b.roll()
	dir := b.flush()
	cleanOnce(t, dir, 0, t0+1000, 10)
	v := readView(t, dir)
	eq(t, "last offsets", v.lastOffsets(), offs(1, 3, 4))
	if got, want := v.lastSeqs(), map[int64]int32{1: 0, 2: 1, 3: 0}; !maps.Equal(got, want) {
		t.Errorf("last sequences = %v, want %v", got, want)
	}
	eq(t, "keys", v.keys(), ints(0, 1))
	eq(t, "offsets", v.offsets(), offs(3, 4))
}

func TestLogCleanerRetainsLastSequenceEvenIfTransactionAborted(t *testing.T) {
	b := newLog(t)
	b.txn(1, 1).txn(1, 2, 3).abort(1).roll()
	dir := b.flush()
	cleanOnce(t, dir, 0, t0+1000, 10)
	v := readView(t, dir)
	eq(t, "last offsets", v.lastOffsets(), offs(2, 3))
	if got := v.lastSeqs(); got[1] != 2 {
		t.Errorf("last sequence = %d, want 2", got[1])
	}
	eq(t, "keys", v.keys(), nil)
	eq(t, "offsets", v.offsets(), offs(3))

	b.txn(1, 1, 5).roll()
	b.flush()
	cleanOnce(t, dir, 0, t0+2000, 10)
	v = readView(t, dir)
	eq(t, "last offsets", v.lastOffsets(), offs(3, 5))
	if got := v.lastSeqs(); got[1] != 4 {
		t.Errorf("last sequence = %d, want 4", got[1])
	}
	eq(t, "keys", v.keys(), ints(1, 5))
	eq(t, "offsets", v.offsets(), offs(3, 4, 5))
}

func TestPartialSegmentClean(t *testing.T) {
	// A map with room for one key advances one key per pass.
	b := newLog(t)
	b.plain(rec(0)).plain(rec(1)).plain(rec(0)).plain(rec(1)).plain(rec(0)).plain(rec(1)).roll()
	dir := b.flush()
	eq(t, "keys", readView(t, dir).keys(), ints(0, 1, 0, 1, 0, 1))
	dirty := cleanOnce(t, dir, 2, t0+1000, 2)
	if dirty != 3 {
		t.Errorf("pass 1 ends at %d, want 3", dirty)
	}
	eq(t, "keys", readView(t, dir).keys(), ints(1, 0, 1, 0, 1))
	dirty = cleanOnce(t, dir, dirty, t0+1000, 2)
	if dirty != 4 {
		t.Errorf("pass 2 ends at %d, want 4", dirty)
	}
	eq(t, "keys", readView(t, dir).keys(), ints(0, 1, 0, 1))
}

func TestCleaningWithUnkeyedMessages(t *testing.T) {
	b := newLog(t)
	for i := 0; i < 10; i++ {
		b.plain(rec(i % 3))
		b.plain(keyless(i))
	}
	b.roll()
	dir := b.flush()
	cleanOnce(t, dir, 0, t0+1000, 0)
	v := readView(t, dir)
	for _, bt := range v.batches {
		for _, r := range bt.recs {
			if r.key == nil {
				t.Errorf("keyless record at %d survived", r.offset)
			}
		}
	}
	eq(t, "keys", v.keys(), ints(1, 2, 0))
}

func TestCleaningWithKeysConflictingWithTxnMarkerKeys(t *testing.T) {
	// A data record whose key equals a COMMIT marker's key does not make
	// the marker look superseded.
	b := newLog(t)
	marker := kv{key: []byte{0, 0, 0, 1}, value: []byte("x")}
	b.producerBatch(1, 0, true, marker)
	b.commit(1)
	b.plain(kv{key: []byte{0, 0, 0, 1}, value: []byte("y")})
	b.plain(rec(5)).roll()
	dir := b.flush()
	cleanOnce(t, dir, 0, t0+1000, 0)
	eq(t, "offsets", readView(t, dir).offsets(), offs(1, 2, 3))
}

func TestCleanSegmentsRetainingLastEmptyBatch(t *testing.T) {
	// Every key is deleted and the deletes expired: the last batch of the
	// round stays, empty, and keeps the next segment's base - 1.
	b := newLog(t)
	b.producerBatch(9, 0, false, rec(0), rec(1))
	b.producerBatch(9, 0, false, tomb(0), tomb(1)).roll()
	dir := b.flush()
	twoPass(t, dir, 0, t0+1000)
	v := readView(t, dir)
	eq(t, "last offsets", v.lastOffsets(), offs(3))
	if len(v.batches) != 1 || v.batches[0].count != 0 {
		t.Errorf("batches = %+v, want one empty batch", v.batches)
	}
}

func TestCleaningBeyondMissingOffsets(t *testing.T) {
	// A gap at the end of a segment: the next dirty offset is the next
	// segment's base, not the last offset seen.
	b := newLog(t)
	for k := 0; k < 10; k++ {
		b.plain(rec(k))
	}
	b.skip(1).roll()
	b.plain(rec(100)).skip(3).roll()
	dir := b.flush()
	if end := cleanOnce(t, dir, 0, t0+1000, 0); end != 15 {
		t.Errorf("end = %d, want 15 (the active segment's base)", end)
	}
}

func TestSegmentGrouping(t *testing.T) {
	segs := func(sizes ...int64) []segment {
		var out []segment
		for i, s := range sizes {
			out = append(out, segment{Size: s, OffsetIndexBytes: 8, TimeIndexBytes: 12})
			out[i].Base = int64(i * 100)
		}
		return out
	}
	sizesOf := func(groups [][]segment) []int {
		var out []int
		for _, g := range groups {
			out = append(out, len(g))
		}
		return out
	}
	ten := segs(10, 10, 10, 10, 10, 10, 10, 10, 10, 10)
	eq(t, "huge limits", sizesOf(groupBySize(ten, 1<<31-1, 1<<31-1, 1000)), []int{10})
	eq(t, "size 1", sizesOf(groupBySize(ten, 1, 1<<31-1, 1000)), []int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1})
	eq(t, "index 1", sizesOf(groupBySize(ten, 1<<31-1, 1, 1000)), []int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1})
	eq(t, "size of 3", sizesOf(groupBySize(ten, 31, 1<<31-1, 1000)), []int{3, 3, 3, 1})
	eq(t, "time index of 3", sizesOf(groupBySize(ten, 1<<31-1, 37, 1000)), []int{3, 3, 3, 1})

	// testSegmentGroupingWithSparseOffsets: no group spans more than an
	// int32 of offsets, except through empty segments.
	sparse := []segment{{Size: 1}, {Size: 1}, {Size: 0}, {Size: 0}, {Size: 1}}
	for i, b := range []int64{0, 1 << 31, 1<<31 + 1, 1<<31 + 2, 1<<32 + 5} {
		sparse[i].Base = b
	}
	eq(t, "sparse", sizesOf(groupBySize(sparse, 1<<31-1, 1<<31-1, 1<<32+10)), []int{1, 3, 1})
}

func TestBuildPartialOffsetMap(t *testing.T) {
	b := newLog(t)
	for k := 0; k < 6; k++ {
		b.plain(rec(k))
	}
	b.roll()
	dir := b.flush()
	o := testOptions(t0)
	p, err := loadPartition(dir, &o)
	if err != nil {
		t.Fatal(err)
	}
	m := newTestMap(t, 3*bytesPerEntry) // room for 2 keys
	ps := &pass{c: &cleaner{o: &o, m: m}, p: p, firstDirty: 2, upper: 6}
	full, err := ps.buildOffsetMap()
	if err != nil {
		t.Fatal(err)
	}
	if !full || m.latest != 3 || m.get([]byte("2")) != 2 || m.get([]byte("3")) != 3 || m.get([]byte("4")) != -1 || m.get([]byte("1")) != -1 {
		t.Errorf("full %v latest %d; map 1:%d 2:%d 3:%d 4:%d", full, m.latest, m.get([]byte("1")), m.get([]byte("2")), m.get([]byte("3")), m.get([]byte("4")))
	}
}

// abortedIn lists the partition's .txnindex entries as "pid:first-last/lso".
func abortedIn(t *testing.T, dir string) []string {
	t.Helper()
	o := testOptions(t0)
	p, err := loadPartition(dir, &o)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, a := range p.aborted {
		out = append(out, fmt.Sprintf("%d:%d-%d/%d", a.ProducerID, a.FirstOffset, a.LastOffset, a.LastStableOffset))
	}
	return out
}
