package upgrade

import (
	"bytes"
	"io"
	"slices"

	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/codec"
)

// Limits of a batch built from a run of uncompressed legacy messages: the
// Java producer's default batch.size, and a record count that keeps the
// decompression of one batch cheap for consumers.
const (
	upgradeRunBytes   = 16 << 10
	upgradeRunRecords = 500
	// upgradeWriteChunk is how much converted output is gathered before a
	// write, so that the file sees few large writes.
	upgradeWriteChunk = 256 << 10
	// upgradeProgressChunk is how many source bytes are read between two
	// progress reports.
	upgradeProgressChunk = 1 << 20
	// upgradeLATBit is bit 3 of a legacy message's attributes: LogAppendTime.
	upgradeLATBit = 0x08
)

// upgradeTamper, when set by a test, changes each converted record before it
// is written: a writer that corrupts data, which verification must catch.
var upgradeTamper func(*logfmt.Record)

// upgradeRules says what a converted record becomes.
type upgradeRules struct {
	toMagic     int8
	tsType      logfmt.TimestampType // for magic-0 records
	appendTime  int64                // under LogAppendTime
	compression codec.Type           // with recompress, the codec of every rewritten set
	recompress  bool
	maxRecord   int // logfmt.RecordIter.MaxRecordBytes
	workers     int // decoding the source's batches (logfmt.DeepReader)
}

// stamp is the timestamp and type a record has after conversion. Magic 0
// has no timestamp, so it gets the run's; magic 1 and 2 keep their own.
func (r *upgradeRules) stamp(rec *logfmt.Record) (int64, logfmt.TimestampType) {
	if rec.Magic > 0 {
		return rec.Timestamp, rec.TimestampType
	}
	if r.tsType == logfmt.LogAppendTime {
		return r.appendTime, logfmt.LogAppendTime
	}
	return logfmt.NoTimestamp, logfmt.CreateTime
}

// outCodec is the codec a set written with codec c is rewritten with.
func (r *upgradeRules) outCodec(c codec.Type) codec.Type {
	if r.recompress {
		return r.compression
	}
	return c
}

// upgradeCursor walks the records of a segment, batch by batch. An
// uncompressed legacy message is read directly, without RecordIter: it is
// its own only record and its checksum was checked with the batch, which
// keeps the common magic-0 case at one checksum per message.
type upgradeCursor struct {
	sr       *logfmt.SegmentReader
	seg      *logfmt.DeepReader
	file     string
	validate bool // check each batch's checksum (Kafka's ensureValid)
	it       logfmt.RecordIter
	b        *logfmt.Batch
	single   bool // b is an uncompressed legacy message
	given    bool // its record was returned
	rec      logfmt.Record
}

// newUpgradeCursor reads r on the given number of workers; with more than
// one, release must be called.
func newUpgradeCursor(r io.ReaderAt, size int64, file string, validate bool, maxRecord, workers int) *upgradeCursor {
	sr := logfmt.NewSegmentReader(r, size, file)
	c := &upgradeCursor{sr: sr, seg: logfmt.NewDeepReader(sr, workers), file: file, validate: validate}
	c.seg.MaxRecordBytes = maxRecord
	c.it.File, c.it.MaxRecordBytes = file, maxRecord
	return c
}

// release gives back the buffers of the current batch, which is then no
// longer valid, for the next reader of a large entry; reading goes on
// after it.
func (c *upgradeCursor) release() {
	c.seg.Close()
	c.it.Release()
	c.sr.Close()
}

// nextBatch moves to the next batch; false at the end of the data or on an
// error.
func (c *upgradeCursor) nextBatch() (bool, error) {
	if !c.seg.Next() {
		return false, c.seg.Err()
	}
	c.b = c.seg.Batch()
	if c.validate {
		if err := c.b.Validate(); err != nil {
			return false, logfmt.WithFile(err, c.file, 0)
		}
	}
	return true, nil
}

// records starts iterating over the current batch's records.
func (c *upgradeCursor) records() error {
	c.single = c.b.Magic() < 2 && c.b.Compression() == codec.None
	c.given = false
	if c.single {
		return nil
	}
	return c.it.Reset(c.b)
}

