// Package kafkaloader is a model of what an Apache Kafka broker does to a log
// directory when it starts: which files it deletes, renames and truncates,
// which segments it keeps, and where each log starts and ends. Tests use it
// to judge what a crash of a logtool writer leaves, in place of the broker.
//
// It is written from Kafka's source and nothing else, and shares no code
// with logtool's own recovery (internal/segswap, reindex) or readers
// (logfmt, layout): a rule that both got wrong the same way would go
// unnoticed. It changes nothing on disk: the file operations the broker
// would perform are applied to an in-memory view of the directory, and
// Log.Actions lists them.
//
// Sources, apache/kafka as read for this package (trunk, the 4.x line):
//
//   - storage/src/main/java/org/apache/kafka/storage/internals/log/LogLoader.java
//     (commit 0c37e22a6c30): load, removeTempFilesAndCollectSwapFiles, the
//     min/max swap range and its deletion, the renaming of .swap files,
//     loadSegmentFiles, recoverSegment, recoverLog,
//     deleteSegmentsIfLogStartGreaterThanLogEnd.
//   - storage/.../log/LogSegment.java (commit 01d217953c14): sanityCheck,
//     recover, readNextOffset, truncateTo.
//   - storage/.../log/LocalLog.java: parseTopicPartitionName, the -delete,
//     -future and -stray directory patterns, isIndexFile, isLogFile.
//   - storage/.../log/LogFileUtils.java: offsetFromFileName, the suffixes.
//   - clients/.../record/internal/FileLogInputStream.java: nextBatch (how a
//     .log is cut into batches), with LegacyRecord and DefaultRecordBatch
//     ensureValid.
//   - core/src/main/scala/kafka/log/LogManager.scala: loadLogs and loadLog
//     (which directories are loaded, the clean shutdown marker, the
//     recovery-point and log-start checkpoints).
//   - storage/.../log/UnifiedLog.java (create, initializeTopicId) with
//     storage/.../checkpoint/PartitionMetadataReadBuffer.java and
//     LeaderEpochCheckpointFile.java, server-common's CheckpointFile: the
//     partition.metadata and leader-epoch-checkpoint every loaded
//     directory must read, or the log directory goes offline.
//
// Kafka 3.x (core/src/main/scala/kafka/log/LogLoader.scala, 3.0 to 3.6)
// applies the same rules; an unreleased 3.0 development version bounded the
// swap range by the swap segment's last offset index entry instead of
// readNextOffset and recovered swap segments without an index in full.
//
// What is not modeled, because it does not change which records a broker
// serves: producer state and its snapshots (rebuilt, stray ones removed),
// the leader epoch cache beyond reading its checkpoint, the time index and the transaction index beyond
// the sanity check that decides recovery, the preallocation of index files,
// metrics. What is not modeled and returned as an error instead, so that a
// test never passes on a guess: a segment whose offsets overflow its base
// (Kafka splits it, KAFKA-6264), a swap segment without an offset index
// (Kafka would create an empty preallocated one and trust it), file names
// Kafka cannot parse where it throws, and log directories it refuses.
package kafkaloader

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Kafka's file name suffixes (LogFileUtils).
const (
	logSuffix       = ".log"
	indexSuffix     = ".index"
	timeIndexSuffix = ".timeindex"
	txnIndexSuffix  = ".txnindex"
	deletedSuffix   = ".deleted"
	cleanedSuffix   = ".cleaned"
	swapSuffix      = ".swap"
	// KRaft snapshots marked for deletion are left to KafkaMetadataLog.
	snapshotDeletedSuffix = ".checkpoint.deleted"
)

// DefaultIndexIntervalBytes is index.interval.bytes' default.
const DefaultIndexIntervalBytes = 4096

// Options is what LogManager hands the loader for one partition.
type Options struct {
	// HadCleanShutdown is true when the log directory held
	// .kafka_cleanshutdown: recoverLog then recovers no segment.
	HadCleanShutdown bool
	// RecoveryPoint is the partition's recovery-point-offset-checkpoint
	// entry, 0 without one. After an unclean shutdown the segment holding
	// it and every later one are recovered.
	RecoveryPoint int64
	// LogStartOffset is the partition's log-start-offset-checkpoint entry,
	// 0 without one.
	LogStartOffset int64
	// IndexIntervalBytes is the topic's index.interval.bytes (0: the
	// default). Recovery appends offset index entries at this interval, and
	// an entry that does not increase empties the segment.
	IndexIntervalBytes int
}

