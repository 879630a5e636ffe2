package logfmt

import (
	"errors"
	"io"
	"iter"

	"github.com/logtool/logtool/internal/freelist"
	"github.com/logtool/logtool/internal/parallel"
)

// A scan that needs only what batch headers say (where each batch is, its
// offsets and timestamps, whether its checksum holds) is bound by copying
// the file and computing checksums. One goroutine copying while another
// checksums moves every byte between cores, which can cost as much as doing
// both on one (docs/performance.md). A HeaderReader instead has each of several
// goroutines read, frame and checksum a range of its own, and hands on
// only a copy of each header.
//
// The ranges start at cuts the caller suggests, such as the positions of
// the offset index: hints, which need not be right. Framing is
// deterministic, so a range's batches are the ones a single reader would
// find exactly when the range before it ended at its cut, having started
// at a batch itself. Ranges are taken in order on that condition; at the
// first that did not end at the next cut (a wrong hint, damage, a torn
// end) the HeaderReader goes on with a SegmentReader from where that range
// stopped, which then meets what the range met, the same way.
//
// A shallow dump's lines cost more to make than the batches cost to read,
// and a digest's coding of a batch about what handing its header over does.
// With Render, the goroutine that read a range also makes the caller's text
// of its batches, in a buffer that the caller then writes out as it is: the
// headers cross no core, and only the finished text leaves its own.

var (
	// headersRangeBytes is the least a range covers: a few hundred
	// microseconds of work, so that starting one costs little.
	headersRangeBytes int64 = 2 << 20
	// headersMaxInfos bounds the headers one range notes (104 bytes each),
	// for a log of tiny batches or a range the cuts left long; a range that
	// would hold more ends early, and reading goes on with one goroutine.
	// Batches under 256 bytes, whose copied headers would outweigh them,
	// are read so.
	headersMaxInfos = 8192
	// headersKeepBytes bounds the whole batches (Keep) one range copies,
	// with the same effect.
	headersKeepBytes = 2 << 20
)

// HeaderReader iterates the batches of a segment, in order, like a
// SegmentReader, reading ahead on several goroutines. Batch returns a
// header view: Data holds the first bytes of the entry (V2HeaderSize, or
// the whole entry when shorter or kept), so that header accessors, Size and
// Validate work, but records cannot be read. Batches for which Keep says
// true are given whole.
type HeaderReader struct {
	// MaxBatchSize and Job are the SegmentReaders'.
	MaxBatchSize int
	Job          *Job
	// Keep, when set, picks the batches given whole. It is called on the
	// reading goroutines.
	Keep func(*Batch) bool
	// Render, when set, makes the caller's text of the batches on the
	// reading goroutines, instead of handing on headers: it is called for
	// each range, and the Renderer it returns is given each batch of the
	// range in order, whole or, past 8 MiB, as a header view (its checksum
	// not yet computed: ComputeCRC does). Rendered gives the text and the
	// Renderer; from the first batch that did not render, Next gives
	// batches. A range's text is up to headersMaxInfos batches', so each
	// range in flight (2 × workers + 3) and each text the caller holds
	// can take a few MiB.
	Render func() Renderer
	// TextBytes is what a range's text starts with room for; 0 is the
	// room of lines 1-4 times the size of their batches (a dump's). A
	// digest's text is a hundredth of its batches: fresh pages of a
	// larger buffer, and the collections that its garbage brought, were
	// about 4% of its CPU.
	TextBytes int

	r       io.ReaderAt
	size    int64
	file    string
	start   int64
	cuts    []int64
	workers int

	started bool
	results chan *headerRange
	quit    chan struct{}
	done    chan struct{}
	free    chan *headerRange

	cur   *headerRange
	i     int // the next batch of cur
	batch Batch
	dec   decoded
	pos   int64
	seq   *SegmentReader // after the ranges, or instead of them
}

// A Renderer makes the text of one range's batches (HeaderReader.Render),
// keeping what it needs of the batches before: Render appends b's text to
// dst, or says false, leaving dst as it was, to end the range before b.
type Renderer interface {
	Render(dst []byte, b *Batch) ([]byte, bool)
}

// RenderFunc is a Renderer that keeps nothing.
type RenderFunc func(dst []byte, b *Batch) ([]byte, bool)

