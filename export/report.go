package export

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/logtool/logtool/internal/human"
	"github.com/logtool/logtool/internal/jsonbytes"
	"github.com/logtool/logtool/internal/table"
)

// Warnings are what an operator must be told of a partition's export: a
// read_committed export cut short at the last stable offset, and the
// reader's notes.
func (r Result) Warnings() []string {
	var ws []string
	if st := r.Stats; st.StoppedAtLSO {
		ws = append(ws, fmt.Sprintf("%s: stopped at the last stable offset %d: the transaction of producer %d from there has no marker in the log, so a read_committed consumer sees nothing at or after it (--isolation read_uncommitted exports it, marked ongoing)",
			r.Partition.Path, st.LastStableOffset, st.OngoingProducer))
	}
	return append(ws, r.Stats.Notes...)
}

// Report is the summary of an export: a row per partition.
type Report struct {
	Rows []Result
}

// jsonSummary is a partition's "export" object.
type jsonSummary struct {
	Type             string         `json:"type"`
	File             jsonbytes.Text `json:"file"`
	Topic            string         `json:"topic"`
	Partition        int32          `json:"partition"`
	Records          int64          `json:"records"`
	AbortedRecords   int64          `json:"abortedRecords"`
	ControlRecords   int64          `json:"controlRecords"`
	Bytes            int64          `json:"bytes"`
	LogStartOffset   int64          `json:"logStartOffset"`
	LogEndOffset     int64          `json:"logEndOffset"`
	LastStableOffset *int64         `json:"lastStableOffset"`
	StoppedAtLSO     bool           `json:"stoppedAtLastStableOffset"`
}

// WriteJSON writes an "export" object per partition.
func (s *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	for _, r := range s.Rows {
		st := r.Stats
		var lso *int64
		if st.LastStableOffset >= 0 {
			lso = &st.LastStableOffset
		}
		if err := enc.Encode(jsonSummary{"export", jsonbytes.Text(r.Partition.Path), r.Partition.Dir.Topic, r.Partition.Dir.Partition, st.Records, st.AbortedRecords,
			st.ControlRecords, st.Bytes, st.LogStartOffset, st.LogEndOffset, lso, st.StoppedAtLSO}); err != nil {
			return err
		}
	}
	return nil
}

// WriteText writes a table of the partitions and a line of totals.
func (s *Report) WriteText(w io.Writer) error {
	t := table.New("PARTITION", "RECORDS", "ABORTED", "CONTROL", "LOG READ", "LOG START", "LOG END", "LAST STABLE")
	var recs, bytes int64
	for _, r := range s.Rows {
		st := r.Stats
		lso := "-"
		if st.LastStableOffset >= 0 {
			lso = fmt.Sprint(st.LastStableOffset)
		}
		t.Append(r.Partition.Dir.Name, fmt.Sprint(st.Records), fmt.Sprint(st.AbortedRecords), fmt.Sprint(st.ControlRecords),
			human.Bytes(st.Bytes), fmt.Sprint(st.LogStartOffset), fmt.Sprint(st.LogEndOffset), lso)
		recs += st.Records
		bytes += st.Bytes
	}
	if _, err := t.WriteTo(w); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "exported %d record(s) of %d partition(s), %s of log read\n", recs, len(s.Rows), human.Bytes(bytes))
	return err
}
