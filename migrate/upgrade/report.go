package upgrade

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

// jsonPartition is one "upgrade" object: a partition.
type jsonPartition struct {
	Type              string         `json:"type"`
	File              jsonbytes.Text `json:"file"`
	Topic             string         `json:"topic"`
	Partition         int32          `json:"partition"`
	Output            jsonbytes.Text `json:"output,omitempty"`
	DryRun            bool           `json:"dryRun"`
	ToMagic           int8           `json:"toMagic"`
	Segments          int            `json:"segments"`
	SegmentsRewritten int            `json:"segmentsRewritten"`
	MessagesConverted int64          `json:"messagesConverted"`
	BytesBefore       int64          `json:"bytesBefore"`
	BytesAfter        int64          `json:"bytesAfter"`
	Recovered         []string       `json:"recovered,omitempty"`
	Error             string         `json:"error,omitempty"` // the partition failed and was left as it was
}

// jsonSegment is one "upgrade-segment" object: a rewritten segment.
type jsonSegment struct {
	Type              string         `json:"type"`
	File              jsonbytes.Text `json:"file"`
	Topic             string         `json:"topic"`
	Partition         int32          `json:"partition"`
	BaseOffset        int64          `json:"baseOffset"`
	BatchesBefore     int            `json:"batchesBefore"`
	BatchesAfter      int            `json:"batchesAfter"`
	MessagesConverted int64          `json:"messagesConverted"`
	BytesBefore       int64          `json:"bytesBefore"`
	BytesAfter        int64          `json:"bytesAfter"`
	AppendTime        *int64         `json:"appendTime"` // null under CreateTime
}

// WriteJSON writes an "upgrade-root-file" object per root file copied, an
// "upgrade-segment" object per segment rewritten and an "upgrade" object per
// partition; errLine puts a failed partition's error on one line.
func (rep *Report) WriteJSON(w io.Writer, errLine func(error) string) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, f := range rep.RootFiles {
		if err := enc.Encode(struct {
			Type   string         `json:"type"`
			File   jsonbytes.Text `json:"file"`
			DryRun bool           `json:"dryRun"`
		}{"upgrade-root-file", jsonbytes.Text(f), rep.DryRun}); err != nil {
			return err
		}
	}
	for _, p := range rep.Partitions {
		for _, s := range p.Segments {
			if !s.Rewritten {
				continue
			}
			obj := jsonSegment{Type: "upgrade-segment", File: jsonbytes.Text(s.File), BaseOffset: s.Base, BatchesBefore: s.BatchesBefore,
				BatchesAfter: s.BatchesAfter, MessagesConverted: s.MessagesConverted, BytesBefore: s.BytesBefore, BytesAfter: s.BytesAfter}
			obj.Topic, obj.Partition = layout.PartitionOf(p.Dir)
			if s.AppendTime >= 0 {
				obj.AppendTime = &s.AppendTime
			}
			if err := enc.Encode(obj); err != nil {
				return err
			}
		}
		obj := jsonPartition{Type: "upgrade", File: jsonbytes.Text(p.Dir), Output: jsonbytes.Text(p.Output), DryRun: rep.DryRun, ToMagic: rep.ToMagic,
			Segments: len(p.Segments), SegmentsRewritten: p.SegmentsRewritten, MessagesConverted: p.MessagesConverted,
			BytesBefore: p.BytesBefore, BytesAfter: p.BytesAfter, Recovered: p.Recovered}
		obj.Topic, obj.Partition = layout.PartitionOf(p.Dir)
		if p.Err != nil {
			obj.Error = errLine(p.Err)
		}
		if err := enc.Encode(obj); err != nil {
			return err
		}
	}
	return nil
}

// WriteText writes a table of the partitions and a line of totals; output
// is the directory written into, "" for in place.
func (rep *Report) WriteText(w io.Writer, output string) error {
	t := table.New("PARTITION", "SEGMENTS REWRITTEN", "MESSAGES CONVERTED", "SIZE")
	var segs, rewritten, failed int
	var msgs, before, after int64
	for _, p := range rep.Partitions {
		name := filepath.Base(filepath.Clean(p.Dir))
		if p.Err != nil {
			// Its error line is on stderr; the row only says it is missing
			// from the figures.
			failed++
			t.Append(name, "failed", "-", "-")
			continue
		}
		segs, rewritten, msgs = segs+len(p.Segments), rewritten+p.SegmentsRewritten, msgs+p.MessagesConverted
		before, after = before+p.BytesBefore, after+p.BytesAfter
		// The partition directory's name, as the other commands show it; the
		// JSON objects carry the full path.
		t.Append(name, fmt.Sprintf("%d of %d", p.SegmentsRewritten, len(p.Segments)),
			strconv.FormatInt(p.MessagesConverted, 10), human.Bytes(p.BytesBefore)+" -> "+human.Bytes(p.BytesAfter))
	}
	if _, err := t.WriteTo(w); err != nil {
		return err
	}
	verb := "upgraded"
	if rep.DryRun {
		verb = "would upgrade"
	}
	where := ""
	switch {
	case len(rep.Removed) > 0:
		where = " into " + output + ", then removed again, as the run failed"
	case output != "":
		where = " into " + output
	}
	failures := ""
	if failed > 0 {
		failures = fmt.Sprintf("; %d partition(s) failed and were left as they were", failed)
	}
	if _, err := fmt.Fprintf(w, "%s %d partition(s) to magic %d%s: %d message(s) in %d of %d segment(s), %s -> %s%s\n",
		verb, len(rep.Partitions)-failed, rep.ToMagic, where, msgs, rewritten, segs, human.Bytes(before), human.Bytes(after), failures); err != nil {
		return err
	}
	if len(rep.RootFiles) > 0 {
		verb = "copied"
		if rep.DryRun {
			verb = "would copy"
		}
		if _, err := fmt.Fprintf(w, "%s %d root file(s) into %s\n", verb, len(rep.RootFiles), output); err != nil {
			return err
		}
	}
	return nil
}

// Warnings are what a run's caller should warn about: interrupted earlier
// runs finished or rolled back, and things left alone.
func (rep *Report) Warnings() []string {
	var ws []string
	for _, p := range rep.Partitions {
		for _, a := range p.Recovered {
			ws = append(ws, fmt.Sprintf("%s: interrupted earlier run: %s", p.Dir, a))
		}
	}
	return append(ws, rep.Notes...)
}