func (f RenderFunc) Render(dst []byte, b *Batch) ([]byte, bool) { return f(dst, b) }

// headerRange is what one goroutine found in [start, stop).
type headerRange struct {
	start, stop int64
	clean       bool // it ended exactly at stop
	infos       []headerInfo
	kept        []byte
	text        []byte   // what Render made of the batches before end
	rend        Renderer // what made it
	end         int64
}

// spareRanges holds the ranges of readers done with them, for the next
// reader, up to those of a few readers at once: fresh for every segment,
// their pages' faults were a tenth of reindex --check's CPU.
var spareRanges = freelist.List[*headerRange]{Max: 32}

type headerInfo struct {
	pos       int64
	size      int
	crc       uint32
	n         uint8 // header bytes in hdr
	keepStart int   // kept bytes, when keepEnd > keepStart
	keepEnd   int
	hdr       [V2HeaderSize]byte
}

// NewHeaderReader reads r, of size bytes, from byte start, on up to workers
// goroutines. cuts, which may be nil, are where ranges may start: rising
// positions believed to begin a batch, such as an offset index gives; those
// before size and a range or more past the previous one kept are used.
// file names r in errors. Close must be called.
func NewHeaderReader(r io.ReaderAt, size int64, file string, start int64, cuts iter.Seq[int64], workers int) *HeaderReader {
	h := &HeaderReader{r: r, size: size, file: file, start: start, workers: max(1, workers), pos: start}
	if cuts == nil || h.workers < 2 {
		return h
	}
	last := start
	for c := range cuts {
		if c >= size {
			break
		}
		if c >= last+headersRangeBytes {
			h.cuts = append(h.cuts, c)
			last = c
		}
	}
	return h
}

// File is the name given to the reader.
func (h *HeaderReader) File() string { return h.file }

// Size is the length of the data read.
func (h *HeaderReader) Size() int64 { return h.size }

// Pos is the position of the next entry to read.
func (h *HeaderReader) Pos() int64 {
	if h.seq != nil {
		return h.seq.Pos()
	}
	return h.pos
}

// Batch is the current entry, a header view (see HeaderReader), valid until
// the next call to Next.
func (h *HeaderReader) Batch() *Batch {
	if h.seq != nil {
		return h.seq.Batch()
	}
	return &h.batch
}

// Err, End and EndDetail are a SegmentReader's.
func (h *HeaderReader) Err() error {
	if h.seq != nil {
		return h.seq.Err()
	}
	return nil
}

func (h *HeaderReader) End() End {
	if h.seq != nil {
		return h.seq.End()
	}
	return EndNone
}

func (h *HeaderReader) EndDetail() string {
	if h.seq != nil {
		return h.seq.EndDetail()
	}
	return ""
}

// Next reads the next entry. It returns false at the end of the data or on
// an error; then End and Err tell which.
func (h *HeaderReader) Next() bool {
	if h.seq != nil {
		return h.seq.Next()
	}
	if !h.begin() {
		return h.seq.Next()
	}
	for h.cur == nil || h.i == len(h.cur.infos) {
		r, ok := h.cur, true
		if r != nil {
			h.cur = nil
			ok = r.clean
			if ok {
				h.free <- r
			}
		}
		if ok {
			r, ok = <-h.results
		}
		if !ok {
			// A range that did not end at its cut, or the end of the
			// ranges: one reader goes on, and at the end says so.
			h.stop()
			h.sequential(h.pos)
			return h.seq.Next()
		}
		h.cur, h.i = r, 0
	}
	in := &h.cur.infos[h.i]
	h.i++
	h.dec = decoded{crc: in.crc}
	data := in.hdr[:in.n]
	if in.keepEnd > in.keepStart {
		data = h.cur.kept[in.keepStart:in.keepEnd]
	} else if int(in.n) < in.size {
		h.dec.size = in.size
	}
	h.batch = Batch{Pos: in.pos, Data: data, dec: &h.dec}
	h.pos = in.pos + int64(in.size)
	return true
}

