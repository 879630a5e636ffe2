package reindex

import (
	"os"
	"slices"

	"github.com/logtool/logtool/internal/parallel"
	"github.com/logtool/logtool/internal/target"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/layout"
)

// Skip leaves out the directories of deleted topics found in a log
// directory: Kafka does not recover them.
func Skip(p *target.Partition) (bool, string) {
	return !p.Named && p.Dir.Kind == layout.Delete, ""
}

// LogBytes is the size of the .log files the jobs read, for a progress
// bar: it costs a stat of every segment.
func LogBytes(jobs []*target.Partition) int64 {
	var n int64
	for _, j := range jobs {
		p, err := layout.ReadPartition(j.Path)
		if err != nil {
			continue
		}
		for _, s := range p.Segments {
			if s.Log == "" || j.Segments != nil && !slices.Contains(j.Segments, s.Base) {
				continue
			}
			if fi, err := os.Stat(s.Log); err == nil {
				n += fi.Size()
			}
		}
	}
	return n
}

// Run processes the jobs on up to workers goroutines and returns their
// reports and errors in job order.
func Run(jobs []*target.Partition, o Options, workers int) ([]*PartitionReport, []error) {
	reports := make([]*PartitionReport, len(jobs))
	errs := make([]error, len(jobs))
	parallel.Each(len(jobs), workers, func(i int) error {
		jo := o
		jo.Segments, jo.Workers = jobs[i].Segments, parallel.PerJob(workers, len(jobs))
		jo.Job = logfmt.StartJob(int64(i))
		defer jo.Job.Done()
		reports[i], errs[i] = Partition(jobs[i].Path, jo)
		return nil
	})
	return reports, errs
}

// damageIsProblem makes the end of a damaged segment (corrupt, torn, zeros
// before a later segment, or an offset past what a segment can index) a
// problem when indexes are written or would be. The indexes of the valid
// batches are rebuilt and where they end is a note, as it is all reindex
// can do about it; but the .log stays damaged, since it is never cut
// without truncateTail, so the run must not pass for a success: it fails
// as a check does. A tail that truncateTail cuts (or would cut) is
// repaired, and its end stays a note.
func (rep *PartitionReport) damageIsProblem(truncateTail bool) {
	for i, s := range rep.Segments {
		// Zeros end only the active segment legitimately (preallocation);
		// in an older one they are what verify calls them, damage.
		zeros := s.End == logfmt.EndZeroTail && i < len(rep.Segments)-1
		if s.Stop == nil && s.End != logfmt.EndTorn && !zeros || truncateTail && !s.Overflow {
			continue
		}
		// The finding about the end, which names the damage.
		j := slices.IndexFunc(rep.Findings, func(f Finding) bool {
			return f.Severity == Note && f.File == s.Log && f.Pos == s.ValidBytes && f.Entry < 0
		})
		if j >= 0 {
			rep.Findings[j].Severity = Problem
			rep.Counts[Note]--
			rep.Counts[Problem]++
		}
	}
}
