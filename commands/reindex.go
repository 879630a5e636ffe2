package commands

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/logtool/logtool/index"
	"github.com/logtool/logtool/internal/human"
	"github.com/logtool/logtool/internal/jsonbytes"
	"github.com/logtool/logtool/internal/parallel"
	"github.com/logtool/logtool/internal/refuse"
	"github.com/logtool/logtool/internal/table"
	"github.com/logtool/logtool/internal/target"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/layout"
	"github.com/logtool/logtool/reindex"
)

func reindexCommand() *cli.Command {
	return &cli.Command{
		Name:        "reindex",
		Category:    "repair and convert",
		Usage:       "rebuild or check .index, .timeindex and .txnindex files as Kafka's segment recovery builds them",
		ArgsUsage:   "PATH...",
		Description: description("reindex"),
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "offset", Usage: "rebuild (or check) .index files; no selector means all three kinds"},
			&cli.BoolFlag{Name: "time", Usage: "rebuild (or check) .timeindex files; no selector means all three kinds"},
			&cli.BoolFlag{Name: "txn", Usage: "rebuild (or check) .txnindex files; no selector means all three kinds"},
			&cli.StringFlag{Name: "interval-bytes", Value: strconv.Itoa(index.DefaultIntervalBytes), Usage: "index.interval.bytes: log bytes between .index entries (bytes, or with K, M: 4KiB)"},
			&cli.StringFlag{Name: "granularity", Value: "0", Usage: "build a coarse time index, one entry per bucket of this width (e.g. 1m); 0 means recovery's time index"},
			&cli.BoolFlag{Name: "check", Usage: "write nothing; compare the existing indexes with the log (exit 3 on problems)"},
			&cli.BoolFlag{Name: "strict", Usage: "with --check: any byte difference from the rebuild is a problem"},
			&cli.BoolFlag{Name: "dry-run", Usage: "write nothing; report what would change"},
			&cli.BoolFlag{Name: "truncate-corrupt-tail", Usage: "cut a .log after its last valid batch, keeping the removed bytes in SEGMENT.log.truncated-POSITION"},
		},
		Action: runReindex,
	}
}

func runReindex(c *cli.Context) error {
	g, err := global(c)
	if err != nil {
		return err
	}
	o, err := reindexOptions(c)
	if err != nil {
		return err
	}
	o.MaxRecordBytes = g.MaxRecordBytes
	if c.NArg() == 0 {
		return usageErr("no PATH given")
	}
	access := target.Write
	if o.Mode != reindex.Write {
		access = target.Read
	}
	set, release, err := targets(g, c.Args().Slice(), target.Options{Command: "reindex",
		Takes: target.Segments | target.Partitions | target.LogDirs, Skip: reindexSkip, Writes: o.Mode != reindex.Check}, access)
	if err != nil {
		return err
	}
	defer release()
	jobs := set.Partitions()

	// The total costs a stat of every segment: only for a bar.
	if bar := newProgress(g, "reindex", 0, true); bar != nil {
		var total int64
		for _, j := range jobs {
			total += reindexLogBytes(j)
		}
		bar.Set(0, total)
		o.Progress = bar.Add
		defer bar.Finish()
	}
	reports, errs := reindexRun(jobs, o, g.Workers)

	out := newReindexOutput(g, o.Mode)
	failed, refused := 0, false
	for i, rep := range reports {
		if errs[i] != nil {
			failed++
			refused = refused || errors.Is(errs[i], refuse.ErrRefused)
			fmt.Fprintf(g.Stderr, "logtool: reindex: %s\n", oneLine(errs[i]))
		}
		if rep != nil {
			reindexDamage(rep, o)
			if err := out.partition(rep); err != nil {
				return err
			}
		}
	}
	if err := out.finish(); err != nil {
		return err
	}
	switch {
	case refused:
		return &ExitError{Code: ExitRefused, Err: fmt.Errorf("%d of %d partition(s) refused or failed", failed, len(jobs))}
	case failed > 0:
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf("%d of %d partition(s) failed", failed, len(jobs))}
	case out.counts[reindex.Problem] > 0:
		return problemsErr(out.counts[reindex.Problem])
	}
	return nil
}