// nextRecord returns the batch's next record, nil after the last. A legacy
// inner message with a bad checksum is corruption, as it is to a broker
// converting on produce.
func (c *upgradeCursor) nextRecord() (*logfmt.Record, error) {
	if c.single {
		if c.given {
			return nil, nil
		}
		c.given = true
		m := c.b.Legacy()
		key, value, err := m.KeyValue()
		if err != nil {
			return nil, logfmt.WithFile(err, c.file, c.b.Pos)
		}
		// Field by field: this runs once per message, and a whole Record
		// literal costs more than the rest of the read.
		r := &c.rec
		r.Offset, r.Timestamp, r.TimestampType, r.Magic = m.Offset(), m.Timestamp(), m.TimestampType(), m.Magic()
		r.Key, r.Value, r.Headers = key, value, r.Headers[:0]
		r.Attributes, r.Sequence, r.Size, r.CRC, r.CRCValid, r.Compression = m.Attributes(), logfmt.NoSequence, len(m), m.CRC(), true, codec.None
		return r, nil
	}
	if !c.it.Next() {
		return nil, c.it.Err()
	}
	r := c.it.Record()
	if r.Magic < 2 && !r.CRCValid {
		return nil, logfmt.Corruptf(c.file, c.b.Pos, "inner message at offset %d: checksum mismatch: stored %d", r.Offset, r.CRC)
	}
	return r, nil
}

// next returns the next record of the segment, nil at its end.
func (c *upgradeCursor) next() (*logfmt.Record, error) {
	for {
		if c.b != nil {
			r, err := c.nextRecord()
			if r != nil || err != nil {
				return r, err
			}
		}
		ok, err := c.nextBatch()
		if !ok {
			c.b = nil
			return nil, err
		}
		if err := c.records(); err != nil {
			return nil, err
		}
	}
}

// upgradeGroup is the wrapper or batch being written. Its records go
// straight into a builder, which compresses them as they come, so a
// wrapper of any size is converted holding one record at a time.
type upgradeGroup struct {
	n       int
	first   int64 // the first record's offset
	codec   codec.Type
	tsType  logfmt.TimestampType
	ts      int64 // under LogAppendTime, the one timestamp of every record
	bytes   int
	at      int64 // where the batch starts in the new segment
	unspilt int   // record bytes given to the batch since its last Spill
	batch   logfmt.BatchBuilder
	wrapper logfmt.WrapperBuilder
	rec     logfmt.Record
}

// upgradeConverter rewrites one segment. It writes nothing until it meets
// the first entry below the target; then open gives it a destination and the
// entries before, all at the target already, are copied there unchanged.
type upgradeConverter struct {
	rules    *upgradeRules
	r        io.ReaderAt
	file     string
	base     int64
	src      *upgradeCursor
	open     func() (io.Writer, error) // an io.WriterAt gets large batches in pieces
	progress func(n int64)
	// wrote, when set, is told the size written after each write, always
	// an entry boundary; its error stops the conversion.
	wrote func(end int64) error
	// job, when set, is done once the converter has given its buffers
	// back: the verifier, whose job shares its budget, waits for that to
	// read a large entry (upgrader.segment).
	job *logfmt.Job

	w     io.Writer
	out   []byte
	group upgradeGroup
	last  int64 // last offset so far, to insist on increasing offsets

	batchesIn, batchesOut int
	converted             int64
	stamped               int64 // magic-0 records given the LogAppendTime
	bytesOut              int64
}

func newUpgradeConverter(rules *upgradeRules, r io.ReaderAt, size int64, file string, base int64) *upgradeConverter {
	return &upgradeConverter{rules: rules, r: r, file: file, base: base, src: newUpgradeCursor(r, size, file, true, rules.maxRecord, rules.workers), last: -1}
}

// run converts the whole segment.
func (c *upgradeConverter) run() error {
	defer c.job.Done()
	defer c.src.release()
	var unreported int64
	for {
		ok, err := c.src.nextBatch()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		b := c.src.b
		c.batchesIn++
		if unreported += int64(b.Size()); unreported >= upgradeProgressChunk && c.progress != nil {
			c.progress(unreported)
			unreported = 0
		}
		if err := c.checkOffsets(b); err != nil {
			return err
		}
		if b.Magic() >= c.rules.toMagic {
			if c.w != nil {
				if err := c.flushGroup(); err != nil {
					return err
				}
				c.out = append(c.out, b.Data...)
				c.batchesOut++
			}
			c.last = b.LastOffset()
		} else {
			if c.w == nil {
				if err := c.start(b.Pos); err != nil {
					return err
				}
			}
			if err := c.convert(b); err != nil {
				return err
			}
		}
		if err := c.maybeWrite(); err != nil {
			return err
		}
	}
	if c.progress != nil && unreported > 0 {
		c.progress(unreported)
	}
	// A torn last entry or a zero-filled tail is for recovery to drop; a
	// rewrite could neither keep nor drop it without changing what the
	// broker's recovery would see. That holds for a segment with nothing
	// left to convert too: one cut inside its first entry must stop the
	// partition, not be passed over while the rest is upgraded.
	if end := c.src.seg.End(); end != logfmt.EndClean {
		return logfmt.Corruptf(c.file, c.src.seg.Pos(), "segment does not end cleanly (%s: %s); let a broker recover it first", end, c.src.seg.EndDetail())
	}
	if c.w == nil {
		return nil
	}
	if err := c.flushGroup(); err != nil {
		return err
	}
	return c.write()
}

