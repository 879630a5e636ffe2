package dump

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"

	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/layout"
	"github.com/logtool/logtool/logfmt/protocol"
)

// dumper runs one job. It is not shared between goroutines.
type dumper struct {
	o    *Options
	s    *sink
	stop *atomic.Bool
	it   logfmt.RecordIter
	job  *job
	mem  *logfmt.Job // what every reader of the job holds against

	// The file being dumped.
	file        string
	fileJSON    []byte // `"file":"<path>"` and the topic and partition, escaped once per file
	inPartition bool   // the file is in a partition directory: its objects carry "topic" and "partition"
	abs         string // absolute path, as Kafka names files in its reports
	indexFile   bool   // problems count as index problems
	readable    bool
	failed      bool // an I/O error kept part of the file from being read
	row         *row // statistics of the current summary row, or nil
	rowIsFile   bool
	progressed  int64
	batchPos    int64 // position of the batch being dumped, for record-level problems
	live        tally // index entries written the live broker's way
	q           *pipeline
	lineJob     *linesJob     // renders record lines on the batch workers (lines.go)
	lines       renderedLines // what it rendered of the current batch
	// While a line is being built in the sink's buffer, reports wait in
	// held: writing them would interleave with the line.
	holding bool
	held    []heldReport
	pc      producerCache
	scratch []byte // problem lines
	payload []byte // decoded keys and values
}

func newDumper(o *Options, s *sink, stop *atomic.Bool, mem *logfmt.Job) *dumper {
	return &dumper{o: o, s: s, stop: stop, mem: mem, it: logfmt.RecordIter{MaxRecordBytes: o.MaxRecordBytes}}
}

// text tells whether per-item text lines are wanted.
func (d *dumper) text() bool { return !d.o.JSON && !d.o.SummaryOnly }

// items tells whether per-item output (text lines or JSON objects) is wanted.
func (d *dumper) items() bool { return !d.o.SummaryOnly }

func (d *dumper) run(j *job) {
	d.job = j
	if j.part != nil && d.o.Summary {
		d.row = newRow(j.part.Path)
		d.row.topic, d.row.partition, d.row.policy = j.part.Dir.Topic, j.part.Dir.Partition, j.policy
	}
	if j.unlisted != "" {
		d.unlisted(j)
	}
	for i := range j.files {
		if d.stop.Load() {
			break
		}
		it := &j.files[i]
		if it.skipped {
			continue
		}
		if j.single && d.o.Summary {
			d.row, d.rowIsFile = newRow(it.path), true
			d.row.file = true
			if pd, ok := partitionOf(j, it.path); ok {
				d.row.topic, d.row.partition = pd.Topic, pd.Partition
			}
		}
		d.dumpItem(it)
		if d.rowIsFile {
			d.finishRow()
		}
	}
	if j.part != nil && d.row != nil {
		d.finishRow()
	}
	d.reportProgress()
}

func (d *dumper) finishRow() {
	if d.o.JSON {
		d.summaryJSON(d.row)
	}
	d.job.rows = append(d.job.rows, d.row)
	d.row, d.rowIsFile = nil, false
}

// partitionOf returns the partition directory that holds the file at path
// in job j, as its name says: none for the root files of a log directory,
// or a directory not named <topic>-<partition>.
func partitionOf(j *job, path string) (layout.PartitionDir, bool) {
	if j.part != nil {
		return j.part.Dir, j.part.Dir.Topic != ""
	}
	if !j.single || layout.LogDirOf(path, layout.KindFile) == filepath.Dir(path) {
		return layout.PartitionDir{}, false
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return layout.PartitionDir{}, false
	}
	pd, err := layout.ParsePartitionDir(filepath.Base(filepath.Dir(abs)))
	return pd, err == nil
}

