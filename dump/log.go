package dump

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"path/filepath"
	"strconv"

	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/internal/textdec"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/codec"
	"github.com/logtool/logtool/logfmt/kraft"
	"github.com/logtool/logtool/logfmt/layout"
	"github.com/logtool/logtool/logfmt/logseg"
	"github.com/logtool/logtool/logfmt/protocol"
	"github.com/logtool/logtool/logfmt/protocol/groupmeta"
	"github.com/logtool/logtool/logfmt/protocol/remotemeta"
	"github.com/logtool/logtool/logfmt/protocol/sharestate"
	"github.com/logtool/logtool/logfmt/protocol/txnlog"
)

// segState is what a segment dump carries from batch to batch.
type segState struct {
	prev        int64 // offset of the previous record, -1 before the first, for Kafka's non-consecutive report
	timeReached bool  // a batch reached FromTime; everything after it is shown
	done        bool  // ToOffset passed
	stats       bool  // the batches count in the summary row
	f           io.ReaderAt
}

// dumpSegment dumps a .log file or a KRaft snapshot, header first. Kafka's
// FileLogInputStream rules decide where the data ends; damage in between is
// reported and skipped over with SegmentReader.Resync. The file is read, not
// mapped: checksums over mapped pages ran several times slower than over a
// read window (docs/performance.md).
func (d *dumper) dumpSegment(it *item, size int64, header string) {
	if header != "" {
		d.textLine(header)
	}
	f, err := safefile.Open(it.path)
	if err != nil {
		d.problemErr(err)
		return
	}
	defer f.Close()
	st := segState{prev: -1, stats: d.row != nil && it.name.Leftover == "" && (it.name.Kind == layout.Log || d.rowIsFile), f: f}
	if st.stats {
		d.row.segments++
		d.row.bytes += size
	}
	start := d.seekStart(it)
	limit := size
	if d.o.MaxBytes >= 0 && d.o.MaxBytes < size-start {
		limit = start + d.o.MaxBytes
	}
	if size == 0 {
		d.readable = true
	}
	if !d.o.deep() {
		// A shallow dump needs the headers, and the records of a
		// compressed legacy wrapper only where its offsets are shown.
		h := logfmt.NewHeaderReader(f, limit, it.path, start, segmentCuts(it), d.o.batchWorkers)
		h.Job = d.mem
		whole := d.o.JSON || d.row != nil
		h.Keep = func(b *logfmt.Batch) bool { return whole && b.Magic() < 2 && b.Compression() != codec.None }
		if d.items() && d.text() && !st.stats && !d.filtered() {
			h.Render = renderer
		}
		defer h.Close()
		d.segmentBatches(h, it.path, size, limit, &st)
		return
	}
	sr := logfmt.NewSegmentReader(f, limit, it.path)
	defer sr.Close()
	sr.Job = d.mem
	sr.SeekTo(start)
	dr := logfmt.NewDeepReader(sr, d.o.batchWorkers)
	dr.MaxRecordBytes = d.o.MaxRecordBytes
	if d.linesOK() {
		d.lineJob = &linesJob{lineConfig: lineConfig{file: d.file, maxRecord: d.o.MaxRecordBytes, direct: d.o.batchWorkers < 2}}
		dr.Prepare, dr.JobsOnWorkers = d.prepareLines, true
	}
	defer dr.Close()
	d.segmentBatches(dr, it.path, size, limit, &st)
}

// segmentCuts are where a shallow read of the segment's ranges may start:
// the positions in its .index, when it is a segment's .log.
func segmentCuts(it *item) iter.Seq[int64] {
	if it.name.Kind != layout.Log || it.name.Leftover != "" {
		return nil
	}
	idx := filepath.Join(filepath.Dir(it.path), layout.SegmentName(it.name.Base, layout.IndexExt))
	return logseg.IndexPositions(layout.Segment{Base: it.name.Base, Log: it.path, Index: idx})
}

// batches is what a segment is dumped from: a HeaderReader for a shallow
// dump, a DeepReader for a deep one.
type batches interface {
	Next() bool
	Batch() *logfmt.Batch
	Pos() int64
	Err() error
	End() logfmt.End
	EndDetail() string
	Resync() bool
}

