package logfmt

import (
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/logtool/logtool/logfmt/codec"
)

// Ordered parallel decoding. Most of a deep read of compressed batches is
// the codec, and batches are independent, so a DeepReader hands runs of
// consecutive batches to worker goroutines that check each batch's CRC and
// decompress its payload, and gives the batches back in file order. The
// reading stays on the caller's goroutine, and so does all that needs the
// batches in order: framing, resynchronising past damage, parsing the
// records (a tenth of the work) and the caller's own checks.

const (
	// deepRunBytes is the size of a run of batches handed to a worker at
	// once: forty small compressed batches, a few hundred microseconds of
	// decompression, so that a hand-over costs about a percent of it,
	// while the window's runs stay within a core's cache.
	deepRunBytes = 32 << 10
	// deepMaxCopy is the largest batch copied into a run. A larger one,
	// past Kafka's default max.message.bytes, is given out straight from
	// the segment reader once the runs before it are, and decompressed by
	// the caller's RecordIter as a stream: copied, it would multiply the
	// reader's memory by the window.
	deepMaxCopy = 1 << 20
	// deepRunDecoded bounds the payloads a worker decompresses into a run,
	// as a multiple of the run's size: Kafka's payloads compress a few
	// times, a decompression bomb thousands. The batches past the bound
	// are left to the caller's RecordIter.
	deepRunDecoded = 16
)

// decoded is what a DeepReader's worker found in one batch: its CRC and,
// for a compressed batch, its payload decompressed, which RecordIter then
// reads instead of decompressing it.
type decoded struct {
	crc      uint32
	has      bool // the payload was decompressed
	resetErr error
	payload  []byte // all of it, or all before the fault
	err      error  // io.EOF after the payload, else the fault
	// size is the entry's size when Data holds only its header (a
	// HeaderReader's header view), else 0.
	size int
}

// runBatch is one batch of a run.
type runBatch struct {
	b     Batch
	dec   decoded
	want  bool // its records are wanted (DeepReader.Skip)
	job   BatchJob
	start int // where it starts in the run's raw bytes
	off   int // where its payload starts in the arena
	out   int // where its job's output ends in the run's
}

// run is a run of consecutive batches: their bytes, copied out of the
// segment reader's window, and, once a worker is done with it, their
// decompressed payloads. Runs are reused with their buffers.
type run struct {
	raw     []byte
	batches []runBatch
	work    bool   // some batch has a payload a worker decompresses
	arena   []byte // the payloads, one after the other
	out     []byte // the jobs' output, one after the other
	done    chan struct{}
	next    int // the caller's next batch
}

var deepRuns = sync.Pool{New: func() any { return &run{done: make(chan struct{}, 1)} }}

func newRun() *run {
	r := deepRuns.Get().(*run)
	r.raw, r.batches, r.arena, r.out, r.work, r.next = r.raw[:0], r.batches[:0], r.arena[:0], r.out[:0], false, 0
	return r
}