// setFile makes path the file that reports are about. Every JSON object of
// a file in a partition directory names its topic and partition, as kcat's
// do.
func (d *dumper) setFile(path string) {
	d.file, d.readable, d.indexFile, d.failed = path, false, false, false
	d.fileJSON = append(d.fileJSON[:0], `"file":`...)
	d.fileJSON = protocol.AppendString(d.fileJSON, path)
	d.inPartition = false
	if pd, ok := partitionOf(d.job, path); ok {
		d.inPartition = true
		d.fileJSON = append(d.fileJSON, `,"topic":`...)
		d.fileJSON = protocol.AppendString(d.fileJSON, pd.Topic)
		d.fileJSON = appendIntField(d.fileJSON, "partition", int64(pd.Partition))
	}
}

// beginFile starts a file: the "Dumping <path>" line or a "file" object.
func (d *dumper) beginFile(path string, kind string, size int64) {
	d.setFile(path)
	if abs, err := filepath.Abs(path); err == nil {
		d.abs = abs
	} else {
		d.abs = path
	}
	d.job.res.Files++
	if !d.items() {
		return
	}
	b := d.s.buf()
	if d.o.JSON {
		b = d.objStart(b, "file")
		b = append(b, `,"kind":`...)
		b = protocol.AppendString(b, kind)
		if size >= 0 {
			b = append(b, `,"size":`...)
			b = strconv.AppendInt(b, size, 10)
		}
		b = append(b, "}\n"...)
	} else {
		b = append(b, "Dumping "...)
		b = append(b, path...)
		b = append(b, '\n')
	}
	d.s.set(b)
}

// endFile counts the file as readable when it yielded something valid,
// and as failed when an I/O error kept some of it from being read.
func (d *dumper) endFile() {
	if d.readable {
		d.job.res.Readable++
	}
	if d.failed {
		d.job.res.Failed++
	}
}

// unlisted reports a directory that could not be listed, a problem of its
// own: the run goes on with the others.
func (d *dumper) unlisted(j *job) {
	d.setFile(j.unlisted)
	msg := j.unlistedErr.Error()
	if pe, ok := j.unlistedErr.(*os.PathError); ok {
		msg = "cannot be listed: " + pe.Err.Error()
	}
	d.problem(-1, msg)
	d.job.res.Failed++
}

// objStart begins a JSON object: {"type":"<t>","file":"<path>".
func (d *dumper) objStart(b []byte, typ string) []byte {
	b = append(b, `{"type":"`...)
	b = append(b, typ...)
	b = append(b, `",`...)
	return append(b, d.fileJSON...)
}

// problem reports damage at pos (-1 if unknown) in the current file.
func (d *dumper) problem(pos int64, msg string) {
	d.job.res.Problems++
	if d.indexFile {
		d.job.res.IndexProblems++
	}
	if d.row != nil {
		d.row.problems++
	}
	d.report("problem", pos, msg)
}

// offsetsBack reports, as damage in the batch at pos, an offset next that
// does not follow prev. A gap is what compaction leaves and only Kafka's
// report lists it; an offset that goes back no broker writes.
func (d *dumper) offsetsBack(pos, prev, next int64) {
	if next <= prev {
		d.problem(pos, fmt.Sprintf("offset %d follows offset %d: offsets go back", next, prev))
	}
}

// problemErr reports err: a *logfmt.CorruptError with its position, or any
// other error without one.
func (d *dumper) problemErr(err error) {
	if ce, ok := logfmt.AsCorrupt(err); ok {
		msg := ce.Msg
		if ce.Err != nil {
			msg += ": " + ce.Err.Error()
		}
		d.problem(ce.Pos, msg)
		return
	}
	d.failed = true
	if pe, ok := err.(*os.PathError); ok {
		d.problem(-1, pe.Op+": "+pe.Err.Error())
		return
	}
	d.problem(-1, err.Error())
}

// note reports something worth knowing that is not damage: a preallocated
// tail, a leftover file, an index written the way a live broker writes it.
func (d *dumper) note(pos int64, msg string) {
	if d.o.Quiet && !d.o.JSON {
		return
	}
	d.report("note", pos, msg)
}

