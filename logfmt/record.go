package logfmt

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"github.com/logtool/logtool/logfmt/codec"
)

// Header is a record header; a nil Value means null.
type Header struct {
	Key   []byte
	Value []byte
}

// Record is one record of any magic, with its absolute offset and the
// timestamp Kafka reports for it. Slices point into the iterator's buffers
// or the batch; see RecordIter for how long they are valid.
type Record struct {
	Offset        int64
	Timestamp     int64
	TimestampType TimestampType
	Key, Value    []byte // nil means null; a nil Value is a tombstone
	Headers       []Header
	Attributes    int8
	Sequence      int32 // magic 2 with a producer sequence, else -1
	Magic         int8
	Size          int // bytes the record occupies (legacy: whole entry)

	// Legacy messages carry a CRC of their own.
	CRC         uint32
	CRCValid    bool
	Compression codec.Type // a legacy message's own codec bits
}

// DefaultMaxRecordBytes is the MaxRecordBytes a RecordIter applies when
// given 0: Kafka's max.message.bytes, which bounds a whole batch, is 1 MiB
// by default and rarely set past a few MiB.
const DefaultMaxRecordBytes = codec.DefaultLimit

// recordWindow is how much of a compressed batch's records a RecordIter
// decompresses at a time. Most batches fit, and are then decompressed in
// one go and read from memory as an uncompressed one is.
const recordWindow = 256 << 10

// RecordIter walks the records of one batch at a time ("deep iteration").
// Keep one per goroutine and Reset it for each batch: its buffers and
// decoders are reused, so iteration allocates nothing once warm.
//
// A compressed batch is decompressed as a stream, as Kafka's
// DefaultRecordBatch and AbstractLegacyRecordBatch iterators do, so what an
// iterator holds is bounded by its largest record, not by the batch:
// recordWindow bytes of decompressed records (more when one record is
// larger, up to MaxRecordBytes), one codec's state (codec.Reader), and the
// batch itself, which the caller holds.
//
// A Record and the slices in it are valid until the next Next or Reset
// (Headers until the next Next even with KeepBytes). An uncompressed
// batch's keys and values point into the batch's bytes and stay valid as
// long as they do.
//
// A fault in a compressed payload is reported as the iterator reaches it,
// after the records before it, as a consumer sees it. Every error is the one
// a whole decompression of the batch before parsing would give: when a record
// is malformed and the payload turns out to be damaged further on, the
// damage is reported.
type RecordIter struct {
	// MaxRecordBytes bounds one record of a compressed batch, one inner
	// message of a legacy wrapper, and one piece of a compressed payload
	// that can only be decoded whole (codec.Reader); 0 means
	// DefaultMaxRecordBytes. A larger one is refused with an error
	// wrapping codec.ErrTooLarge that names its declared size.
	MaxRecordBytes int
	// KeepBytes, when larger than recordWindow, lets the records of a
	// compressed batch stay valid until the next Reset rather than the
	// next Next, as long as the batch decompresses to at most KeepBytes;
	// Kept tells whether they have. A caller that rewrites batches keeps
	// their records this way and reads a batch twice only when it is
	// larger.
	KeepBytes int
	// File names the file in errors.
	File string
	// window, when set, replaces recordWindow, so that tests can make
	// records straddle windows in every way.
	window int

	b       *Batch
	data    []byte // data[p:] are the bytes not read yet
	p       int
	dataPos int64 // file position of data[0] when data is the batch's own, else -1

	// A compressed payload is read through src into buf, and data is a
	// slice of buf. For a batch a DeepReader gave out, a worker has read
	// the payload: data is pre.payload, all of it up to its end or fault,
	// and reading on meets pre.err, as reading src would have.
	src      codec.Reader
	pre      *decoded
	srcErr   error // io.EOF at the payload's clean end, else what stopped it
	stream   bool  // data comes from src
	payload  []byte
	consumed int64 // decompressed bytes dropped before data[0]
	buf      []byte
	shared   bool // buf came from getLarge

	v2        bool  // a magic-2 batch
	recLimit  int   // the largest record to read: MaxRecordBytes when streaming
	remaining int32 // v2: records still to read
	index     int
	rec       Record
	err       error
	done      bool

	// legacy state
	legacyBase  int64 // added to v1 inner relative offsets; -1 for absolute (v0)
	legacyCount int
	legacyFirst int64
	wrapper     LegacyMessage
}