// begin starts the ranges' goroutines on the first call, and reports
// whether there are ranges; without, one reader reads on.
func (h *HeaderReader) begin() bool {
	if !h.started {
		h.started = true
		if len(h.cuts) == 0 {
			// One range: a single reader does the same, with no hand-over.
			h.sequential(h.start)
			return false
		}
		h.run()
	}
	return h.seq == nil
}

func (h *HeaderReader) sequential(from int64) {
	h.seq = NewSegmentReader(h.r, h.size, h.file)
	h.seq.MaxBatchSize, h.seq.Job, h.seq.HeaderViews, h.seq.LegacyViews = h.MaxBatchSize, h.Job, h.whole, true
	h.seq.SeekTo(from)
}

// errHeadersStopped ends the ranges' run when the reader is done with them.
var errHeadersStopped = errors.New("header reader stopped")

// run reads the ranges on the workers, handing them over in order.
func (h *HeaderReader) run() {
	h.results = make(chan *headerRange)
	h.quit = make(chan struct{})
	h.done = make(chan struct{})
	// Every range in flight, waiting or being read holds one.
	h.free = make(chan *headerRange, 2*h.workers+3)
	for range cap(h.free) {
		r, ok := spareRanges.Get()
		if !ok {
			r = &headerRange{}
		}
		h.free <- r
	}
	next := 0
	ranges := func() (*headerRange, bool) {
		if next > len(h.cuts) {
			return nil, false
		}
		var r *headerRange
		select {
		case r = <-h.free:
		case <-h.quit:
			return nil, false
		}
		r.start, r.stop = h.start, h.size
		if next > 0 {
			r.start = h.cuts[next-1]
		}
		if next < len(h.cuts) {
			r.stop = h.cuts[next]
		}
		next++
		return r, true
	}
	go func() {
		defer close(h.done)
		defer close(h.results)
		parallel.Stream(h.workers, ranges, h.read, func(_ int, r *headerRange) error {
			select {
			case h.results <- r:
				return nil
			case <-h.quit:
				return errHeadersStopped
			}
		})
	}()
}

// whole tells whether the caller wants b whole: a header view will do for
// every batch but those Keep picks.
func (h *HeaderReader) whole(b *Batch) bool { return h.Keep != nil && h.Keep(b) }

// read frames and checksums the batches of r, noting their headers.
func (h *HeaderReader) read(r *headerRange) *headerRange {
	r.infos, r.kept, r.text, r.clean = r.infos[:0], r.kept[:0], r.text[:0], false
	// Its reader ends at the range's end, and at zeros without scanning
	// them: either leaves the range unclean, as a batch running past its
	// end does, and the SegmentReader that goes on scans a zeroed tail
	// once, where each range in flight would scan it again.
	sr := NewSegmentReader(stoppable{h.r, h.quit}, r.stop, h.file)
	defer sr.Close()
	sr.MaxBatchSize, sr.Job, sr.unchecked = h.MaxBatchSize, h.Job, true
	sr.HeaderViews, sr.LegacyViews = h.whole, true
	sr.SeekTo(r.start)
	if h.Render != nil {
		h.render(r, sr)
		return r
	}
	if r.text != nil {
		putText(r.text)
		r.text = nil
	}
	if r.infos == nil {
		// Room for the most a range holds at once: grown by appending, the
		// headers were copied and the old arrays left to the collector,
		// and pages of fresh memory are dear to fault in. What a range
		// does not fill is never touched.
		r.infos = make([]headerInfo, 0, headersMaxInfos)
	}
	for sr.Pos() < r.stop {
		if !sr.Next() {
			return r
		}
		b := sr.Batch()
		if len(r.infos) == headersMaxInfos {
			return r
		}
		in := headerInfo{pos: b.Pos, size: b.Size(), crc: b.ComputeCRC()}
		in.n = uint8(copy(in.hdr[:], b.Data))
		if h.Keep != nil && h.Keep(b) {
			if len(r.kept)+len(b.Data) > headersKeepBytes {
				return r
			}
			in.keepStart = len(r.kept)
			r.kept = append(r.kept, b.Data...)
			in.keepEnd = len(r.kept)
		}
		r.infos = append(r.infos, in)
	}
	// Its reader ends at stop, so the range ended exactly there. The last
	// range ends at the end of the data: the reader after it says so.
	r.clean = true
	return r
}

