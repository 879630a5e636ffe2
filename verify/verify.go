// Package verify checks a Kafka log directory, a partition directory or single
// files without changing them, and reports every finding with its file and
// byte position.
//
// What a finding is, and why:
//
//   - The log (.log segments, record sets, KRaft snapshots): the framing and
//     checksum of every batch, and the fields the checksum does not cover.
//     Offsets: each batch at or above its segment's base offset, above the
//     batch before it, within the 2^31 offsets an index entry can express, and
//     below the next segment's base offset. The v2 leader epoch: -1 or more,
//     and the one leader-epoch-checkpoint gives for the batch's offset.
//     Compression ids Kafka never assigned are problems even under a good
//     checksum, because no broker can read them. With Options.Deep every
//     record is parsed as a consumer would (RecordIter), inner legacy
//     messages have their own checksums checked, record offsets must stay
//     inside their batch in order, and control records must parse.
//   - Damage does not end a segment's check: the scan steps over each
//     damaged range to the next batch whose frame and checksum hold
//     (logfmt.Scan, as salvage does), reports the range with its cause, and
//     checks the batches after it.
//   - How a segment ends: a torn last batch (nothing valid after it) and a
//     zero-filled tail are problems. A clean shutdown leaves neither; after a crash, Kafka's
//     recovery truncates them only in the segments past the recovery point,
//     and an append to a segment with zeros at its end lands after the zeros,
//     where readers stop. The one exception is the active segment of a log
//     directory a running broker holds (its .lock): there they are the write
//     in progress or a preallocated file, reported as information.
//   - Indexes: the entry-by-entry agreement of .index, .timeindex and
//     .txnindex with the log is judged by reindex in its Check mode,
//     which knows what a live broker legitimately writes differently from
//     recovery (those differences, and absent index files a broker rebuilds,
//     are information). Kafka's own startup sanity checks run as well; a
//     preallocated zero tail, which fails the time index check, is not a
//     problem.
//   - Producer snapshots must parse (checksum included) and not lie beyond
//     the log end; leader-epoch-checkpoint must parse, have epochs and start
//     offsets strictly increasing and start no later than the log end;
//     partition.metadata, meta.properties (printable ASCII outside comments,
//     as Kafka writes it) and quorum-state must parse.
//   - Offset checkpoints of a log directory (recovery point, high watermark,
//     log start, cleaner) and the per-partition cleaner-checkpoint must parse,
//     name valid topics and each partition once, and hold an offset within the
//     partition's [log start, log end]: beyond the end means records the
//     broker had are gone. After a clean shutdown (.kafka_cleanshutdown, no
//     broker running) every partition's recovery point is its log end.
//     Entries for partitions that are not in the log directory are
//     information (a broker ignores them), as are partitions without an entry
//     before a clean shutdown.
//   - Against the KRaft cluster metadata (__cluster_metadata-0 of the log
//     directory, or of another of its broker's, replayed once per run), as a
//     broker checks a log when it loads it: a partition.metadata topic ID the
//     metadata does not know, knows under another topic name, or knows as a
//     deleted topic (outside a -delete directory), and a partition number the
//     topic does not have, are problems; a partition the metadata assigns to
//     other brokers only is information (a broker sets it aside, -stray, and
//     the replicas serve it). Metadata that cannot be replayed is a problem.
//   - Leftover .cleaned, .swap and .deleted files are problems: an interrupted
//     cleaning, split or deletion that the broker has to finish at its next
//     start.
//
// What cannot be told: a segment other than the last, cut exactly between
// two batches after its last index entry, looks like one that compaction
// shortened, unless a time index entry points past the cut (magic 0 has no
// timestamps, so there none does). Every other single damaged byte or cut of
// the files of a log directory that logtool gen writes is found, with
// Options.StrictIndexes for the index files; without it an index entry
// damaged into another value that still serves lookups correctly (as the
// entries a live broker writes differ from recovery's) is information.
//
// Verifying never writes, and memory does not grow with segment size: every
// .log is streamed. Findings about one file are listed up to a limit, then
// counted on one finding that says how many (Options.ListAll lists them).
// Every finding carries a Code, one per kind (codes.go). Partitions are verified in parallel; the root files of a log
// directory are verified after its partitions, because the checkpoints are
// judged against the logs.
package verify

import (
	"cmp"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/logtool/logtool/internal/parallel"
	"github.com/logtool/logtool/logfmt"
)

// Severity ranks a Finding.
type Severity int

const (
	// Info is worth knowing and not wrong: a missing index a broker rebuilds,
	// an index a live broker wrote differently from recovery, a checkpoint
	// entry for a partition stored elsewhere.
	Info Severity = iota
	// Problem is data a broker would reject, truncate or read wrongly, or
	// files that disagree with each other.
	Problem
)