// Reset prepares iteration over b's records. For a legacy wrapper it reads
// the whole inner set once, to count it and find its offsets; a v2 batch
// is read as it is iterated. An error is also kept for Err.
func (it *RecordIter) Reset(b *Batch) error {
	it.b, it.p, it.index, it.err, it.done, it.v2 = b, 0, 0, nil, false, b.Magic() >= 2
	it.data, it.dataPos, it.wrapper = nil, -1, nil
	it.stream, it.payload, it.srcErr, it.consumed, it.pre = false, nil, nil, 0, nil
	it.recLimit = math.MaxInt
	it.letGo()
	if b.headerOnly() {
		// A caller's mistake, not damage: say so rather than misread.
		it.err, it.done = fmt.Errorf("%s: batch at byte %d: only its header was read", it.File, b.Pos), true
		return it.err
	}
	if it.v2 {
		it.err = it.resetV2()
	} else {
		it.err = it.resetLegacy()
	}
	if it.err != nil {
		it.done = true
	}
	return it.err
}

// Kept reports whether every record returned since Reset is still valid:
// always for an uncompressed batch or one a DeepReader decompressed, and
// for a compressed one while it fits KeepBytes (see there).
func (it *RecordIter) Kept() bool { return !it.stream || it.consumed == 0 }

func (it *RecordIter) windowSize() int {
	if it.window > 0 {
		return it.window
	}
	return recordWindow
}

func (it *RecordIter) maxRecord() int {
	if it.MaxRecordBytes > 0 {
		return it.MaxRecordBytes
	}
	return DefaultMaxRecordBytes
}

func (it *RecordIter) corrupt(pos int64, format string, args ...any) error {
	if pos < 0 {
		pos = it.b.Pos
	}
	return Corruptf(it.File, pos, format, args...)
}

// start begins reading a compressed payload: it decompresses as much as the
// window holds, which for most batches is all of it.
func (it *RecordIter) start(c codec.Type, payload []byte, magic int8) error {
	it.stream, it.payload, it.recLimit = true, payload, it.maxRecord()
	var err error
	if d := it.b.dec; d != nil && d.has {
		it.pre, it.data, err = d, d.payload, d.resetErr
	} else {
		if it.buf == nil {
			it.buf = make([]byte, it.windowSize())
		}
		it.data = it.buf[:0]
		err = it.src.Reset(c, payload, magic, it.maxRecord())
	}
	if err != nil {
		it.srcErr = err
		return it.decompressErr()
	}
	it.fill(1)
	return nil
}

// rewind starts the payload again: from memory when all of it is still in
// the window, else by decompressing it again.
func (it *RecordIter) rewind() {
	if it.consumed == 0 && it.srcErr == io.EOF {
		it.p = 0
		return
	}
	c, magic := it.wrapper.Compression(), it.wrapper.Magic()
	it.srcErr, it.consumed, it.p = nil, 0, 0
	it.start(c, it.payload, magic)
}

// decompressErr is the payload's fault as a CorruptError of the batch.
func (it *RecordIter) decompressErr() error {
	if it.b.Magic() >= 2 {
		c := it.b.Header().Compression()
		return &CorruptError{File: it.File, Pos: it.b.Pos + V2HeaderSize, Msg: fmt.Sprintf("cannot decompress %s records", c), Err: it.srcErr}
	}
	return &CorruptError{File: it.File, Pos: it.b.Pos, Msg: fmt.Sprintf("cannot decompress %s wrapper", it.wrapper.Compression()), Err: it.srcErr}
}

// fill makes n bytes available at data[p:], decompressing more if need be,
// and reports whether it could: false when the payload ends or fails first.
// Within KeepBytes the window grows and keeps what was read; past it, or
// without KeepBytes, the bytes before p are dropped to make room.
func (it *RecordIter) fill(n int) bool {
	for len(it.data)-it.p < n {
		if !it.stream || it.srcErr != nil {
			return false
		}
		if it.pre != nil {
			it.srcErr = it.pre.err
			continue
		}
		switch left := len(it.data) - it.p; {
		case len(it.data) < cap(it.buf):
		case it.p+n <= it.KeepBytes:
			// Grow rather than move: the records read stay where they are
			// (the old array lives on as long as they point into it).
			nb := make([]byte, min(max(2*cap(it.buf), it.p+n), it.KeepBytes))
			copy(nb, it.data)
			it.buf, it.data = nb, nb[:len(it.data)]
		default:
			nb := it.buf
			if need := max(n, it.windowSize()); need > cap(nb) {
				nb = it.grow(need)
			}
			copy(nb, it.data[it.p:])
			it.consumed += int64(it.p)
			it.buf, it.data, it.p = nb, nb[:left], 0
		}
		k, err := it.src.Read(it.buf[len(it.data):cap(it.buf)])
		it.data = it.buf[:len(it.data)+k]
		if err != nil {
			it.srcErr = err
		}
	}
	return true
}

