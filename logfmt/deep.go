package logfmt

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/logtool/logtool/logfmt/codec"
)

// Ordered parallel decoding. Most of a deep read of compressed batches is
// the codec, and batches are independent, so a DeepReader hands runs of
// consecutive batches to worker goroutines that check each batch's CRC,
// decompress it and parse its records, and gives the batches back in file
// order. The reading stays on the caller's goroutine, and so does all that
// needs the batches in order: framing, resynchronising past damage, the
// caller's own checks.

const (
	// deepRunBytes is the size of a run of batches handed to a worker at
	// once: a hundred small compressed batches, so that a hand-over (two
	// channel operations) costs a percent of the run's decoding.
	deepRunBytes = 64 << 10
	// deepMaxCopy is the largest batch copied into a run. A larger one,
	// past Kafka's default max.message.bytes, is given out straight from
	// the segment reader once the runs before it are, and its records are
	// read by the caller's RecordIter as a stream: copied, it would
	// multiply the reader's memory by the window.
	deepMaxCopy = 1 << 20
	// deepRunDecoded bounds what a worker keeps of a run's records, as a
	// multiple of the run's size: Kafka's payloads compress a few times,
	// a decompression bomb thousands. The batches past the bound are left
	// to the caller's RecordIter.
	deepRunDecoded = 16
)

// decoded is what a DeepReader's worker found in one batch.
type decoded struct {
	crc      uint32
	has      bool // the records below were decoded; else RecordIter reads the batch itself
	resetErr error
	err      error // what ended the records, after the last of recs
	recs     []Record
	first    int64 // BaseOffset and Count (a legacy wrapper's come from its records)
	count    int
}

// runBatch is one batch of a run.
type runBatch struct {
	b     Batch
	dec   decoded
	want  bool // its records are wanted (DeepReader.Skip)
	start int  // where it starts in the run's raw bytes
	// Where its records start in the run's recs, headers and arena, and
	// how many there are.
	rec0, hdr0, arena0, nrec int
}

// A place tells where a record's key and value, or a header's, are in a
// run's arena: at off, n bytes, nil when n < 0. With direct they point into
// the batch and are left as they are.
type place struct {
	key, value span
	direct     bool
	hdrs       int // a record's header count
}

type span struct{ off, n int }

// run is a run of consecutive batches: their bytes, copied out of the
// segment reader's window, and, once a worker is done with it, their
// records. Runs are reused with their slices' capacity.
type run struct {
	raw     []byte
	batches []runBatch
	work    bool // some batch has records a worker decodes
	recs    []Record
	hdrs    []Header
	// The keys and values of compressed batches are copied into arena,
	// which moves as it grows: they are placed once the run is done.
	arena  []byte
	places []place // one per record, then one per header in hplaces
	hplace []place
	done   chan struct{}
	next   int // the caller's next batch
}

var deepRuns = sync.Pool{New: func() any { return &run{done: make(chan struct{}, 1)} }}

func newRun() *run {
	r := deepRuns.Get().(*run)
	r.raw, r.batches, r.work, r.next = r.raw[:0], r.batches[:0], false, 0
	r.recs, r.hdrs, r.arena, r.places, r.hplace = r.recs[:0], r.hdrs[:0], r.arena[:0], r.places[:0], r.hplace[:0]
	if r.arena == nil {
		r.arena = make([]byte, 0, 4<<10) // never nil, so that an empty key placed in it is not nil
	}
	return r
}

// DeepReader reads the batches of a segment in order, as a SegmentReader
// does, while worker goroutines check their CRCs and decode their records
// ahead of the caller. A Batch it gives out carries what the worker found:
// ComputeCRC and Validate return the CRC it computed, and RecordIter.Reset
// replays the records it decoded, with the same errors at the same places.
// A caller reads the batches as it would with one goroutine, and its output
// cannot differ.
//
// Memory is bounded by the window: twice as many runs as workers, each of
// about 64 KiB of batches and at most 16 times that of decoded records.
// What does not fit is read by the caller as before: a batch over 1 MiB,
// the records of a run past its bound. Uncompressed batches are left to
// the caller too, as parsing one costs about what handing it over does,
// unless they lie among compressed ones.
//
// Framing, the end of the data and Resync stay sequential: when the
// segment reader stops, the batches before are given out first; then Err,
// End, EndDetail and Pos are the segment reader's, and Resync moves it on.
// Close must be called to stop the workers.
type DeepReader struct {
	// MaxRecordBytes is the workers' RecordIter.MaxRecordBytes: give the
	// one the caller's iterator has.
	MaxRecordBytes int
	// Skip, when set, tells that the caller will not read a batch's
	// records, so that no worker decodes them. It is called on the
	// caller's goroutine, in order, before the batch is given out (and not
	// at all with fewer than two workers).
	Skip func(*Batch) bool

	sr      *SegmentReader
	workers int
	window  int // runs handed over at once
	runSize int // deepRunBytes, smaller in tests
	maxCopy int // deepMaxCopy, smaller in tests

	queue   []*run // handed over, in order; queue[0] is being given out
	ride    bool   // uncompressed batches join runs: the last run had work
	pending bool   // the segment reader's batch is given out after the queue
	stopped bool   // the segment reader stopped
	direct  bool   // cur is the segment reader's
	cur     *Batch

	todo    chan *run
	quit    atomic.Bool
	wg      sync.WaitGroup
	started bool
}

