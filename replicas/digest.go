package replicas

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"slices"

	"github.com/logtool/logtool/internal/parallel"
	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/checkpoint"
)

// A digest is what a broker's machine sends instead of its log: per
// partition its identity, checkpoints, epochs and batch headers, and the
// record hashes of compacted replicas, in PartitionKey order.
//
// The file is the magic line digestMagic, a version byte, then a stream of
// frames: uvarint length, body, CRC-32C of the body (big-endian). The
// first frame describes the broker. Each partition is a start frame (its
// identity), frames of batches (one a block, see blockShift) and, for a
// compacted replica, frames of record hashes of about chunkBytes, and an end
// frame (offsets, epochs, damage), so that the writer holds one frame and a
// reader one partition. The
// last frame counts the partitions, so a digest cut short is told from a
// whole one.

const (
	digestMagic   = "logtool-digest\n"
	DigestVersion = 2

	frameBroker    = 'B'
	frameStart     = 'P'
	frameBatches   = 'C'
	frameRecords   = 'R'
	frameEpochs    = 'H'
	frameDamage    = 'D'
	framePartition = 'Q'
	frameEnd       = 'E'

	// chunkBytes is where a frame of records, epochs or damage is cut.
	chunkBytes = 64 << 10
)

// hashesPerItem is where a batch's record hashes are cut into items, so
// that no frame holds more than a chunk and an item, whatever the batch.
const hashesPerItem = 2048

// continued marks a record-hashes item whose batch goes on in the next item.
const continued = 0x80

// maxFrame bounds one frame: a chunk and an item, with room to spare. A
// damaged length cannot make a reader hold more.
var maxFrame uint64 = 1 << 20

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// WriteDigest writes the digest of src, one broker's log directories as
// OpenLogDirs gives them, to path through a safefile: nothing is visible
// under path until it is whole. It holds one frame at a time.
func WriteDigest(path string, src Source) (partitions int, err error) {
	ls, ok := src.(*logDirSource)
	if !ok {
		return 0, errors.New("a digest is made of log directories")
	}
	f, err := safefile.Create(path, 0o644)
	if err != nil {
		return 0, err
	}
	defer f.Abort()
	bw := bufio.NewWriterSize(&writeBehind{f: f}, 256<<10)
	if _, err := bw.WriteString(digestMagic); err != nil {
		return 0, err
	}
	if err := bw.WriteByte(DigestVersion); err != nil {
		return 0, err
	}
	// No compressor: the frames' deltas are the digest's compression (see
	// enc.batch). On batches of 1 KB zstd's fastest level took a quarter of
	// a digest's CPU to make them 27% smaller, s2 a fifth for 18%, and what
	// is left (CRCs, record hashes) is entropy.
	w := &frameWriter{w: bw}
	w.broker(src.Broker())
	if err := w.put(); err != nil {
		return 0, err
	}
	err = parallel.Ordered(len(ls.parts), ls.o.Workers, ls.digestJob, func(i int, d partDigest) error {
		if d.err != nil {
			return d.err
		}
		if d.frames == nil {
			// Large: read here, its segments' ranges on every worker, its
			// frames written as they are made.
			rr, err := ls.reader(i, ls.o)
			if err != nil {
				return err
			}
			if err := w.partition(rr); err != nil {
				return err
			}
		} else {
			if _, err := bw.Write(d.frames.Bytes()); err != nil {
				return err
			}
			if ls.o.Progress != nil {
				ls.o.Progress(d.read)
			}
		}
		partitions++
		return nil
	})
	if err != nil {
		return partitions, err
	}
	w.b = append(w.b[:0], frameEnd)
	w.uvarint(uint64(partitions))
	if err := w.put(); err != nil {
		return partitions, err
	}
	if err := bw.Flush(); err != nil {
		return partitions, err
	}
	return partitions, f.Commit()
}

// writeBehind has the disk make a digest durable as it grows, an fsync
// behind the writes every syncBytes: Commit's fsync then waits for the
// last MiBs only. On a virtual disk, whose flush costs about 0.7 ms a MiB,
// that was 6-8 ms of the 9 MB digest of 1 GB of 1 KB batches. A digest may
// be made next to a running broker: at 4 MiB a digest asks a disk for at
// most some 25 flushes a second, one at a time.
type writeBehind struct {
	f            *safefile.File
	off, started int64
}

var syncBytes int64 = 4 << 20

