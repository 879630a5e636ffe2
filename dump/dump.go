// Package dump prints every file of a Kafka log directory: segments (any
// magic, compressed or not), KRaft snapshots, offset, time and transaction
// indexes, producer snapshots, checkpoints, partition.metadata,
// meta.properties and quorum-state, given one by one, as partition
// directories or as whole log directories.
//
// Text output reproduces the lines of Kafka's kafka-dump-log.sh (the Java
// DumpLogSegments of Kafka 3.x and 4.x), so scripts written against it keep
// working; files that tool does not handle get lines in the same style. JSON
// output is one object per line, each with a "type" and a "file".
//
// Unlike Kafka's tool, a dump does not stop at damage: a corrupt batch is
// reported with its byte position and the dump resumes at the next batch
// that frames and checksums correctly. Memory does not grow with the size of
// a segment: segments are streamed batch by batch, indexes entry by entry.
package dump

import (
	"io"
	"math"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/logtool/logtool/internal/parallel"
	"github.com/logtool/logtool/internal/target"
	"github.com/logtool/logtool/internal/textdec"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/layout"
	"github.com/logtool/logtool/logfmt/logseg"
)

// Payload selects how record keys and values are interpreted with
// PrintData; Kafka's precedence applies when several decoder flags are
// given: offsets, then transaction log, then cluster metadata, then remote
// log metadata, then share group state.
type Payload int

const (
	PayloadPlain      Payload = iota // the key and value decoders
	PayloadOffsets                   // __consumer_offsets records
	PayloadTxnLog                    // __transaction_state records
	PayloadMetadata                  // __cluster_metadata records
	PayloadShareState                // __share_group_state records
	PayloadRemoteMeta                // __remote_log_metadata records
)

// PayloadOf is the payload when the decoders given are named, in Kafka's
// precedence; PayloadPlain when none is.
func PayloadOf(offsets, txnLog, metadata, remoteMeta, shareState bool) Payload {
	switch {
	case offsets:
		return PayloadOffsets
	case txnLog:
		return PayloadTxnLog
	case metadata:
		return PayloadMetadata
	case remoteMeta:
		return PayloadRemoteMeta
	case shareState:
		return PayloadShareState
	}
	return PayloadPlain
}

// Options control a dump. The zero value is a shallow text dump of
// everything; use NoLimit for the offset and byte limits.
type Options struct {
	JSON               bool
	Deep               bool // one line per record (Kafka's --deep-iteration)
	PrintData          bool // keys and values too; implies Deep
	KeyDecoder         textdec.Decoder
	ValueDecoder       textdec.Decoder
	Payload            Payload
	SkipRecordMetadata bool
	// PrintHeaders adds header values to text record lines with
	// PrintData, as " headers: [k=v]", which no Kafka prints.
	PrintHeaders bool
	// Release is the Kafka release line whose line layouts text output
	// repeats.
	Release Release

	IndexSanityCheck bool // .index/.timeindex: Kafka's broker-startup check only
	VerifyIndexOnly  bool // .index/.timeindex: check against the log, print only the mismatches
	MaxMessageSize   int  // window for reading the batch an .index entry points at; 0 means 5 MiB
	MaxRecordBytes   int  // the largest record read from a compressed batch (logfmt.RecordIter); 0 for the default

	MaxBytes   int64 // read at most this many bytes of each segment; NoLimit for all
	FromOffset int64 // first offset to show; NoLimit for the start
	ToOffset   int64 // last offset to show; NoLimit for the end
	FromTime   int64 // show from the first batch whose max timestamp reaches it; NoTime for all

	// SummaryOnly prints no per-item lines, only the summary and problems.
	SummaryOnly bool
	// Summary adds the summary: a table at the end in text, "summary"
	// objects in JSON.
	Summary bool

	// Wide prints every column of the summary table; else those that fit a
	// 120-column terminal.
	Wide bool

	Workers int  // goroutines: jobs (partitions) dumped at once, and the rest decoding a deep dump's batches; 0 means 1
	Quiet   bool // no notes on stderr, only problems

	// Progress, when set, is called from the dumping goroutines with the
	// number of bytes read since its last call.
	Progress func(n int64)
	// Policy, when set, gives the cleanup.policy of a partition's topic for
	// the summary, "" when it is not known.
	Policy func(p *target.Partition) string

	batchWorkers int // logfmt.DeepReader's workers in each job
}

