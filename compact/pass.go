package compact

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"sync"
	"time"

	"github.com/logtool/logtool/index"
	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/internal/segswap"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/codec"
	"github.com/logtool/logtool/logfmt/layout"
	"github.com/logtool/logtool/logfmt/logseg"
)

// cleaner runs passes. It owns an offset map and the buffers that make a
// pass allocate nothing per record once warm; one cleaner serves one
// partition at a time.
type cleaner struct {
	o    *Options
	m    *offsetMap
	it   logfmt.RecordIter
	keys [mapItemsLive]mapItem // buffers of the map pass's reader
	jobs []*cleanJob           // the cleaning pass's, free
}

// passStats is what one pass did.
type passStats struct {
	end           int64 // the offset the pass cleaned up to (map latest + 1)
	full          bool  // the offset map filled before the end of the dirty range
	groups        int
	sourceSegs    int
	sourceBytes   int64
	outBytes      int64
	readOriginal  int64 // records read from segments not rewritten earlier in the run
	written       int64
	tombstonesOut int64
	deadBatches   int64 // batches dropped without reading their records
}

// pass is one Cleaner.doClean over [firstDirty, upper) of p.
type pass struct {
	c *cleaner
	p *partition
	// For the progress bar: the .log bytes of the dirty segments the map
	// read whole, those told of the segment being read, and those read
	// since.
	mapRead, segReported, pending int64
	firstDirty                    int64
	upper                         int64 // the round's first uncleanable offset
	legacy                        legacyRule
	txn                           *txnMeta
	stats                         passStats
	rewritten                     map[int64]bool // bases of segments an earlier pass of this run wrote
	latest                        offsetSet      // which dirty offsets the map holds, when small enough
	tombs                         offsetSet      // which dirty offsets the map pass saw tombstones at
	irregular                     bool           // the map pass saw a record outside its batch's offsets
	validated                     map[int64]bool // segments whose every batch the map pass checked
	sweep                         *segswap.Sweeper
}

// run cleans the partition once. Segments are replaced group by group, as
// Kafka does, so a crash leaves each group old or new. The replaced
// segments of a group are removed while the next one is cleaned, and all
// of them before the pass returns.
func (ps *pass) run() (err error) {
	ps.sweep = segswap.NewSweeper()
	defer func() { err = errors.Join(err, ps.sweep.Wait()) }()
	c, p := ps.c, ps.p
	// The bar learns the dirty range's bytes (the map's read) and the bytes
	// up to the first uncleanable offset (the cleaning's), which it reads
	// a segment at a time; what a full map leaves unread is settled at once.
	i, j := span(p.segs, ps.firstDirty, ps.upper)
	mapTodo := sizeOf(p.segs[i:j])
	i, j = span(p.segs, 0, ps.upper)
	ps.progress(0, mapTodo+sizeOf(p.segs[i:j]))
	ps.mapRead = 0
	full, err := ps.buildOffsetMap()
	ps.progress(mapTodo-ps.mapRead-ps.segReported, 0)
	ps.segReported, ps.pending = 0, 0
	if err != nil {
		return err
	}
	// With nothing dirty Kafka's map ends before the log and its pass
	// cleans nothing; running one for expired horizons needs the whole
	// clean section in range.
	end := max(c.m.latest+1, min(ps.firstDirty, ps.upper))
	c.m.latest = end - 1
	ps.stats.end, ps.stats.full = end, full
	ps.latest = c.m.latestSet(ps.firstDirty, end)

	i, j = span(p.segs, 0, end)
	// The segments from end to the first uncleanable offset are not read.
	k, l := span(p.segs, 0, ps.upper)
	ps.progress(sizeOf(p.segs[k:l])-sizeOf(p.segs[i:j]), 0)
	groups := groupBySize(p.segs[i:j], c.o.SegmentBytes, c.o.SegmentIndexBytes, ps.upper)
	ps.txn = newTxnMeta()
	for _, g := range groups {
		if err := ps.cleanGroup(g); err != nil {
			return err
		}
	}
	ps.stats.groups = len(groups)
	return nil
}