func reindexOptions(c *cli.Context) (reindex.Options, error) {
	o := reindex.Options{
		Offset: c.Bool("offset"), Time: c.Bool("time"), Txn: c.Bool("txn"),
		Strict: c.Bool("strict"), TruncateCorruptTail: c.Bool("truncate-corrupt-tail"),
	}
	var err error
	if o.IntervalBytes, err = sizeArg("interval-bytes", c.String("interval-bytes"), 0, math.MaxInt32); err != nil {
		return o, err
	}
	if s := c.String("granularity"); s != "0" {
		warnBareMillis(c, "granularity", c.String("granularity"))
		ms, err := durationArg("granularity", s, 1, noMax/int64(time.Millisecond))
		if err != nil {
			return o, err
		}
		o.Granularity = time.Duration(ms) * time.Millisecond
	}
	selected := o.Offset || o.Time || o.Txn
	if !selected {
		o.Offset, o.Time, o.Txn = true, true, true
	}
	check, dry := c.Bool("check"), c.Bool("dry-run")
	switch {
	case check && dry:
		return o, usageErr("--check and --dry-run exclude each other (--check writes nothing already)")
	case check && o.TruncateCorruptTail:
		return o, usageErr("--check writes nothing; it cannot be combined with --truncate-corrupt-tail")
	case o.Strict && !check:
		return o, usageErr("--strict applies to --check")
	case o.Granularity > 0 && !o.Time:
		return o, usageErr("--granularity shapes the time index: add --time")
	}
	switch {
	case check:
		o.Mode = reindex.Check
	case dry:
		o.Mode = reindex.DryRun
	}
	return o, nil
}

// reindexSkip leaves out the directories of deleted topics found in a log
// directory: Kafka does not recover them.
func reindexSkip(p *target.Partition) (bool, string) {
	return !p.Named && p.Dir.Kind == layout.Delete, ""
}