func (w *writeBehind) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	if w.off += int64(n); w.off-w.started >= syncBytes {
		w.f.SyncBehind()
		w.started = w.off
	}
	return n, err
}

// A partition under streamBytes of .log is digested whole on one worker,
// several at once, into frames of at most jobFrameBytes held until it is
// its turn: so many small partitions keep every core busy, in the memory of
// 2 × workers such partitions (parallel.Ordered). A larger one, or one whose
// frames outgrow that, is read when its turn comes, each large segment in
// ranges on every worker (logfmt.HeaderReader), and its frames go out as
// they are made: memory does not grow with a partition's size.
var (
	streamBytes   int64 = 8 << 20
	jobFrameBytes       = 2 << 20
)

// partDigest is a partition's frames made by digestJob; nil frames when it
// is read in its turn instead.
type partDigest struct {
	frames *bytes.Buffer
	read   int64 // bytes of batches read, told to Progress in turn
	err    error
}

var errJobFrames = errors.New("a partition's frames outgrow a job's")

// digestJob digests the i-th partition on a worker, when it is small.
func (s *logDirSource) digestJob(i int) partDigest {
	if len(s.parts) < 2 {
		// Alone, it gets every worker for its ranges.
		return partDigest{}
	}
	var d partDigest
	o := s.o
	o.Workers, o.Progress = 1, func(n int64) { d.read += n }
	rr, err := s.reader(i, o)
	if err != nil {
		return partDigest{err: err}
	}
	var size int64
	for _, seg := range rr.segs {
		size += seg.Size
	}
	if size >= streamBytes {
		return partDigest{}
	}
	d.frames = &bytes.Buffer{}
	w := &frameWriter{w: cappedWriter{d.frames}}
	if err := w.partition(rr); err != nil {
		if errors.Is(err, errJobFrames) {
			return partDigest{}
		}
		return partDigest{err: err}
	}
	return d
}

// cappedWriter fails a write that would take it past jobFrameBytes.
type cappedWriter struct{ b *bytes.Buffer }

func (c cappedWriter) Write(p []byte) (int, error) {
	if c.b.Len()+len(p) > jobFrameBytes {
		return 0, errJobFrames
	}
	return c.b.Write(p)
}

// frameWriter builds frames in enc and writes them to the stream.
type frameWriter struct {
	enc
	w     io.Writer
	items int                         // in the open frame
	prev  Batch                       // the last batch of the open frame of batches
	at    block                       // where it lies
	back  undo                        // the open frame as it was before its last batch
	hdr   [binary.MaxVarintLen64]byte // a frame's length; a local escapes through w
}

// undo is the open frame of batches as it was before a batch: what drop
// gives back. A batch is dropped before the next is written, so its frame
// is still open.
type undo struct {
	n, items int // the frame's length and items; none: the batch began it
	prev     Batch
	at       block
}

// drop takes the last batch out of the open frame: headers found that its
// base offset jumped ahead (scan.outlier).
func (w *frameWriter) drop() {
	if w.back.items > 0 {
		w.b = w.b[:w.back.n]
	}
	w.items, w.prev, w.at = w.back.items, w.back.prev, w.back.at
}

// put writes the frame built.
func (w *frameWriter) put() error {
	n := binary.PutUvarint(w.hdr[:], uint64(len(w.b)))
	w.b = binary.BigEndian.AppendUint32(w.b, crc32.Checksum(w.b, castagnoli))
	if _, err := w.w.Write(w.hdr[:n]); err != nil {
		return err
	}
	_, err := w.w.Write(w.b)
	return err
}