// NewDeepReader reads sr from its position with the given number of
// workers. With fewer than two it starts none and is sr itself.
func NewDeepReader(sr *SegmentReader, workers int) *DeepReader {
	return &DeepReader{sr: sr, workers: workers, window: 2 * workers, runSize: deepRunBytes, maxCopy: deepMaxCopy}
}

// Batch is the current batch, valid until the next call to Next.
func (d *DeepReader) Batch() *Batch {
	if d.workers < 2 {
		return d.sr.Batch()
	}
	return d.cur
}

// Pos is the position after the current batch, as SegmentReader.Pos is.
func (d *DeepReader) Pos() int64 {
	if d.cur == nil || d.direct || d.workers < 2 {
		return d.sr.Pos()
	}
	return d.cur.Pos + int64(len(d.cur.Data))
}

// Err, End and EndDetail tell why Next returned false, as the segment
// reader's do.
func (d *DeepReader) Err() error        { return d.sr.Err() }
func (d *DeepReader) End() End          { return d.sr.End() }
func (d *DeepReader) EndDetail() string { return d.sr.EndDetail() }

// Resync is SegmentReader.Resync, for after Next returned false.
func (d *DeepReader) Resync() bool {
	d.stopped = false
	return d.sr.Resync()
}

// Next moves to the next batch. It returns false at the end of the data or
// on an error, once the batches before have been given out.
func (d *DeepReader) Next() bool {
	if d.workers < 2 {
		return d.sr.Next()
	}
	d.cur, d.direct = nil, false
	if len(d.queue) > 0 && d.queue[0].next == len(d.queue[0].batches) {
		deepRuns.Put(d.queue[0])
		d.queue[0] = nil
		d.queue = d.queue[1:]
	}
	d.fill()
	if len(d.queue) == 0 {
		if !d.pending {
			return false
		}
		// The segment reader moves on at the next call.
		d.pending = false
		d.cur, d.direct = d.sr.Batch(), true
		return true
	}
	r := d.queue[0]
	if r.next == 0 {
		<-r.done
	}
	d.cur = &r.batches[r.next].b
	r.next++
	return true
}

// fill reads batches into runs and hands them over until the window is
// full, the segment reader stops, or a batch is to be given out as it is.
func (d *DeepReader) fill() {
	var r *run
	for len(d.queue) < d.window && !d.pending && !d.stopped {
		if !d.sr.Next() {
			d.stopped = true
			break
		}
		b := d.sr.Batch()
		want := d.Skip == nil || !d.Skip(b)
		work := want && b.Compression() != codec.None
		// A batch is copied when a worker has work in it, or when it lies
		// among batches that do.
		if len(b.Data) > d.maxCopy || !work && !d.ride && (r == nil || !r.work) {
			d.pending = true
			break
		}
		if r == nil {
			r = newRun()
		}
		r.work = r.work || work
		r.batches = append(r.batches, runBatch{b: Batch{Pos: b.Pos}, want: want, start: len(r.raw)})
		r.raw = append(r.raw, b.Data...)
		if len(r.raw) >= d.runSize {
			d.dispatch(r)
			r = nil
		}
	}
	if r != nil {
		d.dispatch(r)
	}
}

// dispatch hands r to the workers, starting them the first time.
func (d *DeepReader) dispatch(r *run) {
	for i := range r.batches {
		end := len(r.raw)
		if i+1 < len(r.batches) {
			end = r.batches[i+1].start
		}
		r.batches[i].b.Data = r.raw[r.batches[i].start:end:end]
	}
	d.ride = r.work
	if !d.started {
		d.started = true
		d.quit.Store(false)
		d.todo = make(chan *run, d.window)
		file, maxRecord, runSize := d.sr.File(), d.MaxRecordBytes, d.runSize
		for range d.workers {
			d.wg.Go(func() {
				w := deepIters.Get().(*RecordIter)
				w.File, w.MaxRecordBytes = file, maxRecord
				for r := range d.todo {
					if !d.quit.Load() {
						decodeRun(w, r, runSize)
					}
					r.done <- struct{}{}
				}
				deepIters.Put(w)
			})
		}
	}
	d.queue = append(d.queue, r)
	d.todo <- r
}