// DeepReader reads the batches of a segment in order, as a SegmentReader
// does, while worker goroutines check their CRCs and decompress their
// payloads ahead of the caller. A Batch it gives out carries what the
// worker found: ComputeCRC and Validate return the CRC it computed, and a
// RecordIter reset on it reads the payload it decompressed where it would
// have decompressed it, meeting the same fault, if any, at the same place.
// A caller reads the batches and their records as it would with one
// goroutine, with the same code, and its output cannot differ.
//
// Memory is bounded by the window: twice as many runs as workers, each of
// about 32 KiB of batches and at most 16 times that of decompressed
// payloads. What does not fit is decompressed by the caller's RecordIter,
// as a stream, as before: a batch over 1 MiB, the payloads of a run past
// its bound. Uncompressed batches are left to the caller too, as parsing
// one costs about what handing it over does, unless they lie among
// compressed ones or their jobs are worth handing over (JobsOnWorkers).
//
// Framing, the end of the data and Resync stay sequential: when the
// segment reader stops, the batches before are given out first; then Err,
// End, EndDetail and Pos are the segment reader's, and Resync moves it on.
// Close must be called to stop the workers.
type DeepReader struct {
	// MaxRecordBytes is the RecordIter.MaxRecordBytes of the caller's
	// iterator, which bounds the pieces a codec decodes whole.
	MaxRecordBytes int
	// Skip, when set, tells that the caller will not read a batch's
	// records, so that no worker decompresses them. It is called on the
	// caller's goroutine, in order, before the batch is given out (and not
	// at all with fewer than two workers).
	Skip func(*Batch) bool
	// Prepare, when set, replaces Skip and moves the caller's own work on
	// each batch onto the workers. It is called on the caller's goroutine,
	// in order, for every batch before the batch is given out (by Next
	// itself with fewer than two workers), so it may keep state from batch
	// to batch; it returns the batch's job and whether the job reads the
	// batch's records. The job runs once the batch's payload is
	// decompressed, on a worker or, for a batch given out as it is, in
	// Next; Job is the current batch's, done. A job may fail, as the batch
	// it runs on may not have been validated yet; it must read nothing the
	// caller changes while batches are handed over.
	Prepare func(*Batch) (job BatchJob, want bool)
	// JobsOnWorkers hands uncompressed batches with a job to the workers
	// too, for jobs that cost more than handing a batch over; else their
	// jobs run in Next.
	JobsOnWorkers bool

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
	pjob    BatchJob // the job of the segment reader's batch, when pending
	job     BatchJob // cur's
	out     []byte   // the output of cur's job
	ownOut  []byte   // the output of jobs run in Next

	todo    chan *run
	quit    atomic.Bool
	wg      sync.WaitGroup
	started bool
}

// A BatchJob is a caller's work on one batch (DeepReader.Prepare). Run
// appends what the job makes of b, if anything, to out and returns it;
// DeepReader.Output gives it back with the batch. The jobs of a run of
// batches run one after another on one goroutine and share out: its length
// is what they have made so far, for a job to bound. Output kept in the
// run crosses from core to core in one piece, and is recycled with it.
type BatchJob interface {
	Run(b *Batch, out []byte) []byte
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

// Job is the current batch's job, run, when Prepare is set.
func (d *DeepReader) Job() BatchJob { return d.job }

// Output is what the current batch's job made (BatchJob.Run), valid until
// the next call to Next.
func (d *DeepReader) Output() []byte { return d.out }

// runJob runs the job of a batch given out as it is.
func (d *DeepReader) runJob(b *Batch) {
	d.ownOut = d.job.Run(b, d.ownOut[:0])
	d.out = d.ownOut
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

// SeekTo makes the next Next or Resync start at pos, as SegmentReader.SeekTo
// does, and drops the batches read ahead. The current batch is no longer
// valid.
func (d *DeepReader) SeekTo(pos int64) {
	for _, r := range d.queue {
		if r.next == 0 {
			<-r.done
		}
		deepRuns.Put(r)
	}
	d.queue, d.pending, d.pjob, d.stopped = nil, false, nil, false
	d.cur, d.direct, d.job, d.out = nil, false, nil, nil
	d.sr.SeekTo(pos)
}

// Next moves to the next batch. It returns false at the end of the data or
// on an error, once the batches before have been given out.
func (d *DeepReader) Next() bool {
	d.job, d.out = nil, nil
	if d.workers < 2 {
		if !d.sr.Next() {
			return false
		}
		if d.Prepare != nil {
			if d.job, _ = d.Prepare(d.sr.Batch()); d.job != nil {
				d.runJob(d.sr.Batch())
			}
		}
		return true
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
		if d.job, d.pjob = d.pjob, nil; d.job != nil {
			d.runJob(d.cur)
		}
		return true
	}
	r := d.queue[0]
	if r.next == 0 {
		<-r.done
	}
	rb := &r.batches[r.next]
	d.cur, d.job = &rb.b, rb.job
	if d.job != nil {
		from := 0
		if r.next > 0 {
			from = r.batches[r.next-1].out
		}
		d.out = r.out[from:rb.out:rb.out]
	}
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
		var job BatchJob
		want := true
		switch {
		case d.Prepare != nil:
			job, want = d.Prepare(b)
		case d.Skip != nil:
			want = !d.Skip(b)
		}
		work := want && (b.Compression() != codec.None || job != nil && d.JobsOnWorkers)
		// A batch is copied when a worker has work in it, or when it lies
		// among batches that do.
		if len(b.Data) > d.maxCopy || !work && !d.ride && (r == nil || !r.work) {
			d.pending, d.pjob = true, job
			break
		}
		if r == nil {
			r = newRun()
		}
		r.work = r.work || work
		// Set in place: a runBatch built aside and copied in waited for
		// the stores before it, into lines the workers had last.
		r.batches = append(r.batches, runBatch{})
		rb := &r.batches[len(r.batches)-1]
		rb.b.Pos, rb.want, rb.job, rb.start = b.Pos, want, job, len(r.raw)
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
		maxRecord, runSize := d.MaxRecordBytes, d.runSize
		for range d.workers {
			d.wg.Go(func() {
				cr := deepReaders.Get().(*codec.Reader)
				for r := range d.todo {
					if !d.quit.Load() {
						decodeRun(cr, r, maxRecord, runSize)
					}
					r.done <- struct{}{}
					// The send readies a waiting caller on this P, where
					// it would wait for this worker to block; the window
					// waits on the caller, so it goes first.
					runtime.Gosched()
				}
				deepReaders.Put(cr)
			})
		}
	}
	d.queue = append(d.queue, r)
	d.todo <- r
}

// deepReaders keeps the workers' decompressors, whose buffers are worth
// keeping from one segment to the next.
var deepReaders = sync.Pool{New: func() any { return new(codec.Reader) }}

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
	d.queue, d.pjob = nil, nil
	if !d.direct {
		d.cur, d.job, d.out = nil, nil, nil
	}
}

