package verify

import (
	"fmt"
	"math"

	"github.com/logtool/logtool/logfmt"
)

// logCheck checks one .log-shaped file: a segment, a record set, a KRaft
// snapshot. It streams the file with logfmt.SegmentReader, so memory holds
// one read window and one batch.
type logCheck struct {
	c    *collector
	o    *Options
	it   *logfmt.RecordIter
	mem  *logfmt.Job // the job its reader holds large entries against
	file string

	// base is the segment's base offset, or noOffset for a file whose name
	// gives none (a record set): then only the order of offsets is checked.
	base int64
	// nextBase is the base offset of the next segment, math.MaxInt64 when
	// there is none.
	nextBase int64
	// prevLast is the last offset of the batch before this file's first (the
	// previous segment's), noOffset when none.
	prevLast int64
	// later is the number of segments after this one, which Kafka's
	// recovery deletes when it has to truncate this one.
	later int
	// live is true for the active segment of a log directory a running broker
	// holds: its end may be a write in progress or preallocated zeros.
	live bool
	// epochs, when not nil, is checked against each v2 batch's leader epoch.
	epochs *epochCheck
	// partition is the directory of a segment's partition, which salvage
	// takes; "" for a file that is no segment of one.
	partition string
	// damaged is set once a damaged range was reported.
	damaged bool
}

// logResult is what a logCheck learned about the file.
type logResult struct {
	size    int64
	batches int64
	records int64
	last    int64 // last offset of the last batch that passed its checks; noOffset when none
}

// run reads the whole file. The error is for I/O only; bad data becomes
// findings. Damage does not end the read: the scan steps over each damaged
// range to the next sound batch (logfmt.Scan, as salvage does), so every
// range is reported and every batch after it checked.
func (l *logCheck) run() (logResult, error) {
	f, err := logfmt.OpenSegment(l.file)
	if err != nil {
		return logResult{}, err
	}
	defer f.Close()
	f.Job = l.mem
	workers := 1
	if l.o.Deep {
		workers = l.o.batchWorkers
	}
	seg := logfmt.NewDeepReader(f.SegmentReader, workers)
	seg.MaxRecordBytes = l.o.MaxRecordBytes
	defer seg.Close()
	sc := logfmt.NewScan(seg, f.Size())
	res := logResult{size: f.Size(), last: noOffset}
	prevLast := l.prevLast
	var reported int64
	for {
		more := sc.Next()
		if d := sc.Skipped(); d != nil {
			l.damage(d, sc.Batch(), res.size)
		}
		if !more {
			break
		}
		b := sc.Batch()
		res.batches++
		if ok, last := l.batch(b, prevLast, &res); ok {
			prevLast, res.last = last, last
		}
		if l.o.Progress != nil && seg.Pos()-reported >= 1<<20 {
			l.o.Progress(seg.Pos() - reported)
			reported = seg.Pos()
		}
	}
	if l.o.Progress != nil {
		l.o.Progress(res.size - reported)
	}
	return res, sc.Err()
}

// damage reports a range the scan stepped over, its cause first. Kafka's
// recovery truncates a segment at its first damage, so that one says what
// recovery does (a file whose name gives no base offset is not a segment
// recovery reads); a torn last batch is only one that nothing valid
// follows.
func (l *logCheck) damage(d *logfmt.Damage, next *logfmt.Batch, size int64) {
	recovery := ""
	if !l.damaged && l.base != noOffset {
		recovery = ", and " + l.recovery(size-d.From, d.From)
	}
	l.damaged = true
	// A zero tail loses nothing, and the end of a running broker's active
	// segment is a write in progress.
	if d.How != logfmt.EndZeroTail && !(l.live && !d.Resumes(size)) {
		l.salvageable()
	}
	// The cause's own position (a magic byte, a size field) when known.
	at := d.From
	if ce, ok := logfmt.AsCorrupt(d.Err); ok && ce.Pos >= d.From {
		at = ce.Pos
	}
	switch {
	case d.Resumes(size):
		code := CodeDamagedRange
		if d.Checksum {
			code = CodeCRCMismatch
		}
		l.c.problem(code, l.file, at, "%s; damaged range [%d,%d): %d bytes skipped, valid batches resume at offset %d / byte %d%s",
			d.Detail, d.From, d.To, d.To-d.From, next.EntryOffset(), d.To, recovery)
	case d.How == logfmt.EndTorn:
		l.end(CodeTornTail, d.From, "torn last batch: %s; a write was cut short%s", d.Detail, recovery)
	case d.How == logfmt.EndZeroTail && recovery != "":
		l.end(CodeZeroTail, d.From, "%s after the last batch: a preallocated or crash-zeroed tail, which a clean shutdown never leaves; readers stop at it, an append would land after it%s, but only after an unclean shutdown and past the recovery point",
			d.Detail, recovery)
	case d.How == logfmt.EndZeroTail:
		l.end(CodeZeroTail, d.From, "%s after the last batch: a preallocated or crash-zeroed tail, which a clean shutdown never leaves; readers stop at it, and an append would land after it", d.Detail)
	case d.Checksum:
		l.c.problem(CodeCRCMismatch, l.file, at, "%s; no valid batch follows it%s", d.Detail, recovery)
	default:
		l.c.problem(CodeDamagedTail, l.file, at, "%s; no valid batch follows it%s", d.Detail, recovery)
	}
}