// NoLimit disables MaxBytes, FromOffset and ToOffset; NoTime disables
// FromTime.
const (
	NoLimit int64 = -1
	NoTime  int64 = -1 << 63
)

// DefaultOptions returns Options with every limit off.
func DefaultOptions() Options {
	return Options{MaxBytes: NoLimit, FromOffset: NoLimit, ToOffset: NoLimit, FromTime: NoTime, Release: DefaultRelease()}
}

func (o *Options) deep() bool { return o.Deep || o.PrintData }

func (o *Options) filtered() bool {
	return o.FromOffset != NoLimit || o.ToOffset != NoLimit || o.FromTime != NoTime
}

// indexOnly tells whether only .index and .timeindex files are dumped when
// directories are walked: Kafka's index checks have no meaning elsewhere.
func (o *Options) indexOnly() bool { return o.IndexSanityCheck || o.VerifyIndexOnly }

// Result counts what a dump found.
type Result struct {
	Files    int // files looked at
	Readable int // files from which something valid was read
	Problems int // problems reported (damage, not notes)
	// Failed counts the files, partition directories and log directories
	// that could not be read (I/O errors, such as permission denied or a
	// file that vanished), as opposed to damage found in what was read.
	Failed int
	// IndexProblems are the problems found in .index and .timeindex files,
	// which decide the exit status of --verify-index-only and
	// --index-sanity-check.
	IndexProblems int
}

// Run dumps the targets (as target.Resolve gives them), writing to stdout
// and stderr. A partition or log directory that cannot be listed, and a
// file that cannot be read, is reported as a problem of its own and counted
// in Result.Failed; the others are dumped. Errors are write errors.
func Run(set *target.Set, o Options, stdout, stderr io.Writer) (Result, error) {
	if o.Workers < 1 {
		o.Workers = 1
	}
	if o.MaxMessageSize <= 0 {
		o.MaxMessageSize = 5 << 20
	}
	var jobs []*job
	for _, it := range set.Items {
		jobs = append(jobs, plan(it, &o)...)
	}

	o.batchWorkers = batchWorkers(jobs, o.Workers)
	var stop atomic.Bool
	free := newChunks(o.Workers)
	sinks := make([]*sink, len(jobs))
	for i := range jobs {
		sinks[i] = newSink(free, &stop)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		// Jobs start in order, so the job being written is always running
		// or done and the writer never waits on a job that cannot start.
		parallel.Each(len(jobs), o.Workers, func(i int) error {
			mem := logfmt.StartJob(int64(i))
			newDumper(&o, sinks[i], &stop, mem).run(jobs[i])
			mem.Done()
			sinks[i].close()
			return nil
		})
	})
	var werr error
	for _, s := range sinks {
		drain(s, stdout, stderr, &werr)
	}
	wg.Wait()

	var res Result
	var rows []*row
	var reports reports
	for _, j := range jobs {
		res.Files += j.res.Files
		res.Readable += j.res.Readable
		res.Failed += j.res.Failed
		res.Problems += j.res.Problems
		res.IndexProblems += j.res.IndexProblems
		rows = append(rows, j.rows...)
		reports.merge(&j.reports)
	}
	if werr == nil && !o.JSON && !o.SummaryOnly {
		werr = reports.write(stderr, o.Quiet)
	}
	if werr == nil && o.Summary && !o.JSON && len(rows) > 0 {
		werr = writeTable(stdout, rows, o.Wide)
	}
	return res, werr
}

// batchWorkers is how many goroutines decode the batches of each job of a
// deep dump when w dump them. The root files of a log directory are few
// and small: their job does not count.
func batchWorkers(jobs []*job, w int) int {
	reading := 0
	for _, j := range jobs {
		if j.part != nil || j.single {
			reading++
		}
	}
	return parallel.PerJob(w, reading)
}

// job is a unit of parallel work: one partition directory, the root files
// of a log directory, or the files given one by one.
type job struct {
	files []item
	// unlisted is the directory, with the error listing it, when it could
	// not be: the job reports it and dumps nothing.
	unlisted    string
	unlistedErr error
	// part is set for a partition directory, whose summary row is the
	// partition; single for a file given by itself, which gets its own row.
	// The root files of a log directory get no row.
	part    *layout.Partition
	policy  string // the topic's cleanup.policy, "" when not known
	single  bool
	res     Result
	rows    []*row
	reports reports
}