// decodeRun is a worker's work on a run: every batch's CRC, and the
// payloads of those whose records are wanted, until they would take the
// run past its bound.
func decodeRun(cr *codec.Reader, r *run, maxRecord, runSize int) {
	limit := deepRunDecoded * max(len(r.raw), runSize)
	full := false
	for i := range r.batches {
		rb := &r.batches[i]
		rb.dec = decoded{crc: rb.b.computeCRC()}
		if rb.want && !full {
			full = !r.decompress(cr, rb, maxRecord, limit)
		}
	}
	// The arena has stopped moving.
	for i := range r.batches {
		rb := &r.batches[i]
		if d := &rb.dec; d.has {
			d.payload = r.arena[rb.off : rb.off+len(d.payload) : rb.off+len(d.payload)]
		}
		rb.b.dec = &rb.dec
	}
	for i := range r.batches {
		rb := &r.batches[i]
		if rb.job != nil {
			r.out = rb.job.Run(&rb.b, r.out)
		}
		rb.out = len(r.out)
	}
}

// decompress reads the payload of rb into the arena, as a RecordIter
// would; false when it would take the arena past limit, and then the
// payload is left out.
func (r *run) decompress(cr *codec.Reader, rb *runBatch, maxRecord, limit int) bool {
	c, payload, magic, ok := compressedPayload(&rb.b)
	if !ok {
		return true
	}
	d := &rb.dec
	rb.off = len(r.arena)
	if d.resetErr = cr.Reset(c, payload, magic, maxRecord); d.resetErr == nil {
		for d.err == nil {
			// Room for a whole small payload, which zstd then decodes in
			// one call.
			r.arena = slices.Grow(r.arena, recordWindow)
			k, err := cr.Read(r.arena[len(r.arena):cap(r.arena)])
			if r.arena = r.arena[:len(r.arena)+k]; len(r.arena) > limit {
				r.arena, *d = r.arena[:rb.off], decoded{crc: d.crc}
				return false
			}
			d.err = err
		}
	}
	// Its length, until the arena stops moving.
	d.payload, d.has = r.arena[rb.off:], true
	return true
}

// compressedPayload is the payload of a compressed batch and how to read
// it; ok is false when b has none, or RecordIter stops before reading it.
func compressedPayload(b *Batch) (c codec.Type, payload []byte, magic int8, ok bool) {
	if b.Magic() >= 2 {
		c = b.Header().Compression()
		return c, b.Data[V2HeaderSize:], 2, c != codec.None && c.ValidFor(2)
	}
	m := b.Legacy()
	if c = m.Compression(); c == codec.None || !c.ValidFor(m.Magic()) {
		return c, nil, 0, false
	}
	_, value, err := m.KeyValue()
	return c, value, m.Magic(), err == nil && value != nil
}