// segmentBatches dumps the batches of a segment from the reader's position.
func (d *dumper) segmentBatches(sr batches, path string, size, limit int64, st *segState) {
	// Record lines rendered on the workers leave the dumper little to
	// format: it writes them itself until a batch's records are its own.
	lazy := d.linesOK() && d.o.batchWorkers > 1
	if h, ok := sr.(*logfmt.HeaderReader); ok && h.Render != nil {
		d.rendered(h)
	}
	if d.pipelined() && !lazy {
		d.startPipeline()
	}
	defer func() {
		if d.q != nil {
			d.stopPipeline()
		}
	}()
	for !st.done && !d.stop.Load() {
		if !sr.Next() {
			if !d.segmentStop(sr, path, size, limit, st) {
				return
			}
			continue
		}
		b := sr.Batch()
		d.progress(int64(b.Size()))
		d.readable = true
		if dr, ok := sr.(*logfmt.DeepReader); ok {
			d.setLines(dr.Output())
		}
		if lazy && d.q == nil && !d.lines.ok() {
			d.startPipeline()
		}
		d.batch(b, st)
		d.lines = renderedLines{}
	}
}

// rendered writes the lines the HeaderReader's goroutines made, range by
// range, as long as they made all of a range's (see renderer).
func (d *dumper) rendered(h *logfmt.HeaderReader) {
	for !d.stop.Load() {
		from := h.Pos()
		text, _, release, ok := h.Rendered()
		if !ok {
			return
		}
		if h.Pos() > from {
			d.progress(h.Pos() - from)
			d.readable = true
		}
		d.s.text(text, release)
	}
}

// filtered tells whether batches are picked by offset or time.
func (d *dumper) filtered() bool {
	o := d.o
	return o.FromOffset != NoLimit || o.ToOffset != NoLimit || o.FromTime != NoTime
}

// pipelined tells whether a segment is dumped in two stages (see
// pipeline.go): shallow dumps, and deep text dumps whose record lines are
// only metadata.
func (d *dumper) pipelined() bool {
	o := d.o
	return d.items() && (!o.deep() || (d.text() && !o.PrintData && !o.SkipRecordMetadata))
}

// segmentStop handles the reader stopping short of a batch: corruption, a
// torn or zero-filled end. It reports true when the dump can go on at a
// later valid batch.
func (d *dumper) segmentStop(sr batches, path string, size, limit int64, st *segState) bool {
	from := sr.Pos()
	if err := sr.Err(); err != nil {
		d.problemErr(err)
		if _, ok := logfmt.AsCorrupt(err); !ok {
			return false // I/O
		}
		return d.resync(sr, from)
	}
	if limit < size {
		// Cut by --max-bytes, as Kafka's slice cuts it. When that leaves
		// nothing, Kafka's tool prints nothing and succeeds: so does this,
		// with a word on why.
		if !d.readable {
			d.readable = true
			var h [logfmt.LogOverhead]byte
			if _, err := st.f.ReadAt(h[:], from); err == nil {
				n := int64(binary.BigEndian.Uint32(h[8:])) + logfmt.LogOverhead
				d.note(from, fmt.Sprintf("--max-bytes %d is smaller than the first batch (%d bytes): nothing shown", d.o.MaxBytes, n))
			}
		}
		return false
	}
	trailing := func() {
		d.textLine("Found ", strconv.FormatInt(size-from, 10), " invalid bytes at the end of ", filepath.Base(path))
	}
	switch sr.End() {
	case logfmt.EndTorn:
		// An entry that runs past the end is a torn write at the tail, or a
		// damaged size field before more batches.
		detail := sr.EndDetail()
		if sr.Resync() {
			d.problem(from, detail+"; Kafka's recovery would truncate the log here")
			d.note(from, fmt.Sprintf("skipped %d bytes to the next valid batch, at byte %d", sr.Pos()-from, sr.Pos()))
			return true
		}
		if err := sr.Err(); err != nil {
			d.problemErr(err)
			return false
		}
		trailing()
		d.problem(from, detail+"; Kafka's recovery truncates it")
	case logfmt.EndZeroTail:
		trailing()
		d.note(from, sr.EndDetail()+" (preallocated or zeroed by a crash); Kafka's recovery truncates it")
	}
	return false
}

// resync skips damage to the next batch that frames and checksums.
func (d *dumper) resync(sr batches, from int64) bool {
	if sr.Resync() {
		d.note(from, fmt.Sprintf("skipped %d bytes to the next valid batch, at byte %d", sr.Pos()-from, sr.Pos()))
		return true
	}
	if err := sr.Err(); err != nil {
		d.problemErr(err)
		return false
	}
	d.note(from, "no valid batch follows; the rest of the file is not dumped")
	return false
}