// Segment is one segment of a loaded log.
type Segment struct {
	Base int64
	// File holds the segment's bytes on disk now. Its name may differ from
	// the one the broker would give it (a ".swap" the loader renames).
	File string
	// Size is how many bytes of File belong to the segment: less than the
	// file's size when recovery truncated it.
	Size int64
	// NextOffset is readNextOffset: one past the last offset of its last
	// batch, or Base when it has none.
	NextOffset int64
}

// Log is a partition as the broker holds it after loading.
type Log struct {
	Dir       string
	Topic     string
	Partition int32
	// Kind is "" for a partition, or "delete", "future" or "stray" for
	// directories with those suffixes. A "delete" log is loaded without
	// recovery and then deleted by the broker.
	Kind     string
	Segments []Segment // by base offset
	// LogStartOffset is the first offset the broker serves: the larger of
	// the checkpoint's and the first segment's base.
	LogStartOffset int64
	LogEndOffset   int64
	RecoveryPoint  int64
	// Actions lists what the broker would do to the directory, in order,
	// one line each ("delete X: why", "rename X Y", "truncate X to N: why").
	Actions []string
}

// LoadPartition loads one partition directory as LogLoader.load does and
// returns the log. It changes nothing on disk.
func LoadPartition(dir string, o Options) (*Log, error) {
	if err := readPartitionFiles(dir); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	fs, err := readDir(dir)
	if err != nil {
		return nil, err
	}
	l := &loader{fs: fs, o: o}
	if l.o.IndexIntervalBytes <= 0 {
		l.o.IndexIntervalBytes = DefaultIndexIntervalBytes
	}
	log, err := l.load(strings.HasSuffix(dir, "-delete"))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	log.Dir = dir
	return log, nil
}

type loader struct {
	fs   *dirState
	o    Options
	segs []*segment // by base offset
}

// segment is a loaded segment: the name of its .log in the view.
type segment struct {
	base int64
	log  string
}

func (l *loader) load(deleteDir bool) (*Log, error) {
	swaps, err := l.removeTempFilesAndCollectSwapFiles()
	if err != nil {
		return nil, err
	}
	if err := l.completeSwaps(swaps); err != nil {
		return nil, err
	}
	if err := l.loadSegmentFiles(); err != nil {
		return nil, err
	}
	log := &Log{}
	if deleteDir {
		// A directory being deleted is loaded without recovery.
		if len(l.segs) == 0 {
			l.createSegment(0)
		}
	} else {
		if err := l.recoverLog(log); err != nil {
			return nil, err
		}
	}
	for _, s := range l.segs {
		f := l.fs.files[s.log]
		next, err := l.readNextOffset(s)
		if err != nil {
			return nil, err
		}
		log.Segments = append(log.Segments, Segment{Base: s.base, File: f.src, Size: f.size, NextOffset: next})
	}
	log.LogStartOffset = max(l.o.LogStartOffset, l.segs[0].base)
	log.LogEndOffset = log.Segments[len(log.Segments)-1].NextOffset
	log.Actions = l.fs.actions
	return log, nil
}

// removeTempFilesAndCollectSwapFiles deletes ".deleted" files, ".cleaned"
// files, and ".swap" files at or above the lowest ".cleaned" offset (an
// unfinished replacement), and returns the other ".swap" files.
func (l *loader) removeTempFilesAndCollectSwapFiles() ([]string, error) {
	var swaps, cleaned []string
	minCleaned := int64(math.MaxInt64)
	for _, name := range l.fs.names() {
		switch {
		case strings.HasSuffix(name, deletedSuffix) && !strings.HasSuffix(name, snapshotDeletedSuffix):
			l.fs.remove(name, "stray file marked for deletion")
		case strings.HasSuffix(name, cleanedSuffix):
			off, err := offsetFromFileName(name)
			if err != nil {
				return nil, err
			}
			minCleaned = min(minCleaned, off)
			cleaned = append(cleaned, name)
		case strings.HasSuffix(name, swapSuffix):
			swaps = append(swaps, name)
		}
	}
	var valid []string
	for _, name := range swaps {
		off, err := offsetFromFileName(name)
		if err != nil {
			return nil, err
		}
		if off >= minCleaned {
			l.fs.remove(name, fmt.Sprintf("swap file at or above the lowest .cleaned offset %d", minCleaned))
			continue
		}
		valid = append(valid, name)
	}
	for _, name := range cleaned {
		l.fs.remove(name, "stray .cleaned file")
	}
	return valid, nil
}