func (s Severity) String() string {
	if s == Problem {
		return "problem"
	}
	return "info"
}

// Finding is one thing verify has to say about a file.
type Finding struct {
	Severity Severity
	Code     Code // the kind of finding
	File     string
	Pos      int64 // byte position in File; -1 when the finding is about no one place
	Msg      string
	// More, when above 0, makes this finding stand for that many problems
	// about File that are not listed (Options.ListAll lists them).
	More int
}

// String is the text form: "problem: <file>: <what> (at byte N)".
func (f Finding) String() string {
	s := fmt.Sprintf("%s: %s: %s", f.Severity, f.File, f.Msg)
	if f.Pos >= 0 {
		s += fmt.Sprintf(" (at byte %d)", f.Pos)
	}
	return s
}

// Options configure a run.
type Options struct {
	// Deep parses every record of every batch, not only the batch framing
	// and checksums.
	Deep bool
	// StrictIndexes makes every byte difference between an index file and
	// the one Kafka's recovery would build a problem, and an absent index
	// file too. That holds for files logtool gen or reindex wrote and for a
	// broker's after it recovered them, not for a live broker's (see
	// reindex), so it is for checking such directories completely.
	StrictIndexes bool
	// Workers is the number of goroutines: partitions verified at once,
	// and with Deep the rest decoding the batches of each; at least 1.
	Workers int
	// Progress, when set, is called with the number of .log bytes read since
	// its last call. It is called from several goroutines at once.
	Progress func(n int64)
	// MaxRecordBytes bounds one record read from a compressed batch
	// (logfmt.RecordIter); 0 means the default.
	MaxRecordBytes int
	// ListAll lists every finding. Without it, past maxListed problems
	// about one file (and past a few of one kind about an index file) the
	// rest are counted on one finding (Finding.More), which bounds the
	// memory a badly damaged file takes.
	ListAll bool

	batchWorkers int // logfmt.DeepReader's workers in each unit, with Deep
}

// Report is what verifying one unit of a Plan found: a partition directory,
// the root files of a log directory, or a file given on its own.
type Report struct {
	Path string
	Kind UnitKind
	// Findings are in the order found. Past maxListed problems about one
	// file, further ones are counted but not listed, and one more finding
	// says how many were left out (Finding.More), unless Options.ListAll.
	Findings []Finding
	Problems int // every problem, listed or not: the sum of each problem finding's max(1, More)
	Infos    int // every info, listed or not

	Segments int
	Batches  int64
	Records  int64 // with Options.Deep
	Bytes    int64 // log bytes read

	// Err is the failure that stopped verifying the unit: an I/O error, not
	// bad data (which is a Finding).
	Err error
	// Salvage is the partition directory, when a segment of it has damage
	// past which salvage keeps sound batches that Kafka's recovery drops.
	Salvage string

	facts *partitionFacts
}

// UnitKind is what a Report is about.
type UnitKind int

const (
	PartitionUnit UnitKind = iota // a partition directory, or some of its segments
	RootUnit                      // the root files of a log directory
	FileUnit                      // one file given on its own
)

func (k UnitKind) String() string {
	switch k {
	case RootUnit:
		return "log-dir"
	case FileUnit:
		return "file"
	}
	return "partition"
}

// partitionFacts is what the checkpoints of a log directory are judged
// against.
type partitionFacts struct {
	topic     string
	partition int32
	// complete is false when some segment was not read to its end (only some
	// segments asked for, or an I/O failure): then logEnd is not known.
	complete bool
	hasLog   bool  // at least one segment has a .log
	logStart int64 // max(first segment's base offset, the log-start checkpoint)
	logEnd   int64 // the offset after the last valid batch, or the last segment's base
}

// Run verifies every unit of the plan on up to o.Workers goroutines and
// hands the reports to emit in plan order, each as soon as it and those
// before it are done. It stops early only when emit fails, and returns that
// error; failures of units are in their reports.
func (p *Plan) Run(o Options, emit func(*Report) error) error {
	p.md = loadMetadata(p.logDirs)
	reported := false
	facts := map[string]*partitionFacts{}
	o.batchWorkers = p.batchWorkers(o.Workers)
	return parallel.Ordered(len(p.units), o.Workers, func(i int) *Report {
		// Root units run at their turn to be emitted, once the facts of
		// their partitions are in.
		if p.units[i].kind == RootUnit {
			return nil
		}
		mem := logfmt.StartJob(int64(i))
		defer mem.Done()
		return p.units[i].run(p, &o, mem)
	}, func(i int, rep *Report) error {
		u := p.units[i]
		if u.kind == RootUnit {
			rep = u.runRoot(p, &o, facts, !reported)
			reported = true
		} else if rep.facts != nil {
			facts[u.path] = rep.facts
		}
		return emit(rep)
	})
}

