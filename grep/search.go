package grep

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/logtool/logtool/compact"
	"github.com/logtool/logtool/fetch"
	"github.com/logtool/logtool/find"
	"github.com/logtool/logtool/internal/parallel"
	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/codec"
	"github.com/logtool/logtool/logfmt/layout"
)

// maxPositions bounds the batch positions a pass keeps for the match pass
// to read (8 bytes each); past it the match pass reads every batch.
const maxPositions = 1 << 16

// search is the search of one partition.
type search struct {
	o     *Options
	job   Job
	res   *Result
	out   *partOut
	enc   *encoder
	inner int         // batch workers of its passes
	mem   *logfmt.Job // what its readers hold large entries against

	pt        *fetch.Partition
	from, end int64
	m         *Matcher // nil: an audit of every key
	km        *compact.KeyMap
	// wanted, when the matchers name no key, holds the keys of the
	// records that match, found by a first pass: the key pass puts only
	// their versions in km. It is only read once filled.
	wanted *compact.KeyMap
	audit  *Audit
	now    int64

	// sought are what the key pass looks for in an uncompressed batch
	// before reading its keys (Matcher.seekKeys); nil: every batch is read.
	sought [][]byte

	// positions are the batches the match pass reads; nil when it reads
	// every batch of its units.
	positions *positions

	order     order // a pass's, across its segments and units
	pending   map[compact.KeyHash]pend
	lastScope int // the match pass's last span in scope
	iters     sync.Pool
	runs      []*unitRun // unitPass's, free
	runsMu    sync.Mutex
	free      []*batchJob
	held      []byte   // problem lines not written yet
	spill     *os.File // the held lines beyond a chunk, until the partition ends
	spillErr  error
	// The bytes the pass under way announced, and those its units read.
	passTodo, passDone int64

	// openWithKeys's: whether transactional batches wait for their fate;
	// their versions; whether the key pass must run again after Open (too
	// many versions to hold, or one that cannot be held), which its
	// goroutines read; offsets that do not rise with the log, and the last.
	txnLater  bool
	txnKeys   []txnKey
	redo      atomic.Bool
	unordered bool
	lastKey   int64 // -1 before the first version
}

// pend is a match of a superseded or deleted version whose first newer
// version the match pass has not reached yet.
type pend struct {
	offset   int64
	status   Status
	segment  string
	position int64
}

func (s *search) iter() *logfmt.RecordIter {
	if it, ok := s.iters.Get().(*logfmt.RecordIter); ok {
		return it
	}
	return &logfmt.RecordIter{MaxRecordBytes: s.o.Range.MaxRecordBytes}
}

// run searches the partition. Without key matchers, a find pass over the
// range first learns which keys have a matching record. A key pass over
// the whole log then fills the key map with the newest version of every
// key the key matchers accept (the keys found, every key in an audit
// without matchers); a match pass over the range decodes the batches that
// may match, and gives each match its status from the map.
func (s *search) run() error {
	if s.m == nil && s.audit == nil {
		return nil // an audit of every key, and this partition is not audited
	}
	defer s.endPass()
	p := s.job.Partition
	fo := s.o.Range
	fo.Isolation, fo.WholeLog, fo.UnitBytes, fo.UnitRecords, fo.Progress = fetch.ReadUncommitted, true, unitBytes, unitRecords, nil
	var err error
	if s.km, err = compact.NewKeyMap(s.o.KeyMapMemory); err != nil {
		return err
	}
	if s.m != nil {
		s.positions = &positions{bySeg: map[int64][]int64{}}
		s.sought = s.m.seekKeys(func() []byte { return sample(p) })
	}
	// With key matchers the key pass stands in for fetch.Open's first pass
	// where it can (openWithKeys): the log is read once.
	once := s.m != nil && s.m.HasKeyMatchers()
	var keyErr error
	if once {
		keyErr, err = s.openWithKeys(p, fo)
	} else {
		s.pt, err = fetch.Open(p, fo)
	}
	if err != nil {
		return err
	}
	s.res.Notes = s.pt.Stats().Notes
	s.from, s.end = s.pt.Range()
	if a := s.audit; a != nil {
		if s.res.Plan, err = compact.Plan(p.Path, a.Cleaner); err != nil {
			return err
		}
	}
	// The key pass's error comes after what Open noted and the plan's, as
	// it does without key matchers.
	if keyErr != nil {
		return keyErr
	}
	if s.m != nil && !s.m.HasKeyMatchers() {
		if err := s.findPass(); err != nil {
			return err
		}
	}
	if !once {
		if err := s.keyPass(); err != nil {
			return err
		}
	}
	s.res.Keys = s.km.Len()
	if s.m == nil {
		err = s.auditAll()
	} else {
		err = s.matchPass()
	}
	if werr := s.writeFindings(); err == nil {
		err = werr
	}
	return err
}

// span is the part of one segment a pass reads, and whether matches are
// looked for in it.
type span struct {
	fetch.Span
	scope bool
}

// segmentSpans joins a partition's units into one span per segment: a
// segment is read by one DeepReader, whose workers divide it.
func segmentSpans(units fetch.SpanList, scope func(fetch.Span) bool) []span {
	var out []span
	for u := range units.All() {
		in := scope(u)
		if n := len(out); n > 0 && out[n-1].Segment.Log == u.Segment.Log && out[n-1].End == u.Start && out[n-1].scope == in {
			out[n-1].End = u.End
			continue
		}
		out = append(out, span{u, in})
	}
	return out
}

// inScope tells whether the job searches the segment of a unit.
func (s *search) inScope(sp fetch.Span) bool {
	return s.job.Segments == nil || slices.Contains(s.job.Segments, sp.Segment.Base)
}

