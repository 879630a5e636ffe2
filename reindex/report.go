package reindex

import (
	"fmt"

	"github.com/logtool/logtool/index"
	"github.com/logtool/logtool/logfmt"
)

// Kind is one of the three index files of a segment.
type Kind int

const (
	OffsetIndex Kind = iota // .index
	TimeIndex               // .timeindex
	TxnIndex                // .txnindex
)

func (k Kind) entrySize() int {
	switch k {
	case OffsetIndex:
		return index.OffsetEntrySize
	case TimeIndex:
		return index.TimeEntrySize
	}
	return index.TxnEntrySize
}

// Severity ranks a Finding.
type Severity int

const (
	// Note is information: a file Kafka recreates by itself, a preallocated
	// tail, a leftover of an interrupted operation, what a rebuild did.
	Note Severity = iota
	// Difference is a byte difference from the recovery rebuild that a live
	// broker legitimately produces. It fails only under Options.Strict.
	Difference
	// Problem is an index or log that would make lookups, retention or
	// read_committed consumers go wrong, or a log that recovery would cut.
	Problem
)

func (s Severity) String() string {
	switch s {
	case Difference:
		return "difference"
	case Problem:
		return "problem"
	}
	return "note"
}

// Finding is one thing a run has to say about a file.
type Finding struct {
	Severity Severity
	File     string
	Pos      int64 // byte position in File; -1 when it is about no one place
	Entry    int   // entry number in an index file, from 0; -1 when not about an entry
	Msg      string
	Expected string // what the log or the rebuild says, when there is one thing to compare
	Found    string
	// Group is the kind of finding: findings of one group about one file
	// are cut together ("boundary", "past", "diff:<why>", "note:<msg>", ...).
	Group string
	// Left, on the note that says findings of a group were left out, is
	// how many of each severity were.
	Left [3]int
}

func (f Finding) String() string {
	s := fmt.Sprintf("%s: %s: %s", f.Severity, f.File, f.Detail())
	if f.Pos >= 0 {
		s += fmt.Sprintf(" (at byte %d)", f.Pos)
	}
	return s
}

// Detail is the finding without its severity, file and position: the entry,
// the message, and what was expected and found, each only when known.
func (f Finding) Detail() string {
	s := f.Msg
	if f.Entry >= 0 {
		s = fmt.Sprintf("entry %d: %s", f.Entry, s)
	}
	switch {
	case f.Expected != "" && f.Found != "":
		s += fmt.Sprintf(" (expected %s, found %s)", f.Expected, f.Found)
	case f.Expected != "":
		s += fmt.Sprintf(" (expected %s)", f.Expected)
	case f.Found != "":
		s += fmt.Sprintf(" (found %s)", f.Found)
	}
	return s
}

// Action is what happened to an index file.
type Action int

const (
	Unchanged  Action = iota // the file already holds the rebuilt bytes
	Written                  // the file was replaced (or created)
	WouldWrite               // DryRun: Write would replace or create it
	Differs                  // Check: the file differs from the rebuild
	NotNeeded                // a .txnindex with nothing to hold and no file
)

func (a Action) String() string {
	switch a {
	case Written:
		return "written"
	case WouldWrite:
		return "would write"
	case Differs:
		return "differs"
	case NotNeeded:
		return "none"
	}
	return "unchanged"
}

// FileReport tells what a run did with one index file.
type FileReport struct {
	Kind    Kind
	Path    string
	Entries int // entries of the rebuilt index
	// Before is the number of valid entries the file held, -1 when it was
	// absent. It equals Entries when Action is Unchanged.
	Before int
	Action Action
}