// checkOffsets insists on what the rewritten segment needs: offsets that
// increase and fit the segment, as recovery checks (ensureOffsetInRange).
// A v2 batch's base offset and a legacy entry's offset must pass the last
// offset seen; the records of converted entries are checked one by one.
func (c *upgradeConverter) checkOffsets(b *logfmt.Batch) error {
	last := b.LastOffset()
	if d := last - c.base; d < 0 || d > 1<<31-1 {
		return logfmt.Corruptf(c.file, b.Pos, "offset %d does not fit the segment based at %d", last, c.base)
	}
	if first := b.EntryOffset(); first <= c.last {
		return logfmt.Corruptf(c.file, b.Pos, "offset %d does not follow offset %d", first, c.last)
	}
	return nil
}

// start opens the destination and copies the entries before pos, which were
// all at the target.
func (c *upgradeConverter) start(pos int64) error {
	w, err := c.open()
	if err != nil {
		return err
	}
	c.w = w
	c.batchesOut = c.batchesIn - 1
	buf := make([]byte, upgradeWriteChunk)
	n, err := io.CopyBuffer(w, io.NewSectionReader(c.r, 0, pos), buf)
	c.bytesOut += n
	if err != nil {
		return err
	}
	return c.tell()
}

func (c *upgradeConverter) tell() error {
	if c.wrote == nil {
		return nil
	}
	return c.wrote(c.bytesOut)
}

// convert rewrites one entry below the target.
func (c *upgradeConverter) convert(b *logfmt.Batch) error {
	if err := c.src.records(); err != nil {
		return err
	}
	src := b.Compression()
	out := c.rules.outCodec(src)
	wrapper := src != codec.None
	if wrapper {
		// A wrapper becomes its own set, never merged with its neighbours.
		if err := c.flushGroup(); err != nil {
			return err
		}
		// Its records compress about as they did: room for that up front
		// saves regrowing a large output, unless the output goes to the
		// file as it is compressed (addToGroup).
		if !c.spills() {
			c.out = slices.Grow(c.out, b.Size())
		}
	}
	for {
		r, err := c.src.nextRecord()
		if err != nil {
			return err
		}
		if r == nil {
			break
		}
		if d := r.Offset - c.base; d < 0 || d > 1<<31-1 {
			return logfmt.Corruptf(c.file, b.Pos, "record offset %d does not fit the segment based at %d", r.Offset, c.base)
		}
		if r.Offset <= c.last {
			return logfmt.Corruptf(c.file, b.Pos, "record offset %d does not follow offset %d", r.Offset, c.last)
		}
		c.last = r.Offset
		c.converted++
		if upgradeTamper != nil {
			upgradeTamper(r)
		}
		ts, typ := c.rules.stamp(r)
		if r.Magic == 0 && typ == logfmt.LogAppendTime {
			c.stamped++
		}
		if c.rules.toMagic == 1 && out == codec.None {
			var attr int8
			if typ == logfmt.LogAppendTime {
				attr = upgradeLATBit
			}
			c.out = logfmt.AppendLegacyMessage(c.out, 1, r.Offset, attr, ts, r.Key, r.Value)
			c.batchesOut++
			continue
		}
		if err := c.addToGroup(r, ts, typ, out, wrapper); err != nil {
			return err
		}
	}
	c.last = max(c.last, b.LastOffset())
	if wrapper {
		return c.flushGroup()
	}
	return nil
}