// completeSwaps finishes the interrupted swap: ONE range per partition,
// from the lowest base offset of a ".log.swap" to the highest next offset
// of one, in which every file not ending in ".swap" whose name starts with
// an offset is deleted; then every ".swap" file is renamed.
func (l *loader) completeSwaps(swaps []string) error {
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for _, name := range swaps {
		if !strings.HasSuffix(strings.TrimSuffix(name, swapSuffix), logSuffix) {
			continue
		}
		base, err := offsetFromFileName(name)
		if err != nil {
			return err
		}
		index := strings.TrimSuffix(name, logSuffix+swapSuffix) + indexSuffix + swapSuffix
		if l.fs.files[index] == nil {
			return fmt.Errorf("%s has no %s: Kafka would create an empty preallocated offset index and trust it (not modeled)", name, index)
		}
		next, err := l.readNextOffset(&segment{base: base, log: name})
		if err != nil {
			return err
		}
		lo, hi = min(lo, base), max(hi, next)
	}
	for _, name := range l.fs.names() {
		if strings.HasSuffix(name, swapSuffix) {
			continue
		}
		off, err := offsetFromFileName(name)
		if err != nil {
			continue // Kafka skips names without an offset here
		}
		if off >= lo && off < hi {
			l.fs.remove(name, fmt.Sprintf("in the range [%d, %d) of the interrupted swap", lo, hi))
		}
	}
	for _, name := range l.fs.names() {
		if strings.HasSuffix(name, swapSuffix) {
			l.fs.rename(name, strings.TrimSuffix(name, swapSuffix))
		}
	}
	return nil
}

// loadSegmentFiles deletes index files without a .log and opens a segment
// per .log, recovering those whose offset index is missing or whose
// transaction index fails its sanity check.
func (l *loader) loadSegmentFiles() error {
	for _, name := range l.fs.names() {
		switch {
		case isIndexFile(name):
			off, err := offsetFromFileName(name)
			if err != nil {
				return err
			}
			if l.fs.files[segmentName(off, logSuffix)] == nil {
				l.fs.remove(name, "orphaned index file, with no corresponding log file")
			}
		case strings.HasSuffix(name, logSuffix):
			base, err := offsetFromFileName(name)
			if err != nil {
				return err
			}
			s := &segment{base: base, log: name}
			why, err := l.sanityCheck(s)
			if err != nil {
				return err
			}
			if why != "" {
				if _, err := l.recoverSegment(s, why); err != nil {
					// Only recoverLog catches an invalid offset; here it
					// stops the broker.
					return err
				}
			}
			l.segs = append(l.segs, s)
		}
	}
	slices.SortFunc(l.segs, func(a, b *segment) int { return cmpInt(a.base, b.base) })
	return nil
}

// sanityCheck is LogSegment.sanityCheck: it says why the segment must be
// recovered, or "". Trunk checks only that the offset index exists and that
// no transaction index entry ends below the segment.
func (l *loader) sanityCheck(s *segment) (string, error) {
	if l.fs.files[segmentName(s.base, indexSuffix)] == nil {
		return "no offset index", nil
	}
	txn := segmentName(s.base, txnIndexSuffix)
	if l.fs.files[txn] == nil {
		return "", nil
	}
	b, err := l.fs.read(txn)
	if err != nil {
		return "", err
	}
	// Entries of 34 bytes: version(2) producerId(8) firstOffset(8)
	// lastOffset(8) lastStableOffset(8); a partial last entry is not read.
	for i := 0; i+34 <= len(b); i += 34 {
		if last := int64(be64(b[i+18:])); last < s.base {
			return fmt.Sprintf("corrupt transaction index: last offset %d below the base", last), nil
		}
	}
	return "", nil
}