// batch handles one shallow entry: filters, the batch line, records.
func (d *dumper) batch(b *logfmt.Batch, st *segState) {
	o := d.o
	magic := b.Magic()
	if o.ToOffset != NoLimit && magic >= 2 && b.Header().BaseOffset() > o.ToOffset {
		st.done = true
		return
	}
	last := b.LastOffset()
	if o.FromOffset != NoLimit && last < o.FromOffset {
		return
	}
	if o.FromTime != NoTime && !st.timeReached {
		if b.MaxTimestamp() < o.FromTime {
			return
		}
		st.timeReached = true
	}
	if o.ToOffset != NoLimit && last >= o.ToOffset {
		st.done = true
	}

	d.batchPos = b.Pos
	compressedLegacy := magic < 2 && b.Compression() != codec.None
	iterate := o.deep() || (compressedLegacy && (o.JSON || d.row != nil))
	if d.lines.ok() {
		iterate = false // its job read the records and rendered their lines
	}
	var iterErr error
	if iterate {
		d.it.File = d.file
		iterErr = d.it.Reset(b)
	}
	stored, computed := b.StoredCRC(), b.ComputeCRC()
	valid := stored == computed
	first, count := b.EntryOffset(), int64(-1) // a v2 batch's are in its header
	if magic < 2 {
		first, count = legacyRecords(b, &d.it, iterate, iterErr)
	}
	if d.items() {
		l := newBatchLine(b, valid)
		if magic < 2 {
			l.base, l.count = first, count
		}
		if d.q != nil {
			e := d.q.add()
			e.kind, e.line = evBatch, l
		} else {
			d.formatBatch(&l)
		}
	}
	if !valid {
		d.problem(b.Pos, fmt.Sprintf("checksum mismatch: stored %d, computed %d", stored, computed))
	}
	if err := b.CheckHeader(); err != nil {
		d.problemErr(err)
	}
	if st.stats {
		d.row.addBatch(b, first, count)
	}
	if iterErr != nil {
		d.problemErr(iterErr)
		return
	}
	if o.deep() {
		d.records(b, st)
	}
}

// legacyRecords returns the first offset and the record count of a legacy
// entry that the iterator was reset on when iterated, with error iterErr: a
// wrapper's come from its inner messages, and its count is -1 when they
// cannot be read.
func legacyRecords(b *logfmt.Batch, it *logfmt.RecordIter, iterated bool, iterErr error) (first, count int64) {
	switch {
	case iterated && iterErr == nil:
		return it.BaseOffset(), int64(it.Count())
	case errors.Is(iterErr, logfmt.ErrNoInnerMessages):
		return b.EntryOffset(), 0
	case b.Compression() != codec.None:
		return b.EntryOffset(), -1
	}
	return b.EntryOffset(), 1
}

func (d *dumper) formatBatch(bl *batchLine) {
	b := bl.batch()
	if d.o.JSON {
		d.batchJSON(&b, bl)
	} else {
		d.batchText(&b, bl)
	}
}

// renderer makes the lines of a range of a shallow text dump on the
// HeaderReader's goroutine that read it, for v2 batches whose line is all
// the dump shows of them: at any other (a legacy entry, a checksum that does
// not hold, a header field that fails Batch.CheckHeader, which batch
// reports) it stops, and the dumper reads on from there.
func renderer() logfmt.Renderer { return &lineRenderer{} }

type lineRenderer struct{ pc producerCache }

func (r *lineRenderer) Render(l []byte, b *logfmt.Batch) ([]byte, bool) {
	if b.Magic() < 2 || b.StoredCRC() != b.ComputeCRC() {
		return l, false
	}
	if b.CheckHeader() != nil {
		return l, false
	}
	bl := batchLine{valid: true, pos: b.Pos, size: int64(b.Size())}
	return appendBatchText(l, b, &bl, &r.pc), true
}

type producerCache struct {
	key  [producerKeySize]byte
	text []byte
}

// batchText appends Kafka's batch line (DumpLogSegments.printBatchLevel).
func (d *dumper) batchText(b *logfmt.Batch, bl *batchLine) {
	d.s.set(appendBatchText(d.s.buf(), b, bl, &d.pc))
}

func appendBatchText(l []byte, b *logfmt.Batch, bl *batchLine, pc *producerCache) []byte {
	if b.Magic() >= 2 {
		h := b.Header()
		l = append(l, "baseOffset: "...)
		l = appendInt(l, h.BaseOffset())
		l = append(l, " lastOffset: "...)
		l = appendInt(l, h.LastOffset())
		l = append(l, " count: "...)
		l = appendInt(l, int64(h.RecordCount()))
		l = append(l, " baseSequence: "...)
		l = appendInt(l, int64(h.BaseSequence()))
		l = append(l, " lastSequence: "...)
		l = appendInt(l, int64(h.LastSequence()))
		l = append(l, pc.producerText(h)...)
	} else {
		l = append(l, "offset: "...)
		l = appendInt(l, b.LastOffset())
	}
	l = append(l, " position: "...)
	l = appendInt(l, b.Pos)
	l = append(l, timestampLabels[b.TimestampType()+1]...)
	l = appendInt(l, b.MaxTimestamp())
	l = append(l, " size: "...)
	l = appendInt(l, bl.size)
	l = append(l, magicCodecLabels[b.Magic()&3][b.Compression()&7]...)
	l = appendUint(l, uint64(b.StoredCRC()))
	if bl.valid {
		l = append(l, " isvalid: true\n"...)
	} else {
		l = append(l, " isvalid: false\n"...)
	}
	return l
}