// salvageable notes that salvage would keep more of the partition than
// Kafka's recovery does.
func (l *logCheck) salvageable() {
	if l.partition != "" {
		l.c.rep.Salvage = l.partition
	}
}

// recovery says what Kafka's recovery does about n bytes it cannot read
// from pos on.
func (l *logCheck) recovery(n, pos int64) string {
	s := fmt.Sprintf("recovery truncates the %d bytes from byte %d", n, pos)
	if l.later > 0 {
		s += fmt.Sprintf(" and deletes the %d later segments", l.later)
	}
	return s
}

// end reports how a segment ends when that is not cleanly.
func (l *logCheck) end(code Code, pos int64, format string, args ...any) {
	if l.live {
		l.c.info(code, l.file, pos, "active segment of a running broker: "+format, args...)
		return
	}
	l.c.problem(code, l.file, pos, format, args...)
}

// batch checks one batch. ok is false when it failed a check, in which case
// its offsets are not trusted for the checks of the batches after it.
func (l *logCheck) batch(b *logfmt.Batch, prevLast int64, res *logResult) (ok bool, last int64) {
	// The scan has validated the frame and checksum.
	first, last := b.EntryOffset(), b.LastOffset()
	if err := b.CheckHeader(); err != nil {
		l.salvageable()
		l.corrupt(CodeBatchInvalid, err, b.Pos)
		return false, 0
	}
	if l.epochs != nil && b.Magic() >= 2 {
		l.epochs.batch(l.file, b.Pos, first, b.Header().PartitionLeaderEpoch())
	}
	if l.o.Deep {
		var n int64
		var err error
		first, n, err = logfmt.CheckRecords(b, l.it, first, last)
		res.records += n
		if err != nil {
			l.salvageable()
			l.corrupt(CodeRecordsInvalid, err, b.Pos)
			return false, 0
		}
	}
	return l.offsets(b, first, last, prevLast), last
}

// offsets checks where a batch's offsets lie. Every comparison is between
// int64s that cannot overflow: base and prevLast are noOffset or real offsets.
func (l *logCheck) offsets(b *logfmt.Batch, first, last, prevLast int64) bool {
	switch {
	case l.base != noOffset && first < l.base:
		l.c.problem(CodeOffsetBelowBase, l.file, b.Pos, "batch starts at offset %d, below the segment's base offset %d", first, l.base)
	case prevLast != noOffset && first <= prevLast:
		l.c.problem(CodeOffsetOrder, l.file, b.Pos, "batch starts at offset %d, but the batch before it ends at offset %d: offsets must increase", first, prevLast)
	case l.base != noOffset && uint64(last)-uint64(l.base) > math.MaxInt32:
		l.c.problem(CodeOffsetOverflow, l.file, b.Pos, "batch ends at offset %d, beyond the 2^31 offsets after the segment's base offset %d that an index entry can hold (Kafka splits such a segment)", last, l.base)
	case last >= l.nextBase:
		l.c.problem(CodeOffsetNextBase, l.file, b.Pos, "batch ends at offset %d, but the next segment starts at offset %d", last, l.nextBase)
	default:
		return true
	}
	return false
}

// corrupt reports a parser's error about the batch at pos.
func (l *logCheck) corrupt(code Code, err error, pos int64) {
	ce, ok := logfmt.AsCorrupt(err)
	if !ok {
		l.c.problem(code, l.file, pos, "%v", err)
		return
	}
	msg := ce.Msg
	if ce.Err != nil {
		msg += ": " + ce.Err.Error()
	}
	if ce.Pos >= 0 {
		pos = ce.Pos
	}
	l.c.problem(code, l.file, pos, "%s", msg)
}

func (o *Options) recordIter() *logfmt.RecordIter {
	return &logfmt.RecordIter{MaxRecordBytes: o.MaxRecordBytes}
}

// recordSet verifies a .log-shaped file that is not part of a partition
// being verified: a record set, a KRaft snapshot, a segment file given with
// a name that says nothing about the rest.
func recordSet(c *collector, o *Options, it *logfmt.RecordIter, mem *logfmt.Job, path string, base int64) (logResult, error) {
	l := &logCheck{c: c, o: o, it: it, mem: mem, file: path, base: base, nextBase: math.MaxInt64, prevLast: noOffset}
	it.File = path
	return l.run()
}
