package find

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/logtool/logtool/internal/human"
	"github.com/logtool/logtool/internal/jsonbytes"
	"github.com/logtool/logtool/internal/textdec"
	"github.com/logtool/logtool/logfmt/layout"
)

// Print says whether and how a report shows the record found.
type Print struct {
	Record     bool
	Key, Value textdec.Decoder
}

// timeText prints a timestamp as milliseconds and, when it is one, UTC.
func timeText(ms int64) string {
	if ms < 0 {
		return strconv.FormatInt(ms, 10) + " (none)"
	}
	return fmt.Sprintf("%d (%s)", ms, human.Time(ms))
}

// WriteText writes the lookup as labelled lines, how it went then the
// answer.
func (r *Result) WriteText(w io.Writer, p Print) error {
	var b strings.Builder
	line := func(label, format string, args ...any) {
		fmt.Fprintf(&b, "%-10s %s\n", label, fmt.Sprintf(format, args...))
	}
	if r.ByTimestamp {
		line("target", "timestamp %s", timeText(r.Target))
	} else {
		line("target", "offset %d", r.Target)
	}
	for _, f := range r.Fallbacks {
		line("fallback", "%s", f)
	}
	if !r.Found {
		line("answer", "none: %s", r.Reason)
		_, err := io.WriteString(w, b.String())
		return err
	}
	line("segment", "%s (base offset %d)", r.Segment, r.Base)
	if r.TimeEntry != nil {
		line("timeindex", "entry: timestamp %s at offset %d", timeText(r.TimeEntry.Timestamp), r.TimeEntry.Offset)
	}
	if r.IndexEntry != nil {
		line("index", "entry: offset %d at byte %d", r.IndexEntry.Offset, r.IndexEntry.Position)
	} else {
		line("index", "no entry used")
	}
	// Each size says what it measures: the bytes the scan read, then the
	// one batch holding the answer.
	line("scan", "from byte %d to byte %d: read %d batch(es), %s in all", r.Start, r.Start+r.ScannedBytes, r.Scanned, human.Bytes(r.ScannedBytes))
	bt := r.Batch
	desc := fmt.Sprintf("at byte %d, size %s: offsets %d to %d (%d record(s)), magic %d, %s, %s, max timestamp %s",
		bt.Position, human.Bytes(int64(bt.Size)), bt.BaseOffset, bt.LastOffset, bt.Records, bt.Magic, bt.Compression, bt.TimestampType, timeText(bt.MaxTimestamp))
	if bt.Magic >= 2 {
		desc += fmt.Sprintf(", leader epoch %d, producer %d epoch %d sequence %d", bt.LeaderEpoch, bt.ProducerID, bt.ProducerEpoch, bt.BaseSequence)
		if bt.Transactional {
			desc += ", transactional"
		}
		if bt.Control {
			desc += ", control"
		}
	}
	line("batch", "%s", desc)
	line("answer", "offset %d, timestamp %s", r.Offset, timeText(r.Timestamp))
	if p.Record {
		text := func(d textdec.Decoder, v []byte) string {
			if v == nil {
				return "null"
			}
			return string(d.AppendText(nil, v))
		}
		if p.Key != textdec.None {
			line("key", "%s", text(p.Key, r.Key))
		}
		if p.Value != textdec.None {
			line("value", "%s", text(p.Value, r.Value))
			hs := "none"
			for i, h := range r.Headers {
				if i == 0 {
					hs = ""
				} else {
					hs += ", "
				}
				hs += text(textdec.String, h.Key) + "=" + text(p.Value, h.Value)
			}
			line("headers", "%s", hs)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// recordJSON is the record found as a JSON object: key, value (each left
// out when its decoder is none) and headers, bytes kept as jsonbytes does.
func (r *Result) recordJSON(p Print) json.RawMessage {
	b := []byte("{")
	if p.Key != textdec.None {
		b = p.Key.AppendJSON(append(b, `"key":`...), r.Key)
		b = append(b, ',')
	}
	if p.Value != textdec.None {
		b = p.Value.AppendJSON(append(b, `"value":`...), r.Value)
		b = append(b, `,"headers":[`...)
		for i, h := range r.Headers {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonbytes.AppendBytes(append(b, `{"key":`...), h.Key)
			b = p.Value.AppendJSON(append(b, `,"value":`...), h.Value)
			b = append(b, '}')
		}
		b = append(b, "],"...)
	}
	return append(bytes.TrimSuffix(b, []byte(",")), '}')
}

type jsonEntry struct {
	Offset    int64  `json:"offset"`
	Position  *int32 `json:"position,omitempty"`
	Timestamp *int64 `json:"timestamp,omitempty"`
}

type jsonBatch struct {
	Position             int64  `json:"position"`
	Size                 int    `json:"size"`
	BaseOffset           int64  `json:"baseOffset"`
	LastOffset           int64  `json:"lastOffset"`
	Count                int    `json:"count"`
	Magic                int8   `json:"magic"`
	Compression          string `json:"compression"`
	TimestampType        string `json:"timestampType"`
	MaxTimestamp         int64  `json:"maxTimestamp"`
	PartitionLeaderEpoch *int32 `json:"partitionLeaderEpoch,omitempty"`
	ProducerID           *int64 `json:"producerId,omitempty"`
	ProducerEpoch        *int16 `json:"producerEpoch,omitempty"`
	BaseSequence         *int32 `json:"baseSequence,omitempty"`
	IsTransactional      *bool  `json:"isTransactional,omitempty"`
	IsControl            *bool  `json:"isControl,omitempty"`
}

// jsonResult is the "find" object.
type jsonResult struct {
	Type string         `json:"type"`
	File jsonbytes.Text `json:"file"`
	Dir  jsonbytes.Text `json:"dir"`
	// Topic and Partition are as every per-partition object carries them:
	// "" and -1 for a directory whose name is not a partition's.
	Topic        string          `json:"topic"`
	Partition    int32           `json:"partition"`
	By           string          `json:"by"`
	Target       int64           `json:"target"`
	Found        bool            `json:"found"`
	Reason       string          `json:"reason,omitempty"`
	BaseOffset   *int64          `json:"baseOffset,omitempty"`
	IndexEntry   *jsonEntry      `json:"indexEntry"`
	TimeEntry    *jsonEntry      `json:"timeIndexEntry"`
	Start        int64           `json:"scanStart"`
	Scanned      int             `json:"scannedBatches"`
	ScannedBytes int64           `json:"scannedBytes"`
	Fallbacks    []string        `json:"fallbacks"`
	Batch        *jsonBatch      `json:"batch"`
	Offset       *int64          `json:"offset"`
	Timestamp    *int64          `json:"timestamp"`
	Record       json.RawMessage `json:"record,omitempty"`
}

// WriteJSON writes the lookup as one "find" object.
func (r *Result) WriteJSON(w io.Writer, p Print) error {
	return json.NewEncoder(w).Encode(r.json(p))
}

func (r *Result) json(p Print) jsonResult {
	out := jsonResult{Type: "find", File: jsonbytes.Text(r.Segment), Dir: jsonbytes.Text(r.Dir), Partition: -1, By: "offset", Target: r.Target, Found: r.Found,
		Reason: r.Reason, Start: r.Start, Scanned: r.Scanned, ScannedBytes: r.ScannedBytes, Fallbacks: r.Fallbacks}
	if pd, err := layout.ParsePartitionDir(filepath.Base(filepath.Clean(r.Dir))); err == nil {
		out.Topic, out.Partition = pd.Topic, pd.Partition
	}
	if out.Fallbacks == nil {
		out.Fallbacks = []string{}
	}
	if r.ByTimestamp {
		out.By = "timestamp"
	}
	if out.File == "" {
		out.File = jsonbytes.Text(r.Dir)
	}
	if r.IndexEntry != nil {
		out.IndexEntry = &jsonEntry{Offset: r.IndexEntry.Offset, Position: &r.IndexEntry.Position}
	}
	if r.TimeEntry != nil {
		out.TimeEntry = &jsonEntry{Offset: r.TimeEntry.Offset, Timestamp: &r.TimeEntry.Timestamp}
	}
	if r.Found {
		bt := r.Batch
		b := &jsonBatch{Position: bt.Position, Size: bt.Size, BaseOffset: bt.BaseOffset, LastOffset: bt.LastOffset, Count: bt.Records,
			Magic: bt.Magic, Compression: bt.Compression.String(), TimestampType: bt.TimestampType.String(), MaxTimestamp: bt.MaxTimestamp}
		if bt.Magic >= 2 {
			b.PartitionLeaderEpoch, b.ProducerID, b.ProducerEpoch, b.BaseSequence = &bt.LeaderEpoch, &bt.ProducerID, &bt.ProducerEpoch, &bt.BaseSequence
			b.IsTransactional, b.IsControl = &bt.Transactional, &bt.Control
		}
		out.Batch, out.BaseOffset, out.Offset, out.Timestamp = b, &r.Base, &r.Offset, &r.Timestamp
		if p.Record {
			out.Record = r.recordJSON(p)
		}
	}
	return out
}