// partition writes one replica's frames as its batches are read.
func (w *frameWriter) partition(rr *replicaReader) error {
	p := rr.p
	w.b = append(w.b[:0], frameStart)
	w.str(p.Source)
	w.str(p.Topic)
	w.varint(int64(p.Partition))
	w.bool(p.HasTopicID)
	w.b = append(w.b, p.TopicID[:]...)
	if err := w.put(); err != nil {
		return err
	}
	rr.ranged, rr.drop = w.splice, w.drop
	err := rr.headers(func(b *Batch, at block) error {
		if w.items == 0 || at != w.at {
			if err := w.end(); err != nil {
				return err
			}
			w.prev = Batch{}
		}
		w.back = undo{len(w.b), w.items, w.prev, w.at}
		w.item(frameBatches)
		w.batch(b, &w.prev)
		w.follow(b, at)
		return nil
	})
	if err == nil {
		err = w.end()
	}
	if err == nil && p.Hashed {
		err = rr.records(func(i int, h hashed) error {
			for {
				w.item(frameRecords)
				more := w.hashes(&h)
				if err := w.full(); err != nil || !more {
					return err
				}
			}
		})
		if err == nil {
			err = w.end()
		}
	}
	// Epochs and damage, which a damaged checkpoint or log can make many,
	// go in frames of their own.
	list := func(kind byte, n int, item func(i int)) {
		for i := 0; i < n && err == nil; i++ {
			w.item(kind)
			item(i)
			err = w.full()
		}
		if err == nil {
			err = w.end()
		}
	}
	list(frameEpochs, len(p.Epochs), func(i int) {
		w.varint(int64(p.Epochs[i].Epoch))
		w.varint(p.Epochs[i].StartOffset)
	})
	list(frameDamage, len(p.Damage), func(i int) {
		d := &p.Damage[i]
		w.str(d.File)
		w.varint(d.Pos)
		w.str(d.Msg)
		w.varint(d.From)
		w.varint(d.To)
	})
	if err != nil {
		return err
	}
	w.b = append(w.b[:0], framePartition)
	w.uvarint(uint64(rr.n))
	w.varint(p.LogStartOffset)
	w.varint(p.LogEndOffset)
	w.varint(p.HighWatermark)
	w.bool(p.HighWatermarkKnown)
	w.bool(p.Compacted)
	w.bool(p.Hashed)
	w.uvarint(uint64(len(p.Epochs)))
	w.uvarint(uint64(len(p.Damage)))
	return w.put()
}

// item starts a frame of kind k unless one is open, and counts an item in
// it; a reader reads items to the end of the frame.
func (w *frameWriter) item(k byte) {
	if w.items == 0 {
		w.b = append(w.b[:0], k)
	}
	w.items++
}

// end writes the open frame, if any.
func (w *frameWriter) end() error {
	if w.items == 0 {
		return nil
	}
	w.items = 0
	return w.put()
}

// full writes the open frame once it holds chunkBytes.
func (w *frameWriter) full() error {
	if len(w.b) < chunkBytes {
		return nil
	}
	return w.end()
}

// follow makes b, in block at, the batch the next is coded against.
// Copying the whole Batch cost more than coding it.
func (w *frameWriter) follow(b *Batch, at block) {
	w.prev, w.at = followed(b), at
}

// followed is what the next batch in a frame is coded against of b.
func followed(b *Batch) Batch {
	return Batch{Base: b.Base, Last: b.Last, Epoch: b.Epoch, MaxTimestamp: b.MaxTimestamp,
		ProducerID: b.ProducerID, BaseSequence: b.BaseSequence, Flags: b.Flags}
}

// Batches go into frames by where they lie: a frame holds the batches of
// one segment whose positions share a block of 1<<blockShift bytes, each
// coded against the one before it in the frame. A range that a worker reads
// (logfmt.HeaderReader) then codes its batches itself, all but its first
// as the frame writer would have, and the digest is the same at any
// --workers. A block of the smallest entries (26 bytes) codes into at most
// 10,083 batches of 76 bytes, under maxFrame; at 1 KB a batch, frames are
// about 2 KB.
var blockShift = 18

// block is where a batch lies: its segment's index, and its position's block.
type block struct {
	seg int
	n   int64
}

// rangeDigest codes the batches of one range of a segment on the goroutine
// that read it (logfmt.Renderer), each as frameWriter.partition codes it,
// except the first: that is coded as a frame's first, and the frame writer
// codes it again when its frame began in the range before (splice). It also
// notes what headers learns from each batch.
type rangeDigest struct {
	seg      int
	n        int      // batches
	read     int64    // their bytes
	b        [3]Batch // the last two and the one being read
	first    Batch    // the first batch's fields
	firstAt  block
	firstPos int64 // the first batch's position in its segment
	firstLen int   // the first batch's code in the text
	cuts     []int // where in the text frames begin, after the first batch
	lastAt   block
	lastPos  int64 // the last batch's position in its segment
	lastOff  int   // where its code begins in the text
	prevAt   block // where the batch before it lies
	cleaned  bool  // a batch was cleaned
	gap      bool  // offsets are missing between two batches
	marked   bool  // cleaned or gap, before the last batch
	rises    []checkpoint.EpochEntry
}

