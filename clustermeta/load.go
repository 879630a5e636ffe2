package clustermeta

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/codec"
	"github.com/logtool/logtool/logfmt/kraft"
	"github.com/logtool/logtool/logfmt/layout"
)

// PartitionDir is the name of the metadata log's directory in a log dir.
const PartitionDir = "__cluster_metadata-0"

// Load replays the metadata directory dir as a broker's loader does: the
// newest snapshot (<end offset>-<epoch>.checkpoint), then the log records
// from the snapshot's end offset on, in offset order; the log alone when
// there is no snapshot. Metadata transactions apply when they end, and not
// at all when they abort or are still open at the end of the log.
//
// A torn or zero-filled end of the last segment, or a last batch that fails
// its checksum with nothing valid after it, is what a crashed controller
// leaves: Kafka's recovery truncates it, so Load reads the valid prefix and
// says so in Image.Notes. Any other damage, a gap in the offsets, or a
// record that contradicts the state is a *logfmt.CorruptError naming the
// file and byte position.
func Load(dir string) (*Image, error) {
	part, err := layout.ReadPartition(dir)
	if err != nil {
		return nil, err
	}
	l := &loader{im: newImage(dir), unknown: map[uint32]int{}}
	var segs []layout.Segment
	for _, s := range part.Segments {
		if s.Log == "" {
			l.note("%s: index files without a .log; read as absent, as a broker deletes them", layout.SegmentName(s.Base, ""))
			continue
		}
		segs = append(segs, s)
	}
	snap, snapEnd := newestSnapshot(part.Others)
	if snap == "" && len(segs) == 0 {
		return nil, fmt.Errorf("%s: no snapshot and no log segment: nothing to replay", dir)
	}
	if snap != "" {
		if err := l.readSnapshot(snap); err != nil {
			return nil, err
		}
		l.im.Snapshot, l.im.SnapshotEnd = snap, snapEnd
	}
	l.im.EndOffset = snapEnd
	if err := l.readLog(segs, snapEnd); err != nil {
		return nil, err
	}
	if l.txn != nil {
		l.note("the metadata transaction begun at offset %d has not ended: its records are not applied, as a broker does not publish them", l.txn.offset)
	}
	if len(l.unknown) > 0 {
		var s []string
		for _, t := range slices.Sorted(maps.Keys(l.unknown)) {
			s = append(s, fmt.Sprintf("%d (%d)", t, l.unknown[t]))
		}
		l.note("records of types this logtool does not know were skipped: type (count) %s", strings.Join(s, ", "))
	}
	return l.im, nil
}

// newestSnapshot picks the snapshot with the greatest end offset, then
// epoch, as Kafka's KafkaMetadataLog does; partial and deleted ones are not
// snapshots.
func newestSnapshot(others []string) (path string, end int64) {
	var best layout.FileName
	for _, o := range others {
		fn := layout.ParseFileName(filepath.Base(o))
		if fn.Kind != layout.KRaftSnapshot || fn.Leftover != "" {
			continue
		}
		if path == "" || cmp.Or(cmp.Compare(fn.Base, best.Base), cmp.Compare(fn.Epoch, best.Epoch)) > 0 {
			path, best = o, fn
		}
	}
	if path == "" {
		return "", 0
	}
	return path, best.Base
}

type loader struct {
	im      *Image
	dec     kraft.Decoder
	it      logfmt.RecordIter
	txn     *txnStart
	unknown map[uint32]int   // record types not known, with counts
	segs    []layout.Segment // the log segments
}

// txnStart is where an open metadata transaction began.
type txnStart struct {
	seg    int   // index in the segments read
	pos    int64 // position of the batch holding the BeginTransactionRecord
	offset int64 // its offset
}

func (l *loader) note(format string, args ...any) {
	l.im.Notes = append(l.im.Notes, fmt.Sprintf(format, args...))
}

// readSnapshot applies every record of a snapshot. Kafka reads the first
// batch as the header; a snapshot is renamed into place only after its
// footer is written, so one without it is incomplete.
func (l *loader) readSnapshot(path string) error {
	f, err := logfmt.OpenSegment(path)
	if err != nil {
		return err
	}
	defer f.Close()
	first, footer := true, false
	for f.Next() {
		b := f.Batch()
		if err := validate(b, path); err != nil {
			return err
		}
		if footer {
			return logfmt.Corruptf(path, b.Pos, "batch after the snapshot footer")
		}
		if err := l.reset(b, path); err != nil {
			return err
		}
		if b.IsControl() {
			for l.it.Next() {
				_, t, err := logfmt.ParseControlKey(l.it.Record().Key)
				if err != nil {
					return logfmt.Corruptf(path, b.Pos, "control record: %v", err)
				}
				switch {
				case first && t != logfmt.ControlSnapshotHeader:
					return logfmt.Corruptf(path, b.Pos, "the first control record is %s, not a snapshot header", t)
				case t == logfmt.ControlSnapshotFooter:
					footer = true
				}
				first = false
			}
			if err := l.it.Err(); err != nil {
				return err
			}
			continue
		}
		if first {
			return logfmt.Corruptf(path, b.Pos, "the snapshot does not start with a header batch")
		}
		pos := positions(b)
		for l.it.Next() {
			r := l.it.Record()
			l.im.Records++
			if err := l.record(r, path, pos.next(r)); err != nil {
				return err
			}
		}
		if err := l.it.Err(); err != nil {
			return err
		}
	}
	if err := f.Err(); err != nil {
		return err
	}
	if f.End() != logfmt.EndClean {
		return logfmt.Corruptf(path, f.Pos(), "incomplete snapshot: %s", f.EndDetail())
	}
	if !footer {
		return logfmt.Corruptf(path, f.Pos(), "incomplete snapshot: no footer")
	}
	return nil
}