func (d *dumper) report(kind string, pos int64, msg string) {
	if d.holding {
		d.held = append(d.held, heldReport{kind, pos, msg})
		return
	}
	if d.q != nil {
		e := d.q.add()
		e.kind, e.rkind, e.pos, e.msg = evReport, kind, pos, msg
		return
	}
	d.emitReport(kind, pos, msg)
}

func (d *dumper) emitReport(kind string, pos int64, msg string) {
	if d.o.JSON {
		b := d.objStart(d.s.buf(), kind)
		b = append(b, `,"position":`...)
		if pos >= 0 {
			b = strconv.AppendInt(b, pos, 10)
		} else {
			b = append(b, "null"...)
		}
		b = append(b, `,"message":`...)
		b = protocol.AppendString(b, msg)
		d.s.set(append(b, "}\n"...))
		return
	}
	b := append(d.scratch[:0], "logtool: dump: "...)
	b = append(b, d.file...)
	b = append(b, ": "...)
	if kind == "note" {
		b = append(b, "note: "...)
	}
	b = append(b, msg...)
	if pos >= 0 {
		b = append(b, " (at byte "...)
		b = strconv.AppendInt(b, pos, 10)
		b = append(b, ')')
	}
	b = append(b, '\n')
	d.scratch = b
	d.s.stderr(b)
}

type heldReport struct {
	kind string
	pos  int64
	msg  string
}

// hold defers reports until release, for the time a line is built.
func (d *dumper) hold() { d.holding = true }

func (d *dumper) release() {
	d.holding = false
	for _, r := range d.held {
		d.report(r.kind, r.pos, r.msg)
	}
	d.held = d.held[:0]
}

// textLine appends one line of text output.
func (d *dumper) textLine(parts ...string) {
	if !d.text() {
		return
	}
	if d.q != nil {
		e := d.q.add()
		e.kind, e.msg = evText, ""
		for _, p := range parts {
			e.msg += p
		}
		return
	}
	b := d.s.buf()
	for _, p := range parts {
		b = append(b, p...)
	}
	d.s.set(append(b, '\n'))
}

// progress accounts for n bytes read, reporting in steps of 1 MiB so the
// callback stays off the hot path.
func (d *dumper) progress(n int64) {
	if d.o.Progress == nil {
		return
	}
	d.progressed += n
	if d.progressed >= 1<<20 {
		d.reportProgress()
	}
}

func (d *dumper) reportProgress() {
	if d.o.Progress != nil && d.progressed > 0 {
		d.o.Progress(d.progressed)
		d.progressed = 0
	}
}

// symlinkMsg is the problem of a symbolic link found in a log directory.
const symlinkMsg = "a symbolic link, not followed inside a log directory: what it points at is not dumped"

