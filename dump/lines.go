package dump

import (
	"sync"
	"sync/atomic"

	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/codec"
)

// A deep text dump of compressed batches renders their record lines on the
// DeepReader's workers, next to the decompression (DeepReader.Prepare):
// on one goroutine, turning 2M records into text bound the dump's speedup
// on two cores to 1.4x. The dumper then only checks the offsets between
// batches and queues the text. A batch whose lines could hold anything
// but the plain case (a control batch, an error, offsets that skip inside
// it, an offset filter) is dumped by the dumper as before, so the output
// is the same bytes whichever way a batch goes.

const (
	// linesMax is the most text a job renders for one batch; past it the
	// dumper renders the batch, a block at a time, as before.
	linesMax = 64 << 10
	// linesBudget bounds the text of all jobs rendered and not yet queued.
	linesBudget = 4 << 20
	// linesFree is the most idle jobs a dumper keeps, their text buffers
	// holding at most linesBudget: a dump on two cores has hundreds of
	// jobs in flight, and when only 64 were kept, those made afresh and
	// dropped were most of its garbage (11 collections against 3) and a
	// third of its page faults.
	linesFree = 1024
)

// renderOnWorkers is false only in tests, which compare the two ways.
var renderOnWorkers = true

// linesJob renders the record lines of one v2 compressed batch.
type linesJob struct {
	file        string
	maxRecord   int
	direct      bool          // Run is called by the dumper itself
	held        *atomic.Int64 // the dumper's text in flight
	text        []byte
	first, last int64 // offsets of the first and last record
	n           int   // records
	ok          bool  // text holds every record line of the batch
}

func (j *linesJob) Run(b *logfmt.Batch) {
	j.n, j.ok = 0, false
	w := lineWorkers.Get().(*lineWorker)
	defer lineWorkers.Put(w)
	// A worker renders into its own buffer and copies the text once:
	// the job's buffer was last read by the dumper, on another core, and
	// rendering into it made every few stores wait for a cache line.
	text := w.text[:0]
	if j.direct {
		text = j.text[:0]
	}
	it := &w.it
	it.File, it.MaxRecordBytes = j.file, j.maxRecord
	if it.Reset(b) != nil {
		return
	}
	meta := batchMeta(b)
	for it.Next() {
		r := it.Record()
		if j.n > 0 && r.Offset != j.last+1 || len(text) > linesMax {
			return
		}
		if j.n == 0 {
			j.first = r.Offset
		}
		j.last = r.Offset
		j.n++
		m := meta.record(r)
		text = appendHeaderKeys(appendRecordMeta(text, &m), r)
		text = append(text, '\n')
	}
	if it.Err() != nil || j.held.Add(int64(len(text))) > linesBudget {
		j.held.Add(-int64(len(text)))
		return
	}
	if j.direct {
		j.text = text
	} else {
		w.text, j.text = text, append(j.text[:0], text...)
	}
	j.ok = true
}

// lineWorkers are the jobs' record iterators and text buffers. A pool
// keeps them on the P that used them last, so that a worker finds them in
// its own core's cache; an iterator of each job went from core to core
// with the jobs.
var lineWorkers = sync.Pool{New: func() any { return new(lineWorker) }}

type lineWorker struct {
	it   logfmt.RecordIter
	text []byte
}

// prepareLines is the DeepReader's Prepare of a deep text dump: a job for
// each v2 compressed batch that is not a control batch.
func (d *dumper) prepareLines(b *logfmt.Batch) (logfmt.BatchJob, bool) {
	if b.Magic() < 2 || b.Header().Compression() == codec.None || b.Header().IsControl() {
		return nil, true
	}
	var j *linesJob
	if n := len(d.linesFree); n > 0 {
		j, d.linesFree = d.linesFree[n-1], d.linesFree[:n-1]
		d.linesFreeText -= cap(j.text)
	} else {
		j = &linesJob{held: &d.linesHeld}
	}
	j.file, j.maxRecord, j.direct = d.file, d.o.MaxRecordBytes, d.o.batchWorkers < 2
	return j, true
}

// linesOK tells whether the dumper renders batches with prepareLines: in a
// deep text dump of metadata lines, without an offset filter (which would
// cut a batch's lines).
func (d *dumper) linesOK() bool {
	o := d.o
	return renderOnWorkers && o.deep() && d.pipelined() && o.FromOffset == NoLimit && o.ToOffset == NoLimit
}

// queueLines queues the lines j rendered of the current batch, after the
// check of the offsets between batches that records does.
func (d *dumper) queueLines(j *linesJob, st *segState) {
	if j.n == 0 {
		return
	}
	if st.prev != -1 && j.first != st.prev+1 {
		d.job.reports.gap(d.abs, st.prev, j.first)
	}
	st.prev = j.last
	q := d.q
	if q == nil {
		d.s.set(append(d.s.buf(), j.text...))
		return
	}
	if len(q.cur.tails) >= blockTails {
		q.handOver()
	}
	e := q.add()
	c := q.cur
	e.kind, e.from = evLines, len(c.tails)
	c.tails = append(c.tails, j.text...)
	e.n = len(c.tails)
}

// doneLines gives the current batch's job back.
func (d *dumper) doneLines() {
	j := d.lines
	if j == nil {
		return
	}
	d.lines = nil
	if j.ok {
		d.linesHeld.Add(-int64(len(j.text)))
	}
	if len(d.linesFree) < linesFree {
		if d.linesFreeText+cap(j.text) > linesBudget {
			j.text = nil
		}
		d.linesFreeText += cap(j.text)
		d.linesFree = append(d.linesFree, j)
	}
}