// readLog applies the log records from offset from on.
func (l *loader) readLog(segs []layout.Segment, from int64) error {
	if len(segs) == 0 {
		if l.im.Snapshot != "" {
			l.note("no log segment: the state is the snapshot's, as of offset %d", from)
		}
		return nil
	}
	if segs[0].Base > from {
		return logfmt.Corruptf(segs[0].Log, 0, "the log starts at offset %d, but %s: the records from offset %d are missing",
			segs[0].Base, snapshotWords(l.im.Snapshot, from), from)
	}
	l.segs = segs
	next := segs[0].Base
	return l.scan(0, 0, func(seg int, b *logfmt.Batch) error {
		path := segs[seg].Log
		if base := b.Header().BaseOffset(); base != next {
			return logfmt.Corruptf(path, b.Pos, "batch at offset %d where offset %d was expected", base, next)
		}
		next = b.LastOffset() + 1
		if next <= from || b.IsControl() {
			l.im.EndOffset = max(l.im.EndOffset, next)
			return nil
		}
		if err := l.reset(b, path); err != nil {
			return err
		}
		pos := positions(b)
		for l.it.Next() {
			r := l.it.Record()
			at := pos.next(r)
			if r.Offset < from {
				continue
			}
			l.im.Records++
			if err := l.logRecord(seg, b.Pos, r, path, at); err != nil {
				return err
			}
		}
		if err := l.it.Err(); err != nil {
			return err
		}
		l.im.EndOffset = next
		return nil
	})
}

func snapshotWords(snap string, end int64) string {
	if snap == "" {
		return "there is no snapshot"
	}
	return fmt.Sprintf("the newest snapshot ends at offset %d", end)
}

// logRecord handles a record of the log, where metadata transactions
// (KIP-868) gather records that apply together or not at all.
func (l *loader) logRecord(seg int, batchPos int64, r *logfmt.Record, path string, pos int64) error {
	typ, err := recordType(r, path, pos)
	if err != nil {
		return err
	}
	switch typ {
	case kraft.TypeBeginTransaction:
		if l.txn != nil {
			return logfmt.Corruptf(path, pos, "BeginTransactionRecord at offset %d inside the transaction begun at offset %d", r.Offset, l.txn.offset)
		}
		l.txn = &txnStart{seg: seg, pos: batchPos, offset: r.Offset}
	case kraft.TypeEndTransaction, kraft.TypeAbortTransaction:
		if l.txn == nil {
			return logfmt.Corruptf(path, pos, "%s at offset %d without a BeginTransactionRecord", kraft.TypeNames[typ], r.Offset)
		}
		t := l.txn
		l.txn = nil
		if typ == kraft.TypeEndTransaction {
			return l.replayTransaction(t, r.Offset)
		}
	default:
		if l.txn != nil {
			return nil // applied when the transaction ends
		}
		return l.applyRecord(r, typ, path, pos)
	}
	return nil
}

// replayTransaction applies the records between a transaction's begin and
// end, reading them again: a transaction can be as large as a whole
// cluster's metadata (ZooKeeper migration), too large to hold.
func (l *loader) replayTransaction(t *txnStart, end int64) error {
	var it logfmt.RecordIter
	stop := errors.New("end of transaction")
	err := l.scan(t.seg, t.pos, func(seg int, b *logfmt.Batch) error {
		if b.Header().BaseOffset() >= end {
			return stop
		}
		if b.IsControl() || b.LastOffset() <= t.offset {
			return nil
		}
		path := l.segs[seg].Log
		it.File = path
		if err := it.Reset(b); err != nil {
			return err
		}
		pos := positions(b)
		for it.Next() {
			r := it.Record()
			at := pos.next(r)
			if r.Offset <= t.offset {
				continue
			}
			if r.Offset >= end {
				return stop
			}
			if err := l.record(r, path, at); err != nil {
				return err
			}
		}
		return it.Err()
	})
	if errors.Is(err, stop) {
		return nil
	}
	return err
}