// matchSpans are the spans the match pass reads: those of the range in
// the segments searched and, in an audit, every one after the first of
// them, where the newer versions of superseded matches are.
func (s *search) matchSpans() []span {
	var out []span
	for _, sp := range segmentSpans(s.pt.Spans(), s.inScope) {
		if sp.scope || s.audit != nil && len(out) > 0 {
			out = append(out, sp)
		}
	}
	if s.audit != nil && len(out) > 0 {
		out = append(out, segmentSpans(s.pt.Tail(), func(fetch.Span) bool { return false })...)
	}
	s.lastScope = -1
	for i := range out {
		if out[i].scope {
			s.lastScope = i
		}
	}
	return out
}

// candidate tells whether a record's key may be one of the matched keys:
// what the key map holds.
func (s *search) candidate(key []byte) bool {
	switch {
	case key == nil:
		return false
	case s.m == nil:
		return true
	case s.wanted != nil:
		_, ok := s.wanted.Get(s.wanted.Hash(key))
		return ok
	}
	return s.m.Key(key)
}

// batchTxn is what became of a batch's transaction, and whether its
// records are versions of their keys: committed or not transactional.
func (s *search) batchTxn(b *logfmt.Batch) (fetch.TxnState, bool) {
	if b.Magic() < 2 {
		return fetch.NotTransactional, true
	}
	h := b.Header()
	if !h.IsTransactional() {
		return fetch.NotTransactional, true
	}
	t := s.pt.TxnState(h.ProducerID(), h.BaseOffset())
	return t, t == fetch.Committed
}

// unit is what a batch worker made of one batch.
type unit struct {
	err   error
	found []int64 // find and key passes: batches the match pass reads

	keys    []keyEntry // find and key passes
	txnKeys []txnKey   // key pass in openWithKeys
	// Key pass in openWithKeys: a version it cannot hold; offsets that do
	// not rise with the log, where a held version's offset does not tell
	// which versions it comes after; the first and last versions' offsets,
	// to check across units.
	txnRedo, unordered, hasKeys bool
	firstKey, lastKey           int64

	lines  []byte     // match pass: the matches' lines
	counts Counts     // match pass
	events []keyEvent // match pass in an audit
}

// keyEntry is a version of a key the key map holds.
type keyEntry struct {
	h       compact.KeyHash
	offset  int64
	written int64
	tomb    bool
}

// txnKey is a version in a transactional batch of producer pid whose
// first offset is base, kept until its transaction's fate is known.
type txnKey struct {
	keyEntry
	pid, base int64
}

// work is a pass's work on one batch, on a batch worker: it reads the
// batch, the matcher and the maps the pass does not fill, and writes only
// u, so that any number can run at once.
type work func(sp *span, b *logfmt.Batch, it *logfmt.RecordIter, u *unit) error

// batchJob is a pass's work on one batch (logfmt.DeepReader.Prepare).
type batchJob struct {
	s    *search
	sp   *span
	work work
	u    unit
}

func (j *batchJob) Run(b *logfmt.Batch, out []byte) []byte {
	it := j.s.iter()
	it.File = j.sp.Segment.Log
	j.u.err = j.work(j.sp, b, it, &j.u)
	j.s.iters.Put(it)
	return out
}

// maxJobLines bounds the lines a free job keeps: the window holds many
// jobs, and one that matched a large batch must not keep its buffer.
const maxJobLines = 64 << 10

func (s *search) newJob(sp *span, w work) *batchJob {
	var j *batchJob
	if n := len(s.free); n > 0 {
		j, s.free = s.free[n-1], s.free[:n-1]
	} else {
		j = &batchJob{s: s}
	}
	j.sp, j.work = sp, w
	return j
}

func (s *search) release(j *batchJob) {
	u := &j.u
	lines := u.lines[:0]
	if cap(lines) > maxJobLines {
		lines = nil
	}
	*u = unit{keys: u.keys[:0], found: u.found[:0], lines: lines, events: u.events[:0]}
	s.free = append(s.free, j)
}

// pass is the match pass's reading: spans in order, each segment through
// a DeepReader whose workers run w on its batches, each batch's unit
// handed to emit in order. Batches are checked as Kafka's recovery checks
// them (checksum, offsets above the previous batch's) before their unit is
// emitted. With positions, only the batches there are read, one after the
// other.
func (s *search) pass(spans []span, w work, emit func(i int, u *unit) error) error {
	var total int64
	for _, sp := range spans {
		total += sp.End - sp.Start
	}
	s.start(total)
	for i := range spans {
		sp := &spans[i]
		if s.settled(i) {
			return errDone
		}
		var at []int64
		if s.positions != nil {
			if at = s.positions.in(sp.Span); len(at) == 0 {
				s.read(sp.End - sp.Start)
				continue
			}
		}
		err := s.readSpan(i, sp, at, w, emit)
		if err != nil {
			return err
		}
	}
	return nil
}