// rest counts the bytes left from p to the payload's end, reading through
// the rest of a compressed payload. What it reads is dropped, and the
// window with it: it is for the end of a batch and for errors, which end it
// too. It also returns the payload's fault, if there is one; a caller
// reports that first, as decompressing the whole batch before parsing it
// would have.
func (it *RecordIter) rest() (int64, error) { return it.count(math.MaxInt64) }

// count is rest, but stops once it has counted max bytes.
func (it *RecordIter) count(max int64) (int64, error) {
	left := int64(len(it.data) - it.p)
	if it.pre != nil && it.srcErr == nil && left < max {
		it.srcErr = it.pre.err
	}
	if it.stream && it.srcErr == nil && left < max {
		it.consumed += int64(len(it.data))
		it.data, it.p = it.buf[:0], 0
		for it.srcErr == nil && left < max {
			k, err := it.src.Read(it.buf[:cap(it.buf)])
			left += int64(k)
			it.srcErr = err
		}
	}
	if it.stream && it.srcErr != nil && it.srcErr != io.EOF {
		return left, it.decompressErr()
	}
	return left, nil
}

// fail returns err unless the payload is damaged further on (see rest).
func (it *RecordIter) fail(err error) error {
	if _, derr := it.rest(); derr != nil {
		return derr
	}
	return err
}

func (it *RecordIter) resetV2() error {
	h := it.b.Header()
	it.remaining = h.RecordCount()
	if it.remaining < 0 {
		return it.corrupt(it.b.Pos+57, "record batch declares %d records", it.remaining)
	}
	area := it.b.Data[V2HeaderSize:]
	if c := h.Compression(); c != codec.None {
		if !c.ValidFor(2) {
			return it.corrupt(it.b.Pos+21, "unknown compression type id %d", int(c))
		}
		return it.start(c, area, 2)
	}
	it.data, it.dataPos = area, it.b.Pos+V2HeaderSize
	return nil
}

// posAt maps a position in data to a file position when data is the
// batch's own; inside a compressed payload only the batch position is known.
func (it *RecordIter) posAt(p int) int64 {
	if it.dataPos < 0 {
		return it.b.Pos
	}
	return it.dataPos + int64(p)
}

func (it *RecordIter) resetLegacy() error {
	m := it.b.Legacy()
	it.wrapper = m
	if m.Compression() == codec.None {
		it.legacyCount, it.legacyFirst = 1, m.Offset()
		return nil
	}
	c := m.Compression()
	if !c.ValidFor(m.Magic()) {
		return it.corrupt(it.b.Pos+legacyAttrOffset, "compression type %s is not valid for magic %d", c, m.Magic())
	}
	_, value, err := m.KeyValue()
	if err != nil {
		return WithFile(err, it.File, it.b.Pos)
	}
	if value == nil {
		return it.corrupt(-1, "compressed message set with null value")
	}
	if err := it.start(c, value, m.Magic()); err != nil {
		return err
	}
	// The absolute offsets of v1 inner messages depend on the last inner
	// relative offset, not on the count: compaction leaves holes. Kafka
	// holds the whole inner set to learn it; this reads it once first.
	var lastRel int64
	n := 0
	for ; ; n++ {
		inner, err := it.inner()
		if err != nil {
			return err
		}
		if inner == nil {
			break
		}
		if n == 0 {
			it.legacyFirst = inner.Offset()
		}
		lastRel = inner.Offset()
	}
	if n == 0 {
		return &CorruptError{File: it.File, Pos: it.b.Pos, Msg: "invalid compressed message set", Err: ErrNoInnerMessages}
	}
	it.rewind()
	it.legacyCount = n
	it.legacyBase = -1
	if m.Magic() > 0 {
		wrapperOffset := m.Offset()
		if wrapperOffset == 0 {
			it.legacyBase = 0 // librdkafka sends 0 in produce requests; Kafka then reads inner offsets as absolute
		} else {
			it.legacyBase = wrapperOffset - lastRel
			if it.legacyBase < 0 {
				return it.corrupt(-1, "wrapper offset %d is below the last inner relative offset %d", wrapperOffset, lastRel)
			}
		}
		it.legacyFirst += it.legacyBase
	}
	return nil
}