// batchWorkers is how many goroutines decode the batches of each unit
// when w verify units. Root units do not count: they run as they are
// emitted, and read no segment.
func (p *Plan) batchWorkers(w int) int {
	reading := 0
	for _, u := range p.units {
		if u.kind != RootUnit {
			reading++
		}
	}
	return parallel.PerJob(w, reading)
}

// maxListed is how many problems about one file a report lists; a corrupt
// segment of a million batches would otherwise make a million lines and hold
// them in memory.
const maxListed = 20

// collector gathers the findings of one unit.
type collector struct {
	rep     *Report
	listAll bool
	listed  map[string]int
	hidden  map[string]*hiddenFindings
	order   []string
}

type hiddenFindings struct {
	n   int
	pos int64 // position of the first one left out
}

func newCollector(rep *Report, o *Options) *collector {
	return &collector{rep: rep, listAll: o.ListAll, listed: map[string]int{}, hidden: map[string]*hiddenFindings{}}
}

func (c *collector) add(f Finding) {
	if f.Severity == Info {
		c.rep.Infos++
		if c.listed["\x00info:"+f.File] < c.limit() {
			c.listed["\x00info:"+f.File]++
			c.rep.Findings = append(c.rep.Findings, f)
		}
		return
	}
	n := max(1, f.More)
	c.rep.Problems += n
	if c.listed[f.File] < c.limit() {
		c.listed[f.File]++
		c.rep.Findings = append(c.rep.Findings, f)
		return
	}
	h := c.hidden[f.File]
	if h == nil {
		h = &hiddenFindings{pos: f.Pos}
		c.hidden[f.File] = h
		c.order = append(c.order, f.File)
	}
	h.n += n
}

// limit is how many problems about one file are listed.
func (c *collector) limit() int {
	if c.listAll {
		return math.MaxInt
	}
	return maxListed
}

// more counts n problems about file that another check left out, on one
// finding.
func (c *collector) more(file string, n int) {
	c.add(Finding{Severity: Problem, Code: CodeMore, File: file, Pos: -1, Msg: moreMsg(n), More: n})
}

func moreMsg(n int) string {
	return fmt.Sprintf("%d more problems like the above are not listed", n)
}

func (c *collector) problem(code Code, file string, pos int64, format string, args ...any) {
	c.add(Finding{Severity: Problem, Code: code, File: file, Pos: pos, Msg: fmt.Sprintf(format, args...)})
}

func (c *collector) info(code Code, file string, pos int64, format string, args ...any) {
	c.add(Finding{Severity: Info, Code: code, File: file, Pos: pos, Msg: fmt.Sprintf(format, args...)})
}

// has reports whether anything was found about file so far.
func (c *collector) has(file string) bool {
	return c.listed[file] > 0 || c.listed["\x00info:"+file] > 0
}

// flush lists, per file, how many problems were left out. The line is a
// problem line so that it shows wherever problems show; it is not counted
// again.
func (c *collector) flush() {
	for _, file := range c.order {
		h := c.hidden[file]
		c.rep.Findings = append(c.rep.Findings, Finding{Severity: Problem, Code: CodeMore, File: file, Pos: h.pos, Msg: moreMsg(h.n), More: h.n})
	}
	c.order = nil
	clear(c.hidden)
}

// sort orders the findings by file, keeping the order within a file, so
// that the output reads file by file; a segment's .log comes before its
// other files, as damage in the log is the cause of what is found in its
// indexes.
func (c *collector) sort() {
	slices.SortStableFunc(c.rep.Findings, func(a, b Finding) int {
		ka, kb := sortKey(a.File), sortKey(b.File)
		return cmp.Or(cmp.Compare(ka.stem, kb.stem), cmp.Compare(ka.rank, kb.rank), cmp.Compare(a.File, b.File))
	})
}

type fileKey struct {
	stem string // the path up to the first dot of the file's name
	rank int    // 0 for a .log, 1 for the rest
}

func sortKey(file string) fileKey {
	dir, name := filepath.Split(file)
	stem, _, _ := strings.Cut(name, ".")
	k := fileKey{stem: dir + stem, rank: 1}
	if strings.HasSuffix(name, ".log") {
		k.rank = 0
	}
	return k
}

// noOffset stands for "no batch yet" in offset comparisons.
const noOffset = math.MinInt64