// readSpan is pass on one span.
func (s *search) readSpan(i int, sp *span, at []int64, w work, emit func(i int, u *unit) error) error {
	f, err := safefile.Open(sp.Segment.Log)
	if err != nil {
		return err
	}
	defer f.Close()
	// A pass that reads every batch has the next windows read while it
	// works on this one; one that seeks reads only what it seeks to.
	workers, src := s.inner, logfmt.ReadAheadWindows
	if at != nil {
		workers, src = 1, logfmt.PlainWindows
	}
	// Up to End only: the data past it is what the partition's first pass
	// found torn or zeroed, and noted.
	sr := logfmt.NewSegmentReader(f, sp.End, sp.Segment.Log, src)
	defer sr.Close()
	sr.Job = s.mem
	dr := logfmt.NewDeepReader(sr, workers)
	defer dr.Close()
	dr.MaxRecordBytes = s.o.Range.MaxRecordBytes
	dr.Prepare = func(*logfmt.Batch) (logfmt.BatchJob, bool) { return s.newJob(sp, w), true }
	sr.SeekTo(sp.Start)
	done := sp.Start
	for {
		if at != nil {
			if len(at) == 0 {
				break
			}
			sr.SeekTo(at[0])
			at = at[1:]
		}
		if !dr.Next() {
			if err := dr.Err(); err != nil {
				return err
			}
			break
		}
		b := dr.Batch()
		j := dr.Job().(*batchJob)
		err := s.order.check(b, sp.Segment.Log)
		if err == nil {
			err = j.u.err
		}
		if err == nil {
			err = emit(i, &j.u)
		}
		s.release(j)
		if err != nil {
			return err
		}
		s.read(dr.Pos() - done)
		done = dr.Pos()
	}
	s.read(sp.End - done)
	return nil
}

// order is the previous batch's last offset as a pass reads on, -1
// before the first.
type order struct{ last int64 }

// check checks a batch as Kafka's recovery does: its checksum, and its
// offsets above the previous batch's.
func (o *order) check(b *logfmt.Batch, file string) error {
	if err := b.Validate(); err != nil {
		return logfmt.WithFile(err, file, 0)
	}
	return o.follows(file, b.Pos, firstOffset(b), b.LastOffset())
}

// follows checks that a batch's offsets, first to last, lie above the
// previous batch's, and makes it the previous batch.
func (o *order) follows(file string, pos, first, last int64) error {
	if o.last >= 0 && first <= o.last || last < first {
		return logfmt.Corruptf(file, pos, "offsets %d to %d are not above the previous batch's last offset %d", first, last, o.last)
	}
	o.last = last
	return nil
}

// firstOffset is the offset check compares: a legacy wrapper's first
// offset needs its payload, so its last stands for it.
func firstOffset(b *logfmt.Batch) int64 {
	if b.Magic() >= 2 {
		return b.Header().BaseOffset()
	}
	return b.LastOffset()
}

// unitBytes and unitRecords bound the units the passes that read every
// batch read whole, one per goroutine. A unit's versions (40 bytes each)
// wait in memory until the units before it are in, up to twice as many
// units as goroutines: small records compressed well put 150,000 in 2 MiB.
// Tests make units of a batch.
var (
	unitBytes   int64 = 2 << 20
	unitRecords int64 = 32 << 10
)

// unitRun is what one goroutine made of a unit: the work's unit of all its
// batches, up to the first that failed, and the offsets of its first batch
// and its last for the order check across units.
type unitRun struct {
	sp                  span
	u                   unit
	pos, first, firstTo int64 // the first batch: position, offsets
	last                int64 // the last batch's last offset
	n                   int   // batches
	scan                fetch.UnitScan
}

// unitPass is pass over the units in scope, each read whole by one
// goroutine that frames, checks and works on its batches while their bytes
// are in its core's cache: on uncompressed data, handing batches to
// workers costs what working on them does. The units come to emit in
// order, their batches checked across units as within them. Units are
// taken from the list one at a time: a large log has millions.
func (s *search) unitPass(l fetch.SpanList, scope func(fetch.Span) bool, w work, emit func(sp *span, u *unit) error) error {
	var total int64
	for u := range l.All() {
		if scope(u) {
			total += u.End - u.Start
		}
	}
	s.start(total)
	return parallel.Ordered(l.Len(), s.inner, func(i int) *unitRun {
		sp := span{Span: l.At(i)}
		if !scope(sp.Span) {
			return s.getRun()
		}
		return s.readUnit(sp, w, nil)
	}, func(i int, r *unitRun) error {
		if !scope(l.At(i)) {
			s.putRun(r)
			return nil
		}
		return s.emitUnit(r, emit)
	})
}

// emitUnit hands a unit's run to emit, its first batch checked against
// the batches before it, on the partition's goroutine.
func (s *search) emitUnit(r *unitRun, emit func(sp *span, u *unit) error) error {
	defer s.putRun(r)
	sp := &r.sp
	if r.n > 0 {
		if err := s.order.follows(sp.Segment.Log, r.pos, r.first, r.firstTo); err != nil {
			return err
		}
		s.order.last = r.last
	}
	if err := emit(sp, &r.u); err != nil {
		return err
	}
	s.read(sp.End - sp.Start)
	return r.u.err
}

