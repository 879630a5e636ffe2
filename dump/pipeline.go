package dump

import "github.com/logtool/logtool/logfmt"

// A shallow dump spends about as long formatting batch lines as reading and
// checksumming the batches, so it runs in two stages: the dumper reads,
// frames and checks, and passes a copy of each header (not the batch) to a
// formatting goroutine, which writes the lines in order. Reports travel in
// the same stream so they keep their place among the lines.

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
)

type event struct {
	kind  eventKind
	line  batchLine
	rkind string // "problem" or "note"
	pos   int64
	msg   string // report message, or text line
}

const blockEvents = 256

type block struct{ ev []event }

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
		q.free <- &block{ev: make([]event, 0, blockEvents)}
	}
	q.cur = <-q.free
	go func() {
		defer close(q.done)
		for b := range q.ch {
			for i := range b.ev {
				d.emit(&b.ev[i])
			}
			b.ev = b.ev[:0]
			q.free <- b
		}
	}()
	d.q = q
}

func (d *dumper) stopPipeline() {
	q := d.q
	if len(q.cur.ev) > 0 {
		q.ch <- q.cur
	}
	close(q.ch)
	<-q.done
	d.q = nil
}

// add queues an event, handing the block over when it is full.
func (q *pipeline) add() *event {
	if len(q.cur.ev) == cap(q.cur.ev) {
		q.ch <- q.cur
		q.cur = <-q.free
	}
	q.cur.ev = q.cur.ev[:len(q.cur.ev)+1]
	return &q.cur.ev[len(q.cur.ev)-1]
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
