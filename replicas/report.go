package replicas

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/logtool/logtool/internal/human"
	"github.com/logtool/logtool/internal/jsonbytes"
	"github.com/logtool/logtool/internal/table"
	"github.com/logtool/logtool/internal/target"
)

type replicaJSON struct {
	Broker             string         `json:"broker"`
	Dir                jsonbytes.Text `json:"dir,omitempty"`
	Digest             string         `json:"digest,omitempty"`
	TopicID            *string        `json:"topicId"`
	LogStartOffset     int64          `json:"logStartOffset"`
	LogEndOffset       int64          `json:"logEndOffset"`
	HighWatermark      int64          `json:"highWatermark"`
	HighWatermarkKnown bool           `json:"highWatermarkKnown"`
	LatestEpoch        int32          `json:"latestEpoch"`
	WouldTruncateTo    *int64         `json:"wouldTruncateTo"`
	RecordsLost        *lostJSON      `json:"recordsLost"`
	Damage             []string       `json:"damage,omitempty"`
}

type lostJSON struct {
	Count              int64  `json:"count"`
	FirstOffset        *int64 `json:"firstOffset"`
	LastOffset         *int64 `json:"lastOffset"`
	FirstTimestamp     *int64 `json:"firstTimestamp"`
	LastTimestamp      *int64 `json:"lastTimestamp"`
	BelowHighWatermark bool   `json:"belowHighWatermark"`
}

type verdictJSON struct {
	Type               string         `json:"type"`
	File               jsonbytes.Text `json:"file"`
	Topic              string         `json:"topic"`
	Partition          int32          `json:"partition"`
	Status             string         `json:"status"`
	DivergentOffset    *int64         `json:"divergentOffset"`
	BelowHighWatermark bool           `json:"belowHighWatermark"`
	Leader             *string        `json:"leader"`
	Replicas           []replicaJSON  `json:"replicas"`
	Notes              []string       `json:"notes"`
}

// optInt is null for the -1 of an offset or time not known.
func optInt(v int64) *int64 {
	if v < 0 {
		return nil
	}
	return &v
}

// WriteJSON writes the verdict as one JSON line.
func (v *Verdict) WriteJSON(w io.Writer) error {
	file := v.Replicas[0].Source
	if d := v.Replicas[0].Digest; d != "" {
		file = d
	}
	j := verdictJSON{Type: "replicas", File: jsonbytes.Text(file), Topic: v.Topic, Partition: v.Partition, Status: string(v.Status),
		DivergentOffset: optInt(v.DivergentOffset), BelowHighWatermark: v.BelowHighWatermark, Notes: v.Notes}
	if v.Leader != "" {
		j.Leader = &v.Leader
	}
	if j.Notes == nil {
		j.Notes = []string{}
	}
	for _, r := range v.Replicas {
		rj := replicaJSON{Broker: r.Broker, Dir: jsonbytes.Text(r.Source), Digest: r.Digest, LogStartOffset: r.LogStartOffset, LogEndOffset: r.LogEndOffset,
			HighWatermark: r.HighWatermark, HighWatermarkKnown: r.HighWatermarkKnown, LatestEpoch: r.LatestEpoch(),
			WouldTruncateTo: optInt(r.WouldTruncateTo)}
		if r.HasTopicID {
			id := r.TopicID.String()
			rj.TopicID = &id
		}
		if r.WouldTruncateTo >= 0 {
			l := r.Lost
			rj.RecordsLost = &lostJSON{Count: l.Records, FirstOffset: optInt(l.FirstOffset), LastOffset: optInt(l.LastOffset),
				FirstTimestamp: optInt(l.FirstTimestamp), LastTimestamp: optInt(l.LastTimestamp), BelowHighWatermark: l.BelowHighWatermark}
		}
		for _, d := range r.Damage {
			rj.Damage = append(rj.Damage, fmt.Sprintf("%s: %s (at byte %d)", d.File, d.Msg, d.Pos))
		}
		j.Replicas = append(j.Replicas, rj)
	}
	return json.NewEncoder(w).Encode(j)
}