// openWithKeys is fetch.Open with the key pass run on the way: the key
// pass reads every batch of the log, and so learns what Open's first pass
// would. On a log its indexes cut into units (fetch.Plan), with no
// transaction, the partition is opened from what the key pass read, and
// the log is read once. A transactional batch's fate is learned only at
// its marker, later in the log, so at the first transactional batch Open
// starts alongside the key pass, and the versions in such batches wait
// until it has returned (settle). Where the indexes do not cut the log at
// its batches, or a unit fails, the log is read as before
// (openStreaming), and errors come as Open and the key pass give them.
func (s *search) openWithKeys(p *layout.Partition, fo fetch.Options) (keyErr, err error) {
	plan, ok := fetch.NewPlan(p, fo)
	if !ok || !planUnits {
		return s.openStreaming(p, fo)
	}
	s.beginKeys(p)
	type opening struct {
		pt  *fetch.Partition
		err error
	}
	var opened chan opening
	spans := plan.Spans()
	err = parallel.Ordered(spans.Len(), s.inner, func(i int) *unitRun {
		sp := span{Span: spans.At(i), scope: true}
		if s.redo.Load() {
			// The pass runs again after Open: the units left are not read.
			r := s.getRun()
			r.sp = sp
			return r
		}
		return s.readUnit(sp, s.keyWork, plan)
	}, func(_ int, r *unitRun) error {
		whole := plan.Usable()
		plan.Add(&r.scan)
		if plan.Transactional() && opened == nil {
			opened = make(chan opening, 1)
			go func() {
				pt, err := fetch.Open(p, fo)
				opened <- opening{pt, err}
			}()
		}
		// A unit that failed after one that ended where it began fails as
		// it would on Open's units: it starts at a batch, as they do.
		if !plan.Usable() && !s.redo.Load() && (!whole || r.u.err == nil) {
			s.putRun(r)
			return errReplan
		}
		return s.emitUnit(r, s.putKeys)
	})
	switch {
	case opened != nil:
		o := <-opened
		if err == errReplan {
			// The versions read may come from batches framed wrongly.
			s.redo.Store(true)
		}
		return s.settle(o.pt, o.err, err)
	case err == nil:
		pt, ok, oerr := plan.Open()
		if ok {
			return s.settle(pt, oerr, nil)
		}
	case err != errReplan:
		// A key pass error in units the plan vouched for: Open's error, if
		// any, comes first.
		pt, oerr := fetch.Open(p, fo)
		return s.settle(pt, oerr, err)
	}
	s.endPass()
	s.txnKeys = nil
	if s.km, err = compact.NewKeyMap(s.o.KeyMapMemory); err != nil {
		return nil, err
	}
	s.positions = &positions{bySeg: map[int64][]int64{}}
	return s.openStreaming(p, fo)
}

// planUnits lets openWithKeys cut units by the indexes; tests turn it off
// to compare with openStreaming.
var planUnits = true

// errReplan stops openWithKeys's pass at a unit that did not end where the
// next begins.
var errReplan = errors.New("the indexes do not cut the log at its batches")

func (s *search) keyWork(_ *span, b *logfmt.Batch, it *logfmt.RecordIter, u *unit) error {
	return s.keyBatch(b, it, u, true)
}

// beginKeys starts a key pass run with Open: the progress of the whole
// log, and no version held.
func (s *search) beginKeys(p *layout.Partition) {
	var total int64
	if s.o.Progress != nil {
		total = logBytes(p)
	}
	s.start(total)
	s.txnLater, s.txnKeys, s.unordered, s.lastKey = true, s.txnKeys[:0], false, -1
	s.redo.Store(false)
}

// openStreaming is fetch.Open with the key pass run on the units its first
// pass cuts, as it cuts them: the key pass's goroutines read while the
// first pass does. It returns the key pass's error apart from Open's,
// which comes first.
func (s *search) openStreaming(p *layout.Partition, fo fetch.Options) (keyErr, err error) {
	units := make(chan fetch.Span)
	fo.OnUnit = func(sp fetch.Span) { units <- sp }
	var pt *fetch.Partition
	opened := make(chan error, 1)
	go func() {
		var err error
		pt, err = fetch.Open(p, fo)
		close(units)
		opened <- err
	}()
	s.beginKeys(p)
	err = parallel.Stream(s.inner, func() (fetch.Span, bool) {
		sp, ok := <-units
		return sp, ok
	}, func(sp fetch.Span) *unitRun {
		if s.redo.Load() {
			// The pass runs again after Open: the units left are not read,
			// and Open is not held back by them.
			r := s.getRun()
			r.sp = span{Span: sp, scope: true}
			return r
		}
		return s.readUnit(span{Span: sp, scope: true}, s.keyWork, nil)
	}, func(_ int, r *unitRun) error {
		return s.emitUnit(r, s.putKeys)
	})
	// A failed key pass leaves Open to finish: its error, if any, comes
	// first, as it would before a key pass of its own.
	for range units {
	}
	return s.settle(pt, <-opened, err)
}

// settle ends a key pass run with Open, given what Open returned and the
// key pass's error: the versions held in transactional batches go in the
// key map once their fate is known, or the key pass runs again.
func (s *search) settle(pt *fetch.Partition, oerr, err error) (keyErr, openErr error) {
	s.txnLater, s.pt = false, pt
	// What the units left out: torn or zeroed tails, units not read.
	s.endPass()
	switch {
	case oerr != nil:
		return nil, oerr
	case s.redo.Load() || (err != nil || s.unordered) && len(s.txnKeys) > 0:
		// Run the old way, the key pass ends as it did: a committed version
		// before err may be out of range, or fill the key map; offsets that
		// do not rise with the log do not place the held versions.
		s.txnKeys = nil
		if s.km, err = compact.NewKeyMap(s.o.KeyMapMemory); err != nil {
			return nil, err
		}
		s.positions = &positions{bySeg: map[int64][]int64{}}
		return s.keyPass(), nil
	case err != nil:
		return err, nil
	}
	for _, e := range s.txnKeys {
		if pt.TxnState(e.pid, e.base) != fetch.Committed {
			continue
		}
		if v, ok := s.km.Get(e.h); ok {
			if newest, _, _ := splitValue(v); newest > e.offset {
				continue
			}
		}
		if err := s.putKey(e.keyEntry); err != nil {
			return err, nil
		}
	}
	return nil, nil
}

// maxTxnKeys bounds the versions in transactional batches openWithKeys
// holds (56 bytes each). A variable for tests.
var maxTxnKeys = 1 << 16

// sample is the start of a partition's log, up to 64 KiB: what its data
// looks like.
func sample(p *layout.Partition) []byte {
	for _, sg := range p.Segments {
		if sg.Log == "" {
			continue
		}
		f, err := safefile.Open(sg.Log)
		if err != nil {
			return nil
		}
		defer f.Close()
		b := make([]byte, 64<<10)
		n, _ := f.ReadAt(b, 0)
		return b[:n]
	}
	return nil
}