// scan calls fn for each batch of the log from segment seg, position pos
// on, after checking its frame and checksum. The end of the last segment
// may be torn by a crash: there, an entry cut short, zeros, or a bad batch
// with nothing valid after it end the scan with a note, as Kafka's recovery
// truncates them. Anywhere else they are errors.
func (l *loader) scan(seg int, pos int64, fn func(seg int, b *logfmt.Batch) error) error {
	for ; seg < len(l.segs); seg, pos = seg+1, 0 {
		path, last := l.segs[seg].Log, seg == len(l.segs)-1
		f, err := logfmt.OpenSegment(path)
		if err != nil {
			return err
		}
		f.SeekTo(pos)
		err = l.scanSegment(f, last, func(b *logfmt.Batch) error { return fn(seg, b) })
		f.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

func (l *loader) scanSegment(f *logfmt.SegmentFile, last bool, fn func(b *logfmt.Batch) error) error {
	path := f.File()
	for f.Next() {
		b := f.Batch()
		if err := validate(b, path); err != nil {
			f.SeekTo(b.Pos) // Resync looks past the reader's position
			if last && !f.Resync() {
				l.note("%s: the last batch, at byte %d, is damaged (%v) and nothing valid follows: a crash left it, and the %d bytes from there were not read, as a broker's recovery truncates them",
					path, b.Pos, err, f.Size()-b.Pos)
				return nil
			}
			return err
		}
		if err := fn(b); err != nil {
			return err
		}
	}
	if err := f.Err(); err != nil {
		ce, ok := logfmt.AsCorrupt(err)
		if !ok || !last {
			return err
		}
		at := ce.Pos
		if f.Resync() {
			return err
		}
		l.note("%s: %v, and nothing valid follows: a crash left it, and the bytes from %d on were not read, as a broker's recovery truncates them", path, err, at)
		return nil
	}
	switch f.End() {
	case logfmt.EndTorn, logfmt.EndZeroTail:
		at, detail := f.Pos(), f.EndDetail()
		if !last {
			return logfmt.Corruptf(path, at, "%s in a segment that is not the last", detail)
		}
		// A length field damaged in the middle also reads as torn: a valid
		// batch after it tells the two apart.
		if f.End() == logfmt.EndTorn && f.Resync() {
			return logfmt.Corruptf(path, at, "%s, yet a valid batch follows at byte %d", detail, f.Pos())
		}
		l.note("%s: %s; a crash left it, and it was not read, as a broker's recovery truncates it", path, detail)
	}
	return nil
}

// validate is what Kafka's recovery checks of each batch.
func validate(b *logfmt.Batch, path string) error {
	if b.Magic() != 2 {
		return logfmt.Corruptf(path, b.Pos+logfmt.MagicOffset, "magic %d in a metadata log, which only holds magic-2 batches", b.Magic())
	}
	if err := b.Validate(); err != nil {
		return logfmt.WithFile(err, path, 0)
	}
	return nil
}

func (l *loader) reset(b *logfmt.Batch, path string) error {
	l.it.File = path
	return l.it.Reset(b)
}

// recordPos gives the file position of each record of a batch, asked for
// every record in order: exact in an uncompressed batch, the batch's
// position in a compressed one.
type recordPos struct {
	p          int64
	compressed bool
}

func positions(b *logfmt.Batch) recordPos {
	if b.Compression() != codec.None {
		return recordPos{b.Pos, true}
	}
	return recordPos{b.Pos + logfmt.V2HeaderSize, false}
}

func (rp *recordPos) next(r *logfmt.Record) int64 {
	at := rp.p
	if !rp.compressed {
		rp.p += int64(r.Size)
	}
	return at
}

// record decodes and applies a metadata record outside any transaction
// logic.
func (l *loader) record(r *logfmt.Record, path string, pos int64) error {
	typ, err := recordType(r, path, pos)
	if err != nil {
		return err
	}
	return l.applyRecord(r, typ, path, pos)
}

// recordType reads the type in a metadata record's frame.
func recordType(r *logfmt.Record, path string, pos int64) (uint32, error) {
	if r.Value == nil {
		return 0, logfmt.Corruptf(path, pos, "metadata record at offset %d has no value", r.Offset)
	}
	typ, _, _, err := kraft.ParseFrame(r.Value)
	if err != nil {
		return 0, &logfmt.CorruptError{File: path, Pos: pos, Msg: fmt.Sprintf("metadata record at offset %d", r.Offset), Err: err}
	}
	return typ, nil
}

// applyRecord decodes a record of type typ and applies it to the image; types the
// image does not keep are not decoded, only counted when unknown.
func (l *loader) applyRecord(r *logfmt.Record, typ uint32, path string, pos int64) error {
	if !applies(typ) {
		if _, ok := kraft.TypeNames[typ]; !ok {
			l.unknown[typ]++
		}
		return nil
	}
	rec, err := l.dec.Decode(r.Value)
	if err == nil {
		err = l.im.apply(rec)
	}
	if err != nil {
		return &logfmt.CorruptError{File: path, Pos: pos, Msg: fmt.Sprintf("metadata record at offset %d", r.Offset), Err: err}
	}
	return nil
}
