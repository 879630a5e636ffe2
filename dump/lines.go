package dump

import (
	"encoding/binary"
	"sync"
	"unsafe"

	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/codec"
)

// A deep text dump renders the record lines of compressed batches on the
// DeepReader's workers, next to the decompression (DeepReader.Prepare), and
// with two workers or more those of uncompressed batches too: on one
// goroutine, turning 2M records into text bound the dump's speedup on two
// cores to 1.4x, and the formatting stage alone made an uncompressed dump
// slower on two cores than on one. The dumper then only checks the offsets
// between batches and queues the text. A batch whose lines could hold
// anything but the plain case (a control batch, an error, offsets that skip
// inside it, an offset filter) is dumped by the dumper as before, so the
// output is the same bytes whichever way a batch goes.
//
// A job's output (DeepReader.Output) is the offsets of the batch's first
// and last records, then the lines; none when the dumper is to render the
// batch itself.

const (
	// linesMax is the most text a job renders for one batch; past it the
	// dumper renders the batch, a block at a time, as before.
	linesMax = 64 << 10
	// linesRun bounds the text of a run of batches; the DeepReader's
	// window holds a few runs per worker.
	linesRun = 1 << 20
	// linesHead is the size of the offsets before a job's lines.
	linesHead = 16
)

// renderOnWorkers is false only in tests, which compare the two ways.
var renderOnWorkers = true

// linesJob renders the record lines of a batch. The dumper's one job
// serves every batch of a segment, and the workers read it for each: it is
// alone in its cache line, as within the dumper they waited on it whenever
// the dumper wrote its own fields.
type linesJob struct {
	lineConfig
	_ [cacheLine - unsafe.Sizeof(lineConfig{})]byte
}

type lineConfig struct {
	file      string
	maxRecord int
	direct    bool // Run is called by the dumper itself
}

const cacheLine = 64

func (j *linesJob) Run(b *logfmt.Batch, out []byte) []byte {
	if len(out) > linesRun {
		return out
	}
	w := lineWorkers.Get().(*lineWorker)
	defer lineWorkers.Put(w)
	// A worker renders into its own buffer and copies the text once: out
	// was last read by the dumper, on another core, and rendering into it
	// made every few stores wait for a cache line.
	text := w.text[:0]
	if j.direct {
		text = out
	}
	start := len(text)
	text = append(text, make([]byte, linesHead)...)
	it := &w.it
	it.File, it.MaxRecordBytes = j.file, j.maxRecord
	if it.Reset(b) != nil {
		return out
	}
	var m recordMeta
	m.setBatch(b)
	first, last, n := int64(0), int64(0), 0
	for it.Next() {
		r := it.Record()
		if n > 0 && r.Offset != last+1 || len(text)-start+lineBound(r) > linesMax {
			return out
		}
		if n == 0 {
			first = r.Offset
		}
		last = r.Offset
		n++
		m.setRecord(r)
		text = appendHeaderKeys(appendRecordMeta(text, &m), r)
		text = append(text, '\n')
	}
	if it.Err() != nil || n == 0 {
		return out
	}
	binary.NativeEndian.PutUint64(text[start:], uint64(first))
	binary.NativeEndian.PutUint64(text[start+8:], uint64(last))
	if j.direct {
		return text
	}
	w.text = text
	return append(out, text...)
}

// lineBound is the most a record's line can take: its metadata and its
// header keys, each byte of which can become a 3-byte U+FFFD. It keeps a
// job's text under linesMax, however large the keys of a record.
func lineBound(r *logfmt.Record) int {
	n := 256
	for _, h := range r.Headers {
		n += 3*len(h.Key) + 1
	}
	return n
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

// renderedLines is what a job rendered of the current batch.
type renderedLines struct {
	first, last int64
	text        []byte // nil when the dumper renders the batch
}

func (l *renderedLines) ok() bool { return l.text != nil }

// setLines takes the current batch's rendered lines from a job's output.
func (d *dumper) setLines(out []byte) {
	if len(out) < linesHead {
		d.lines = renderedLines{}
		return
	}
	d.lines = renderedLines{
		first: int64(binary.NativeEndian.Uint64(out)),
		last:  int64(binary.NativeEndian.Uint64(out[8:])),
		text:  out[linesHead:],
	}
}

// prepareLines is the DeepReader's Prepare of a deep text dump: the job for
// each v2 batch that is not a control batch, compressed or, with workers
// to hand it to, not.
func (d *dumper) prepareLines(b *logfmt.Batch) (logfmt.BatchJob, bool) {
	if b.Magic() < 2 || b.Header().IsControl() || b.Header().Compression() == codec.None && d.lineJob.direct {
		return nil, true
	}
	return d.lineJob, true
}

// linesOK tells whether the dumper renders batches with prepareLines: in a
// deep text dump of metadata lines, without an offset filter (which would
// cut a batch's lines).
func (d *dumper) linesOK() bool {
	o := d.o
	return renderOnWorkers && o.deep() && d.pipelined() && o.FromOffset == NoLimit && o.ToOffset == NoLimit
}

// queueLines queues the lines rendered of the current batch at pos, after
// the check of the offsets between batches that records does.
func (d *dumper) queueLines(st *segState, pos int64) {
	l := &d.lines
	if st.prev != -1 && l.first != st.prev+1 {
		d.job.reports.gap(d.abs, st.prev, l.first)
		d.offsetsBack(pos, st.prev, l.first)
	}
	st.prev = l.last
	q := d.q
	if q == nil {
		d.s.set(append(d.s.buf(), l.text...))
		return
	}
	if len(q.cur.tails) >= blockTails {
		q.handOver()
	}
	e := q.add()
	c := q.cur
	e.kind, e.from = evLines, len(c.tails)
	c.tails = append(c.tails, l.text...)
	e.n = len(c.tails)
}