// logBytes is the size of a partition's segments, for progress.
func logBytes(p *layout.Partition) int64 {
	var n int64
	for _, sg := range p.Segments {
		if st, err := os.Stat(sg.Log); err == nil {
			n += st.Size()
		}
	}
	return n
}

// getRun and putRun keep the units' buffers from one unit to the next: in
// an audit of every key, a unit holds tens of thousands of versions.
func (s *search) getRun() *unitRun {
	s.runsMu.Lock()
	defer s.runsMu.Unlock()
	if k := len(s.runs); k > 0 {
		r := s.runs[k-1]
		s.runs = s.runs[:k-1]
		return r
	}
	return &unitRun{}
}

func (s *search) putRun(r *unitRun) {
	*r = unitRun{u: unit{keys: r.u.keys[:0], found: r.u.found[:0], txnKeys: r.u.txnKeys[:0]}}
	s.runsMu.Lock()
	s.runs = append(s.runs, r)
	s.runsMu.Unlock()
}

// readUnit reads one unit on the calling goroutine; one of plan's is
// scanned for it, and read no further than it allows.
func (s *search) readUnit(unitSpan span, w work, plan *fetch.Plan) *unitRun {
	r := s.getRun()
	r.sp = unitSpan
	if plan != nil {
		r.scan = plan.Scan()
	}
	sp := &r.sp
	f, err := safefile.Open(sp.Segment.Log)
	if err != nil {
		r.u.err = err
		return r
	}
	defer f.Close()
	sr := logfmt.NewSegmentReader(f, sp.End, sp.Segment.Log)
	defer sr.Close()
	sr.Job = s.mem
	sr.SeekTo(sp.Start)
	it := s.iter()
	defer s.iters.Put(it)
	it.File = sp.Segment.Log
	// unitPass checks the first batch's offsets against the unit before,
	// and so before the work on it, as the batches after it are checked.
	var c order
	for sr.Next() {
		b := sr.Batch()
		if plan != nil && !r.scan.Batch(b) {
			return r
		}
		var err error
		if r.n == 0 {
			if err = b.Validate(); err != nil {
				err = logfmt.WithFile(err, sp.Segment.Log, 0)
			}
			r.pos, r.first, r.firstTo = b.Pos, firstOffset(b), b.LastOffset()
			c.last = r.firstTo
		} else {
			err = c.check(b, sp.Segment.Log)
		}
		if err != nil {
			r.u.err = err
			return r
		}
		r.last = b.LastOffset()
		r.n++
		// A batch that fails gives none of its keys, as with one unit per batch.
		keys, found, txnKeys := len(r.u.keys), len(r.u.found), len(r.u.txnKeys)
		if err := w(sp, b, it, &r.u); err != nil {
			r.u.keys, r.u.found, r.u.txnKeys, r.u.err = r.u.keys[:keys], r.u.found[:found], r.u.txnKeys[:txnKeys], err
			return r
		}
	}
	r.u.err = sr.Err()
	if plan != nil {
		r.scan.Finish(sr)
	}
	return r
}

// start begins a pass of total bytes, no batch read yet, once the pass
// before has ended.
func (s *search) start(total int64) {
	s.endPass()
	s.progress(0, total)
	s.order = order{last: -1}
	s.passTodo, s.passDone = total, 0
}

// read tells of n bytes of the pass read.
func (s *search) read(n int64) {
	s.passDone += n
	s.progress(n, 0)
}

// endPass ends a pass whose bytes read may fall short of what start
// announced: tails left out, units not read, a failure.
func (s *search) endPass() {
	s.read(s.passTodo - s.passDone)
}

func (s *search) progress(done, todo int64) {
	if s.o.Progress != nil {
		s.o.Progress(done, todo)
	}
}

// findPass learns, when no key matcher names the keys, which keys have a
// matching record in the range, and which batches hold matches.
func (s *search) findPass() error {
	var err error
	if s.wanted, err = compact.NewKeyMap(s.o.KeyMapMemory); err != nil {
		return err
	}
	return s.unitPass(s.pt.Spans(), s.inScope, s.findBatch, func(sp *span, u *unit) error {
		for _, e := range u.keys {
			if _, _, err := s.wanted.Put(e.h, 0); err != nil {
				return s.mapErr(err)
			}
		}
		for _, at := range u.found {
			s.positions.add(sp.Segment.Base, at)
		}
		return nil
	})
}

// findBatch is the find pass's work on one batch: the keys of its matching
// versions, and whether it holds a match.
func (s *search) findBatch(_ *span, b *logfmt.Batch, it *logfmt.RecordIter, u *unit) error {
	if b.IsControl() || b.LastOffset() < s.from || b.Magic() >= 2 && b.Header().BaseOffset() >= s.end {
		return nil
	}
	_, version := s.batchTxn(b)
	if err := it.Reset(b); err != nil {
		return err
	}
	next := it.NextKey
	if s.m.needsHeaders() {
		next = it.Next
	}
	found := false
	for next() {
		r := it.Record()
		if r.Offset < s.from || r.Offset >= s.end || !s.m.Match(r) {
			continue
		}
		found = true
		if version && r.Key != nil {
			u.keys = append(u.keys, keyEntry{h: s.wanted.Hash(r.Key)})
		}
	}
	if found {
		u.found = append(u.found, b.Pos)
	}
	return it.Err()
}

// keyPass fills the key map from the whole log, in offset order: the last
// version put is the newest.
func (s *search) keyPass() error {
	// The batches holding a candidate key are those the match pass reads
	// when key matchers decide, and in an audit those holding newer
	// versions; the find pass found the others.
	keep := s.m != nil && (s.m.HasKeyMatchers() || s.audit != nil)
	every := func(fetch.Span) bool { return true }
	return s.unitPass(s.pt.LogSpans(), every, func(_ *span, b *logfmt.Batch, it *logfmt.RecordIter, u *unit) error {
		return s.keyBatch(b, it, u, keep)
	}, s.putKeys)
}

