package replay

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/logtool/logtool/internal/human"
	"github.com/logtool/logtool/internal/jsonbytes"
	"github.com/logtool/logtool/internal/table"
)

// Report is the summary of a replay: a row per partition.
type Report struct {
	Results []Result
	DryRun  bool
}

// jsonSummary is a partition's "replay" object.
type jsonSummary struct {
	Type           string         `json:"type"`
	File           jsonbytes.Text `json:"file"`
	Topic          string         `json:"topic"`
	Partition      int32          `json:"partition"`
	DestTopic      string         `json:"destinationTopic"`
	DestPartition  *int32         `json:"destinationPartition"`
	From           int64          `json:"fromOffset"`
	Resumed        bool           `json:"resumed"`
	Next           int64          `json:"nextOffset"`
	Records        int64          `json:"records"`
	Bytes          int64          `json:"bytes"`
	DryRun         bool           `json:"dryRun"`
	FailedAtOffset *int64         `json:"failedAtOffset"`
	Error          string         `json:"error,omitempty"`
}

// WriteJSON writes a "replay" object per partition.
func (s *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	for _, r := range s.Results {
		o := jsonSummary{Type: "replay", File: jsonbytes.Text(r.Partition.Path), Topic: r.Partition.Dir.Topic, Partition: r.Partition.Dir.Partition, DestTopic: r.Topic,
			From: r.From, Resumed: r.Resumed, Next: r.Next, Records: r.Records, Bytes: r.Bytes, DryRun: s.DryRun}
		if r.DestPartition >= 0 {
			o.DestPartition = &r.DestPartition
		}
		if r.Err != nil {
			o.FailedAtOffset, o.Error = &r.FailedAtOffset, r.Err.Error()
		}
		if err := enc.Encode(o); err != nil {
			return err
		}
	}
	return nil
}

// WriteText writes a table of the partitions and a line of totals.
func (s *Report) WriteText(w io.Writer) error {
	t := table.New("PARTITION", "TO", "FROM OFFSET", "NEXT OFFSET", "RECORDS", "BYTES", "STATUS")
	var recs, bytes int64
	for _, r := range s.Results {
		to := r.Topic
		if r.DestPartition >= 0 {
			to = fmt.Sprintf("%s-%d", r.Topic, r.DestPartition)
		}
		status := "done"
		switch {
		case r.Err != nil:
			status = "failed"
		case r.From < 0:
			status = "not started"
		case s.DryRun:
			status = "dry run"
		}
		from := fmt.Sprint(r.From)
		if r.Resumed {
			from += " (resumed)"
		}
		t.Append(r.Partition.Dir.Name, to, from, fmt.Sprint(r.Next), fmt.Sprint(r.Records), human.Bytes(r.Bytes), status)
		recs += r.Records
		bytes += r.Bytes
	}
	if _, err := t.WriteTo(w); err != nil {
		return err
	}
	verb := "replayed"
	if s.DryRun {
		verb = "would replay"
	}
	_, err := fmt.Fprintf(w, "%s %d record(s), %s of keys, values and headers, from %d partition(s)\n", verb, recs, human.Bytes(bytes), len(s.Results))
	return err
}
