package dump

import (
	"bufio"
	"io"
	"slices"
	"strconv"
)

// maxPairs caps the pairs kept per file and report. Kafka keeps them all,
// but a compacted segment can have a gap after nearly every record, and
// memory must not grow with the segment; what is left out is counted.
const maxPairs = 10000

// fileReport is the list of pairs one of Kafka's end-of-run reports shows
// for one file.
type fileReport struct {
	file  string // absolute path, as Kafka prints it
	pairs [][2]int64
	more  int
}

// reports are the summaries Kafka's DumpLogSegments prints to stderr after
// all files, kept per job and written in job order. Kafka's "Found out of
// order timestamp" report has no counterpart: a time index entry whose
// timestamp does not increase ends the valid entries (index.TimeReader) and
// is reported as a problem there.
type reports struct {
	indexMismatch []*fileReport // "Mismatches in :<file>"
	timeMismatch  []*fileReport // "Found timestamp mismatch in :<file>"
	timeNotFound  []*fileReport // "The following indexed offsets are not found in the log."
	gaps          []*fileReport // "Non-consecutive offsets in <file>"
}

func add(list []*fileReport, file string, a, b int64) []*fileReport {
	if n := len(list); n == 0 || list[n-1].file != file {
		list = append(list, &fileReport{file: file})
	}
	r := list[len(list)-1]
	if len(r.pairs) < maxPairs {
		r.pairs = append(r.pairs, [2]int64{a, b})
	} else {
		r.more++
	}
	return list
}

func (r *reports) gap(file string, prev, next int64) { r.gaps = add(r.gaps, file, prev, next) }

func (r *reports) merge(o *reports) {
	r.indexMismatch = append(r.indexMismatch, o.indexMismatch...)
	r.timeMismatch = append(r.timeMismatch, o.timeMismatch...)
	r.timeNotFound = append(r.timeNotFound, o.timeNotFound...)
	r.gaps = append(r.gaps, o.gaps...)
}

// write prints the reports in Kafka's order and wording, spacing included.
// With quiet, the non-consecutive offsets, which compaction makes normal,
// are left out.
func (r *reports) write(w io.Writer, quiet bool) error {
	bw := bufio.NewWriter(w)
	section := func(list []*fileReport, head func(*fileReport) string, line func([2]int64) string, reverse bool) {
		for _, fr := range list {
			bw.WriteString(head(fr) + "\n")
			pairs := fr.pairs
			if reverse {
				pairs = slices.Clone(pairs)
				slices.Reverse(pairs)
			}
			for _, p := range pairs {
				bw.WriteString(line(p) + "\n")
			}
			if fr.more > 0 {
				bw.WriteString("  ... " + strconv.Itoa(fr.more) + " more not shown\n")
			}
		}
	}
	i := strconv.FormatInt
	// Kafka keeps index mismatches in a map sorted by index offset,
	// highest first.
	section(r.indexMismatch, func(f *fileReport) string { return "Mismatches in :" + f.file },
		func(p [2]int64) string { return "  Index offset: " + i(p[0], 10) + ", log offset: " + i(p[1], 10) }, true)
	section(r.timeMismatch, func(f *fileReport) string { return "Found timestamp mismatch in :" + f.file },
		func(p [2]int64) string {
			return "  Index timestamp: " + i(p[0], 10) + ", log timestamp: " + i(p[1], 10)
		}, false)
	section(r.timeNotFound, func(*fileReport) string { return "The following indexed offsets are not found in the log." },
		func(p [2]int64) string {
			return "Indexed offset: " + i(p[0], 10) + ", found log offset: " + i(p[1], 10)
		}, false)
	// Kafka 3.x to 4.2 prepend each gap to a list: newest first.
	if !quiet {
		section(r.gaps, func(f *fileReport) string { return "Non-consecutive offsets in " + f.file },
			func(p [2]int64) string { return "  " + i(p[0], 10) + " is followed by " + i(p[1], 10) }, true)
	}
	return bw.Flush()
}