// keyBatch is the key pass's work on one batch: the versions it holds of
// candidate keys.
func (s *search) keyBatch(b *logfmt.Batch, it *logfmt.RecordIter, u *unit, keep bool) error {
	if b.IsControl() {
		return nil
	}
	// In openWithKeys a transactional batch's fate is not known yet.
	later := s.txnLater && b.Magic() >= 2 && b.Header().IsTransactional()
	version := true
	if !later {
		_, version = s.batchTxn(b)
	}
	// Uncompressed, a batch without the bytes of a key sought holds no
	// version of it: its records need not be read.
	if s.sought != nil && b.Compression() == codec.None && !mayHoldKey(b.Data, s.sought) {
		return nil
	}
	written := b.MaxTimestamp()
	if err := it.Reset(b); err != nil {
		return err
	}
	found := false
	for it.NextKey() {
		r := it.Record()
		if !s.candidate(r.Key) {
			continue
		}
		found = true
		if !version {
			continue // aborted or undecided: a version of nothing
		}
		if r.Offset < 0 || r.Offset > maxOffset {
			if later {
				// Corrupt only if committed, which is not known yet.
				u.txnRedo = true
				continue
			}
			return logfmt.Corruptf(it.File, b.Pos, "offset %d is out of range", r.Offset)
		}
		if s.txnLater {
			if u.hasKeys && r.Offset <= u.lastKey {
				u.unordered = true
			}
			if !u.hasKeys {
				u.firstKey, u.hasKeys = r.Offset, true
			}
			u.lastKey = r.Offset
		}
		e := keyEntry{h: s.km.Hash(r.Key), offset: r.Offset, written: written, tomb: r.Value == nil}
		if later {
			h := b.Header()
			u.txnKeys = append(u.txnKeys, txnKey{e, h.ProducerID(), h.BaseOffset()})
			continue
		}
		u.keys = append(u.keys, e)
	}
	if err := it.Err(); err != nil {
		return err
	}
	if found && keep {
		u.found = append(u.found, b.Pos)
	}
	return nil
}

// putKeys puts a batch's versions in the key map, on the partition's
// goroutine.
func (s *search) putKeys(sp *span, u *unit) error {
	for _, e := range u.keys {
		if err := s.putKey(e); err != nil {
			return err
		}
	}
	if u.hasKeys {
		s.unordered = s.unordered || u.unordered || u.firstKey <= s.lastKey
		s.lastKey = u.lastKey
	}
	if (len(u.txnKeys) > 0 || u.txnRedo) && !s.redo.Load() {
		if u.txnRedo || len(s.txnKeys)+len(u.txnKeys) > maxTxnKeys {
			s.txnKeys = nil
			s.redo.Store(true)
		} else {
			s.txnKeys = append(s.txnKeys, u.txnKeys...)
		}
	}
	if s.positions != nil {
		for _, at := range u.found {
			s.positions.add(sp.Segment.Base, at)
		}
	}
	return nil
}

// putKey puts one version in the key map.
func (s *search) putKey(e keyEntry) error {
	due := false
	if s.audit != nil && e.tomb {
		due = compact.TombstoneDeadline(e.written, s.audit.Cleaner.MaxLag, s.audit.Cleaner.DeleteRetention) < s.now
	}
	prev, had, err := s.km.Put(e.h, keyValue(e.offset, e.tomb, due))
	if err != nil {
		return s.mapErr(err)
	}
	if had && s.m == nil {
		s.superseded(prev, e)
	}
	return nil
}

func (s *search) mapErr(err error) error {
	if errors.Is(err, compact.ErrKeyMapFull) {
		return fmt.Errorf("%s: %w; narrow the search (a key matcher, --topic), or raise --offset-map-memory", s.job.Partition.Path, err)
	}
	return err
}

// positions are, per segment, the byte positions of the batches the match
// pass reads. Past maxPositions they are dropped, and every batch is read.
type positions struct {
	bySeg map[int64][]int64 // by segment base offset; each pass adds them in order
	n     int
}

func (p *positions) add(base int64, at int64) {
	if p.bySeg == nil {
		return
	}
	if p.n++; p.n > maxPositions {
		p.bySeg = nil
		return
	}
	p.bySeg[base] = append(p.bySeg[base], at)
}

// in returns the positions within a unit, in order; nil for every batch.
func (p *positions) in(sp fetch.Span) []int64 {
	if p.bySeg == nil {
		return nil
	}
	out := []int64{}
	for _, at := range p.bySeg[sp.Segment.Base] {
		if at >= sp.Start && at < sp.End {
			out = append(out, at)
		}
	}
	// Two passes may have added the same batches.
	slices.Sort(out)
	return slices.Compact(out)
}

// matchPass decodes the batches of the range that may hold a match, and in
// an audit those after it until every superseded match has met its first
// newer version.
func (s *search) matchPass() error {
	spans := s.matchSpans()
	if s.audit != nil {
		s.pending = map[compact.KeyHash]pend{}
	}
	err := s.pass(spans, func(sp *span, b *logfmt.Batch, it *logfmt.RecordIter, u *unit) error {
		return s.matchBatch(sp, b, it, u)
	}, s.emit)
	if errors.Is(err, errDone) {
		err = nil
	}
	if err == nil && len(s.pending) > 0 {
		return fmt.Errorf("%s: %d superseded match(es) never met their newer version: the log changed while it was read", s.job.Partition.Path, len(s.pending))
	}
	return err
}