// producerText is the middle of a v2 batch line, from " producerId: " to
// deleteHorizonMs. Consecutive batches of one producer share it, so it is
// formatted again only when the header fields behind it change.
func (pc *producerCache) producerText(h logfmt.BatchHeader) []byte {
	var key [producerKeySize]byte
	copy(key[:], h[12:16]) // partition leader epoch
	key[4] = h[22]         // attributes: transactional, control, delete horizon
	if h.HasDeleteHorizon() {
		copy(key[5:], h[27:35]) // the base timestamp is the horizon only then
	}
	copy(key[13:], h[43:53]) // producer id and epoch
	if pc.key == key && pc.text != nil {
		return pc.text
	}
	l := append(pc.text[:0], " producerId: "...)
	l = appendInt(l, h.ProducerID())
	l = append(l, " producerEpoch: "...)
	l = appendInt(l, int64(h.ProducerEpoch()))
	l = append(l, " partitionLeaderEpoch: "...)
	l = appendInt(l, int64(h.PartitionLeaderEpoch()))
	l = append(l, " isTransactional: "...)
	l = strconv.AppendBool(l, h.IsTransactional())
	l = append(l, " isControl: "...)
	l = strconv.AppendBool(l, h.IsControl())
	l = append(l, " deleteHorizonMs: "...)
	l = appendOptionalLong(l, h.DeleteHorizon(), h.HasDeleteHorizon())
	pc.key, pc.text = key, l
	return l
}

const producerKeySize = 23

// The constant runs of a batch line, ready made: " CreateTime: " and
// " magic: 2 compresscodec: none crc: ", by timestamp type and by magic and
// codec id.
var (
	timestampLabels  = [3]string{" NoTimestampType: ", " CreateTime: ", " LogAppendTime: "}
	magicCodecLabels = func() (t [4][8]string) {
		for m := range t {
			for c := range t[m] {
				t[m][c] = " magic: " + strconv.Itoa(m) + " compresscodec: " + codec.Type(c).String() + " crc: "
			}
		}
		return t
	}()
)

// appendOptionalLong writes Java's OptionalLong.toString.
func appendOptionalLong(l []byte, v int64, ok bool) []byte {
	if !ok {
		return append(l, "OptionalLong.empty"...)
	}
	l = append(l, "OptionalLong["...)
	l = strconv.AppendInt(l, v, 10)
	return append(l, ']')
}

// batchJSON appends a "batch" object with the contract's fields.
func (d *dumper) batchJSON(b *logfmt.Batch, bl *batchLine) {
	l := d.objStart(d.s.buf(), "batch")
	l = appendIntField(l, "position", b.Pos)
	l = appendIntField(l, "size", bl.size)
	l = appendIntField(l, "baseOffset", bl.base)
	l = appendIntField(l, "lastOffset", b.LastOffset())
	l = append(l, `,"count":`...)
	l = appendNullable(l, bl.count, bl.count >= 0)
	l = appendIntField(l, "magic", int64(b.Magic()))
	l = append(l, `,"compression":`...)
	l = protocol.AppendString(l, b.Compression().String())
	l = appendIntField(l, "crc", int64(b.StoredCRC()))
	l = appendBoolField(l, "crcValid", bl.valid)
	l = append(l, `,"timestampType":"`...)
	l = append(l, b.TimestampType().String()...)
	l = append(l, '"')
	l = appendIntField(l, "maxTimestamp", b.MaxTimestamp())
	if b.Magic() >= 2 {
		h := b.Header()
		l = appendIntField(l, "baseTimestamp", h.BaseTimestamp())
		l = appendIntField(l, "partitionLeaderEpoch", int64(h.PartitionLeaderEpoch()))
		l = appendIntField(l, "producerId", h.ProducerID())
		l = appendIntField(l, "producerEpoch", int64(h.ProducerEpoch()))
		l = appendIntField(l, "baseSequence", int64(h.BaseSequence()))
		l = appendIntField(l, "lastSequence", int64(h.LastSequence()))
		l = appendBoolField(l, "isTransactional", h.IsTransactional())
		l = appendBoolField(l, "isControl", h.IsControl())
		l = append(l, `,"deleteHorizonMs":`...)
		if h.HasDeleteHorizon() {
			l = strconv.AppendInt(l, h.DeleteHorizon(), 10)
		} else {
			l = append(l, "null"...)
		}
	}
	d.s.set(append(l, "}\n"...))
}