// inner frames the next entry of a decompressed legacy set and moves past
// it; nil at the set's clean end.
func (it *RecordIter) inner() (LegacyMessage, error) {
	at := it.consumed + int64(it.p)
	if !it.fill(HeaderSizeUpToMagic) {
		left, err := it.rest()
		switch {
		case err != nil:
			return nil, err
		case left == 0:
			return nil, nil
		}
		return nil, it.corrupt(-1, "inner message set ends with %d stray bytes (at byte %d of the decompressed set)", left, at)
	}
	size := int32(binary.BigEndian.Uint32(it.data[it.p+8:]))
	invalid := func() error {
		return it.corrupt(-1, "inner message size %d is invalid (at byte %d of the decompressed set)", size, at)
	}
	if size < legacyMinSize {
		return nil, it.fail(invalid())
	}
	n := LogOverhead + int(size)
	if int(size) > it.maxRecord() {
		left, err := it.count(LogOverhead + int64(it.maxRecord()) + 1)
		switch {
		case err != nil:
			return nil, err
		case left-LogOverhead <= int64(it.maxRecord()):
			return nil, invalid()
		}
		return nil, it.tooLarge(fmt.Sprintf("inner message at byte %d of the decompressed set", at), int64(size))
	}
	if !it.fill(n) {
		return nil, it.fail(invalid())
	}
	m := LegacyMessage(it.data[it.p : it.p+n : it.p+n])
	if m.Magic() > 1 {
		return nil, it.fail(it.corrupt(-1, "inner message has magic %d (at byte %d of the decompressed set)", m.Magic(), at))
	}
	if m.Compression() != codec.None {
		return nil, it.fail(it.corrupt(-1, "inner messages must not be compressed (at byte %d of the decompressed set)", at))
	}
	it.p += n
	return m, nil
}

// tooLarge refuses a record or inner message over MaxRecordBytes.
func (it *RecordIter) tooLarge(what string, size int64) error {
	return &CorruptError{File: it.File, Pos: it.b.Pos, Msg: fmt.Sprintf("%s declares %d bytes", what, size),
		Err: fmt.Errorf("%w of %d bytes for one record (MaxRecordBytes)", codec.ErrTooLarge, it.maxRecord())}
}

// BaseOffset is the first record's offset. For a legacy wrapper it is only
// known after decompression, which Reset did.
func (it *RecordIter) BaseOffset() int64 {
	if it.b.Magic() >= 2 {
		return it.b.Header().BaseOffset()
	}
	return it.legacyFirst
}

// Count is the number of records: the v2 header's count, or the number of
// messages in a legacy entry.
func (it *RecordIter) Count() int {
	if it.b.Magic() >= 2 {
		return int(it.b.Header().RecordCount())
	}
	return it.legacyCount
}

// Next advances to the next record.
func (it *RecordIter) Next() bool {
	if it.done {
		return false
	}
	if it.v2 {
		return it.nextV2(false)
	}
	return it.step(it.nextLegacy())
}

// NextKey is Next for callers that need only each record's Offset, Key and
// Value, as the cleaner's offset map does: a magic-2 record is checked just
// as Next checks it, but its timestamp, sequence and headers are not
// decoded. Only Offset, Key, Value, Attributes, Magic and Size of Record are
// set (Headers is emptied); the other fields keep stale values. Errors,
// positions and messages are the same as Next's.
func (it *RecordIter) NextKey() bool {
	if it.done {
		return false
	}
	if it.v2 {
		return it.nextV2(true)
	}
	return it.step(it.nextLegacy())
}

// grow returns a window of need bytes for a record larger than the one
// in use, whose bytes the caller moves over: a large one is taken from the
// buffers large entries share (getLarge), and goes back once its batch is
// done with (letGo).
func (it *RecordIter) grow(need int) []byte {
	if need <= keptLarge {
		return make([]byte, need)
	}
	it.shared = true
	return getLarge(need)
}