// last is the range's last batch.
func (r *rangeDigest) last() *Batch { return &r.b[(r.n-1)%3] }

// beforeLast is the batch before it, when the range has two.
func (r *rangeDigest) beforeLast() *Batch { return &r.b[(r.n-2)%3] }

func (r *rangeDigest) Render(dst []byte, b *logfmt.Batch) ([]byte, bool) {
	if b.Validate() != nil {
		// Damage, which headers reports.
		return dst, false
	}
	bt := &r.b[r.n%3]
	readHeader(bt, b)
	if bt.Flags&Control != 0 && abortMarker(b) {
		bt.Flags |= AbortMarker
	}
	at := block{r.seg, b.Pos >> blockShift}
	e := enc{b: dst}
	switch {
	case r.n == 0:
		r.first, r.firstAt, r.firstPos = *bt, at, b.Pos
		e.batch(bt, &Batch{})
		r.firstLen = len(e.b)
	case bt.Base <= r.last().Last:
		// Goes back: the range ends before it, and headers reads on
		// from there one batch at a time (scan.outlier).
		return dst, false
	default:
		prev := r.last()
		r.marked = r.cleaned || r.gap
		if bt.Base > prev.Last+1 {
			r.gap = true
		}
		if at != r.lastAt {
			r.cuts = append(r.cuts, len(dst))
			prev = &Batch{}
		}
		r.lastOff, r.prevAt = len(dst), r.lastAt
		e.batch(bt, prev)
	}
	if bt.Flags&Cleaned != 0 {
		r.cleaned = true
	}
	// Only an epoch above every one before it in the range can be above
	// the epochs headers holds.
	if n := len(r.rises); n == 0 || bt.Epoch > r.rises[n-1].Epoch {
		r.rises = append(r.rises, checkpoint.EpochEntry{Epoch: bt.Epoch, StartOffset: bt.Base})
	}
	r.lastAt, r.lastPos = at, b.Pos
	r.read += int64(b.Size())
	r.n++
	return e.b, true
}

// splice writes the batches of a range coded on a worker into the frames.
func (w *frameWriter) splice(r *rangeDigest, text []byte) error {
	from := 0
	if w.items > 0 && r.firstAt == w.at {
		// Its first batch's frame began in the range before.
		w.back = undo{len(w.b), w.items, w.prev, w.at}
		w.batch(&r.first, &w.prev)
		from = r.firstLen
	} else if err := w.end(); err != nil {
		return err
	} else {
		w.back = undo{}
	}
	for _, to := range r.cuts {
		w.item(frameBatches)
		w.b = append(w.b, text[from:to]...)
		if err := w.end(); err != nil {
			return err
		}
		from = to
	}
	w.item(frameBatches)
	w.b = append(w.b, text[from:]...)
	switch {
	case r.n == 1:
		// w.back is the frame before the first batch.
	case len(r.cuts) > 0 && r.cuts[len(r.cuts)-1] == r.lastOff:
		w.back = undo{}
	default:
		w.back = undo{len(w.b) - (len(text) - r.lastOff), w.items, followed(r.beforeLast()), r.prevAt}
	}
	w.follow(r.last(), r.lastAt)
	return nil
}

type enc struct{ b []byte }

func (e *enc) uvarint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *enc) varint(v int64)   { e.b = binary.AppendVarint(e.b, v) }
func (e *enc) str(s string)     { e.uvarint(uint64(len(s))); e.b = append(e.b, s...) }
func (e *enc) bool(v bool) {
	if v {
		e.b = append(e.b, 1)
	} else {
		e.b = append(e.b, 0)
	}
}

func (e *enc) broker(b Broker) {
	e.b = append(e.b[:0], frameBroker)
	e.str(b.Name)
	e.varint(int64(b.NodeID))
	e.str(b.ClusterID)
	e.uvarint(uint64(len(b.Dirs)))
	for _, d := range b.Dirs {
		e.str(d)
	}
	e.uvarint(uint64(len(b.DirectoryIDs)))
	for _, d := range b.DirectoryIDs {
		e.str(d)
	}
}