// addToGroup adds a record to the set being written, first closing that set
// when the record cannot share it: another codec or timestamp type, another
// LogAppendTime, a run at its size limit, or an offset delta past int32.
func (c *upgradeConverter) addToGroup(r *logfmt.Record, ts int64, typ logfmt.TimestampType, out codec.Type, wrapper bool) error {
	g := &c.group
	if g.n > 0 {
		full := !wrapper && (g.n >= upgradeRunRecords || g.bytes+len(r.Key)+len(r.Value) > upgradeRunBytes)
		if full || g.codec != out || g.tsType != typ || (typ == logfmt.LogAppendTime && g.ts != ts) || r.Offset-g.first > 1<<31-1 {
			if err := c.flushGroup(); err != nil {
				return err
			}
		}
	}
	var err error
	if g.n == 0 {
		// The builder takes the output over until flushGroup.
		g.codec, g.tsType, g.ts, g.first, g.bytes = out, typ, ts, r.Offset, 0
		if c.rules.toMagic == 1 {
			err = g.wrapper.Reset(c.out, logfmt.LegacyWrapperOptions{Magic: 1, Compression: out, TimestampType: typ, LogAppendTime: ts})
		} else {
			o := logfmt.DefaultBatchOptions(r.Offset)
			o.Compression, o.TimestampType = out, typ
			if typ == logfmt.LogAppendTime {
				o.MaxTimestamp = ts
			}
			err = g.batch.Reset(c.out, o)
			g.at, g.unspilt = c.bytesOut+int64(len(c.out)), 0
		}
		c.out = nil
	}
	g.n++
	g.bytes += len(r.Key) + len(r.Value)
	g.rec = logfmt.Record{Offset: r.Offset, Timestamp: ts, Key: r.Key, Value: r.Value}
	if err == nil {
		if c.rules.toMagic == 1 {
			err = g.wrapper.Append(&g.rec)
		} else {
			err = g.batch.Append(&g.rec)
		}
	}
	// A wrapper's batch goes to the file as it is compressed, so that a
	// large one is never held whole; the header is written last (flushGroup).
	if g.unspilt += len(r.Key) + len(r.Value); err == nil && wrapper && c.spills() && g.unspilt >= upgradeWriteChunk {
		g.unspilt = 0
		err = g.batch.Spill(countingWriter{c})
	}
	return err
}

// countingWriter writes to the converter's destination, counting the bytes.
type countingWriter struct{ c *upgradeConverter }

func (w countingWriter) Write(p []byte) (int, error) {
	n, err := w.c.w.Write(p)
	w.c.bytesOut += int64(n)
	return n, err
}

// flushGroup finishes the magic-1 wrapper or record batch being written and
// gives the output back.
func (c *upgradeConverter) flushGroup() error {
	g := &c.group
	if g.n == 0 {
		return nil
	}
	var err error
	if c.rules.toMagic == 1 {
		c.out, err = g.wrapper.Finish()
	} else {
		c.out, err = g.batch.Finish()
	}
	g.n = 0
	if err != nil {
		return err
	}
	c.batchesOut++
	if c.rules.toMagic >= 2 && g.batch.Spilled() {
		// The rest, then the header over the zeros Spill wrote, before the
		// verifier is told of the batch.
		if _, err := (countingWriter{c}).Write(c.out); err != nil {
			return err
		}
		c.out = nil
		if _, err := c.w.(io.WriterAt).WriteAt(g.batch.Header(), g.at); err != nil {
			return err
		}
		return c.tell()
	}
	return nil
}

// spills tells whether a batch can go to the destination before its header
// is known, which needs a destination that can write it there after.
func (c *upgradeConverter) spills() bool {
	_, ok := c.w.(io.WriterAt)
	return ok && c.rules.toMagic >= 2
}

// maybeWrite writes the output once there is enough of it, unless a
// builder has it.
func (c *upgradeConverter) maybeWrite() error {
	if len(c.out) < upgradeWriteChunk || c.group.n > 0 {
		return nil
	}
	return c.write()
}

func (c *upgradeConverter) write() error {
	if len(c.out) == 0 {
		return nil
	}
	n, err := c.w.Write(c.out)
	c.bytesOut += int64(n)
	c.out = c.out[:0]
	if cap(c.out) > 4*upgradeWriteChunk {
		c.out = nil // a large wrapper's: not kept for the small ones after it
	}
	if err != nil {
		return err
	}
	return c.tell()
}

// upgradeSameBytes compares keys or values, telling null from empty.
func upgradeSameBytes(a, b []byte) bool {
	return (a == nil) == (b == nil) && bytes.Equal(a, b)
}