// letGo lets go of a window grown for a large record once no record of its
// batch is valid (at the next Reset, or at the batch's end without
// KeepBytes): memory follows the record being read, not the largest read
// before. A shared one goes back for the next large batch; the last
// record's view of it goes too.
func (it *RecordIter) letGo() {
	if cap(it.buf) <= keptLarge {
		return
	}
	if it.shared {
		putLarge(it.buf)
	}
	it.buf, it.data, it.shared = nil, nil, false
	it.rec.Key, it.rec.Value = nil, nil
	clear(it.rec.Headers)
}

// Release lets go of a window grown for a large record, which ends the
// validity of the batch's records, as the batch's end does without
// KeepBytes. An iterator that keeps bytes holds it until its next Reset
// otherwise.
func (it *RecordIter) Release() { it.letGo() }

// step ends iteration unless ok, keeping err.
func (it *RecordIter) step(ok bool, err error) bool {
	if err != nil {
		it.err = err
	}
	if !ok {
		it.done = true
		if it.KeepBytes <= recordWindow {
			it.letGo()
		}
	}
	return ok
}

// Record is the current record; see RecordIter for how long it is valid.
func (it *RecordIter) Record() *Record { return &it.rec }

// Err is the first error met, nil at a clean end.
func (it *RecordIter) Err() error { return it.err }

func (it *RecordIter) nextV2(keyOnly bool) bool {
	// The common case, a whole record in data, first.
	length, q, ok := varintAt(it.data, it.p)
	if !ok || it.remaining == 0 || length < 0 || int(length) > len(it.data)-q || int(length) > it.recLimit {
		if err := it.frameV2(); err != nil || it.remaining == 0 {
			return it.step(false, err)
		}
		length, q, _ = varintAt(it.data, it.p)
	}
	end := q + int(length)
	body := it.data[q:end]
	h := it.b.Header()
	r := &it.rec
	if !keyOnly || !parseKeyV2(body, h.BaseOffset(), r) {
		r.CRC, r.CRCValid, r.Compression = 0, true, codec.None
		if err := parseV2(body, h, r); err != nil {
			return it.step(false, it.fail(it.corrupt(it.posAt(it.p), "record %d: %v", it.index, err)))
		}
	}
	r.Magic, r.Size = 2, end-it.p
	it.p = end
	it.remaining--
	it.index++
	return true
}

// frameV2 brings the next record of a v2 batch whole into data, or tells
// why it cannot: nil with no record left at the batch's clean end, or what
// is wrong.
func (it *RecordIter) frameV2() error {
	start := it.p
	if it.remaining == 0 {
		// Kafka reads one byte more to check that nothing follows.
		if it.fill(1) {
			left, err := it.rest()
			if err != nil {
				return err
			}
			return it.corrupt(it.posAt(start), "incorrect declared batch size: %d bytes remain after the last of %d records", left, it.b.Header().RecordCount())
		}
		if it.stream && it.srcErr != io.EOF {
			return it.decompressErr()
		}
		return nil
	}
	if !it.fill(1) {
		if it.stream && it.srcErr != io.EOF {
			return it.decompressErr()
		}
		// Nothing is there to point at: the count field is what is wrong.
		return it.corrupt(it.b.Pos+57, "record batch declares %d records but its data ends after %d",
			it.b.Header().RecordCount(), it.index)
	}
	it.fill(5) // the longest length varint, if the records go on that far
	length, n, err := readVarint(it.data[it.p:])
	if err != nil {
		return it.fail(it.corrupt(it.posAt(start), "record %d length: %v", it.index, err))
	}
	if length < 0 || int(length) > it.recLimit {
		// A record over the limit is refused once the limit's worth of it
		// is there; one cut short before that is damage.
		left, err := it.count(int64(n) + int64(min(it.recLimit, math.MaxInt32)) + 1)
		if err != nil {
			return err
		}
		if left -= int64(n); length < 0 || left <= int64(it.recLimit) {
			return it.corrupt(it.posAt(start), "record %d length %d exceeds the %d bytes left", it.index, length, left)
		}
		return it.tooLarge(fmt.Sprintf("record %d", it.index), int64(length))
	}
	if !it.fill(n + int(length)) {
		left, err := it.rest()
		if err != nil {
			return err
		}
		return it.corrupt(it.posAt(start), "record %d length %d exceeds the %d bytes left", it.index, length, left-int64(n))
	}
	return nil
}