// batch encodes a batch's header fields as what changed from the batch
// before it in the frame (prev, zero at a frame's start). A byte says which
// of the fields that mostly follow from the batch before are coded (the
// base offset after its last, the same epoch, producer and flags, a count
// that spans the offsets, a sequence that goes on from its records); then
// come the offsets' span, the CRC, the size and the timestamp's delta:
// about 10 bytes a batch.
func (e *enc) batch(b, prev *Batch) {
	const most = 1 + 8*binary.MaxVarintLen64 + 5
	e.b = slices.Grow(e.b, most)
	a := e.b[len(e.b) : len(e.b)+most]
	n := 1
	var has byte
	if b.Base != prev.Last+1 {
		has |= hasBase
		n += binary.PutVarint(a[n:], b.Base-prev.Last)
	}
	if b.Epoch != prev.Epoch {
		has |= hasEpoch
		n += binary.PutVarint(a[n:], int64(b.Epoch)-int64(prev.Epoch))
	}
	if d := int64(b.Count) - (b.Last - b.Base + 1); d != 0 {
		has |= hasCount
		n += binary.PutVarint(a[n:], d)
	}
	if b.ProducerID != prev.ProducerID {
		has |= hasProducer
		n += binary.PutVarint(a[n:], b.ProducerID-prev.ProducerID)
	}
	if d := int64(b.BaseSequence) - nextSequence(prev); d != 0 {
		has |= hasSequence
		n += binary.PutVarint(a[n:], d)
	}
	if b.Flags != prev.Flags {
		has |= hasFlags
		a[n] = byte(b.Flags)
		n++
	}
	a[0] = has
	n += binary.PutUvarint(a[n:], uint64(b.Last-b.Base))
	binary.BigEndian.PutUint32(a[n:], b.CRC)
	n += 4
	n += binary.PutUvarint(a[n:], uint64(uint32(b.Size)))
	n += binary.PutVarint(a[n:], b.MaxTimestamp-prev.MaxTimestamp)
	e.b = e.b[:len(e.b)+n]
}

// The fields a batch's first byte says are coded.
const (
	hasBase = 1 << iota
	hasEpoch
	hasCount
	hasProducer
	hasSequence
	hasFlags
)

// nextSequence is the base sequence a batch after prev most often has: its
// producer's next, or none after none.
func nextSequence(prev *Batch) int64 {
	if prev.BaseSequence < 0 {
		return int64(prev.BaseSequence)
	}
	return int64(prev.BaseSequence) + prev.Last - prev.Base + 1
}

// hashes encodes an item of what the second pass found of a batch: its base
// offset and flags again (a legacy wrapper's are only known then) and up to
// hashesPerItem of its records, taking them from h. It tells whether more
// are left, for the next item, which its flags say continues the batch.
func (e *enc) hashes(h *hashed) (more bool) {
	rs := h.records[:min(len(h.records), hashesPerItem)]
	h.records = h.records[len(rs):]
	more = len(h.records) > 0
	flags := byte(h.flags)
	if more {
		flags |= continued
	}
	e.varint(h.base)
	e.varint(int64(h.count))
	e.b = append(e.b, flags)
	e.uvarint(uint64(len(rs)))
	for _, r := range rs {
		e.varint(r.Offset - h.base)
		e.b = binary.BigEndian.AppendUint64(e.b, r.Key)
		e.b = binary.BigEndian.AppendUint64(e.b, r.Sum)
		e.bool(r.Tombstone)
	}
	return more
}

// digestSource reads a digest.
type digestSource struct {
	path   string
	f      *os.File
	r      *bufio.Reader
	broker Broker
	n      int // partitions read
	frames int // frames read
	done   bool
	frame  bytes.Buffer
}

// OpenDigest opens a digest and reads its broker frame. Any fault of the
// file is an *InputError naming it.
func OpenDigest(path string) (Source, error) {
	f, err := safefile.Open(path)
	if err != nil {
		return nil, err
	}
	s, err := readDigest(path, f)
	if err != nil {
		f.Close()
		return nil, err
	}
	s.f = f
	return s, nil
}

