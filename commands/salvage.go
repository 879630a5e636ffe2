package commands

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/logtool/logtool/internal/human"
	"github.com/logtool/logtool/internal/jsonbytes"
	"github.com/logtool/logtool/internal/table"
	"github.com/logtool/logtool/internal/target"
	"github.com/logtool/logtool/logfmt/layout"
	"github.com/logtool/logtool/salvage"
)

func salvageCommand() *cli.Command {
	return &cli.Command{
		Name:        "salvage",
		Category:    "rescue",
		Usage:       "copy every sound batch of a damaged partition into a new partition directory a broker loads cleanly",
		ArgsUsage:   "PARTITION_DIR --out DIR",
		Description: description("salvage"),
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Usage: "the new partition directory to write; must not exist"},
		},
		Action: runSalvage,
	}
}

// salvageArgs takes --out out of the arguments, where the contract's
// "salvage PARTITION_DIR --out DIR" puts it, after the path.
func salvageArgs(c *cli.Context) (src, out string, err error) {
	out = c.String("out")
	var rest []string
	args := c.Args().Slice()
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--out" || a == "-out":
			if i+1 == len(args) {
				return "", "", usageErr("--out needs a directory")
			}
			out, i = args[i+1], i+1
		case strings.HasPrefix(a, "--out="):
			out = strings.TrimPrefix(a, "--out=")
		default:
			rest = append(rest, a)
		}
	}
	if len(rest) != 1 {
		return "", "", usageErr("want one PARTITION_DIR, got %d path(s)", len(rest))
	}
	if out == "" {
		return "", "", usageErr("--out DIR is required: the new partition directory")
	}
	return rest[0], out, nil
}

func runSalvage(c *cli.Context) error {
	src, out, err := salvageArgs(c)
	if err != nil {
		return err
	}
	g, err := globalArgs(c, []string{src})
	if err != nil {
		return err
	}
	// The source must not change while it is read; the output's parent is
	// locked while it is written, so no other run takes its stage for a
	// killed run's.
	o := target.Options{Command: "salvage", Takes: target.Partitions, Output: out, OutputPartition: true}
	set, release, err := targets(g, []string{src}, o, target.Stable)
	if err != nil {
		return err
	}
	defer release()
	parts := set.Partitions()
	if len(parts) != 1 {
		return usageErr("%s: want one partition directory", src)
	}
	so := salvage.Options{MaxRecordBytes: g.MaxRecordBytes}
	bar := newProgress(g, "salvage", layout.SegmentBytes(parts[0].Path), true)
	so.Progress = bar.Add
	rep, err := salvage.Partition(parts[0].Path, out, so)
	bar.Finish()
	if err != nil {
		return err
	}
	if name := filepath.Base(filepath.Clean(out)); name != parts[0].Dir.Name {
		if _, err := layout.ParsePartitionDir(name); err != nil {
			g.Warnf("%s: a broker loads a partition directory only under a name <topic>-<partition>, like %s", out, parts[0].Dir.Name)
		}
	}
	return salvageReport(g, rep, parts[0].Dir)
}

// salvageReport prints what was kept and lost; each lost range names its
// partition as dump's objects do.
func salvageReport(g Global, rep *salvage.Report, pd layout.PartitionDir) error {
	if g.JSON() {
		enc := json.NewEncoder(g.Stdout)
		part := partJSON{pd.Topic, pd.Partition}
		for _, l := range rep.Lost {
			var from, to *int64
			if l.FromOffset >= 0 {
				from, to = &l.FromOffset, &l.ToOffset
				if l.ToOffset < 0 {
					to = nil
				}
			}
			if err := enc.Encode(struct {
				Type string         `json:"type"`
				File jsonbytes.Text `json:"file"`
				partJSON
				Position    int64  `json:"position"`
				EndPosition int64  `json:"endPosition"`
				Bytes       int64  `json:"bytes"`
				Batches     int    `json:"batches"`
				FromOffset  *int64 `json:"fromOffset"`
				ToOffset    *int64 `json:"toOffset"`
				Reason      string `json:"reason"`
			}{"lost", jsonbytes.Text(l.Segment), part, l.Position, l.End, l.End - l.Position, l.Batches, from, to, l.Reason}); err != nil {
				return err
			}
		}
		return enc.Encode(struct {
			Type string         `json:"type"`
			File jsonbytes.Text `json:"file"`
			partJSON
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
		}{"salvage", jsonbytes.Text(rep.Source), part, jsonbytes.Text(rep.Out), len(rep.Segments), rep.KeptBatches, rep.KeptRecords, rep.KeptBytes, rep.LostBytes,
			len(rep.Lost), rep.ZeroTail, rep.LogStartOffset, rep.LogEndOffset, rep.EmptyEndSegment, rep.LeaderEpochs, rep.PartitionMeta,
			append([]string{}, rep.Skipped...)})
	}
	w := g.Stdout
	if len(rep.Lost) > 0 {
		t := table.New("SEGMENT", "BYTES LOST", "FROM BYTE", "TO BYTE", "OFFSETS NOT KEPT", "REASON")
		for _, l := range rep.Lost {
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
	fmt.Fprintf(w, "salvaged %s into %s: kept %d batch(es), %d record(s), %s; lost %s in %d range(s)\n", rep.Source, rep.Out,
		rep.KeptBatches, rep.KeptRecords, human.Bytes(rep.KeptBytes), human.Bytes(rep.LostBytes), len(rep.Lost))
	if rep.ZeroTail > 0 {
		fmt.Fprintf(w, "the last segment's %s of zeros after its last batch is space a broker preallocated, not data: left out, not lost\n", human.Bytes(rep.ZeroTail))
	}
	fmt.Fprintf(w, "offsets %d to %d", rep.LogStartOffset, rep.LogEndOffset)
	if rep.EmptyEndSegment {
		fmt.Fprint(w, " (an empty segment at the end keeps the lost end offsets)")
	}
	fmt.Fprintf(w, "; leader-epoch-checkpoint %s; partition.metadata %s\n", rep.LeaderEpochs, rep.PartitionMeta)
	for _, f := range rep.Skipped {
		g.Warnf("%s: not carried over", f)
	}
	return nil
}