// deepIters keeps the workers' iterators, whose buffers and decoders are
// worth keeping from one segment to the next.
var deepIters = sync.Pool{New: func() any { return new(RecordIter) }}

// Close stops the workers and drops the runs not given out. The segment
// reader stays open; the current batch stays valid only if it is the
// segment reader's.
func (d *DeepReader) Close() {
	if !d.started {
		return
	}
	d.quit.Store(true)
	close(d.todo)
	d.wg.Wait()
	d.started = false
	for _, r := range d.queue {
		if r.next == 0 {
			<-r.done
		}
		deepRuns.Put(r)
	}
	d.queue = nil
	if !d.direct {
		d.cur = nil
	}
}

// Memory a record and a header take in a run besides their bytes.
const (
	recordCost = int(unsafe.Sizeof(Record{}) + unsafe.Sizeof(place{}))
	headerCost = int(unsafe.Sizeof(Header{}) + unsafe.Sizeof(place{}))
)

// decodeRun is a worker's work on a run: every batch's CRC, and the
// records of those wanted, until they would take more memory than the
// run's bound.
func decodeRun(it *RecordIter, r *run, runSize int) {
	limit := deepRunDecoded * max(len(r.raw), runSize)
	full := false
	for i := range r.batches {
		rb := &r.batches[i]
		rb.dec = decoded{crc: rb.b.computeCRC()}
		if rb.want && !full {
			full = !r.decode(it, rb, limit)
		}
		rb.b.dec = &rb.dec
	}
	r.placeAll()
}

// decode reads the records of rb into r; false when they would take r past
// limit, and then leaves them out.
func (r *run) decode(it *RecordIter, rb *runBatch, limit int) bool {
	rb.rec0, rb.hdr0, rb.arena0 = len(r.recs), len(r.hdrs), len(r.arena)
	d := &rb.dec
	if d.resetErr = it.Reset(&rb.b); d.resetErr == nil {
		copied := rb.b.Compression() != codec.None
		used := len(r.arena) + len(r.recs)*recordCost + len(r.hdrs)*headerCost
		for it.Next() {
			rec := it.Record()
			if used += recordCost + len(rec.Headers)*headerCost; copied {
				used += len(rec.Key) + len(rec.Value)
				for _, h := range rec.Headers {
					used += len(h.Key) + len(h.Value)
				}
			}
			if used > limit {
				r.recs, r.hdrs, r.arena = r.recs[:rb.rec0], r.hdrs[:rb.hdr0], r.arena[:rb.arena0]
				r.places, r.hplace = r.places[:rb.rec0], r.hplace[:rb.hdr0]
				*d = decoded{crc: d.crc}
				return false
			}
			r.recs = append(r.recs, *rec)
			p := place{direct: !copied, hdrs: len(rec.Headers)}
			r.hdrs = append(r.hdrs, rec.Headers...)
			if copied {
				p.key, p.value = r.copy(rec.Key), r.copy(rec.Value)
				for _, h := range rec.Headers {
					r.hplace = append(r.hplace, place{key: r.copy(h.Key), value: r.copy(h.Value)})
				}
			} else {
				for range rec.Headers {
					r.hplace = append(r.hplace, place{direct: true})
				}
			}
			r.places = append(r.places, p)
		}
		d.err = it.Err()
		d.first, d.count = it.BaseOffset(), it.Count()
	}
	rb.nrec = len(r.recs) - rb.rec0
	d.has = true
	return true
}

// copy appends b to the arena.
func (r *run) copy(b []byte) span {
	if b == nil {
		return span{n: -1}
	}
	s := span{off: len(r.arena), n: len(b)}
	r.arena = append(r.arena, b...)
	return s
}

func (r *run) at(s span) []byte {
	if s.n < 0 {
		return nil
	}
	return r.arena[s.off : s.off+s.n : s.off+s.n]
}

// placeAll points the records at their keys, values and headers, now that
// the arena and the headers have stopped moving, and gives each batch its
// records.
func (r *run) placeAll() {
	for i := range r.hdrs {
		if p := &r.hplace[i]; !p.direct {
			r.hdrs[i].Key, r.hdrs[i].Value = r.at(p.key), r.at(p.value)
		}
	}
	h := 0
	for i := range r.recs {
		rec, p := &r.recs[i], &r.places[i]
		if !p.direct {
			rec.Key, rec.Value = r.at(p.key), r.at(p.value)
		}
		rec.Headers = r.hdrs[h : h+p.hdrs : h+p.hdrs]
		h += p.hdrs
	}
	for i := range r.batches {
		if rb := &r.batches[i]; rb.dec.has {
			rb.dec.recs = r.recs[rb.rec0 : rb.rec0+rb.nrec : rb.rec0+rb.nrec]
		}
	}
}