func appendIntField(l []byte, name string, v int64) []byte {
	l = append(l, ',', '"')
	l = append(l, name...)
	l = append(l, '"', ':')
	return appendInt(l, v)
}

func appendBoolField(l []byte, name string, v bool) []byte {
	l = append(l, ',', '"')
	l = append(l, name...)
	l = append(l, '"', ':')
	return strconv.AppendBool(l, v)
}

// records prints the records of b (Reset already done).
func (d *dumper) records(b *logfmt.Batch, st *segState) {
	if d.lines.ok() {
		d.queueLines(st, b.Pos)
		return
	}
	o := d.o
	control := b.IsControl()
	var m recordMeta
	m.setBatch(b)
	for d.it.Next() {
		r := d.it.Record()
		// Kafka (0.11 to 4.2) compares from the second record of a file on,
		// so a segment that starts past offset 0 is no gap.
		if st.prev != -1 && r.Offset != st.prev+1 {
			d.job.reports.gap(d.abs, st.prev, r.Offset)
			d.offsetsBack(b.Pos, st.prev, r.Offset)
		}
		st.prev = r.Offset
		if (o.FromOffset != NoLimit && r.Offset < o.FromOffset) || (o.ToOffset != NoLimit && r.Offset > o.ToOffset) {
			continue
		}
		if !d.items() {
			continue
		}
		d.hold()
		switch {
		case d.q != nil && lineBound(r) <= linesMax:
			m.setRecord(r)
			d.addRecord(m, r, control)
		case d.q != nil:
			// Header keys too large to queue (up to three times them as
			// text, in each of the pipeline's blocks) are written here, a
			// piece at a time, after the lines queued before.
			d.stopPipeline()
			d.recordText(b, r, control)
			d.startPipeline()
		case o.JSON:
			d.recordJSON(b, r, control)
		default:
			d.recordText(b, r, control)
		}
		d.release()
	}
	if err := d.it.Err(); err != nil {
		d.problemErr(err)
	}
}

func recordSequence(b *logfmt.Batch, r *logfmt.Record) int32 {
	if b.Header().BaseSequence() < 0 {
		return logfmt.NoSequence // DefaultRecord: only a non-negative base sequence numbers records
	}
	return r.Sequence
}

func size(b []byte) int64 {
	if b == nil {
		return -1
	}
	return int64(len(b))
}

// recordMeta is what a record line shows of a record before its header
// keys: all of it but the keys and payload, fixed-size so the formatting
// stage can be handed it without the record's bytes.
type recordMeta struct {
	offset, timestamp  int64
	keySize, valueSize int64
	sequence           int32
	crc                uint32
	tsType             logfmt.TimestampType
	magic              int8
	crcValid           bool
	sequenced          bool // the batch numbers its records
	tail0, tail1       int  // the rendered tail in the block's tails
}

// setBatch sets what the record lines of b have in common, and clears the
// rest. It and setRecord fill m in place: a recordMeta returned by value
// was copied through the stack in pieces that a core could not forward,
// and each copy waited for every store before it.
func (m *recordMeta) setBatch(b *logfmt.Batch) {
	*m = recordMeta{}
	m.tsType, m.magic = b.TimestampType(), b.Magic()
	m.sequenced = m.magic >= 2 && b.Header().BaseSequence() >= 0
}

// setRecord fills in r's fields, after setBatch.
func (m *recordMeta) setRecord(r *logfmt.Record) {
	m.offset, m.timestamp, m.keySize, m.valueSize = r.Offset, r.Timestamp, size(r.Key), size(r.Value)
	m.sequence, m.crc, m.crcValid = logfmt.NoSequence, r.CRC, r.CRCValid
	if m.sequenced {
		m.sequence = r.Sequence // DefaultRecord: only a non-negative base sequence numbers records
	}
}

// appendRecordMeta appends Kafka's record line (DumpLogSegments.dumpBatchRecords)
// up to the header keys of a v2 record, or whole for a legacy one.
func appendRecordMeta(l []byte, m *recordMeta) []byte {
	l = append(l, "| offset: "...)
	l = appendInt(l, m.offset)
	l = append(l, timestampLabels[m.tsType+1]...)
	l = appendInt(l, m.timestamp)
	l = append(l, " keySize: "...)
	l = appendInt(l, m.keySize)
	l = append(l, " valueSize: "...)
	l = appendInt(l, m.valueSize)
	if m.magic >= 2 {
		l = append(l, " sequence: "...)
		l = appendInt(l, int64(m.sequence))
		return append(l, " headerKeys: ["...)
	}
	l = append(l, " isValid: "...)
	l = strconv.AppendBool(l, m.crcValid)
	l = append(l, " crc: "...)
	l = appendUint(l, uint64(m.crc))
	// Kafka 3.x to 4.2 print a stray brace after the crc.
	return append(l, '}')
}

