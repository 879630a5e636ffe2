// Package salvage copies what is sound in a damaged partition directory into
// a new one that a broker loads cleanly, and says exactly what was left
// behind.
//
// Every batch that passes the strict checks verify applies (Batch.Validate,
// CheckHeader and logfmt.CheckRecords: framing, checksum, header fields,
// every record, inner messages, control records) is copied byte for byte,
// into a segment with the base offset of the segment it came from. Damage
// is skipped with logfmt.Scan, the scan verify reports damage with: after a
// batch whose frame or checksum fails, the next position where a frame with
// a valid checksum starts; a batch whose checksum holds but whose content
// does not is skipped whole. A torn end is left out too, and so are zeros
// ending a segment: lost data in an older segment, but no data at all after
// the last batch of the last one, which a broker preallocates
// (file.preallocate) and trims only when it rolls. Each copied .log keeps
// its source's modification time, which is a segment's age for retention
// when its batches carry no timestamp.
//
// Offsets are never reused or invented. A batch is kept only when its
// offsets lie above every offset kept before it, at or above its segment's
// base offset, below the next segment's base, and within 2^31 of its base.
// One refinement tells a batch whose base offset (outside the checksum)
// jumped ahead from the batches after it: when a batch leaves a gap after
// what was kept, and the next sound batch overlaps it and starts exactly
// where it would end had it followed what was kept, that batch is the
// damaged one and is left out instead of those that follow. The log end offset is kept too: when the last segments
// lost their tail, an empty segment at the highest end offset the source
// shows (the base of its last segment, the high watermark and recovery point
// of its log directory's checkpoints) keeps a broker from giving the lost
// offsets to new records.
//
// The new directory gets .index and .timeindex as Kafka's recovery writes
// them (index.Recovery), a .txnindex where a transaction was aborted, and a
// producer snapshot at the log end, both from the producer-state rules of
// recovery (logseg.ProducerState) over the kept batches. leader-epoch-
// checkpoint and partition.metadata are carried over when they parse: the
// leader epochs without entries at or past the new log end, plus one for
// each newer epoch the kept batches carry (as recovery adds it); without a
// readable source file, the epochs are rebuilt from the batches alone.
//
// The output is written in a staging directory next to it, named like a
// partition directory Kafka deletes ("<name>.salvage<digits>-delete"),
// every file through a temporary name, fsynced and renamed, then the
// directory renamed into place without replacing anything. A crash leaves
// the staging directory, which a broker loads as a deleted topic's and
// deletes, and which the next salvage to the same output removes. No file
// in it is ever empty or partial under its own name: a broker that loads
// the staging directory reads its partition.metadata and
// leader-epoch-checkpoint, and an unreadable one takes the whole log
// directory offline.
package salvage

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/logtool/logtool/index"
	refusal "github.com/logtool/logtool/internal/refuse"
	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/checkpoint"
	"github.com/logtool/logtool/logfmt/codec"
	"github.com/logtool/logtool/logfmt/layout"
	"github.com/logtool/logtool/logfmt/logseg"
	"github.com/logtool/logtool/logfmt/snapshot"
)

// ErrExists is wrapped by the error when the output already exists.
var ErrExists = refusal.New("the output directory already exists; salvage writes a new one and never replaces anything")

// Options shape a salvage.
type Options struct {
	// Progress, when set, is called with the number of source .log bytes
	// read since its last call.
	Progress func(n int64)
	// MaxRecordBytes bounds one record read from a compressed batch
	// (logfmt.RecordIter); 0 means the default.
	MaxRecordBytes int
}

// Lost is a byte range of a source segment that was not copied.
type Lost struct {
	Segment  string // the source .log
	Position int64  // first byte
	End      int64  // the byte after the last
	Batches  int    // batches that framed in it and were refused (0: no frame)
	// FromOffset and ToOffset bound the offsets no kept batch holds around
	// the range, within its segment: lost to the damage, or removed before
	// by compaction. FromOffset is -1 when there are none; ToOffset is -1
	// when the range ends the log and its end is not known.
	FromOffset, ToOffset int64
	Reason               string // why its first byte was refused
}

// Segment is what became of one source segment.
type Segment struct {
	Source      string
	Base        int64
	Bytes       int64 // source size
	KeptBatches int64
	KeptRecords int64
	KeptBytes   int64
	LostBytes   int64
	// ZeroTail is the size of the zeros after the last batch of the last
	// segment: its preallocated space, not data, so not lost.
	ZeroTail int64
}