func readDigest(path string, r io.Reader) (*digestSource, error) {
	s := &digestSource{path: path}
	head := make([]byte, len(digestMagic)+1)
	if _, err := io.ReadFull(r, head); err != nil || string(head[:len(digestMagic)]) != digestMagic {
		return nil, s.fault("not a logtool digest")
	}
	if v := head[len(digestMagic)]; v != DigestVersion {
		return nil, s.fault(fmt.Sprintf("a digest of format version %d, which this logtool (version %d) does not read: make the digests and compare them with one logtool release", v, DigestVersion))
	}
	s.r = bufio.NewReader(r)
	body, err := s.next()
	if err != nil {
		return nil, err
	}
	d := dec{b: body}
	if d.byte() != frameBroker {
		return nil, s.fault("the first frame is not the broker's")
	}
	b := &s.broker
	b.Name = d.str()
	b.NodeID = int32(d.varint())
	b.ClusterID = d.str()
	for n := d.count(1); n > 0; n-- {
		b.Dirs = append(b.Dirs, d.str())
	}
	for n := d.count(1); n > 0; n-- {
		b.DirectoryIDs = append(b.DirectoryIDs, d.str())
	}
	if d.err != nil || len(d.b) > 0 {
		return nil, s.fault("a damaged broker frame")
	}
	b.Digest = path
	return s, nil
}

func (s *digestSource) fault(msg string) error {
	return &InputError{fmt.Errorf("%s: %s", s.path, msg)}
}

// next reads a frame and checks its CRC.
func (s *digestSource) next() ([]byte, error) {
	n, err := binary.ReadUvarint(s.r)
	if err != nil {
		return nil, s.cut(err)
	}
	if n > maxFrame {
		return nil, s.fault(fmt.Sprintf("a frame of %d bytes: damaged", n))
	}
	s.frames++
	s.frame.Reset()
	// Copied as it comes: a damaged length allocates nothing it does not read.
	if _, err := io.CopyN(&s.frame, s.r, int64(n)+4); err != nil {
		return nil, s.cut(err)
	}
	b := s.frame.Bytes()
	body, sum := b[:n], binary.BigEndian.Uint32(b[n:])
	if crc32.Checksum(body, castagnoli) != sum {
		return nil, s.fault(fmt.Sprintf("checksum mismatch in frame %d: damaged", s.frames))
	}
	if len(body) == 0 {
		return nil, s.fault("an empty frame")
	}
	return body, nil
}

func (s *digestSource) cut(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return s.fault("truncated: it ends before its last frame")
	}
	return s.fault("damaged: " + err.Error())
}

func (s *digestSource) Broker() Broker { return s.broker }

func (s *digestSource) Close() error {
	if s.f != nil {
		return s.f.Close()
	}
	return nil
}

func (s *digestSource) Next() (*Partition, error) {
	if s.done {
		return nil, nil
	}
	body, err := s.next()
	if err != nil {
		return nil, err
	}
	d := dec{b: body}
	switch d.byte() {
	case frameEnd:
		if n := d.uvarint(); d.err != nil || int(n) != s.n || len(d.b) > 0 {
			return nil, s.fault("the last frame does not count the partitions read: damaged")
		}
		if _, err := s.r.ReadByte(); err != io.EOF {
			return nil, s.fault("data after the last frame")
		}
		s.done = true
		return nil, nil
	case frameStart:
	default:
		return nil, s.fault(fmt.Sprintf("frame %d: a partition was expected", s.frames))
	}
	p := &Partition{Source: d.str(), Topic: d.str(), Partition: int32(d.varint()), HasTopicID: d.bool()}
	copy(p.TopicID[:], d.fixed(16))
	if d.err != nil || len(d.b) > 0 {
		return nil, s.fault(fmt.Sprintf("frame %d is damaged", s.frames))
	}
	hashedTo := 0
	open := false // the last item of record hashes continues its batch
	for {
		body, err := s.next()
		if err != nil {
			return nil, err
		}
		d := dec{b: body}
		switch d.byte() {
		case frameBatches:
			if hashedTo > 0 {
				return nil, s.fault(fmt.Sprintf("frame %d: batches after record hashes", s.frames))
			}
			var prev Batch
			for len(d.b) > 0 && d.err == nil {
				prev = d.batch(&prev)
				p.Batches = append(p.Batches, prev)
			}
		case frameRecords:
			for len(d.b) > 0 && d.err == nil {
				if hashedTo == len(p.Batches) {
					return nil, s.fault(fmt.Sprintf("frame %d: record hashes of more batches than there are", s.frames))
				}
				if !d.hashes(&p.Batches[hashedTo], open) {
					hashedTo++
					open = false
				} else {
					open = true
				}
			}
		case frameEpochs:
			for len(d.b) > 0 && d.err == nil {
				p.Epochs = append(p.Epochs, checkpoint.EpochEntry{Epoch: int32(d.varint()), StartOffset: d.varint()})
			}
		case frameDamage:
			for len(d.b) > 0 && d.err == nil {
				p.Damage = append(p.Damage, Damage{File: d.str(), Pos: d.varint(), Msg: d.str(), From: d.varint(), To: d.varint()})
			}
		case framePartition:
			d.partitionEnd(p)
			if d.err == nil && len(d.b) == 0 && !open && (p.Hashed && hashedTo == len(p.Batches) || !p.Hashed && hashedTo == 0) {
				s.n++
				return p, nil
			}
		default:
			return nil, s.fault(fmt.Sprintf("frame %d is of no known kind", s.frames))
		}
		if d.err != nil {
			return nil, s.fault(fmt.Sprintf("frame %d is damaged", s.frames))
		}
	}
}