// render renders the batches of r, as many as a range notes headers of,
// and ends the range, unclean, before a batch that does not render.
func (h *HeaderReader) render(r *headerRange, sr *SegmentReader) {
	if r.text == nil {
		r.text = getText(h.TextBytes)
	}
	r.rend = h.Render()
	r.end = r.start
	for n := 0; n < headersMaxInfos && sr.Pos() < r.stop && sr.Next(); n++ {
		l := len(r.text)
		var ok bool
		if r.text, ok = r.rend.Render(r.text, sr.Batch()); !ok {
			r.text = r.text[:l]
			break
		}
		r.end = sr.Pos()
	}
	r.clean = r.end == r.stop
}

// Rendered returns the text Render made of the batches of the next range,
// one batch at least, and the Renderer that made it, and moves past them,
// with a function to call once the text is no longer used. It returns false
// at the end of the ranges, and once a range was not rendered whole: Next
// then gives the batches from there, on one goroutine.
func (h *HeaderReader) Rendered() (text []byte, rend Renderer, release func(), ok bool) {
	if h.seq != nil || h.Render == nil {
		return nil, nil, nil, false
	}
	if !h.begin() {
		return nil, nil, nil, false
	}
	r, ok := <-h.results
	if !ok {
		return nil, nil, nil, false
	}
	h.pos = r.end
	// The text leaves the range, which goes back to work at once: a
	// caller holding texts never holds the ranges up.
	text, rend = r.text, r.rend
	clean, none := r.clean, r.end == r.start
	r.text, r.rend = nil, nil
	h.free <- r
	if !clean {
		h.stop()
		h.sequential(h.pos)
	}
	if none {
		// Its first batch did not render (damage, zeros, a batch past
		// the range's end): Next reads from there.
		if text != nil {
			putText(text)
		}
		return nil, nil, nil, false
	}
	return text, rend, func() { putText(text) }, true
}

// spareTexts holds the text buffers of ranges written out, for the next
// ranges. Made once, not grown by appending at every range, they spare the
// faults of fresh pages, which had made the shallow dump a sixth slower.
var spareTexts = freelist.List[[]byte]{Max: 16}

func getText(n int) []byte {
	if n == 0 {
		// Lines run 1-4 times the size of their batches.
		n = 2 * int(headersRangeBytes)
	}
	if t, ok := spareTexts.Get(); ok && cap(t) >= n {
		return t
	}
	return make([]byte, 0, n)
}

func putText(t []byte) { spareTexts.Put(t[:0]) }

// stoppable is what the ranges read through: once the reader is done with
// them, reads fail, so that stop does not wait for the rest of a range
// nobody will use (a long one, or a tail of zeros).
type stoppable struct {
	r    io.ReaderAt
	quit <-chan struct{}
}

func (s stoppable) ReadAt(p []byte, off int64) (int, error) {
	select {
	case <-s.quit:
		return 0, errHeadersStopped
	default:
		return s.r.ReadAt(p, off)
	}
}

// stop ends the ranges' run and waits for its goroutines.
func (h *HeaderReader) stop() {
	if h.quit == nil {
		return
	}
	close(h.quit)
	for r := range h.results {
		spareRanges.Put(r)
	}
	<-h.done
	for len(h.free) > 0 {
		spareRanges.Put(<-h.free)
	}
	if h.cur != nil {
		spareRanges.Put(h.cur)
		h.cur = nil
	}
	h.quit = nil
}

// SeekTo is the SegmentReader's: the ranges stop, and a SegmentReader reads
// on from pos, as a caller that resyncs past a batch failing Validate needs.
func (h *HeaderReader) SeekTo(pos int64) {
	h.started = true
	h.stop()
	if h.seq == nil {
		h.sequential(pos)
		return
	}
	h.seq.SeekTo(pos)
}

// Resync is the SegmentReader's: it is only called once Next has returned
// false, when a SegmentReader reads on.
func (h *HeaderReader) Resync() bool {
	if h.seq == nil {
		h.stop()
		h.sequential(h.pos)
	}
	return h.seq.Resync()
}

// Close stops the goroutines.
func (h *HeaderReader) Close() {
	h.stop()
	if h.seq != nil {
		h.seq.Close()
	}
}
