package dump

import (
	"github.com/logtool/logtool/internal/freelist"
	"github.com/logtool/logtool/logfmt"
)

// A shallow dump spends about as long formatting batch lines as reading and
// checksumming the batches. Read in ranges on several goroutines, a text
// dump's lines are made there (renderer); otherwise (one worker, JSON, the
// summary, filters, and from the first batch a range could not render) it
// runs in two stages: the dumper reads, frames and checks, and passes a
// copy of each header (not the batch) to a formatting goroutine, which
// writes the lines in order. Reports travel in the same stream so they keep
// their place among the lines.
//
// A deep text dump (without data) splits the same way: the dumper also
// decodes the records, which is what can find damage, and queues for each
// the few numbers its line shows; the second goroutine turns them into
// text, which costs about as much as reading and decoding. Compressed
// batches, whose records the DeepReader's workers decompress, have their
// lines rendered there too (lines.go); the dumper then writes them itself,
// with the batch lines, and starts the second stage only at the first batch
// whose records it reads (uncompressed, control, or one a job could not
// render): copying the workers' text once more, through this stage, cost a
// zstd dump on two cores 2-6% of its CPU.

// batchLine is what a batch line needs: the header bytes (all of a v2
// header, the front of a legacy message), where the batch is, its size, its
// checksum verdict and, for legacy wrappers, the first offset and count that
// only decompression tells.
type batchLine struct {
	hdr   [logfmt.V2HeaderSize]byte
	n     uint8
	valid bool
	pos   int64
	size  int64
	base  int64
	count int64
}

func newBatchLine(b *logfmt.Batch, valid bool) batchLine {
	l := batchLine{pos: b.Pos, size: int64(b.Size()), valid: valid, base: b.EntryOffset(), count: 1}
	l.n = uint8(copy(l.hdr[:], b.Data))
	if b.Magic() >= 2 {
		l.count = int64(b.Header().RecordCount())
	}
	return l
}

// batch views the copied header as a Batch; only header accessors may be
// used on it.
func (l *batchLine) batch() logfmt.Batch { return logfmt.Batch{Pos: l.pos, Data: l.hdr[:l.n]} }

type eventKind uint8

const (
	evBatch eventKind = iota
	evReport
	evText
	evRecords
	evLines
)

type event struct {
	kind  eventKind
	line  batchLine
	rkind string // "problem" or "note"
	pos   int64
	msg   string // report message, or text line
	n     int    // records of an evRecords event; the end of an evLines event's text
	from  int    // the start of an evLines event's text in the block's tails
}

const (
	// A hand-over wakes the other goroutine, which on a VM can cost more
	// than formatting a few hundred lines, so blocks are large (figures in
	// docs/performance.md).
	blockEvents  = 2048
	blockRecords = 16384
	// blockTails bounds the rendered header keys and control suffixes of a
	// block; a block whose tails grew past 4× this (one record with huge
	// header keys) gives its buffer back rather than keep it.
	blockTails = 64 << 10
)

// A block is a batch of events handed to the formatting stage at once, so
// the two goroutines meet every few hundred lines rather than every line.
// An evRecords event stands for the next n entries of recs; an evLines
// event for the rendered lines tails[from:n].
type block struct {
	ev    []event
	recs  []recordMeta
	tails []byte
}

func (b *block) reset() {
	b.ev, b.recs, b.tails = b.ev[:0], b.recs[:0], b.tails[:0]
	if cap(b.tails) > 4*blockTails {
		b.tails = nil
	}
}

// pipeline is the queue between the two stages of one segment's dump.
type pipeline struct {
	ch   chan *block
	free chan *block
	cur  *block
	done chan struct{}
}

// startPipeline starts the formatting stage; until stopPipeline the dumper
// must not touch its sink.
func (d *dumper) startPipeline() {
	q := &pipeline{ch: make(chan *block, 4), free: make(chan *block, 6), done: make(chan struct{})}
	for i := 0; i < cap(q.free); i++ {
		q.free <- getBlock()
	}
	q.cur = <-q.free
	go func() {
		defer close(q.done)
		for b := range q.ch {
			recs := b.recs
			for i := range b.ev {
				e := &b.ev[i]
				switch e.kind {
				case evLines:
					d.s.set(append(d.s.buf(), b.tails[e.from:e.n]...))
				case evRecords:
					for j := range recs[:e.n] {
						m := &recs[j]
						d.recordLine(m, b.tails[m.tail0:m.tail1])
					}
					recs = recs[e.n:]
				default:
					d.emit(e)
				}
			}
			b.reset()
			q.free <- b
		}
	}()
	d.q = q
}

func (d *dumper) stopPipeline() {
	q := d.q
	if len(q.cur.ev) > 0 {
		q.ch <- q.cur // the formatting stage gives it back to free
	} else {
		putBlock(q.cur)
	}
	close(q.ch)
	<-q.done
	for len(q.free) > 0 {
		putBlock(<-q.free)
	}
	d.q = nil
}

// spareBlocks holds the blocks of pipelines that ended, for the next, up to
// those of a few dumpers at once: a partition's dump starts a pipeline for
// every segment, and each block's 2048 events would otherwise be fresh
// memory to fault in and for the collector to scan.
var spareBlocks = freelist.List[*block]{Max: 24}

func getBlock() *block {
	if b, ok := spareBlocks.Get(); ok {
		return b
	}
	return &block{ev: make([]event, 0, blockEvents)}
}

func putBlock(b *block) {
	b.reset()
	spareBlocks.Put(b)
}

// add queues an event, handing the block over when it is full.
func (q *pipeline) add() *event {
	if len(q.cur.ev) == cap(q.cur.ev) {
		q.handOver()
	}
	q.cur.ev = q.cur.ev[:len(q.cur.ev)+1]
	return &q.cur.ev[len(q.cur.ev)-1]
}

func (q *pipeline) handOver() {
	q.ch <- q.cur
	q.cur = <-q.free
}

// addRecord queues the line of record r, whose metadata is m. Its tail,
// the header keys and a control record's suffix, is rendered here because a
// control record can be damaged, and reports must come from the dumper.
func (d *dumper) addRecord(m recordMeta, r *logfmt.Record, control bool) {
	q := d.q
	if c := q.cur; c.recs != nil && len(c.recs) == cap(c.recs) || len(c.tails) >= blockTails {
		q.handOver()
	}
	if q.cur.recs == nil {
		// Only a deep dump queues records.
		q.cur.recs = make([]recordMeta, 0, blockRecords)
	}
	e := q.lastEvent()
	if e == nil || e.kind != evRecords {
		e = q.add()
		e.kind, e.n = evRecords, 0
	}
	c := q.cur
	if len(r.Headers) > 0 || control {
		m.tail0 = len(c.tails)
		if m.magic >= 2 {
			c.tails = appendHeaderKeys(c.tails, r)
		}
		if control {
			c.tails = d.controlText(c.tails, r)
		}
		m.tail1 = len(c.tails)
	}
	c.recs = append(c.recs, m)
	e.n++
}

func (q *pipeline) lastEvent() *event {
	if n := len(q.cur.ev); n > 0 {
		return &q.cur.ev[n-1]
	}
	return nil
}

func (d *dumper) emit(e *event) {
	switch e.kind {
	case evBatch:
		d.formatBatch(&e.line)
	case evReport:
		d.emitReport(e.rkind, e.pos, e.msg)
	case evText:
		d.s.set(append(append(d.s.buf(), e.msg...), '\n'))
	}
}