// tick counts the bytes of a batch read, told a MiB at a time.
func (ps *pass) tick(n int64) {
	if ps.c.o.Progress == nil {
		return
	}
	if ps.pending += n; ps.pending >= 1<<20 {
		ps.progress(ps.pending, 0)
		ps.segReported += ps.pending
		ps.pending = 0
	}
}

// segDone tells the rest of a segment read to its end, and returns its
// size.
func (ps *pass) segDone(size int64) int64 {
	ps.progress(size-ps.segReported, 0)
	ps.segReported, ps.pending = 0, 0
	return size
}

func (ps *pass) progress(done, todo int64) {
	if f := ps.c.o.Progress; f != nil && (done != 0 || todo != 0) {
		f(done, todo)
	}
}

func (ps *pass) onDataBatch(txn *txnMeta, b *logfmt.Batch) bool {
	if b.Magic() < 2 {
		return txn.onDataBatch(b.LastOffset(), false, logfmt.NoProducerID)
	}
	h := b.Header()
	return txn.onDataBatch(h.LastOffset(), h.IsTransactional(), h.ProducerID())
}

// groupBySize is Cleaner.groupSegmentsBySize: consecutive segments join a
// group while its log stays within maxSize, each index within maxIndexSize
// and, for non-empty segments, its offsets within an int32 of its base.
func groupBySize(segs []segment, maxSize, maxIndexSize, upper int64) [][]segment {
	var groups [][]segment
	for len(segs) > 0 {
		n := 1
		logSize, idxSize, timeSize := segs[0].Size, segs[0].OffsetIndexBytes, segs[0].TimeIndexBytes
		for n < len(segs) {
			s := &segs[n]
			// The last offset of s is estimated from its successor, as Kafka does.
			last := upper - 1
			if n+1 < len(segs) {
				last = segs[n+1].Base - 1
			}
			if logSize+s.Size > maxSize || idxSize+s.OffsetIndexBytes > maxIndexSize || timeSize+s.TimeIndexBytes > maxIndexSize ||
				s.Size != 0 && last-segs[0].Base > math.MaxInt32 {
				break
			}
			logSize, idxSize, timeSize = logSize+s.Size, idxSize+s.OffsetIndexBytes, timeSize+s.TimeIndexBytes
			n++
		}
		groups = append(groups, segs[:n:n])
		segs = segs[n:]
	}
	return groups
}