// dumpItem dumps one file according to its name.
func (d *dumper) dumpItem(it *item) {
	if li, err := os.Lstat(it.path); err == nil && li.Mode()&fs.ModeSymlink != 0 {
		// A link listed in a log directory is never followed: what it
		// points at is not the partition's.
		d.beginFile(it.path, it.name.Kind.String(), -1)
		d.problem(-1, symlinkMsg)
		d.endFile()
		return
	}
	fi, err := os.Stat(it.path)
	if err == nil && fi.IsDir() {
		d.beginFile(it.path, "directory", -1)
		if d.job.part == nil {
			d.note(-1, "not a partition directory; skipped (a broker refuses to start on a log directory holding it)")
		} else if why := layout.BrokerRefusalAt(it.path); why != "" {
			d.problem(-1, why+"; skipped")
		} else {
			d.note(-1, "unexpected directory in a partition directory; skipped")
		}
		d.endFile()
		return
	}
	if err == nil && !fi.Mode().IsRegular() {
		// Kafka loads only regular files, and a FIFO would block the read.
		d.beginFile(it.path, it.name.Kind.String(), -1)
		d.problem(-1, "not a regular file ("+safefile.FileType(fi.Mode())+"): Kafka does not load it; not opened")
		d.endFile()
		return
	}
	size := int64(-1)
	if fi != nil {
		size = fi.Size()
	}
	n := it.name
	kind := n.Kind.String()
	d.beginFile(it.path, kind, size)
	defer d.endFile()
	if err != nil {
		d.problemErr(err)
		return
	}
	if n.Leftover != "" {
		d.note(-1, leftoverNote(n.Leftover))
	}
	switch n.Kind {
	case layout.Log:
		d.dumpSegment(it, fi.Size(), "Log starting offset: "+strconv.FormatInt(n.Base, 10))
	case layout.KRaftSnapshot:
		d.dumpSegment(it, fi.Size(), fmt.Sprintf("Snapshot end offset: %d, epoch: %d", n.Base, n.Epoch))
	case layout.BootstrapCheckpoint:
		d.dumpSegment(it, fi.Size(), "KRaft bootstrap snapshot")
	case layout.Index:
		d.dumpOffsetIndex(it, fi.Size())
	case layout.TimeIndex:
		d.dumpTimeIndex(it, fi.Size())
	case layout.TxnIndex:
		d.dumpTxnIndex(it, fi.Size())
	case layout.Snapshot:
		d.dumpProducerSnapshot()
	case layout.RecoveryPointCheckpoint, layout.LogStartOffsetCheckpoint, layout.ReplicationOffsetCheckpoint, layout.CleanerOffsetCheckpoint:
		d.dumpOffsetCheckpoint()
	case layout.LeaderEpochCheckpoint:
		d.dumpLeaderEpochs()
	case layout.CleanerCheckpoint:
		d.dumpCleanerCheckpoint()
	case layout.PartitionMetadata:
		d.dumpPartitionMetadata()
	case layout.MetaProperties:
		d.dumpMetaProperties()
	case layout.QuorumState:
		d.dumpQuorumState()
	case layout.CleanShutdown:
		d.dumpCleanShutdown()
	case layout.Lock:
		d.note(-1, "the broker's lock file: a running broker holds a lock on it; it has no content")
		d.readable = true
	case layout.Temp:
		d.note(-1, "temporary file of a write that did not finish (Kafka writes checkpoints through .tmp files); not dumped")
		d.readable = true
	default:
		d.dumpUnknown(it, fi.Size())
	}
}

func leftoverNote(suffix string) string {
	switch suffix {
	case layout.CleanedSuffix:
		return "leftover .cleaned file: output of a log cleaning or segment split that did not finish; a broker deletes it at startup"
	case layout.SwapSuffix:
		return "leftover .swap file: cleaned segment that was about to replace the originals; a broker completes or undoes the swap at startup"
	case layout.DeletedSuffix:
		return "leftover .deleted file: scheduled for deletion; a broker deletes it at startup"
	}
	return "leftover .part file: a KRaft snapshot that was being written; a broker deletes it at startup"
}

// dumpUnknown dumps a file whose name Kafka does not use. Record sets saved
// from a fetch or copied under another name are recognized by their bytes:
// the first entry must frame and checksum correctly.
func (d *dumper) dumpUnknown(it *item, size int64) {
	if d.job.part != nil {
		if why := layout.BrokerRefusalAt(it.path); why != "" {
			d.problem(-1, why)
		}
	}
	if looksLikeLog(it.path, size, d.mem) {
		d.note(-1, "not a Kafka file name, but its bytes are log entries: dumped as a segment")
		d.dumpSegment(it, size, "")
		return
	}
	if !d.o.Quiet && !d.o.JSON {
		d.s.stderr([]byte("Ignoring unknown file " + it.path + "\n"))
	}
	if d.o.JSON {
		d.note(-1, "unknown file; ignored")
	}
}

// looksLikeLog accepts a file whose first entry checksums correctly, or
// whose entries frame exactly up to its end: one with a bad checksum must
// still be dumped, to show it.
func looksLikeLog(path string, size int64, mem *logfmt.Job) bool {
	f, err := safefile.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	sr := logfmt.NewSegmentReader(f, size, path)
	sr.Job = mem
	if !sr.Next() {
		return false
	}
	if sr.Batch().Validate() == nil {
		return true
	}
	for sr.Next() {
	}
	return sr.Err() == nil && sr.End() == logfmt.EndClean
}