// appendHeaderKeys ends the headerKeys list of a v2 record line.
func appendHeaderKeys(l []byte, r *logfmt.Record) []byte {
	for i, h := range r.Headers {
		if i > 0 {
			l = append(l, ',')
		}
		l = textdec.String.AppendText(l, h.Key)
	}
	return append(l, ']')
}

// appendHeaderKeysStreamed is appendHeaderKeys into the sink's line, each
// key a piece at a time, for a record whose keys can be as large as it.
func (d *dumper) appendHeaderKeysStreamed(l []byte, r *logfmt.Record) []byte {
	for i, h := range r.Headers {
		if i > 0 {
			l = append(l, ',')
		}
		l = d.appendStreamed(l, h.Key, textdec.String)
	}
	return append(l, ']')
}

// recordLine writes a record line queued by addRecord. An empty tail of a
// v2 line is an empty header key list, the common case, which addRecord
// does not render.
func (d *dumper) recordLine(m *recordMeta, tail []byte) {
	l := appendRecordMeta(d.s.buf(), m)
	if len(tail) == 0 && m.magic >= 2 {
		l = append(l, ']')
	}
	l = append(l, tail...)
	d.s.set(append(l, '\n'))
}

// recordText appends Kafka's record line.
func (d *dumper) recordText(b *logfmt.Batch, r *logfmt.Record, control bool) {
	o := d.o
	l := d.s.buf()
	if !o.SkipRecordMetadata {
		var m recordMeta
		m.setBatch(b)
		m.setRecord(r)
		l = appendRecordMeta(l, &m)
		if m.magic >= 2 {
			l = d.appendHeaderKeysStreamed(l, r)
		}
		if control {
			l = d.controlText(l, r)
		}
	}
	if o.PrintData && !control {
		keyPrefix := " "
		if o.SkipRecordMetadata {
			keyPrefix = "| "
		}
		l = d.payloadText(l, r, keyPrefix)
	}
	d.s.set(append(l, '\n'))
}

// controlText appends the suffix Kafka prints for a control record.
func (d *dumper) controlText(l []byte, r *logfmt.Record) []byte {
	_, t, err := logfmt.ParseControlKey(r.Key)
	if err != nil {
		d.problem(d.batchPos, fmt.Sprintf("control record at offset %d: %v", r.Offset, err))
		return l
	}
	switch {
	case t.IsTxnMarker():
		m, err := logfmt.ParseEndTxnMarker(r.Value)
		if err != nil {
			d.problem(d.batchPos, fmt.Sprintf("control record at offset %d: %v", r.Offset, err))
			break
		}
		l = append(l, " endTxnMarker: "...)
		l = append(l, t.String()...)
		l = append(l, " coordinatorEpoch: "...)
		return strconv.AppendInt(l, int64(m.CoordinatorEpoch), 10)
	case t == logfmt.ControlLeaderChange && d.o.Release.LeaderChangeType:
		// Kafka before 4.1 names the type only.
	case kraft.IsKRaftControl(t):
		label, js, err := kraft.FormatControl(t, r.Value)
		if err != nil {
			d.problem(d.batchPos, fmt.Sprintf("%s record at offset %d: %v", t, r.Offset, err))
			break
		}
		l = append(l, ' ')
		l = append(l, label...)
		l = append(l, ' ')
		return append(l, js...)
	}
	l = append(l, " controlType: "...)
	l = append(l, t.String()...)
	l = append(l, '(')
	l = strconv.AppendInt(l, int64(t), 10)
	return append(l, ')')
}

// payloadText appends " key: ... payload: ..." as Kafka's record parsers
// print them. keyPrefix goes before the key only: Kafka 3.x to 4.2 put
// " payload: " after whatever came before, so with --skip-record-metadata
// a record without a key has no bar.
func (d *dumper) payloadText(l []byte, r *logfmt.Record, keyPrefix string) []byte {
	if d.o.Payload == PayloadPlain {
		// Rendered straight into the line, which streams.
		if r.Key != nil && d.o.KeyDecoder != textdec.None {
			l = append(l, keyPrefix...)
			l = append(l, "key: "...)
			l = d.appendStreamed(l, r.Key, d.o.KeyDecoder)
		}
		if r.Value != nil && d.o.ValueDecoder != textdec.None {
			l = append(l, " payload: "...)
			l = d.appendStreamed(l, r.Value, d.o.ValueDecoder)
		}
	} else {
		key, value, hasKey, hasValue := d.parse(r)
		if hasKey {
			l = append(l, keyPrefix...)
			l = append(l, "key: "...)
			l = append(l, key...)
		}
		if hasValue {
			l = append(l, " payload: "...)
			l = append(l, value...)
		}
	}
	if d.o.PrintHeaders && d.o.Payload == PayloadPlain && len(r.Headers) > 0 && d.o.ValueDecoder != textdec.None {
		// Not in Kafka's line: header values, at the end where they do not
		// move any field Kafka prints.
		l = append(l, " headers: ["...)
		for i, h := range r.Headers {
			if i > 0 {
				l = append(l, ',')
			}
			l = d.appendStreamed(l, h.Key, textdec.String)
			l = append(l, '=')
			if h.Value == nil {
				l = append(l, "null"...)
			} else {
				l = d.appendStreamed(l, h.Value, d.o.ValueDecoder)
			}
		}
		l = append(l, ']')
	}
	return l
}