// Report is what a salvage did.
type Report struct {
	Source, Out    string
	Segments       []Segment
	Lost           []Lost
	LogStartOffset int64
	LogEndOffset   int64
	// EmptyEndSegment is true when an empty segment was added at the log
	// end offset, which the source's damaged end would otherwise lose.
	EmptyEndSegment bool
	LeaderEpochs    string // what became of leader-epoch-checkpoint
	PartitionMeta   string // what became of partition.metadata
	// Skipped are source files that were neither copied nor rebuilt.
	Skipped []string

	KeptBatches, KeptRecords, KeptBytes, LostBytes int64
	ZeroTail                                       int64 // the last segment's
}

// Partition salvages the partition directory src into the new directory out.
func Partition(src, out string, o Options) (*Report, error) {
	p, err := layout.ReadPartition(src)
	if err != nil {
		return nil, err
	}
	if err := refuse(p, out); err != nil {
		return nil, err
	}
	parent, name := filepath.Dir(filepath.Clean(out)), filepath.Base(filepath.Clean(out))
	if err := safefile.MkdirAllDurable(parent, 0o755); err != nil {
		return nil, err
	}
	if err := removeStages(parent, name); err != nil {
		return nil, err
	}
	stage, err := safefile.CreateStage(parent, name+stageInfix+"*"+stageSuffix, layout.StageFile)
	if err != nil {
		return nil, err
	}
	s := &salvager{o: o, p: p, stage: stage.Dir, rep: &Report{Source: src, Out: out}, state: logseg.NewProducerState(), lastKept: -1}
	if err := s.run(); err != nil {
		return s.rep, removing(stage, err)
	}
	if err := stage.Install(out); err != nil {
		if errors.Is(err, fs.ErrExist) {
			err = fmt.Errorf("%s: %w", out, ErrExists)
		}
		return s.rep, removing(stage, err)
	}
	return s.rep, nil
}

// removing removes the stage of a salvage that failed with err, and says
// so when it cannot.
func removing(stage *safefile.Stage, err error) error {
	if rerr := stage.Remove(); rerr != nil {
		return errors.Join(err, rerr)
	}
	return err
}

// removeStages removes the staging directories that killed salvages to
// the output name left in parent.
func removeStages(parent, name string) error {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Type().IsDir() && isStage(e.Name(), name) {
			if err := safefile.RemoveStage(filepath.Join(parent, e.Name()), layout.StageFile); err != nil {
				return err
			}
		}
	}
	return nil
}

// isStage tells the name of a staging directory of the output name, as
// os.MkdirTemp makes it from the pattern name+".salvage*-delete".
func isStage(dir, name string) bool {
	digits, ok := strings.CutPrefix(dir, name+stageInfix)
	if !ok {
		return false
	}
	if digits, ok = strings.CutSuffix(digits, stageSuffix); !ok || digits == "" {
		return false
	}
	return strings.Trim(digits, "0123456789") == ""
}

// The staging directory's name around os.MkdirTemp's random digits.
const stageInfix, stageSuffix = ".salvage", "-delete"