// recoverLog recovers, after an unclean shutdown, the segment holding the
// recovery point and every later one; at the first that recovery truncates,
// all later ones are deleted. It then sets the log's end.
func (l *loader) recoverLog(log *Log) error {
	if !l.o.HadCleanShutdown {
		// LogSegments.values(recoveryPoint, MAX): from the floor segment on.
		first := 0
		for i, s := range l.segs {
			if s.base <= l.o.RecoveryPoint {
				first = i
			}
		}
		for i := first; i < len(l.segs); i++ {
			s := l.segs[i]
			truncated, err := l.recoverSegment(s, fmt.Sprintf("unflushed: at or after the recovery point %d", l.o.RecoveryPoint))
			if err == errInvalidOffset {
				// Kafka empties the segment; the index lookup of the base
				// offset leads to its first batch.
				truncated = l.fs.files[s.log].size
				l.fs.truncate(s.log, 0, "invalid offset during recovery: the segment is emptied")
			} else if err != nil {
				return err
			}
			if truncated > 0 {
				for _, later := range l.segs[i+1:] {
					l.deleteSegment(later, fmt.Sprintf("after the corruption found in segment %d", s.base))
				}
				l.segs = l.segs[:i+1]
				break
			}
		}
	}
	if len(l.segs) > 0 {
		end, err := l.readNextOffset(l.segs[len(l.segs)-1])
		if err != nil {
			return err
		}
		if end < l.o.LogStartOffset {
			for _, s := range l.segs {
				l.deleteSegment(s, fmt.Sprintf("the log end offset %d is below the log start offset %d", end, l.o.LogStartOffset))
			}
			l.segs = nil
		}
	}
	if len(l.segs) == 0 {
		l.createSegment(l.o.LogStartOffset)
	}
	end, err := l.readNextOffset(l.segs[len(l.segs)-1])
	if err != nil {
		return err
	}
	log.RecoveryPoint = min(l.o.RecoveryPoint, end)
	if l.o.HadCleanShutdown {
		log.RecoveryPoint = end
	}
	return nil
}

// recoverSegment is LogSegment.recover: it keeps the batches up to the
// first one that is torn or invalid, truncates the .log there and returns
// how many bytes it cut. The rebuilt indexes are not modeled.
func (l *loader) recoverSegment(s *segment, why string) (int64, error) {
	r, err := l.fs.open(s.log)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	var valid, lastIndexEntry int64
	indexed, lastIndexed := false, int64(0)
	for {
		b, ok, err := nextBatch(r, valid, r.size)
		if err != nil || !ok {
			break // CorruptRecordException or the end: truncate here
		}
		if err := b.ensureValid(r); err != nil {
			break
		}
		if rel := b.lastOffset - s.base; rel < 0 || rel > math.MaxInt32 {
			return 0, fmt.Errorf("%s: offset %d overflows the segment base %d: Kafka splits the segment (not modeled)", s.log, b.lastOffset, s.base)
		}
		if valid-lastIndexEntry > int64(l.o.IndexIntervalBytes) {
			if indexed && b.lastOffset <= lastIndexed {
				return 0, errInvalidOffset
			}
			indexed, lastIndexed, lastIndexEntry = true, b.lastOffset, valid
		}
		valid += b.size
	}
	truncated := r.size - valid
	what := "recover " + s.log + ": " + why
	if truncated > 0 {
		l.fs.truncate(s.log, valid, what)
	} else {
		l.fs.note(what)
	}
	return truncated, nil
}

var errInvalidOffset = fmt.Errorf("InvalidOffsetException: offset index entries out of order")

// readNextOffset is LogSegment.readNextOffset: one past the last offset of
// the segment's last batch, or its base. Kafka reads from the position of
// the offset index's last entry; the batches before it, which it trusts,
// are read here too, so a damaged one there stops the model where Kafka
// would not look.
func (l *loader) readNextOffset(s *segment) (int64, error) {
	r, err := l.fs.open(s.log)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	next := s.base
	for pos := int64(0); ; {
		b, ok, err := nextBatch(r, pos, r.size)
		if err != nil {
			return 0, fmt.Errorf("%s: %w (Kafka fails to load the log)", s.log, err)
		}
		if !ok {
			return next, nil
		}
		next, pos = b.lastOffset+1, pos+b.size
	}
}