// parse renders a record's key and value with the payload decoder in use.
// Decoding failures of the coordinator and metadata decoders are problems,
// shown in place as Kafka shows them.
func (d *dumper) parse(r *logfmt.Record) (key, value []byte, hasKey, hasValue bool) {
	switch d.o.Payload {
	case PayloadOffsets, PayloadTxnLog, PayloadShareState:
		var f protocol.Formatted
		rel := d.o.Release
		if d.o.JSON {
			rel = Release{} // JSON objects are logtool's own: the newest layout
		}
		switch {
		case d.o.Payload == PayloadOffsets && rel.OffsetsText:
			f = groupmeta.FormatText(r.Key, r.Value, r.Offset)
		case d.o.Payload == PayloadOffsets:
			f = groupmeta.Format(r.Key, r.Value, r.Offset)
		case d.o.Payload == PayloadTxnLog && rel.TxnLogText:
			f = txnlog.FormatText(r.Key, r.Value, r.Offset)
		case d.o.Payload == PayloadTxnLog:
			f = txnlog.Format(r.Key, r.Value, r.Offset)
		default:
			f = sharestate.Format(r.Key, r.Value, r.Offset)
		}
		switch {
		case errors.Is(f.Err, protocol.ErrUnknownType):
			d.note(d.batchPos, fmt.Sprintf("record at offset %d: %v, which this version of logtool does not know", r.Offset, f.Err))
		case f.Err != nil:
			d.problem(d.batchPos, fmt.Sprintf("record at offset %d: %v", r.Offset, f.Err))
		}
		return []byte(f.Key), []byte(f.Value), true, f.HasValue
	case PayloadMetadata:
		s, err := kraft.Format(r.Value, r.Offset)
		if err != nil {
			d.problem(d.batchPos, fmt.Sprintf("record at offset %d: %v", r.Offset, err))
		}
		return nil, []byte(s), false, true
	case PayloadRemoteMeta:
		s, err := remotemeta.Format(r.Value, r.Offset)
		switch {
		case errors.Is(err, remotemeta.ErrUnknownType):
			d.note(d.batchPos, fmt.Sprintf("record at offset %d: %v, which this version of logtool does not know", r.Offset, err))
		case err != nil:
			d.problem(d.batchPos, fmt.Sprintf("record at offset %d: %v", r.Offset, err))
		}
		return nil, []byte(s), false, true
	}
	p := d.payload[:0]
	if r.Key != nil && d.o.KeyDecoder != textdec.None {
		p = d.o.KeyDecoder.AppendText(p, r.Key)
		hasKey = true
	}
	n := len(p)
	if r.Value != nil && d.o.ValueDecoder != textdec.None {
		p = d.o.ValueDecoder.AppendText(p, r.Value)
		hasValue = true
	}
	d.payload = p
	return p[:n], p[n:], hasKey, hasValue
}

// streamPiece is how much of a key or value appendStreamed decodes at a
// time.
const streamPiece = 16 << 10

// appendStreamed appends b decoded to l, the sink's buffer, a piece at a
// time, and sends the line on as each chunk fills: the text of a large
// record is never held whole (it can be three times the record, an invalid
// byte printing as U+FFFD), and grows no buffer past a chunk.
func (d *dumper) appendStreamed(l, b []byte, dec textdec.Decoder) []byte {
	for len(b) > streamPiece {
		n := dec.PieceEnd(b, streamPiece)
		l = d.sendFull(dec.AppendText(l, b[:n]))
		b = b[n:]
	}
	return dec.AppendText(l, b)
}

// appendJSONStreamed is appendStreamed for a JSON string (or null, or the
// base64 object of bytes that are not UTF-8): the JSON of a large value,
// up to six times it, is never held whole either.
func (d *dumper) appendJSONStreamed(l, b []byte, dec textdec.Decoder) []byte {
	if len(b) <= streamPiece {
		return dec.AppendJSON(l, b)
	}
	return dec.AppendJSONPieces(l, b, streamPiece, d.sendFull)
}