// errDone ends the match pass early: past the spans searched, nothing is
// pending.
var errDone = errors.New("done")

// keyEvent is, in an audit, a record the match pass met that matters to
// a superseded match: a match, or a later version of a candidate key.
type keyEvent struct {
	h        compact.KeyHash
	offset   int64
	written  int64
	status   Status
	match    bool
	version  bool // committed or not transactional, and keyed
	position int64
	segment  string
}

// matchBatch is the match pass's work on one batch: decode it, match its
// records, render the matches' lines. It reads the batch and the key map
// only, so that any number of workers can run it at once.
func (s *search) matchBatch(sp *span, b *logfmt.Batch, it *logfmt.RecordIter, u *unit) error {
	if b.IsControl() || b.LastOffset() < s.from {
		return nil
	}
	audit := s.audit != nil
	if !audit && b.Magic() >= 2 && b.Header().BaseOffset() >= s.end {
		return nil
	}
	if s.positions == nil && s.m.KeyOnly() && !s.anyKey(b, it) {
		return nil
	}
	seg := filepath.Base(sp.Segment.Log)
	txn, version := s.batchTxn(b)
	written := b.MaxTimestamp()
	if err := it.Reset(b); err != nil {
		return err
	}
	for it.Next() {
		r := it.Record()
		if r.Offset < s.from || r.Offset >= s.end && !audit {
			continue
		}
		match := sp.scope && r.Offset < s.end && s.m.Match(r)
		later := audit && version && s.candidate(r.Key)
		if !match && !later {
			continue
		}
		ev := keyEvent{offset: r.Offset, written: written, match: match, version: version && r.Key != nil, position: b.Pos, segment: seg}
		if ev.version {
			ev.h = s.km.Hash(r.Key)
		}
		if match {
			st, err := s.status(r, txn, version, ev.h)
			if err != nil {
				return logfmt.WithFile(err, it.File, b.Pos)
			}
			ev.status = st
			u.counts[st]++
			if !s.o.Count {
				u.lines = s.enc.match(u.lines, &Match{Record: r, Status: st, Txn: txn, Segment: seg, Position: b.Pos})
			}
		}
		if audit {
			u.events = append(u.events, ev)
		}
	}
	return it.Err()
}

// anyKey tells whether a batch holds a key the key matchers accept, at or
// after the range's start: key-only matching reads keys only until one is.
func (s *search) anyKey(b *logfmt.Batch, it *logfmt.RecordIter) bool {
	if it.Reset(b) != nil {
		return true // Reset again fails the same way, where it is reported
	}
	for it.NextKey() {
		if r := it.Record(); r.Offset >= s.from && s.m.Key(r.Key) {
			return true
		}
	}
	return it.Err() != nil
}

// status is a match's status.
func (s *search) status(r *logfmt.Record, txn fetch.TxnState, version bool, h compact.KeyHash) (Status, error) {
	switch {
	case txn == fetch.Aborted:
		return Aborted, nil
	case txn == fetch.Ongoing:
		return Ongoing, nil
	case r.Key == nil:
		return Latest, nil
	}
	v, ok := s.km.Get(h)
	if !ok || !version {
		return 0, fmt.Errorf("the key at offset %d was not seen by the key pass: the log changed while it was read", r.Offset)
	}
	newest, tomb, _ := splitValue(v)
	return statusOf(r.Offset, r.Value == nil, newest, tomb)
}

// emit writes a unit's lines and, in an audit, settles what its records
// say about the superseded matches, on the partition's goroutine.
func (s *search) emit(i int, u *unit) error {
	s.out.write(u.lines)
	for i := range u.counts {
		s.res.Counts[i] += u.counts[i]
	}
	if s.audit == nil {
		return nil
	}
	c := &s.audit.Cleaner
	for i := range u.events {
		ev := &u.events[i]
		if ev.version {
			if p, ok := s.pending[ev.h]; ok && p.offset < ev.offset {
				delete(s.pending, ev.h)
				if d := compact.VersionDeadline(ev.written, c.MaxLag); d < s.now {
					s.found(&Finding{Offset: p.offset, Status: p.status, By: ev.offset, Written: ev.written, Deadline: d,
						Segment: p.segment, Position: p.position, where: where(s.res.Plan, ev.offset, false)})
				}
			}
		}
		if !ev.match {
			continue
		}
		switch ev.status {
		case Superseded, Deleted:
			s.pending[ev.h] = pend{offset: ev.offset, status: ev.status, segment: ev.segment, position: ev.position}
		case Tombstone:
			if d := compact.TombstoneDeadline(ev.written, c.MaxLag, c.DeleteRetention); d < s.now {
				s.found(&Finding{Offset: ev.offset, Status: Tombstone, By: -1, Written: ev.written, Deadline: d,
					Segment: ev.segment, Position: ev.position, where: where(s.res.Plan, ev.offset, true)})
			}
		}
	}
	if s.settled(i) {
		return errDone
	}
	return nil
}

// settled tells, in an audit's match pass, that the spans searched are
// read (i is past them) and no match waits for its newer version.
func (s *search) settled(i int) bool {
	return s.pending != nil && i > s.lastScope && len(s.pending) == 0
}

// found reports a finding.
func (s *search) found(f *Finding) {
	c := &s.audit.Cleaner
	f.Past, f.maxLag, f.deleteRetention = s.now-f.Deadline, c.MaxLag, c.DeleteRetention
	if f.Count == 0 {
		f.Count = 1
	}
	s.res.Findings += f.Count
	if !s.o.Count {
		if s.held = s.enc.finding(s.held, f); len(s.held) >= chunkSize {
			s.spillFindings()
		}
	}
}

