package commands

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/logtool/logtool/internal/human"
	"github.com/logtool/logtool/internal/jsonbytes"
	"github.com/logtool/logtool/internal/meter"
	"github.com/logtool/logtool/internal/table"
	"github.com/logtool/logtool/internal/target"
	"github.com/logtool/logtool/replicas"
)

func replicasCommand() *cli.Command {
	return &cli.Command{
		Name:        "replicas",
		Category:    "inspect",
		Usage:       "compare a partition's replicas across brokers, and say what Kafka's truncation would make each lose",
		ArgsUsage:   "PATH...",
		Description: description("replicas"),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "leader", Usage: "the broker (node id) that leads next, whose log the others truncate to; default: per partition, the replica with the highest leader epoch"},
			&cli.BoolFlag{Name: "all-records", Usage: "hash the records of every batch read from a log directory, not only of compacted replicas, so that a batch cleaned on one broker is checked record by record against one that never cleaned (decompresses every batch)"},
		},
		Action: runReplicas,
	}
}

func runReplicas(c *cli.Context) error {
	g, err := global(c)
	if err != nil {
		return err
	}
	if c.NArg() == 0 {
		return usageErr("no PATH given")
	}
	bar := newProgress(g, "replicas", 0, true)
	o := replicas.Options{MaxRecordBytes: g.MaxRecordBytes, AllRecords: c.Bool("all-records"), Progress: bar.Add}
	srcs, release, err := replicaSources(g, c.Args().Slice(), o, bar)
	defer release()
	if err != nil {
		return err
	}
	out := replicasOutput{g: g, enc: json.NewEncoder(g.Stdout)}
	stdout := g.Stdout
	if bar != nil && isTerminal(g.Stdout) {
		out.g.Stdout = bar.Writer(g.Stdout)
		out.enc = json.NewEncoder(out.g.Stdout)
	}
	sum, err := replicas.Run(srcs, replicas.RunOptions{Leader: c.String("leader")}, out.verdict)
	bar.Finish()
	out.g.Stdout = stdout
	if err != nil {
		return replicasErr(err)
	}
	if !g.JSON() {
		if err := out.summary(sum); err != nil {
			return err
		}
	}
	if sum.Failed() {
		return &ExitError{Code: ExitProblems, Err: fmt.Errorf("%d partition(s) diverge (%d below a high watermark), %d with different topic IDs, %d damaged",
			sum.Diverge, sum.BelowHighWatermark, sum.TopicIDs, sum.Damaged)}
	}
	return nil
}

// replicaSources opens each path as one broker's: a digest file, or log
// directories read under the lock policy of a reader.
func replicaSources(g Global, paths []string, o replicas.Options, bar *meter.Bar) ([]replicas.Source, func(), error) {
	var srcs []replicas.Source
	var releases []func() error
	release := func() {
		for _, s := range srcs {
			s.Close()
		}
		for _, r := range releases {
			r()
		}
	}
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			s, err := replicas.OpenDigest(p)
			if err != nil {
				return nil, release, replicasErr(err)
			}
			srcs = append(srcs, s)
			continue
		}
		set, rel, err := targets(g, []string{p}, target.Options{Command: "replicas", Takes: target.LogDirs}, target.Read)
		if err != nil {
			return nil, release, err
		}
		releases = append(releases, rel)
		bar.More(setLogBytes(set))
		s, err := replicas.OpenLogDirs(set, o)
		if err != nil {
			return nil, release, replicasErr(err)
		}
		srcs = append(srcs, s...)
	}
	return srcs, release, nil
}

// replicasErr makes input that cannot be compared a usage error (exit 2).
func replicasErr(err error) error {
	if _, ok := errors.AsType[*replicas.InputError](err); ok {
		return &ExitError{Code: ExitUsage, Err: err}
	}
	if ue, ok := errors.AsType[*target.UsageError](err); ok {
		return &ExitError{Code: ExitUsage, Err: ue}
	}
	return err
}

type replicasOutput struct {
	g   Global
	enc *json.Encoder
}

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

func optInt(v int64) *int64 {
	if v < 0 {
		return nil
	}
	return &v
}

func (w *replicasOutput) verdict(v *replicas.Verdict) error {
	if w.g.JSON() {
		return w.enc.Encode(verdictToJSON(v))
	}
	var b bytes.Buffer
	head := fmt.Sprintf("%s-%d  %s", v.Topic, v.Partition, v.Status)
	if v.Status == replicas.Diverge {
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
	_, err := w.g.Stdout.Write(b.Bytes())
	return err
}

func verdictToJSON(v *replicas.Verdict) verdictJSON {
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
	return j
}

func (w *replicasOutput) summary(s replicas.Summary) error {
	_, err := fmt.Fprintf(w.g.Stdout, "%d partition(s): %d agree, %d diverge (%d below a high watermark), %d on one broker, %d topic ID mismatch, %d damaged\n",
		s.Partitions, s.Agree, s.Diverge, s.BelowHighWatermark, s.Single, s.TopicIDs, s.Damaged)
	return err
}