// sendFull sends the line on when it fills a chunk, for AppendJSONPieces.
func (d *dumper) sendFull(l []byte) []byte {
	if len(l) < chunkSize {
		return l
	}
	d.s.set(l)
	return d.s.buf()
}

// recordJSON appends a "record" object.
func (d *dumper) recordJSON(b *logfmt.Batch, r *logfmt.Record, control bool) {
	o := d.o
	l := d.objStart(d.s.buf(), "record")
	l = appendIntField(l, "offset", r.Offset)
	l = appendIntField(l, "timestamp", r.Timestamp)
	l = appendIntField(l, "keySize", size(r.Key))
	l = appendIntField(l, "valueSize", size(r.Value))
	l = append(l, `,"headers":[`...)
	for i, h := range r.Headers {
		if i > 0 {
			l = append(l, ',')
		}
		l = append(l, `{"key":`...)
		l = d.appendJSONStreamed(l, h.Key, textdec.String) // jsonbytes' rule, as for every name read from disk
		if o.ValueDecoder != textdec.None {
			l = append(l, `,"value":`...)
			l = d.appendJSONStreamed(l, h.Value, o.ValueDecoder)
		}
		l = append(l, '}')
	}
	l = append(l, ']')
	if b.Magic() >= 2 {
		l = appendIntField(l, "sequence", int64(recordSequence(b, r)))
	} else {
		l = appendIntField(l, "crc", int64(r.CRC))
		l = appendBoolField(l, "crcValid", r.CRCValid)
	}
	switch {
	case control:
		l = d.controlJSON(l, r)
	case o.PrintData && o.Payload == PayloadPlain:
		// Rendered straight into the line, which streams, as text does.
		if o.KeyDecoder != textdec.None {
			l = append(l, `,"key":`...)
			l = d.appendJSONStreamed(l, r.Key, o.KeyDecoder)
		}
		if o.ValueDecoder != textdec.None {
			l = append(l, `,"value":`...)
			l = d.appendJSONStreamed(l, r.Value, o.ValueDecoder)
		}
	case o.PrintData:
		key, value := d.parseJSON(r)
		l = append(l, `,"key":`...)
		l = append(l, key...)
		l = append(l, `,"value":`...)
		l = append(l, value...)
	}
	d.s.set(append(l, "}\n"...))
}

// parseJSON is parse with JSON values, for the payload decoders (a plain
// payload streams into the line): a decoded object nested, or null for a
// null key or value.
func (d *dumper) parseJSON(r *logfmt.Record) (key, value []byte) {
	k, v, hk, hv := d.parse(r)
	out := appendDecodedPayload(nil, k, hk)
	n := len(out)
	// A tombstone is null here, where text shows Kafka's <DELETE>.
	out = appendDecodedPayload(out, v, hv && r.Value != nil)
	return out[:n], out[n:]
}

// appendDecodedPayload appends what a payload decoder made of a key or
// value: its JSON object nested as it is, so that jq reaches into it; the
// text of one it could not decode (Kafka's "Error at offset ..." line) as a
// string; null when there is none.
func appendDecodedPayload(l, s []byte, has bool) []byte {
	switch {
	case !has:
		return append(l, "null"...)
	case len(s) > 0 && s[0] == '{' && json.Valid(s):
		return append(l, s...)
	}
	return protocol.AppendString(l, string(s))
}

// controlJSON appends "control":{"type":...} for a control record.
func (d *dumper) controlJSON(l []byte, r *logfmt.Record) []byte {
	_, t, err := logfmt.ParseControlKey(r.Key)
	if err != nil {
		d.problem(d.batchPos, fmt.Sprintf("control record at offset %d: %v", r.Offset, err))
		return l
	}
	l = append(l, `,"control":{"type":"`...)
	l = append(l, t.String()...)
	l = append(l, '"')
	switch {
	case t.IsTxnMarker():
		m, err := logfmt.ParseEndTxnMarker(r.Value)
		if err != nil {
			d.problem(d.batchPos, fmt.Sprintf("control record at offset %d: %v", r.Offset, err))
			break
		}
		l = appendIntField(l, "coordinatorEpoch", int64(m.CoordinatorEpoch))
	case kraft.IsKRaftControl(t):
		_, js, err := kraft.FormatControl(t, r.Value)
		if err != nil {
			d.problem(d.batchPos, fmt.Sprintf("%s record at offset %d: %v", t, r.Offset, err))
			break
		}
		l = append(l, `,"data":`...)
		l = append(l, js...)
	}
	return append(l, '}')
}