// cleanGroup rewrites a group of segments into one, written as ".cleaned"
// files, and swaps it in. The new files get the modification time of the
// last segment they replace, as Cleaner.cleanSegments keeps it.
func (ps *pass) cleanGroup(g []segment) error {
	o, p := ps.c.o, ps.p
	base := g[0].Base
	var path func(ext string) string
	if !o.DryRun {
		path = func(ext string) string { return segswap.CleanedPath(p.dir, base, ext) }
		// Like UnifiedLog.createNewCleanedSegment, start from no stale output.
		segswap.Abort(p.dir, []int64{base})
	}
	w, err := logseg.CreateSegment(path, base, o.IndexIntervalBytes)
	if err != nil {
		return err
	}
	var txns []index.AbortedTxn
	var records int64
	ps.txn.index = &txns
	for k := range g {
		s := &g[k]
		upper := p.leo
		for _, t := range p.segs {
			if t.Base > s.Base {
				upper = t.Base
				break
			}
		}
		ps.txn.add(collectAborted(p.aborted, s.Base, upper))
		if err := ps.cleanInto(s, w, &records); err != nil {
			w.Abort()
			return err
		}
		ps.stats.sourceBytes += s.Size
		ps.segDone(s.Size)
	}
	ps.txn.index = nil
	if err := w.Finish(txns, time.UnixMilli(g[len(g)-1].LastModified)); err != nil {
		w.Abort()
		return err
	}
	ps.stats.sourceSegs += len(g)
	ps.stats.outBytes += w.Size()
	ps.stats.written += records
	if o.DryRun {
		return nil
	}
	old := make([]layout.Segment, len(g))
	for k := range g {
		old[k] = g[k].Segment
	}
	deleted, err := segswap.Swap(p.dir, []int64{g[0].Base}, old)
	if err != nil {
		// Finish or undo what the swap started; a later run would too.
		_, rerr := segswap.Recover(p.dir)
		return errors.Join(err, rerr)
	}
	ps.sweep.Add(deleted)
	ps.rewritten[g[0].Base] = true
	// UnifiedLog.replaceSegments drops the producer snapshots of segments
	// that were merged away.
	for k := 1; k < len(g); k++ {
		snap := filepath.Join(p.dir, layout.SegmentName(g[k].Base, layout.SnapshotExt))
		if err := safefile.Remove(snap); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// batchRetention is MemoryRecords.RecordFilter.BatchRetention.
type batchRetention int

const (
	deleteEmpty batchRetention = iota // drop the batch if no record survives
	retainEmpty                       // keep the batch, emptied if no record survives
	deleteBatch                       // drop the batch without looking at its records
)

// cleanInto filters one source segment into w (Cleaner.cleanInto). What
// follows the log in order, the transactions, decides each batch's fate
// (prepare); the filtering of its records against the read-only offset map
// and its rebuilding run on the batch workers (cleanJob.Run); the batches
// are written in order.
func (ps *pass) cleanInto(s *segment, w *logseg.Writer, records *int64) error {
	sc, err := openStream(s, ps.c.o, nil)
	if err != nil {
		return err
	}
	defer sc.Close()
	sc.dr.Prepare = func(b *logfmt.Batch) (logfmt.BatchJob, bool) {
		j := ps.prepare(b, s)
		return j, !j.done
	}
	// The map pass checked these checksums moments ago.
	sc.Trusted = ps.validated[s.Base]
	it := &ps.c.it
	it.File, it.MaxRecordBytes = s.Log, ps.c.o.MaxRecordBytes
	original := !ps.rewritten[s.Base]
	for sc.Next() {
		j := sc.dr.Job().(*cleanJob)
		ps.tick(int64(j.size))
		err := j.err
		if err == nil && j.out != nil {
			err = w.Append(j.out)
			*records += int64(j.records)
		}
		if err != nil {
			return err
		}
		ps.stats.tombstonesOut += j.tombstonesOut
		if j.dead {
			ps.stats.deadBatches++
		}
		if original {
			ps.stats.readOriginal += int64(j.read)
		}
		ps.c.release(j)
	}
	return sc.Err()
}

// cleanJob is the cleaning of one batch: its fate, decided in order, and
// what the filter made of it.
type cleanJob struct {
	ps *pass
	s  *segment

	control           bool
	discardRecords    bool
	markerForEmptyTxn bool
	retention         batchRetention
	done              bool // decided without reading the records

	err           error
	size          int    // the batch's bytes in the segment, for the progress bar
	read          int    // records read (or, done, in the batch)
	out           []byte // the batch to write, nil for none
	records       int    // records in out
	tombstonesOut int64
	dead          bool   // dropped as dead
	buf           []byte // a rebuilt out
}

// maxJobBuf bounds the buffer a free job keeps: the window holds many jobs
// of small batches, and the large batch one of them rebuilt once must not
// stay with each.
const maxJobBuf = 64 << 10

func (c *cleaner) release(j *cleanJob) {
	buf := j.buf[:0]
	if cap(buf) > maxJobBuf {
		buf = nil
	}
	*j = cleanJob{buf: buf}
	c.jobs = append(c.jobs, j)
}

// prepare decides what Cleaner.cleanInto's checkBatchRetention does with
// b, from the transaction state, which follows the log batch by batch. The
// records of dead batches are not read (but for the last batch of a
// producer or of the round, which is rare).
func (ps *pass) prepare(b *logfmt.Batch, s *segment) *cleanJob {
	c, o := ps.c, ps.c.o
	var j *cleanJob
	if n := len(c.jobs); n > 0 {
		j, c.jobs = c.jobs[n-1], c.jobs[:n-1]
	} else {
		j = new(cleanJob)
	}
	j.ps, j.s, j.size = ps, s, b.Size()
	v2 := b.Magic() >= 2
	var h logfmt.BatchHeader
	if v2 {
		h = b.Header()
	}
	j.control = b.IsControl()
	var canDiscard bool
	if j.control {
		t, _, ok, err := controlType(b, &c.it)
		if err != nil {
			j.err, j.done = err, true
			return j
		}
		canDiscard = ps.txn.onControlBatch(h, t, ok)
	} else {
		canDiscard = ps.onDataBatch(ps.txn, b)
	}
	j.discardRecords = canDiscard
	if j.control {
		j.discardRecords = canDiscard && h.HasDeleteHorizon() && h.DeleteHorizon() <= o.Now
	}
	j.retention = deleteEmpty
	switch {
	case v2 && h.ProducerID() >= 0 && ps.lastOfProducer(h, j.control):
		j.retention = retainEmpty
	case b.LastOffset()+1 == ps.upper:
		// The last batch of the round keeps the log end offset (KAFKA-17076).
		j.retention = retainEmpty
	case j.discardRecords:
		j.retention = deleteBatch
	}
	j.markerForEmptyTxn = canDiscard && j.control
	switch {
	case j.retention == deleteBatch:
		j.read, j.done = int(h.RecordCount()), true
	case j.retention == deleteEmpty && ps.dead(b, h):
		// Every record is dropped: none is the latest of its key.
		j.read, j.done, j.dead = int(h.RecordCount()), true, true
		j.tombstonesOut = int64(ps.tombs.count(h.BaseOffset(), h.LastOffset()))
	}
	return j
}

// Run filters the batch's records, on a batch worker.
func (j *cleanJob) Run(b *logfmt.Batch, out []byte) []byte {
	if j.done {
		return out
	}
	f := filters.Get().(*filter)
	j.err = j.filter(b, f)
	// The iterator keeps its bytes (KeepBytes) past the batch's end: a
	// large record's buffer goes back for the next large batch rather than
	// stay in the pool with the filter, which leaves the next reader to
	// allocate another.
	f.it.Release()
	filters.Put(f)
	return out
}

// filter is a batch worker's buffers for filtering and rebuilding batches:
// the records held for a rebuild, and the builders.
type filter struct {
	it        logfmt.RecordIter
	recs      []logfmt.Record
	hdrs      []logfmt.Header
	held      bool // recs are all the batch's kept records, and valid
	batch     logfmt.BatchBuilder
	wrapper   logfmt.WrapperBuilder
	rereadAll bool
}

// filters are the workers' filters; their codecs' buffers are pooled in
// logfmt too.
var filters = sync.Pool{New: func() any { return new(filter) }}

// filter applies the log cleaner's filter (filterBatch) to b.
func (j *cleanJob) filter(b *logfmt.Batch, f *filter) error {
	ps, o := j.ps, j.ps.c.o
	magic := b.Magic()
	v2 := magic >= 2
	var h logfmt.BatchHeader
	if v2 {
		h = b.Header()
	}
	control, discardRecords := j.control, j.discardRecords

	// The records kept are held, to be rebuilt into a batch once the
	// batch's fate is known, while the iterator keeps them valid and they
	// are few; past that the batch is read again (rebuild).
	keep := func(i int, r *logfmt.Record) bool {
		switch {
		case !v2 && j.retention == retainEmpty && i == f.it.Count()-1:
			// A legacy batch cannot be empty (Kafka fails on one), and its
			// offset is its last record's: keeping that record keeps the
			// log end offset, which is the rule's purpose.
			return true
		case discardRecords:
			return false
		case control:
			return true
		}
		return ps.retainRecord(r, b, h, j.s)
	}
	f.it.File, f.it.MaxRecordBytes, f.it.KeepBytes = j.s.Log, o.MaxRecordBytes, keepBytes
	f.rereadAll = o.rereadAll
	if err := f.it.Reset(b); err != nil {
		return err
	}
	f.recs, f.hdrs, f.held = f.recs[:0], f.hdrs[:0], true
	original, tombstones, read, kept := true, false, 0, 0
	for f.it.Next() {
		r := f.it.Record()
		read++
		if !keep(read-1, r) {
			original = false
			if !control && r.Key != nil && r.Value == nil {
				j.tombstonesOut++
			}
			continue
		}
		if r.Magic != magic {
			original = false // KAFKA-4298: rewrite wrappers whose records disagree
		}
		if r.Value == nil {
			tombstones = true
		}
		kept++
		f.hold(r)
	}
	if err := f.it.Err(); err != nil {
		return err
	}
	f.held = f.held && f.it.Kept()
	j.read = read

	switch {
	case kept > 0:
		needHorizon := v2 && (tombstones || j.markerForEmptyTxn) && !h.HasDeleteHorizon()
		if original && !needHorizon {
			j.out, j.records = b.Data, kept
			return nil
		}
		horizon := logfmt.NoTimestamp
		if v2 {
			horizon = h.DeleteHorizon()
			if needHorizon {
				horizon = satAdd(o.Now, o.DeleteRetention)
			}
		}
		return j.rebuild(b, h, horizon, f, keep)
	case j.retention != retainEmpty:
		return nil
	case read == 0:
		j.out = b.Data // already the empty header Kafka writes
		return nil
	default:
		var err error
		opts := batchOptions(h, logfmt.NoTimestamp)
		opts.Compression = codec.None
		if j.buf, err = logfmt.AppendBatch(j.buf[:0], opts, nil); err != nil {
			return err
		}
		j.out = j.buf
		return nil
	}
}

// dead tells, without reading its records, that no record of a v2 data
// batch survives: the map pass read every record of it, all are below the
// map's end and none is the latest of its key. Most batches of a log with
// many updates per key are such; skipping their records (and their
// decompression) is most of what the map pass's bitmaps save.
func (ps *pass) dead(b *logfmt.Batch, h logfmt.BatchHeader) bool {
	if b.Magic() < 2 || h.IsControl() || ps.irregular || ps.c.o.parseAll {
		return false
	}
	base, last := h.BaseOffset(), h.LastOffset()
	return base >= ps.firstDirty && last <= ps.c.m.latest && ps.latest.covers(base, last) &&
		ps.tombs.covers(base, last) && ps.latest.count(base, last) == 0
}

// keepBytes is how much of a compressed batch the cleaner's iterator keeps
// in memory (logfmt.RecordIter.KeepBytes), and keepRecords how many
// records it holds, so that a rebuilt batch is read once. Kafka's batches
// are smaller; a larger one is read twice rather than held.
const (
	keepBytes   = 4 << 20
	keepRecords = 1 << 16
)

// hold adds r to the records held for a rebuild while they can be: its key
// and value stay in the iterator's buffers (Kept), and its headers slice,
// which the iterator reuses, is copied.
func (f *filter) hold(r *logfmt.Record) {
	if f.held = f.held && f.it.Kept() && len(f.recs) < keepRecords && !f.rereadAll; !f.held {
		return
	}
	f.recs = append(f.recs, *r)
	kept := &f.recs[len(f.recs)-1]
	kept.Headers = nil
	if len(r.Headers) > 0 {
		n := len(f.hdrs)
		f.hdrs = append(f.hdrs, r.Headers...)
		kept.Headers = f.hdrs[n:len(f.hdrs):len(f.hdrs)]
	}
}

// lastOfProducer tells whether the batch holds what an active producer's
// state points at: its last data batch, or, when it has none, a marker of
// its current epoch (Cleaner.cleanInto's isBatchLastRecordOfProducer).
func (ps *pass) lastOfProducer(h logfmt.BatchHeader, control bool) bool {
	p := ps.p.prods.Producer(h.ProducerID())
	if p == nil {
		return false
	}
	if p.LastOffset >= 0 {
		return h.LastOffset() == p.LastOffset
	}
	return control && h.ProducerEpoch() == p.Epoch
}

// retainRecord is Cleaner.shouldRetainRecord. It reads the offset map,
// which the cleaning pass does not change, from the batch workers.
func (ps *pass) retainRecord(r *logfmt.Record, b *logfmt.Batch, h logfmt.BatchHeader, s *segment) bool {
	m := ps.c.m
	if r.Offset > m.latest {
		return true
	}
	if r.Key == nil {
		return false
	}
	if r.Value == nil {
		var retainDeletes bool
		if b.Magic() >= 2 {
			retainDeletes = !h.HasDeleteHorizon() || ps.c.o.Now < h.DeleteHorizon()
		} else {
			retainDeletes = ps.legacy.retainDelete(s, r.Offset)
		}
		// A max lag makes the tombstone's own deadline hard too, whatever
		// horizon a late first pass gave it.
		if !retainDeletes || ps.c.o.tombstoneDue(b.MaxTimestamp()) {
			return false
		}
	}
	if ps.latest.covers(r.Offset, r.Offset) {
		return ps.latest.has(r.Offset)
	}
	return r.Offset >= m.get(r.Key)
}

// rebuild makes the retained records the job's batch as
// buildRetainedRecordsInto does: a v2 batch keeps its base offset, last
// offset delta, codec and producer fields; a legacy batch keeps its magic
// and codec, its records their offsets. The records are those held, or
// when they could not be held, those of another read of the batch for
// which keep(index, record) holds; the records go into the compressor one
// at a time.
func (j *cleanJob) rebuild(b *logfmt.Batch, h logfmt.BatchHeader, horizon int64, f *filter, keep func(int, *logfmt.Record) bool) error {
	var bw interface {
		Append(*logfmt.Record) error
		Finish() ([]byte, error)
	}
	var err error
	if b.Magic() >= 2 {
		err = f.batch.Reset(j.buf[:0], batchOptions(h, horizon))
		bw = &f.batch
	} else {
		// Only compressed wrappers get here: an uncompressed message is a
		// single record, kept whole or dropped.
		m := b.Legacy()
		opts := logfmt.LegacyWrapperOptions{Magic: m.Magic(), Compression: m.Compression(), TimestampType: m.TimestampType()}
		if opts.TimestampType == logfmt.LogAppendTime {
			opts.LogAppendTime = m.Timestamp()
		}
		err = f.wrapper.Reset(j.buf[:0], opts)
		bw = &f.wrapper
	}
	n := 0
	add := func(r *logfmt.Record) {
		if err == nil {
			err, n = bw.Append(r), n+1
		}
	}
	switch {
	case !f.held:
		if rerr := f.it.Reset(b); rerr != nil {
			return rerr
		}
		for i := 0; f.it.Next(); i++ {
			if r := f.it.Record(); keep(i, r) {
				add(r)
			}
		}
		if rerr := f.it.Err(); rerr != nil {
			return rerr
		}
	default:
		for i := range f.recs {
			add(&f.recs[i])
		}
	}
	out, ferr := bw.Finish()
	j.buf = out
	if err == nil {
		err = ferr
	}
	if err != nil {
		return fmt.Errorf("%s: rebuilding the batch at byte %d: %w", f.it.File, b.Pos, err)
	}
	j.out, j.records = j.buf, n
	return nil
}

func batchOptions(h logfmt.BatchHeader, horizon int64) logfmt.BatchOptions {
	return logfmt.BatchOptions{
		BaseOffset: h.BaseOffset(), PartitionLeaderEpoch: h.PartitionLeaderEpoch(), Compression: h.Compression(),
		TimestampType: h.TimestampType(), Transactional: h.IsTransactional(), Control: h.IsControl(),
		DeleteHorizon: horizon, ProducerID: h.ProducerID(), ProducerEpoch: h.ProducerEpoch(),
		BaseSequence: h.BaseSequence(), LastOffsetDelta: h.LastOffsetDelta(), MaxTimestamp: h.MaxTimestamp(),
	}
}

func satAdd(a, b int64) int64 {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
