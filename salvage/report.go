package salvage

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"

	"github.com/logtool/logtool/internal/human"
	"github.com/logtool/logtool/internal/jsonbytes"
	"github.com/logtool/logtool/internal/table"
	"github.com/logtool/logtool/logfmt/layout"
)

// jsonLost is a "lost" object: a byte range not carried over.
type jsonLost struct {
	Type        string         `json:"type"`
	File        jsonbytes.Text `json:"file"`
	Topic       string         `json:"topic"`
	Partition   int32          `json:"partition"`
	Position    int64          `json:"position"`
	EndPosition int64          `json:"endPosition"`
	Bytes       int64          `json:"bytes"`
	Batches     int            `json:"batches"`
	FromOffset  *int64         `json:"fromOffset"`
	ToOffset    *int64         `json:"toOffset"`
	Reason      string         `json:"reason"`
}

// jsonSalvage is the "salvage" object that ends the output.
type jsonSalvage struct {
	Type              string         `json:"type"`
	File              jsonbytes.Text `json:"file"`
	Topic             string         `json:"topic"`
	Partition         int32          `json:"partition"`
	Out               jsonbytes.Text `json:"out"`
	Segments          int            `json:"segments"`
	KeptBatches       int64          `json:"keptBatches"`
	KeptRecords       int64          `json:"keptRecords"`
	KeptBytes         int64          `json:"keptBytes"`
	LostBytes         int64          `json:"lostBytes"`
	LostRanges        int            `json:"lostRanges"`
	ZeroTailBytes     int64          `json:"zeroTailBytes"`
	LogStartOffset    int64          `json:"logStartOffset"`
	LogEndOffset      int64          `json:"logEndOffset"`
	EmptyEndSegment   bool           `json:"emptyEndSegment"`
	LeaderEpochs      string         `json:"leaderEpochCheckpoint"`
	PartitionMetadata string         `json:"partitionMetadata"`
	Skipped           []string       `json:"skipped"`
}

// WriteJSON writes a "lost" object per lost range, each naming the
// partition pd as dump's objects do, then the "salvage" object.
func (r *Report) WriteJSON(w io.Writer, pd layout.PartitionDir) error {
	enc := json.NewEncoder(w)
	for _, l := range r.Lost {
		var from, to *int64
		if l.FromOffset >= 0 {
			from, to = &l.FromOffset, &l.ToOffset
			if l.ToOffset < 0 {
				to = nil
			}
		}
		if err := enc.Encode(jsonLost{"lost", jsonbytes.Text(l.Segment), pd.Topic, pd.Partition, l.Position, l.End, l.End - l.Position, l.Batches, from, to, l.Reason}); err != nil {
			return err
		}
	}
	return enc.Encode(jsonSalvage{"salvage", jsonbytes.Text(r.Source), pd.Topic, pd.Partition, jsonbytes.Text(r.Out), len(r.Segments), r.KeptBatches, r.KeptRecords, r.KeptBytes, r.LostBytes,
		len(r.Lost), r.ZeroTail, r.LogStartOffset, r.LogEndOffset, r.EmptyEndSegment, r.LeaderEpochs, r.PartitionMeta,
		append([]string{}, r.Skipped...)})
}

// WriteText writes a table of the lost ranges, if any, and what was kept.
// The skipped files are the caller's to warn about.
func (r *Report) WriteText(w io.Writer) error {
	if len(r.Lost) > 0 {
		t := table.New("SEGMENT", "BYTES LOST", "FROM BYTE", "TO BYTE", "OFFSETS NOT KEPT", "REASON")
		for _, l := range r.Lost {
			offsets := "none"
			switch {
			case l.FromOffset >= 0 && l.ToOffset < 0:
				offsets = fmt.Sprintf("%d-? (end of log)", l.FromOffset)
			case l.FromOffset >= 0:
				offsets = fmt.Sprintf("%d-%d", l.FromOffset, l.ToOffset)
			}
			t.Append(filepath.Base(l.Segment), human.Bytes(l.End-l.Position), fmt.Sprint(l.Position), fmt.Sprint(l.End), offsets, l.Reason)
		}
		if _, err := t.WriteTo(w); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "salvaged %s into %s: kept %d batch(es), %d record(s), %s; lost %s in %d range(s)\n", r.Source, r.Out,
		r.KeptBatches, r.KeptRecords, human.Bytes(r.KeptBytes), human.Bytes(r.LostBytes), len(r.Lost))
	if r.ZeroTail > 0 {
		fmt.Fprintf(w, "the last segment's %s of zeros after its last batch is space a broker preallocated, not data: left out, not lost\n", human.Bytes(r.ZeroTail))
	}
	fmt.Fprintf(w, "offsets %d to %d", r.LogStartOffset, r.LogEndOffset)
	if r.EmptyEndSegment {
		fmt.Fprint(w, " (an empty segment at the end keeps the lost end offsets)")
	}
	_, err := fmt.Fprintf(w, "; leader-epoch-checkpoint %s; partition.metadata %s\n", r.LeaderEpochs, r.PartitionMeta)
	return err
}

// OutNameLoadable tells whether a broker would load the partition written
// to out under its directory name: only a name <topic>-<partition> loads.
func OutNameLoadable(out string, pd layout.PartitionDir) bool {
	name := filepath.Base(filepath.Clean(out))
	if name == pd.Name {
		return true
	}
	_, err := layout.ParsePartitionDir(name)
	return err == nil
}
