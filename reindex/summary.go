package reindex

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"

	"github.com/logtool/logtool/internal/human"
	"github.com/logtool/logtool/internal/jsonbytes"
	"github.com/logtool/logtool/internal/table"
	"github.com/logtool/logtool/logfmt/layout"
)

// Summary writes the reports of a run as text or JSON Lines, and sums them
// up.
type Summary struct {
	w    io.Writer
	json bool
	mode Mode
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
	findings   []Finding
}

// NewSummary writes to w, in JSON Lines with asJSON; quiet leaves out the
// report of what a write did.
func NewSummary(w io.Writer, mode Mode, asJSON, quiet bool) *Summary {
	return &Summary{w: w, json: asJSON, mode: mode, brief: quiet && mode == Write,
		rows: table.New("SEGMENT", "BATCHES", "VALID", ".index", ".timeindex", ".txnindex")}
}

// Add counts rep and writes it: in JSON at once, in text its rows and
// findings are kept for Finish.
func (w *Summary) Add(rep *PartitionReport) error {
	w.partitions++
	w.segments += len(rep.Segments)
	for s, n := range rep.Counts {
		w.counts[s] += n
	}
	for _, s := range rep.Segments {
		for _, f := range s.Files {
			if f.Action == Written || f.Action == WouldWrite {
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
	var findings []Finding
	for _, f := range rep.Findings {
		if !w.brief || f.Severity == Problem {
			findings = append(findings, f)
		}
	}
	if !w.json {
		for _, s := range rep.Segments {
			w.rows.Append(row(rep.Dir, s)...)
		}
		w.findings = append(w.findings, findings...)
		return nil
	}
	enc := json.NewEncoder(w.w)
	if !w.brief {
		for _, s := range rep.Segments {
			if err := enc.Encode(segmentJSON(rep.Dir, s)); err != nil {
				return err
			}
		}
	}
	for _, f := range findings {
		if err := enc.Encode(findingJSON(rep.Dir, f)); err != nil {
			return err
		}
	}
	if w.brief {
		return nil
	}
	topic, partition := layout.PartitionOf(rep.Dir)
	return enc.Encode(struct {
		Type        string         `json:"type"`
		File        jsonbytes.Text `json:"file"`
		Topic       string         `json:"topic"`
		Partition   int32          `json:"partition"`
		Mode        string         `json:"mode"`
		Segments    int            `json:"segments"`
		Problems    int            `json:"problems"`
		Differences int            `json:"differences"`
		Notes       int            `json:"notes"`
	}{"reindex", jsonbytes.Text(rep.Dir), topic, partition, modeName(w.mode), len(rep.Segments), rep.Counts[Problem], rep.Counts[Difference], rep.Counts[Note]})
}

// Finish writes the text table, findings and the line of totals.
func (w *Summary) Finish() error {
	if w.json {
		return nil
	}
	out := w.w
	if w.mode != Check && !w.brief && w.rows.Len() > 0 {
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
	case Check:
		_, err = fmt.Fprintf(out, "checked %d segment(s) in %d partition(s): %d problem(s), %d difference(s) from a recovery rebuild that a live broker makes, %d note(s)\n",
			w.segments, w.partitions, w.counts[Problem], w.counts[Difference], w.counts[Note])
	default:
		verb := "wrote"
		if w.mode == DryRun {
			verb = "would write"
		}
		problems := ""
		if n := w.counts[Problem]; n > 0 {
			problems = fmt.Sprintf("; %d problem(s)", n)
		}
		removed := ""
		if w.removed > 0 {
			removed = fmt.Sprintf(", %s %d producer snapshot(s) past the new log end", map[bool]string{true: "would remove", false: "removed"}[w.mode == DryRun], w.removed)
		}
		_, err = fmt.Fprintf(out, "%s %d file(s) for %d segment(s) in %d partition(s)%s%s\n", verb, w.written, w.segments, w.partitions, removed, problems)
	}
	return err
}

func modeName(m Mode) string {
	switch m {
	case Check:
		return "check"
	case DryRun:
		return "dry-run"
	}
	return "write"
}

// row is a segment's row: the segment named within its partition, as
// the other commands' tables name partitions; the JSON objects and finding
// lines carry the full path.
func row(dir string, s SegmentReport) []string {
	cells := map[Kind]string{OffsetIndex: "-", TimeIndex: "-", TxnIndex: "-"}
	for _, f := range s.Files {
		cell := fmt.Sprintf("%d %s", f.Entries, f.Action)
		if f.Action == Written || f.Action == WouldWrite || f.Action == Differs {
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
	return []string{name, strconv.Itoa(s.Batches), valid, cells[OffsetIndex], cells[TimeIndex], cells[TxnIndex]}
}

type jsonFile struct {
	File    jsonbytes.Text `json:"file"`
	Entries int            `json:"entries"`
	Before  *int           `json:"before"`
	Action  string         `json:"action"`
}

func segmentJSON(dir string, s SegmentReport) any {
	type segment struct {
		Type       string         `json:"type"`
		File       jsonbytes.Text `json:"file"`
		Dir        jsonbytes.Text `json:"dir"`
		Topic      string         `json:"topic"`
		Partition  int32          `json:"partition"`
		BaseOffset int64          `json:"baseOffset"`
		Size       int64          `json:"size"`
		ValidBytes int64          `json:"validBytes"`
		Batches    int            `json:"batches"`
		End        string         `json:"end"`
		Stop       *string        `json:"stop"`
		Overflow   bool           `json:"overflow"`
		Backup     *string        `json:"backup"`
		ZerosCut   int64          `json:"zerosCut"`
		Index      *jsonFile      `json:"index,omitempty"`
		TimeIndex  *jsonFile      `json:"timeindex,omitempty"`
		TxnIndex   *jsonFile      `json:"txnindex,omitempty"`
	}
	out := segment{Type: "reindex-segment", File: jsonbytes.Text(s.Log), Dir: jsonbytes.Text(dir), BaseOffset: s.Base, Size: s.Size,
		ValidBytes: s.ValidBytes, Batches: s.Batches, End: s.End.String(), Overflow: s.Overflow, ZerosCut: s.ZerosCut}
	out.Topic, out.Partition = layout.PartitionOf(dir)
	if s.Stop != nil {
		msg := s.Stop.Error()
		out.Stop, out.End = &msg, "corrupt"
	}
	if s.Backup != "" {
		out.Backup = &s.Backup
	}
	for _, f := range s.Files {
		fj := &jsonFile{File: jsonbytes.Text(f.Path), Entries: f.Entries, Action: f.Action.String()}
		if f.Before >= 0 {
			before := f.Before
			fj.Before = &before
		}
		switch f.Kind {
		case OffsetIndex:
			out.Index = fj
		case TimeIndex:
			out.TimeIndex = fj
		default:
			out.TxnIndex = fj
		}
	}
	return out
}

func findingJSON(dir string, f Finding) any {
	type finding struct {
		Type      string         `json:"type"`
		File      jsonbytes.Text `json:"file"`
		Topic     string         `json:"topic"`
		Partition int32          `json:"partition"`
		Position  *int64         `json:"position"`
		Entry     *int           `json:"entry,omitempty"`
		Message   string         `json:"message"`
		Expected  *string        `json:"expected,omitempty"`
		Found     *string        `json:"found,omitempty"`
	}
	out := finding{Type: f.Severity.String(), File: jsonbytes.Text(f.File), Message: f.Msg}
	out.Topic, out.Partition = layout.PartitionOf(dir)
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

// Problems is how many problems the reports added hold.
func (w *Summary) Problems() int { return w.counts[Problem] }