// dec reads a frame body; the first fault sticks in err.
type dec struct {
	b   []byte
	err error
}

var errShort = errors.New("short frame")

func (d *dec) fail() { d.err, d.b = errShort, nil }

func (d *dec) byte() byte {
	if len(d.b) < 1 {
		d.fail()
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *dec) bool() bool { return d.byte() != 0 }

func (d *dec) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *dec) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads a number of items of at least min bytes each, refusing more
// than the frame can hold.
func (d *dec) count(min int) int {
	n := d.uvarint()
	if n > uint64(len(d.b)/min) {
		d.fail()
		return 0
	}
	return int(n)
}

func (d *dec) fixed(n int) []byte {
	if len(d.b) < n {
		d.fail()
		return make([]byte, n)
	}
	b := d.b[:n]
	d.b = d.b[n:]
	return b
}

func (d *dec) str() string { return string(d.fixed(d.count(1))) }

func (d *dec) batch(prev *Batch) Batch {
	var b Batch
	has := d.byte()
	b.Base, b.Epoch, b.ProducerID, b.Flags = prev.Last+1, prev.Epoch, prev.ProducerID, prev.Flags
	if has&hasBase != 0 {
		b.Base = prev.Last + d.varint()
	}
	if has&hasEpoch != 0 {
		b.Epoch = int32(int64(prev.Epoch) + d.varint())
	}
	var count, seq int64
	if has&hasCount != 0 {
		count = d.varint()
	}
	if has&hasProducer != 0 {
		b.ProducerID = prev.ProducerID + d.varint()
	}
	if has&hasSequence != 0 {
		seq = d.varint()
	}
	if has&hasFlags != 0 {
		b.Flags = Flags(d.byte())
	}
	b.Last = b.Base + int64(d.uvarint())
	b.Count = int32(b.Last - b.Base + 1 + count)
	b.BaseSequence = int32(nextSequence(prev) + seq)
	b.CRC = binary.BigEndian.Uint32(d.fixed(4))
	b.Size = int32(uint32(d.uvarint()))
	b.MaxTimestamp = prev.MaxTimestamp + d.varint()
	return b
}

// hashes reads an item of record hashes into b, after those of the item
// before when it continues b, and tells whether the next item continues it.
func (d *dec) hashes(b *Batch, continues bool) (more bool) {
	base, count, flags := d.varint(), int32(d.varint()), d.byte()
	if continues && (base != b.Base || count != b.Count || Flags(flags&^continued) != b.Flags) {
		d.fail()
		return false
	}
	b.Base, b.Count, b.Flags = base, count, Flags(flags&^continued)
	k := d.count(18)
	if !continues {
		b.Records = make([]Record, 0, k)
	}
	for ; k > 0; k-- {
		off := b.Base + d.varint()
		key := binary.BigEndian.Uint64(d.fixed(8))
		sum := binary.BigEndian.Uint64(d.fixed(8))
		b.Records = append(b.Records, Record{Offset: off, Key: key, Sum: sum, Tombstone: d.bool()})
	}
	return flags&continued != 0
}

// partitionEnd reads a partition's end frame, after its kind: the number of
// batches, then offsets, then the numbers of epochs and of damage entries,
// each of which must be those read.
func (d *dec) partitionEnd(p *Partition) {
	if n := d.uvarint(); n != uint64(len(p.Batches)) {
		d.fail()
		return
	}
	p.LogStartOffset, p.LogEndOffset, p.HighWatermark = d.varint(), d.varint(), d.varint()
	p.HighWatermarkKnown, p.Compacted, p.Hashed = d.bool(), d.bool(), d.bool()
	if d.uvarint() != uint64(len(p.Epochs)) || d.uvarint() != uint64(len(p.Damage)) {
		d.fail()
	}
}