// SegmentReport is the outcome for one segment.
type SegmentReport struct {
	Base       int64
	Log        string
	Size       int64 // bytes of the .log when it was read
	ValidBytes int64 // bytes of the valid batches: where recovery would truncate
	Batches    int
	End        logfmt.End // how the data ended, when Stop is nil
	EndDetail  string
	// Stop is the corruption that ended the valid prefix, or the first
	// offset too far from the base for the index (which Kafka resolves by
	// splitting the segment, so it never truncates there).
	Stop     error
	Overflow bool
	Files    []FileReport
	// Backup is the file holding the bytes TruncateCorruptTail removed from
	// the .log (DryRun: would hold); "" when nothing was removed, or when
	// they were all zeros.
	Backup string
	// ZerosCut is the number of bytes TruncateCorruptTail removed without a
	// backup because every one was zero: a preallocated or sparse tail,
	// where a backup would hold nothing but its length.
	ZerosCut int64
	// Cut tells that TruncateCorruptTail cut the .log (DryRun: would cut).
	Cut bool
	// NextOffset is the offset after the last valid batch; Base when none.
	NextOffset int64
}

// Tail is the number of bytes after the valid batches.
func (s *SegmentReport) Tail() int64 { return s.Size - s.ValidBytes }

// PartitionReport is the outcome for one partition directory.
type PartitionReport struct {
	Dir      string
	Segments []SegmentReport
	// Findings lists what was found, in order. Repetitive findings about one
	// file are cut after a few, with a note saying how many were left out;
	// Counts counts them all.
	Findings []Finding
	Counts   [3]int // by Severity
	// Snapshots are the producer snapshots past the log end that a cut
	// left, removed (DryRun: that would be removed) as a broker's
	// ProducerStateManager.truncateAndReload removes them.
	Snapshots []string
	// Checkpoints are the checkpoint files rewritten (DryRun: that would
	// be) because a cut of the last segment lowered the log end offset
	// below what they said of the partition.
	Checkpoints []string
}

// Count returns the number of findings of severity s, shown or not.
func (r *PartitionReport) Count(s Severity) int { return r.Counts[s] }

// maxShown is how many findings of one kind about one file are listed.
const maxShown = 5

// collector gathers findings, cutting repetitive ones.
type collector struct {
	rep     *PartitionReport
	listAll bool // Options.ListAll
	shown   map[string]int
	hidden  map[string]*[3]int // by severity
	files   map[string]string  // group key → file
	order   []string           // groups with hidden findings, in order
}

func newCollector(rep *PartitionReport, listAll bool) *collector {
	return &collector{rep: rep, listAll: listAll, shown: map[string]int{}, hidden: map[string]*[3]int{}, files: map[string]string{}}
}

// add records f; findings with the same group are cut together.
func (c *collector) add(group string, f Finding) {
	c.rep.Counts[f.Severity]++
	f.Group = group
	key := f.File + "\x00" + group
	if c.listAll || c.shown[key] < maxShown {
		c.shown[key]++
		c.rep.Findings = append(c.rep.Findings, f)
		return
	}
	if c.hidden[key] == nil {
		c.order = append(c.order, key)
		c.files[key] = f.File
		c.hidden[key] = new([3]int)
	}
	c.hidden[key][f.Severity]++
}

// flush appends one note per group that had findings cut.
func (c *collector) flush() {
	for _, key := range c.order {
		h := *c.hidden[key]
		c.rep.Findings = append(c.rep.Findings, Finding{Severity: Note, File: c.files[key], Pos: -1, Entry: -1,
			Msg: fmt.Sprintf("%d more findings like the %d above are not listed", h[Note]+h[Difference]+h[Problem], maxShown), Left: h})
	}
	c.order, c.hidden, c.files = nil, map[string]*[3]int{}, map[string]string{}
}

func (c *collector) note(file, msg string) {
	c.add("note:"+msg, Finding{Severity: Note, File: file, Pos: -1, Entry: -1, Msg: msg})
}

func (c *collector) problem(group, file string, pos int64, entry int, msg, expected, found string) {
	c.add(group, Finding{Severity: Problem, File: file, Pos: pos, Entry: entry, Msg: msg, Expected: expected, Found: found})
}