// deleteSegment removes a segment's files (LocalLog.deleteSegmentFiles,
// renamed ".deleted" and removed later; the end result is the same).
func (l *loader) deleteSegment(s *segment, why string) {
	for _, suffix := range []string{logSuffix, indexSuffix, timeIndexSuffix, txnIndexSuffix} {
		if name := segmentName(s.base, suffix); l.fs.files[name] != nil {
			l.fs.remove(name, why)
		}
	}
}

// createSegment makes the empty segment a log without one gets. Only its
// .log is modeled.
func (l *loader) createSegment(base int64) {
	name := segmentName(base, logSuffix)
	l.fs.create(name)
	l.segs = append(l.segs, &segment{base: base, log: name})
}

func isIndexFile(name string) bool {
	return strings.HasSuffix(name, indexSuffix) || strings.HasSuffix(name, timeIndexSuffix) || strings.HasSuffix(name, txnIndexSuffix)
}

// offsetFromFileName is LogFileUtils.offsetFromFileName: the number before
// the first dot, as Long.parseLong reads it.
func offsetFromFileName(name string) (int64, error) {
	i := strings.IndexByte(name, '.')
	if i < 0 {
		return 0, fmt.Errorf("%s: no offset in the name (StringIndexOutOfBoundsException)", name)
	}
	n, err := strconv.ParseInt(name[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: no offset in the name (NumberFormatException)", name)
	}
	return n, nil
}

// segmentName is the 20-digit zero-padded base offset and a suffix.
func segmentName(base int64, suffix string) string {
	return fmt.Sprintf("%020d%s", base, suffix)
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// dirState is the loader's view of a partition directory: its regular
// files by name, each the bytes of a file on disk up to a size.
type dirState struct {
	dir     string
	files   map[string]*file
	actions []string
}

type file struct {
	src  string // "" for a file the loader created empty
	size int64
}

// readDir takes the regular files of dir, as File.isFile sees them:
// symbolic links followed, directories, FIFOs, sockets and devices left out.
func readDir(dir string) (*dirState, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	st := &dirState{dir: dir, files: map[string]*file{}}
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		fi, err := os.Stat(path)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		st.files[e.Name()] = &file{src: path, size: fi.Size()}
	}
	return st, nil
}

func (d *dirState) names() []string {
	var out []string
	for n := range d.files {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

func (d *dirState) remove(name, why string) {
	delete(d.files, name)
	d.actions = append(d.actions, "delete "+name+": "+why)
}

func (d *dirState) rename(from, to string) {
	d.files[to] = d.files[from]
	delete(d.files, from)
	d.actions = append(d.actions, "rename "+from+" "+to)
}

func (d *dirState) truncate(name string, size int64, why string) {
	d.files[name].size = size
	d.actions = append(d.actions, fmt.Sprintf("truncate %s to %d: %s", name, size, why))
}

func (d *dirState) create(name string) {
	d.files[name] = &file{}
	d.actions = append(d.actions, "create "+name)
}

func (d *dirState) note(s string) { d.actions = append(d.actions, s) }

// view is a file of the view opened for reading.
type view struct {
	io.ReaderAt
	size int64
	f    *os.File
}

func (v *view) Close() error {
	if v.f == nil {
		return nil
	}
	return v.f.Close()
}

func (d *dirState) open(name string) (*view, error) {
	fl := d.files[name]
	if fl == nil {
		return nil, fmt.Errorf("%s: not in the directory", name)
	}
	if fl.src == "" {
		return &view{ReaderAt: strings.NewReader(""), size: 0}, nil
	}
	f, err := os.Open(fl.src)
	if err != nil {
		return nil, err
	}
	return &view{ReaderAt: f, size: fl.size, f: f}, nil
}

func (d *dirState) read(name string) ([]byte, error) {
	v, err := d.open(name)
	if err != nil {
		return nil, err
	}
	defer v.Close()
	b := make([]byte, v.size)
	if _, err := v.ReadAt(b, 0); err != nil && err != io.EOF {
		return nil, err
	}
	return b, nil
}