// reindexLogBytes is the size of the .log files a job reads, for the
// progress bar.
func reindexLogBytes(j *target.Partition) int64 {
	p, err := layout.ReadPartition(j.Path)
	if err != nil {
		return 0
	}
	var n int64
	for _, s := range p.Segments {
		if s.Log == "" || j.Segments != nil && !slices.Contains(j.Segments, s.Base) {
			continue
		}
		if fi, err := os.Stat(s.Log); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// reindexRun processes the jobs on up to workers goroutines and returns
// their reports and errors in job order.
func reindexRun(jobs []*target.Partition, o reindex.Options, workers int) ([]*reindex.PartitionReport, []error) {
	reports := make([]*reindex.PartitionReport, len(jobs))
	errs := make([]error, len(jobs))
	parallel.Each(len(jobs), workers, func(i int) error {
		jo := o
		jo.Segments, jo.Workers = jobs[i].Segments, parallel.PerJob(workers, len(jobs))
		jo.Job = logfmt.StartJob(int64(i))
		defer jo.Job.Done()
		reports[i], errs[i] = reindex.Partition(jobs[i].Path, jo)
		return nil
	})
	return reports, errs
}

// reindexOutput writes the reports as text or JSON Lines.
type reindexOutput struct {
	g    Global
	mode reindex.Mode
	// brief is --quiet when writing: as for the other writing commands, the
	// report of what was done is left out, but never a problem. A dry run
	// prints its plan whatever --quiet says: the plan is its only output.
	brief      bool
	counts     [3]int
	segments   int
	partitions int
	written    int
	removed    int // producer snapshots past a cut's log end
	rows       *table.Table
	findings   []reindex.Finding
}

func newReindexOutput(g Global, mode reindex.Mode) *reindexOutput {
	return &reindexOutput{g: g, mode: mode, brief: g.Quiet && mode == reindex.Write,
		rows: table.New("SEGMENT", "BATCHES", "VALID", ".index", ".timeindex", ".txnindex")}
}

func (w *reindexOutput) partition(rep *reindex.PartitionReport) error {
	w.partitions++
	w.segments += len(rep.Segments)
	for s, n := range rep.Counts {
		w.counts[s] += n
	}
	for _, s := range rep.Segments {
		for _, f := range s.Files {
			if f.Action == reindex.Written || f.Action == reindex.WouldWrite {
				w.written++
			}
		}
		// A cut .log and its backup are written files too.
		if s.Cut {
			w.written++
			if s.Backup != "" {
				w.written++
			}
		}
	}
	// So are the checkpoints a cut of the last segment lowered.
	w.written += len(rep.Checkpoints)
	w.removed += len(rep.Snapshots)
	var findings []reindex.Finding
	for _, f := range rep.Findings {
		if !w.brief || f.Severity == reindex.Problem {
			findings = append(findings, f)
		}
	}
	if !w.g.JSON() {
		for _, s := range rep.Segments {
			w.rows.Append(reindexRow(rep.Dir, s)...)
		}
		w.findings = append(w.findings, findings...)
		return nil
	}
	enc := json.NewEncoder(w.g.Stdout)
	if !w.brief {
		for _, s := range rep.Segments {
			if err := enc.Encode(reindexSegmentJSON(rep.Dir, s)); err != nil {
				return err
			}
		}
	}
	for _, f := range findings {
		if err := enc.Encode(reindexFindingJSON(rep.Dir, f)); err != nil {
			return err
		}
	}
	if w.brief {
		return nil
	}
	return enc.Encode(struct {
		Type string         `json:"type"`
		File jsonbytes.Text `json:"file"`
		partJSON
		Mode        string `json:"mode"`
		Segments    int    `json:"segments"`
		Problems    int    `json:"problems"`
		Differences int    `json:"differences"`
		Notes       int    `json:"notes"`
	}{"reindex", jsonbytes.Text(rep.Dir), partOf(rep.Dir), reindexModeName(w.mode), len(rep.Segments), rep.Counts[reindex.Problem], rep.Counts[reindex.Difference], rep.Counts[reindex.Note]})
}

func (w *reindexOutput) finish() error {
	if w.g.JSON() {
		return nil
	}
	out := w.g.Stdout
	if w.mode != reindex.Check && !w.brief && w.rows.Len() > 0 {
		if _, err := w.rows.WriteTo(out); err != nil {
			return err
		}
	}
	for _, f := range w.findings {
		if _, err := fmt.Fprintln(out, f.String()); err != nil {
			return err
		}
	}
	if w.brief {
		return nil
	}
	var err error
	switch w.mode {
	case reindex.Check:
		_, err = fmt.Fprintf(out, "checked %d segment(s) in %d partition(s): %d problem(s), %d difference(s) from a recovery rebuild that a live broker makes, %d note(s)\n",
			w.segments, w.partitions, w.counts[reindex.Problem], w.counts[reindex.Difference], w.counts[reindex.Note])
	default:
		verb := "wrote"
		if w.mode == reindex.DryRun {
			verb = "would write"
		}
		problems := ""
		if n := w.counts[reindex.Problem]; n > 0 {
			problems = fmt.Sprintf("; %d problem(s)", n)
		}
		removed := ""
		if w.removed > 0 {
			removed = fmt.Sprintf(", %s %d producer snapshot(s) past the new log end", map[bool]string{true: "would remove", false: "removed"}[w.mode == reindex.DryRun], w.removed)
		}
		_, err = fmt.Fprintf(out, "%s %d file(s) for %d segment(s) in %d partition(s)%s%s\n", verb, w.written, w.segments, w.partitions, removed, problems)
	}
	return err
}

// reindexDamage makes the end of a damaged segment (corrupt, torn, zeros
// before a later segment, or an offset past what a segment can index) a
// problem when indexes are written or would be. The library rebuilds the
// indexes of the valid batches and calls where they end a note, as it is all
// reindex can do about it; but the
// .log stays damaged, since it is never cut without --truncate-corrupt-tail,
// so the run must not pass for a success: it exits 3, as a check does. A
// tail that --truncate-corrupt-tail cuts (or would cut) is repaired, and its
// end stays a note.
func reindexDamage(rep *reindex.PartitionReport, o reindex.Options) {
	if o.Mode == reindex.Check {
		return
	}
	for i, s := range rep.Segments {
		// Zeros end only the active segment legitimately (preallocation);
		// in an older one they are what verify calls them, damage.
		zeros := s.End == logfmt.EndZeroTail && i < len(rep.Segments)-1
		if s.Stop == nil && s.End != logfmt.EndTorn && !zeros || o.TruncateCorruptTail && !s.Overflow {
			continue
		}
		// The library's finding about the end, which names the damage.
		j := slices.IndexFunc(rep.Findings, func(f reindex.Finding) bool {
			return f.Severity == reindex.Note && f.File == s.Log && f.Pos == s.ValidBytes && f.Entry < 0
		})
		if j >= 0 {
			rep.Findings[j].Severity = reindex.Problem
			rep.Counts[reindex.Note]--
			rep.Counts[reindex.Problem]++
		}
	}
}

func reindexModeName(m reindex.Mode) string {
	switch m {
	case reindex.Check:
		return "check"
	case reindex.DryRun:
		return "dry-run"
	}
	return "write"
}

// reindexRow is a segment's row: the segment named within its partition, as
// the other commands' tables name partitions; the JSON objects and finding
// lines carry the full path.
func reindexRow(dir string, s reindex.SegmentReport) []string {
	cells := map[reindex.Kind]string{reindex.OffsetIndex: "-", reindex.TimeIndex: "-", reindex.TxnIndex: "-"}
	for _, f := range s.Files {
		cell := fmt.Sprintf("%d %s", f.Entries, f.Action)
		if f.Action == reindex.Written || f.Action == reindex.WouldWrite || f.Action == reindex.Differs {
			if f.Before < 0 {
				cell += " (was absent)"
			} else {
				cell += fmt.Sprintf(" (was %d)", f.Before)
			}
		}
		cells[f.Kind] = cell
	}
	valid := human.Bytes(s.ValidBytes)
	if s.Tail() > 0 {
		valid += fmt.Sprintf(" of %s", human.Bytes(s.Size))
	}
	name := filepath.Join(filepath.Base(filepath.Clean(dir)), filepath.Base(s.Log))
	return []string{name, strconv.Itoa(s.Batches), valid, cells[reindex.OffsetIndex], cells[reindex.TimeIndex], cells[reindex.TxnIndex]}
}

type reindexFileJSON struct {
	File    jsonbytes.Text `json:"file"`
	Entries int            `json:"entries"`
	Before  *int           `json:"before"`
	Action  string         `json:"action"`
}

func reindexSegmentJSON(dir string, s reindex.SegmentReport) any {
	type segment struct {
		Type string         `json:"type"`
		File jsonbytes.Text `json:"file"`
		Dir  jsonbytes.Text `json:"dir"`
		partJSON
		BaseOffset int64            `json:"baseOffset"`
		Size       int64            `json:"size"`
		ValidBytes int64            `json:"validBytes"`
		Batches    int              `json:"batches"`
		End        string           `json:"end"`
		Stop       *string          `json:"stop"`
		Overflow   bool             `json:"overflow"`
		Backup     *string          `json:"backup"`
		ZerosCut   int64            `json:"zerosCut"`
		Index      *reindexFileJSON `json:"index,omitempty"`
		TimeIndex  *reindexFileJSON `json:"timeindex,omitempty"`
		TxnIndex   *reindexFileJSON `json:"txnindex,omitempty"`
	}
	out := segment{Type: "reindex-segment", File: jsonbytes.Text(s.Log), Dir: jsonbytes.Text(dir), partJSON: partOf(dir), BaseOffset: s.Base, Size: s.Size,
		ValidBytes: s.ValidBytes, Batches: s.Batches, End: s.End.String(), Overflow: s.Overflow, ZerosCut: s.ZerosCut}
	if s.Stop != nil {
		msg := s.Stop.Error()
		out.Stop, out.End = &msg, "corrupt"
	}
	if s.Backup != "" {
		out.Backup = &s.Backup
	}
	for _, f := range s.Files {
		fj := &reindexFileJSON{File: jsonbytes.Text(f.Path), Entries: f.Entries, Action: f.Action.String()}
		if f.Before >= 0 {
			before := f.Before
			fj.Before = &before
		}
		switch f.Kind {
		case reindex.OffsetIndex:
			out.Index = fj
		case reindex.TimeIndex:
			out.TimeIndex = fj
		default:
			out.TxnIndex = fj
		}
	}
	return out
}

func reindexFindingJSON(dir string, f reindex.Finding) any {
	type finding struct {
		Type string         `json:"type"`
		File jsonbytes.Text `json:"file"`
		partJSON
		Position *int64  `json:"position"`
		Entry    *int    `json:"entry,omitempty"`
		Message  string  `json:"message"`
		Expected *string `json:"expected,omitempty"`
		Found    *string `json:"found,omitempty"`
	}
	out := finding{Type: f.Severity.String(), File: jsonbytes.Text(f.File), partJSON: partOf(dir), Message: f.Msg}
	if f.Pos >= 0 {
		out.Position = &f.Pos
	}
	if f.Entry >= 0 {
		out.Entry = &f.Entry
	}
	if f.Expected != "" {
		out.Expected = &f.Expected
	}
	if f.Found != "" {
		out.Found = &f.Found
	}
	return out
}