// refuse checks what must hold before anything is written: the output does
// not exist, and the source holds no finished segment replacement. Locks
// are the caller's (internal/target): the source must not change while it
// is read.
func refuse(p *layout.Partition, out string) error {
	if _, err := os.Lstat(out); err == nil {
		return fmt.Errorf("%s: %w", out, ErrExists)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	// A .swap file with no .cleaned beside it is a finished replacement
	// that a broker's loader completes: its data may be the only copy.
	var swap, cleaned bool
	for _, l := range p.Leftovers {
		switch layout.ParseFileName(filepath.Base(l)).Leftover {
		case layout.SwapSuffix:
			swap = true
		case layout.CleanedSuffix:
			cleaned = true
		}
	}
	if swap && !cleaned {
		return fmt.Errorf("%s: an interrupted segment replacement (.swap files) holds data a broker would load; copy the directory and run logtool reindex on the copy, which completes it, then salvage the copy", p.Path)
	}
	return nil
}

// salvager is the state of one Partition call.
type salvager struct {
	o     Options
	p     *layout.Partition
	stage string
	rep   *Report
	it    logfmt.RecordIter
	peekI logfmt.RecordIter
	state *logseg.ProducerState

	lastKept int64 // last offset kept, -1 before any
	pending  []int // indexes in rep.Lost waiting for the next kept offset
	epochs   []checkpoint.EpochEntry
	aborted  []index.AbortedTxn // of the segment being written
}

func (s *salvager) run() error {
	var logs []layout.Segment
	for _, seg := range s.p.Segments {
		if seg.Log != "" {
			logs = append(logs, seg)
		}
	}
	s.readEpochs()
	for i, seg := range logs {
		next := int64(math.MaxInt64)
		if i+1 < len(logs) {
			next = logs[i+1].Base
		}
		if err := s.segment(seg, next); err != nil {
			return err
		}
	}
	if len(logs) > 0 {
		s.rep.LogStartOffset = logs[0].Base
		s.rep.LogEndOffset = max(s.lastKept+1, logs[len(logs)-1].Base)
		if hint := s.endHint(); hint > s.rep.LogEndOffset {
			s.rep.LogEndOffset, s.rep.EmptyEndSegment = hint, true
			if err := s.emptySegment(hint); err != nil {
				return err
			}
		}
	}
	for _, i := range s.pending {
		s.rep.Lost[i].ToOffset = -1
	}
	if err := s.writeEpochs(); err != nil {
		return err
	}
	if err := s.copyMetadata(); err != nil {
		return err
	}
	if len(logs) > 0 {
		snap := filepath.Join(s.stage, layout.SegmentName(s.rep.LogEndOffset, layout.SnapshotExt))
		if err := writeNew(snap, snapshot.Append(nil, s.state.Snapshot())); err != nil {
			return err
		}
	}
	// A link is never followed: what it points at is not the partition's.
	for _, f := range slices.Concat(s.p.Others, s.p.Leftovers, s.p.Symlinks) {
		switch filepath.Base(f) {
		case layout.LeaderEpochCheckpointFile, layout.PartitionMetadataFile:
		default:
			s.rep.Skipped = append(s.rep.Skipped, f)
		}
	}
	return nil
}

// segment copies the sound batches of one source segment.
func (s *salvager) segment(seg layout.Segment, nextBase int64) error {
	src, err := logfmt.OpenSegment(seg.Log, logfmt.ReadAheadWindows)
	if err != nil {
		return err
	}
	defer src.Close()
	peek, err := safefile.Open(seg.Log)
	if err != nil {
		return err
	}
	defer peek.Close()
	fi, err := peek.Stat()
	if err != nil {
		return err
	}
	w, err := s.create(seg.Base)
	if err != nil {
		return err
	}
	defer w.Abort()
	sr := Segment{Source: seg.Log, Base: seg.Base, Bytes: src.Size()}
	s.it.File, s.peekI.File = seg.Log, seg.Log
	s.it.MaxRecordBytes, s.peekI.MaxRecordBytes = s.o.MaxRecordBytes, s.o.MaxRecordBytes
	var lost *Lost
	drop := func(pos int64, reason string, batch bool) {
		if lost == nil {
			s.rep.Lost = append(s.rep.Lost, Lost{Segment: seg.Log, Position: pos, Reason: reason,
				FromOffset: max(s.lastKept+1, seg.Base), ToOffset: nextBase - 1})
			s.pending = append(s.pending, len(s.rep.Lost)-1)
			lost = &s.rep.Lost[len(s.rep.Lost)-1]
		}
		if batch {
			lost.Batches++
		}
	}
	// The scan steps over what does not frame with a checksum that holds;
	// a range stays open until a batch is kept, as what is found there may
	// be refused too (a message of a compressed wrapper stored verbatim
	// frames well).
	sc := logfmt.NewScan(src, src.Size())
	reported := int64(0)
	for {
		if s.o.Progress != nil && src.Pos()-reported >= 1<<20 {
			s.o.Progress(src.Pos() - reported)
			reported = src.Pos()
		}
		ok := sc.Next()
		switch d := sc.Skipped(); {
		case d != nil && d.How == logfmt.EndZeroTail && nextBase == math.MaxInt64:
			// The active segment's preallocated space: a broker trims a
			// segment when it rolls.
			sr.ZeroTail = d.To - d.From
			s.rep.ZeroTail = sr.ZeroTail
		case d != nil:
			reason := d.Detail
			if d.How == logfmt.EndTorn {
				reason = "torn last batch: " + reason
			}
			drop(d.From, reason, false)
			lost.End = d.To
		}
		if !ok {
			if err := sc.Err(); err != nil {
				return err
			}
			break
		}
		b := sc.Batch()
		first, last, n, why, err := s.check(b, &s.it, seg.Base, nextBase)
		if err != nil {
			return err
		}
		if why == "" && first > s.lastKept+1 && first != seg.Base {
			if why, err = s.outlier(peek, src.Size(), b, seg.Base, nextBase, first, last); err != nil {
				return err
			}
		}
		if why == "" {
			if why, err = s.keep(w, b, first, last, n, &sr); err != nil {
				return err
			}
		}
		if why != "" {
			// Its frame is sound but its bytes may still hold sound
			// frames: look inside too.
			drop(b.Pos, why, true)
			sc.Refuse()
			continue
		}
		lost = nil
	}
	if s.o.Progress != nil {
		s.o.Progress(src.Size() - reported)
	}
	for _, l := range s.rep.Lost {
		if l.Segment == seg.Log {
			sr.LostBytes += l.End - l.Position
		}
	}
	s.rep.LostBytes += sr.LostBytes
	s.rep.Segments = append(s.rep.Segments, sr)
	return w.Finish(s.aborted, fi.ModTime())
}

// check applies the strict batch checks and the offset rules to a batch whose
// checksum holds, and returns why it cannot be kept ("" when it can). A
// batch too large to check is not damage, and stops the salvage rather than
// be dropped unread.
func (s *salvager) check(b *logfmt.Batch, it *logfmt.RecordIter, base, nextBase int64) (first, last, records int64, why string, fatal error) {
	first, last = b.EntryOffset(), b.LastOffset()
	err := b.CheckHeader()
	if err == nil {
		first, records, err = logfmt.CheckRecords(b, it, first, last)
	}
	switch {
	case errors.Is(err, codec.ErrTooLarge):
		return 0, 0, 0, "", logfmt.WithFile(fmt.Errorf("%w; its checksum holds, and salvage drops no batch it cannot check", err), it.File, 0)
	case err != nil:
		return 0, 0, 0, message(err), nil
	case first <= s.lastKept:
		why = fmt.Sprintf("batch of offsets %d to %d goes back to or before offset %d, already kept", first, last, s.lastKept)
	case first < base:
		why = fmt.Sprintf("batch of offsets %d to %d starts below its segment's base offset %d", first, last, base)
	case last >= nextBase:
		why = fmt.Sprintf("batch of offsets %d to %d reaches the next segment's base offset %d", first, last, nextBase)
	case last-base > math.MaxInt32:
		why = fmt.Sprintf("batch ends at offset %d, beyond the 2^31 offsets an index of a segment based at %d holds", last, base)
	}
	return first, last, records, why, nil
}

// outlier looks at the sound batch after b, which leaves a gap after what
// was kept: when that batch overlaps b and starts exactly where b would end
// if b followed what was kept, b's base offset (outside the checksum) is
// the damaged one, and keeping b would drop the batches after it.
func (s *salvager) outlier(f *os.File, size int64, b *logfmt.Batch, base, nextBase, first, last int64) (string, error) {
	r := logfmt.NewSegmentReader(f, size, "")
	r.SeekTo(b.Pos + int64(b.Size()))
	if !r.Next() || r.Batch().Validate() != nil {
		return "", nil
	}
	next, _, _, why, err := s.check(r.Batch(), &s.peekI, base, nextBase)
	if err != nil || why != "" || next > last || next != max(s.lastKept+1, base)+last-first+1 {
		return "", err
	}
	return fmt.Sprintf("batch of offsets %d to %d jumps ahead of offset %d kept: the batch after it starts at offset %d, where this one would end if it followed what was kept",
		first, last, s.lastKept, next), nil
}

// keep copies a batch and feeds the rules that rebuild the other files. A
// batch the producer state refuses, as recovery would (a non-transactional
// batch of a producer whose transaction's marker was lost), is not kept:
// why says so.
func (s *salvager) keep(w *logseg.Writer, b *logfmt.Batch, first, last, records int64, sr *Segment) (why string, err error) {
	t, aborted, err := s.state.Apply(b, &s.it)
	if err != nil {
		if _, ok := logfmt.AsCorrupt(err); ok {
			return message(err), nil
		}
		return "", err
	}
	if aborted {
		s.aborted = append(s.aborted, t)
	}
	if err := w.Append(b.Data); err != nil {
		return "", err
	}
	for _, i := range s.pending {
		s.rep.Lost[i].ToOffset = min(s.rep.Lost[i].ToOffset, first-1)
		if s.rep.Lost[i].ToOffset < s.rep.Lost[i].FromOffset {
			s.rep.Lost[i].FromOffset, s.rep.Lost[i].ToOffset = -1, -1
		}
	}
	s.pending = s.pending[:0]
	s.lastKept = last
	sr.KeptBatches++
	sr.KeptBytes += int64(b.Size())
	s.rep.KeptBatches++
	s.rep.KeptBytes += int64(b.Size())
	if b.Magic() >= 2 {
		h := b.Header()
		if e := h.PartitionLeaderEpoch(); e >= 0 && (len(s.epochs) == 0 || e > s.epochs[len(s.epochs)-1].Epoch) {
			s.epochs = append(s.epochs, checkpoint.EpochEntry{Epoch: e, StartOffset: first})
		}
	}
	sr.KeptRecords += records
	s.rep.KeptRecords += records
	return "", nil
}

// endHint is the highest log end offset the source's log directory knows
// of for this partition: its high watermark and recovery point.
func (s *salvager) endHint() int64 {
	hint := int64(-1)
	for _, name := range []string{layout.ReplicationOffsetCheckpointFile, layout.RecoveryPointCheckpointFile} {
		if off, ok, err := logseg.RootOffset(s.p, name); err == nil && ok {
			hint = max(hint, off)
		}
	}
	return hint
}

func (s *salvager) emptySegment(base int64) error {
	w, err := s.create(base)
	if err != nil {
		return err
	}
	defer w.Abort()
	return w.Finish(nil, time.Time{})
}

// readEpochs takes the source's leader epochs when they read and increase
// as Kafka keeps them.
func (s *salvager) readEpochs() {
	path := filepath.Join(s.p.Path, layout.LeaderEpochCheckpointFile)
	f, err := safefile.Open(path)
	if err != nil {
		s.rep.LeaderEpochs = "rebuilt from the batches (no leader-epoch-checkpoint)"
		return
	}
	defer f.Close()
	entries, err := checkpoint.ReadLeaderEpochs(f, path)
	for i, e := range entries {
		if err == nil && (e.Epoch < 0 || e.StartOffset < 0 || i > 0 && (e.Epoch <= entries[i-1].Epoch || e.StartOffset <= entries[i-1].StartOffset)) {
			err = fmt.Errorf("entry %d (epoch %d, start offset %d) breaks the order Kafka keeps", i, e.Epoch, e.StartOffset)
		}
	}
	if err != nil {
		s.rep.LeaderEpochs = "rebuilt from the batches (the source's does not read: " + message(err) + ")"
		return
	}
	s.epochs = entries
	s.rep.LeaderEpochs = "carried over"
}

func (s *salvager) writeEpochs() error {
	n := len(s.epochs)
	s.epochs = slices.DeleteFunc(s.epochs, func(e checkpoint.EpochEntry) bool { return e.StartOffset >= s.rep.LogEndOffset })
	if len(s.epochs) < n {
		s.rep.LeaderEpochs += fmt.Sprintf(", %d entries at or past the log end offset %d removed", n-len(s.epochs), s.rep.LogEndOffset)
	}
	return writeNew(filepath.Join(s.stage, layout.LeaderEpochCheckpointFile), checkpoint.AppendLeaderEpochs(nil, s.epochs))
}

func (s *salvager) copyMetadata() error {
	path := filepath.Join(s.p.Path, layout.PartitionMetadataFile)
	b, err := safefile.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		s.rep.PartitionMeta = "none in the source"
		return nil
	}
	if err == nil {
		_, err = checkpoint.ReadPartitionMetadata(b, path)
	}
	if err != nil {
		s.rep.PartitionMeta = "not carried over: " + message(err)
		return nil
	}
	s.rep.PartitionMeta = "carried over"
	return writeNew(filepath.Join(s.stage, layout.PartitionMetadataFile), b)
}

// message is an error's text without a file name the report gives anyway.
func message(err error) string {
	if ce, ok := logfmt.AsCorrupt(err); ok {
		m := ce.Msg
		if ce.Err != nil {
			m += ": " + ce.Err.Error()
		}
		return m
	}
	return err.Error()
}

func (s *salvager) create(base int64) (*logseg.Writer, error) {
	s.aborted = s.aborted[:0]
	path := func(ext string) string { return filepath.Join(s.stage, layout.SegmentName(base, ext)) }
	return logseg.CreateSegment(path, base, index.DefaultIntervalBytes)
}

// writeNew writes a whole file of the staging directory through a
// temporary name, so that a crash never leaves it empty or partial.
func writeNew(path string, b []byte) error {
	return safefile.WriteFile(path, b, 0o644)
}