// item is one file to dump.
type item struct {
	path string
	name layout.FileName
	// partition-level context
	seg     *layout.Segment // the segment of a .log/.index/.timeindex/.txnindex
	skipped bool            // filtered out by offset or time
}

// plan turns a target into jobs.
func plan(it target.Item, o *Options) []*job {
	switch {
	case it.File != nil:
		return []*job{{single: true, files: []item{{path: it.File.Path, name: it.File.Name}}}}
	case it.Partition != nil:
		p, err := layout.ReadPartition(it.Partition.Path)
		if err != nil {
			return []*job{{part: &layout.Partition{Path: it.Partition.Path, Dir: it.Partition.Dir},
				unlisted: it.Partition.Path, unlistedErr: err}}
		}
		j := partitionJob(p, o)
		if o.Policy != nil {
			j.policy = o.Policy(it.Partition)
		}
		return []*job{j}
	}
	ld, err := layout.ReadRoot(it.Root.Path)
	if err != nil {
		return []*job{{unlisted: it.Root.Path, unlistedErr: err}}
	}
	root := &job{}
	for _, f := range ld.RootFiles {
		n := layout.ParseFileName(filepath.Base(f))
		switch {
		case n.Kind == layout.Lock:
			continue // a marker whose presence is all it says
		case o.indexOnly():
			continue
		}
		root.files = append(root.files, item{path: f, name: n})
	}
	for _, f := range slices.Concat(ld.Irregular, ld.Symlinks) {
		root.files = append(root.files, item{path: f, name: layout.ParseFileName(filepath.Base(f))})
	}
	for _, d := range ld.NotPartitions {
		root.files = append(root.files, item{path: d, name: layout.FileName{Kind: layout.Unknown, Base: -1, Epoch: -1}})
	}
	if len(root.files) == 0 {
		return nil
	}
	return []*job{root}
}

// partitionJob lists a partition's files in dump order: segment by segment
// (.log, .index, .timeindex, .txnindex), then producer snapshots, the other
// files, and leftovers of interrupted operations last.
func partitionJob(p *layout.Partition, o *Options) *job {
	j := &job{part: p}
	add := func(path string, seg *layout.Segment, skipped bool) {
		if path == "" {
			return
		}
		n := layout.ParseFileName(filepath.Base(path))
		switch {
		case o.indexOnly() && n.Kind != layout.Index && n.Kind != layout.TimeIndex:
			return
		case o.filtered() && (n.Kind != layout.Log || n.Leftover != ""):
			return // a range is about records; the indexes only serve to find it
		}
		j.files = append(j.files, item{path: path, name: n, seg: seg, skipped: skipped})
	}
	for i := range p.Segments {
		s := &p.Segments[i]
		skip := skipSegment(p.Segments, i, o)
		for _, f := range []string{s.Log, s.Index, s.TimeIndex, s.TxnIndex} {
			add(f, s, skip)
		}
	}
	for _, list := range [][]string{p.Snapshots, p.Others, p.Leftovers, p.Irregular, p.Symlinks} {
		for _, f := range list {
			add(f, nil, false)
		}
	}
	return j
}

// skipSegment tells whether segment i holds nothing in the offset range
// asked for: all its offsets lie below the next segment's base, and none
// below its own.
func skipSegment(segs []layout.Segment, i int, o *Options) bool {
	if o.ToOffset != NoLimit && segs[i].Base > o.ToOffset {
		return true
	}
	if o.FromOffset != NoLimit && i+1 < len(segs) && segs[i+1].Base <= o.FromOffset {
		return true
	}
	if o.FromTime != NoTime && i+1 < len(segs) {
		// A loaded time index's last entry is the segment's largest
		// timestamp (TimeIndex.lastEntry, LogSegment.maxTimestampSoFar).
		if s, err := logseg.Open(segs[i]); err == nil && s.Load == logseg.Indexed {
			if e, ok, why := s.TimeFloor(math.MaxInt64); why == "" && ok && e.Timestamp < o.FromTime {
				return true
			}
		}
	}
	return false
}