// parseV2 decodes the record body (after its length) as DefaultRecord.readFrom.
func parseV2(b []byte, h BatchHeader, r *Record) error {
	if len(b) < 1 {
		return fmt.Errorf("empty record")
	}
	r.Attributes = int8(b[0])
	p := 1
	tsDelta, n, err := readVarlong(b[p:])
	if err != nil {
		return fmt.Errorf("timestamp delta: %w", err)
	}
	p += n
	offDelta, n, err := readVarint(b[p:])
	if err != nil {
		return fmt.Errorf("offset delta: %w", err)
	}
	p += n
	r.Offset = h.BaseOffset() + int64(offDelta)
	r.TimestampType = h.TimestampType()
	if r.TimestampType == LogAppendTime {
		r.Timestamp = h.MaxTimestamp()
	} else {
		r.Timestamp = h.BaseTimestamp() + tsDelta
	}
	r.Sequence = IncrementSequence(h.BaseSequence(), offDelta)
	if r.Key, p, err = varBytes(b, p, "key"); err != nil {
		return err
	}
	if r.Value, p, err = varBytes(b, p, "value"); err != nil {
		return err
	}
	count, n, err := readVarint(b[p:])
	if err != nil {
		return fmt.Errorf("header count: %w", err)
	}
	p += n
	// Each header needs at least two bytes, so the count is bounded by the
	// bytes left before anything is allocated.
	if count < 0 || int(count) > len(b)-p {
		return fmt.Errorf("invalid header count %d", count)
	}
	r.Headers = r.Headers[:0]
	for i := int32(0); i < count; i++ {
		var hd Header
		if hd.Key, p, err = varBytes(b, p, "header key"); err != nil {
			return err
		}
		if hd.Key == nil {
			return fmt.Errorf("header %d has a negative key length", i)
		}
		if hd.Value, p, err = varBytes(b, p, "header value"); err != nil {
			return err
		}
		r.Headers = append(r.Headers, hd)
	}
	if p != len(b) {
		return fmt.Errorf("record size %d does not match the %d bytes its fields use", len(b), p)
	}
	return nil
}

// varBytes reads a varint length and that many bytes; a negative length is null.
func varBytes(b []byte, p int, what string) ([]byte, int, error) {
	l, n, err := readVarint(b[p:])
	if err != nil {
		return nil, p, fmt.Errorf("%s length: %w", what, err)
	}
	p += n
	if l < 0 {
		return nil, p, nil
	}
	if int(l) > len(b)-p {
		return nil, p, fmt.Errorf("%s length %d exceeds the %d bytes left", what, l, len(b)-p)
	}
	return b[p : p+int(l) : p+int(l)], p + int(l), nil
}

func (it *RecordIter) nextLegacy() (bool, error) {
	r := &it.rec
	var m LegacyMessage
	if !it.stream { // an uncompressed message is its own only record
		if it.index > 0 {
			return false, nil
		}
		m = it.wrapper
		r.Offset = m.Offset()
	} else {
		var err error
		if m, err = it.inner(); m == nil || err != nil {
			return false, err
		}
		r.Offset = m.Offset()
		if it.legacyBase >= 0 {
			r.Offset += it.legacyBase
		}
	}
	key, value, err := m.KeyValue()
	if err != nil {
		if !it.stream {
			return false, WithFile(err, it.File, it.b.Pos)
		}
		return false, it.corrupt(-1, "inner message %d: %v", it.index, err)
	}
	r.Key, r.Value, r.Headers = key, value, r.Headers[:0]
	r.Magic, r.Attributes, r.Sequence, r.Size = m.Magic(), m.Attributes(), NoSequence, len(m)
	r.CRC = m.CRC()
	r.CRCValid = r.CRC == m.ComputeCRC()
	r.Compression = m.Compression()
	r.Timestamp, r.TimestampType = m.Timestamp(), m.TimestampType()
	// Inside a v1 wrapper the wrapper's timestamp type wins, and under
	// LogAppendTime so does its timestamp (LegacyRecord.timestamp()).
	if it.stream && m.Magic() > 0 && it.wrapper.Magic() > 0 {
		r.TimestampType = it.wrapper.TimestampType()
		if r.TimestampType == LogAppendTime {
			r.Timestamp = it.wrapper.Timestamp()
		}
	}
	it.index++
	return true, nil
}