// spillFindings moves the held problem lines to a temporary file, so that
// memory stays a chunk however many there are.
func (s *search) spillFindings() {
	if s.spillErr != nil {
		return
	}
	if s.spill == nil {
		f, err := os.CreateTemp("", "logtool-grep-findings-*")
		if err != nil {
			s.spillErr = fmt.Errorf("holding back the findings: %w", err)
			return
		}
		os.Remove(f.Name()) // the open file is all that is needed
		s.spill = f
	}
	if _, err := s.spill.Write(s.held); err != nil {
		s.spillErr = fmt.Errorf("holding back the findings: %w", err)
		return
	}
	s.held = s.held[:0]
}

// writeFindings writes the problem lines held back: a partition's findings
// come after its match lines, not between them.
func (s *search) writeFindings() error {
	err := s.spillErr
	if f := s.spill; f != nil {
		s.spill = nil
		defer f.Close()
		if _, serr := f.Seek(0, io.SeekStart); serr != nil && err == nil {
			err = serr
		}
		buf := make([]byte, chunkSize)
		for err == nil {
			n, rerr := io.ReadFull(f, buf)
			s.out.write(buf[:n])
			if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
				break
			}
			err = rerr
		}
	}
	s.out.write(s.held)
	s.held = s.held[:0]
	if err != nil {
		return fmt.Errorf("%d finding(s) could not be written: %w", s.res.Findings, err)
	}
	return nil
}

// superseded is, in an audit of every key, one version that a newer one
// supersedes: the key pass meets every such pair in the order of the newer.
func (s *search) superseded(prev int64, newer keyEntry) {
	offset, _, _ := splitValue(prev)
	r := s.res
	r.Versions++
	d := compact.VersionDeadline(newer.written, s.audit.Cleaner.MaxLag)
	f := oldVersion{Finding: Finding{Offset: offset, By: newer.offset, Written: newer.written, Deadline: d, Past: s.now - d}, h: newer.h}
	if r.oldest.Count == 0 || offset < r.oldest.Offset {
		r.oldest, r.oldest.Count = f, 1
	}
	if d < s.now {
		r.VersionsPast++
		if r.oldestPast.Count == 0 || offset < r.oldestPast.Offset {
			r.oldestPast, r.oldestPast.Count = f, 1
		}
	}
}

// oldVersion is a superseded version met by the key pass, with its key.
type oldVersion struct {
	Finding
	h compact.KeyHash
}

// auditAll finishes the audit of every key: the key map now holds every
// key's newest version, which says whether the oldest superseded versions
// were deleted, and which tombstones are newest and past their deadline.
func (s *search) auditAll() error {
	r := s.res
	for _, v := range []*oldVersion{&r.oldest, &r.oldestPast} {
		if v.Count == 0 {
			continue
		}
		val, _ := s.km.Get(v.h)
		_, tomb, _ := splitValue(val)
		v.Status = Superseded
		if tomb {
			v.Status = Deleted
		}
		v.where = where(r.Plan, v.By, false)
	}
	oldestTomb := int64(math.MaxInt64)
	for _, val := range s.km.All() {
		offset, tomb, due := splitValue(val)
		if !tomb {
			continue
		}
		r.Tombstones++
		if due {
			r.TombstonesPast++
			oldestTomb = min(oldestTomb, offset)
		}
	}
	if r.oldestPast.Count > 0 {
		f := r.oldestPast.Finding
		f.Count = r.VersionsPast
		if err := s.locate(&f); err != nil {
			return err
		}
		s.found(&f)
	}
	if r.TombstonesPast == 0 {
		return nil
	}
	// The map keeps no times: the oldest tombstone's is looked up.
	f := &Finding{Offset: oldestTomb, Status: Tombstone, By: -1, Count: r.TombstonesPast, where: where(r.Plan, oldestTomb, true)}
	if err := s.locate(f); err != nil {
		return err
	}
	c := &s.audit.Cleaner
	f.Written = f.batchTime
	f.Deadline = compact.TombstoneDeadline(f.Written, c.MaxLag, c.DeleteRetention)
	s.found(f)
	return nil
}

// locate finds the batch of a version the key pass met: through the
// indexes as a fetch would, or below the log start offset, where a fetch
// does not go, by a scan of its segment.
func (s *search) locate(f *Finding) error {
	res, err := find.Offset(s.job.Partition.Path, f.Offset, find.Options{MaxRecordBytes: s.o.Range.MaxRecordBytes})
	if err != nil {
		return err
	}
	if res.Found && res.Offset == f.Offset {
		f.Segment, f.Position, f.batchTime = filepath.Base(res.Segment), res.Batch.Position, res.Batch.MaxTimestamp
		return nil
	}
	var sp fetch.Span
	for u := range s.pt.LogSpans().All() {
		if u.Segment.Base <= f.Offset {
			sp = u
		}
	}
	if sp.Segment.Log == "" {
		return fmt.Errorf("%s: offset %d is not in the log: it changed while it was read", s.job.Partition.Path, f.Offset)
	}
	seg, err := logfmt.OpenSegment(sp.Segment.Log)
	if err != nil {
		return err
	}
	defer seg.Close()
	seg.Job = s.mem
	for seg.Next() {
		if b := seg.Batch(); b.LastOffset() >= f.Offset {
			f.Segment, f.Position, f.batchTime = filepath.Base(sp.Segment.Log), b.Pos, b.MaxTimestamp()
			return nil
		}
	}
	if err := seg.Err(); err != nil {
		return err
	}
	return fmt.Errorf("%s: offset %d is not in the log: it changed while it was read", s.job.Partition.Path, f.Offset)
}

// Oldest is, in an audit without matchers, the superseded or deleted
// version with the lowest offset, past its deadline or not. Count is 0 when
// there is none.
func (r *Result) Oldest() Finding { return r.oldest.Finding }