// WriteText writes the verdict as a head line, a table of the replicas
// indented under it, and notes, in one write.
func (v *Verdict) WriteText(w io.Writer) error {
	var b bytes.Buffer
	head := fmt.Sprintf("%s-%d  %s", v.Topic, v.Partition, v.Status)
	if v.Status == Diverge {
		head += fmt.Sprintf(" at offset %d", v.DivergentOffset)
		if v.BelowHighWatermark {
			head += ", below a high watermark"
		} else {
			head += ", above the high watermarks"
		}
	}
	if v.Leader != "" && len(v.Replicas) > 1 {
		head += "  (leader: broker " + v.Leader + ")"
	}
	fmt.Fprintln(&b, head)
	t := table.New("BROKER", "LOG START", "LOG END", "HIGH WATERMARK", "EPOCH", "TRUNCATE TO", "WOULD LOSE")
	for _, r := range v.Replicas {
		hw := fmt.Sprint(r.HighWatermark)
		if !r.HighWatermarkKnown {
			hw += " (no entry)"
		}
		to, lose := "-", "-"
		switch {
		case r.Broker == v.Leader && len(v.Replicas) > 1:
			to = "leader"
		case r.WouldTruncateTo >= 0:
			to, lose = fmt.Sprint(r.WouldTruncateTo), "nothing"
			if l := r.Lost; l.Records > 0 {
				lose = fmt.Sprintf("%d records, offsets %d-%d", l.Records, l.FirstOffset, l.LastOffset)
				if l.BelowHighWatermark {
					lose += ", below its HW"
				}
			}
		}
		t.Append(r.Broker, fmt.Sprint(r.LogStartOffset), fmt.Sprint(r.LogEndOffset), hw, fmt.Sprint(r.LatestEpoch()), to, lose)
	}
	var tb bytes.Buffer
	if _, err := t.WriteTo(&tb); err != nil {
		return err
	}
	for _, line := range strings.SplitAfter(tb.String(), "\n") {
		if line != "" {
			b.WriteString("  " + line)
		}
	}
	for _, r := range v.Replicas {
		if l := r.Lost; l.Records > 0 && l.FirstTimestamp >= 0 {
			fmt.Fprintf(&b, "  note: broker %s would lose batches written %s to %s\n", r.Broker, human.Time(l.FirstTimestamp), human.Time(l.LastTimestamp))
		}
	}
	for _, n := range v.Notes {
		fmt.Fprintf(&b, "  note: %s\n", n)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// WriteText writes the summary line of a run.
func (s Summary) WriteText(w io.Writer) error {
	_, err := fmt.Fprintf(w, "%d partition(s): %d agree, %d diverge (%d below a high watermark), %d on one broker, %d topic ID mismatch, %d damaged\n",
		s.Partitions, s.Agree, s.Diverge, s.BelowHighWatermark, s.Single, s.TopicIDs, s.Damaged)
	return err
}

// DigestReport is what digest wrote.
type DigestReport struct {
	File       string // the digest file
	Broker     string
	Partitions int
}

// WriteText writes the report as one line.
func (r DigestReport) WriteText(w io.Writer) error {
	_, err := fmt.Fprintf(w, "%s: broker %s, %d partition(s)\n", r.File, r.Broker, r.Partitions)
	return err
}

// WriteJSON writes the report as one JSON line.
func (r DigestReport) WriteJSON(w io.Writer) error {
	return json.NewEncoder(w).Encode(struct {
		Type       string         `json:"type"`
		File       jsonbytes.Text `json:"file"`
		Broker     string         `json:"broker"`
		Partitions int            `json:"partitions"`
	}{"digest", jsonbytes.Text(r.File), r.Broker, r.Partitions})
}

// Digest writes the digest of the one broker whose log directories set
// holds to path (WriteDigest). Several brokers' are an *InputError: each is
// digested on its own.
func Digest(path string, set *target.Set, o Options) (DigestReport, error) {
	srcs, err := OpenLogDirs(set, o)
	if err != nil {
		return DigestReport{}, err
	}
	if len(srcs) != 1 {
		var names []string
		for _, s := range srcs {
			names = append(names, s.Broker().Name)
		}
		return DigestReport{}, &InputError{fmt.Errorf("a digest is of one broker; the paths hold brokers %s: digest each on its own", strings.Join(names, ", "))}
	}
	n, err := WriteDigest(path, srcs[0])
	return DigestReport{File: path, Broker: srcs[0].Broker().Name, Partitions: n}, err
}
