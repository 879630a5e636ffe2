package commands

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/logtool/logtool/internal/human"
	"github.com/logtool/logtool/internal/jsonbytes"
	"github.com/logtool/logtool/internal/target"
	"github.com/logtool/logtool/verify"
)

func verifyCommand() *cli.Command {
	return &cli.Command{
		Name:        "verify",
		Category:    "inspect",
		Usage:       "check log directories, partitions or files for damage and disagreement, without changing them",
		ArgsUsage:   "PATH...",
		Description: description("verify"),
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "deep", Usage: "also parse every record of every batch, not only the framing and checksums of batches"},
			&cli.BoolFlag{Name: "strict", Usage: "index files must be byte-identical to what Kafka's recovery builds (as logtool gen and reindex write them), not only serve lookups correctly as a live broker's do"},
			&cli.BoolFlag{Name: "verbose", Usage: "list every finding: the information findings, and the problems past 20 about one file, which are otherwise only counted"},
		},
		Action: runVerify,
	}
}

func runVerify(c *cli.Context) error {
	g, err := global(c)
	if err != nil {
		return err
	}
	if c.NArg() == 0 {
		return usageErr("no PATH given")
	}
	paths := c.Args().Slice()
	set, release, err := targets(g, paths, target.Options{Command: "verify",
		Takes: target.Files | target.Segments | target.Partitions | target.LogDirs}, target.Read)
	if err != nil {
		return err
	}
	defer release()
	plan := verify.NewPlan(set)
	o := verify.Options{Deep: c.Bool("deep"), StrictIndexes: c.Bool("strict"), Workers: g.Workers, MaxRecordBytes: g.MaxRecordBytes,
		ListAll: c.Bool("verbose")}
	// The total costs a stat of every segment: only for a bar.
	bar := newProgress(g, "verify", 0, true)
	if bar != nil {
		bar.Set(0, plan.LogBytes())
		o.Progress = bar.Add
	}
	out := &verifyOutput{g: g, verbose: c.Bool("verbose"), enc: json.NewEncoder(g.Stdout)}
	err = plan.Run(o, func(rep *verify.Report) error {
		if len(rep.Findings) > 0 {
			bar.Clear()
		}
		return out.report(rep)
	})
	bar.Finish()
	if err != nil {
		return err
	}
	if err := out.summary(paths); err != nil {
		return err
	}
	switch {
	case out.failed > 0:
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf("%d of %d unit(s) could not be verified", out.failed, out.units)}
	case out.problems > 0:
		return problemsErr(out.problems)
	}
	return nil
}

// verifyOutput writes the reports as text or JSON Lines and sums them up.
type verifyOutput struct {
	g       Global
	verbose bool
	enc     *json.Encoder

	units, failed, partitions, files, segments int
	batches, records, bytes                    int64
	problems, infos                            int
}

type verifyFindingJSON struct {
	Type string         `json:"type"`
	File jsonbytes.Text `json:"file"`
	// The partition of the finding, left out for a file outside any.
	Topic     *string `json:"topic,omitempty"`
	Partition *int32  `json:"partition,omitempty"`
	Position  *int64  `json:"position"`
	Code      string  `json:"code"`
	Message   string  `json:"message"`
	// More is how many problems this one stands for, when they are not
	// listed.
	More int `json:"more,omitempty"`
}

func (w *verifyOutput) report(rep *verify.Report) error {
	w.units++
	switch rep.Kind {
	case verify.PartitionUnit:
		w.partitions++
	case verify.FileUnit:
		w.files++
	}
	w.segments += rep.Segments
	w.batches += rep.Batches
	w.records += rep.Records
	w.bytes += rep.Bytes
	w.problems += rep.Problems
	w.infos += rep.Infos
	for _, f := range rep.Findings {
		if f.Severity == verify.Info && !w.verbose {
			continue
		}
		var err error
		if w.g.JSON() {
			fj := verifyFindingJSON{Type: f.Severity.String(), File: jsonbytes.Text(f.File), Code: string(f.Code), Message: f.Msg, More: f.More}
			if p := verifiedPart(rep); p != nil {
				fj.Topic, fj.Partition = &p.Topic, &p.Partition
			}
			if f.Pos >= 0 {
				pos := f.Pos
				fj.Position = &pos
			}
			err = w.enc.Encode(fj)
		} else {
			line := f.String()
			if f.More > 0 {
				line += " (--verbose lists them)"
			}
			_, err = fmt.Fprintln(w.g.Stdout, line)
		}
		if err != nil {
			return err
		}
	}
	salvage := ""
	if rep.Salvage != "" {
		salvage = salvageLine(rep.Salvage)
		if !w.g.JSON() {
			if _, err := fmt.Fprintf(w.g.Stdout, "salvage: %s copies every sound batch of the partition into a new directory, those after the damage too, which Kafka's recovery drops\n", salvage); err != nil {
				return err
			}
		}
	}
	if rep.Err != nil {
		w.failed++
		fmt.Fprintf(w.g.Stderr, "logtool: verify: %s\n", oneLine(rep.Err))
	}
	if !w.g.JSON() {
		return nil
	}
	return w.enc.Encode(struct {
		Type string         `json:"type"`
		File jsonbytes.Text `json:"file"`
		*partJSON
		Kind     string `json:"kind"`
		Segments int    `json:"segments"`
		Batches  int64  `json:"batches"`
		Records  int64  `json:"records"`
		Bytes    int64  `json:"bytes"`
		Problems int    `json:"problems"`
		Infos    int    `json:"infos"`
		Failed   bool   `json:"failed"`
		Salvage  string `json:"salvage,omitempty"`
	}{"verified", jsonbytes.Text(rep.Path), verifiedPart(rep), rep.Kind.String(), rep.Segments, rep.Batches, rep.Records, rep.Bytes, rep.Problems, rep.Infos, rep.Err != nil, salvage})
}

// verifiedPart names the partition of a report: the partition checked, or
// the one holding the file checked; nil for a file outside any.
func verifiedPart(rep *verify.Report) *partJSON {
	dir := rep.Path
	if rep.Kind != verify.PartitionUnit {
		dir = filepath.Dir(dir)
	}
	if p := partOf(dir); p.Partition >= 0 || rep.Kind == verify.PartitionUnit {
		return &p
	}
	return nil
}

// salvageLine is the command line that salvages the partition dir
// into a directory beside its log directory, never inside it, where a
// broker would find a directory it cannot load.
func salvageLine(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	out := filepath.Join(filepath.Dir(dir)+".salvaged", filepath.Base(dir))
	return fmt.Sprintf("logtool salvage %s --out %s", shellArg(dir), shellArg(out))
}

// shellArg quotes s for a POSIX shell when it holds more than plain path
// characters, so that a suggested command line can be pasted.
func shellArg(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./-=+,:@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func (w *verifyOutput) summary(paths []string) error {
	if w.g.JSON() {
		file := ""
		if len(paths) == 1 {
			file = paths[0]
		}
		return w.enc.Encode(struct {
			Type       string         `json:"type"`
			File       jsonbytes.Text `json:"file"`
			Paths      []string       `json:"paths"`
			Partitions int            `json:"partitions"`
			Files      int            `json:"files"`
			Segments   int            `json:"segments"`
			Batches    int64          `json:"batches"`
			Records    int64          `json:"records"`
			Bytes      int64          `json:"bytes"`
			Problems   int            `json:"problems"`
			Infos      int            `json:"infos"`
			Failed     int            `json:"failed"`
			Clean      bool           `json:"clean"`
		}{"summary", jsonbytes.Text(file), paths, w.partitions, w.files, w.segments, w.batches, w.records, w.bytes, w.problems, w.infos, w.failed,
			w.problems == 0 && w.failed == 0})
	}
	var what []string
	for _, n := range []struct {
		n    int
		unit string
	}{{w.partitions, "partition(s)"}, {w.files, "file(s)"}, {w.segments, "segment(s)"}} {
		if n.n > 0 {
			what = append(what, fmt.Sprintf("%d %s", n.n, n.unit))
		}
	}
	what = append(what, fmt.Sprintf("%d batch(es)", w.batches))
	if w.records > 0 {
		what = append(what, fmt.Sprintf("%d record(s)", w.records))
	}
	s := fmt.Sprintf("verified %s, %s of log: ", strings.Join(what, ", "), human.Bytes(w.bytes))
	if w.problems == 0 {
		s += "no problems"
	} else {
		s += fmt.Sprintf("%d problem(s)", w.problems)
	}
	if w.infos > 0 {
		s += fmt.Sprintf(", %d information finding(s)", w.infos)
		if !w.verbose {
			s += " (--verbose lists them)"
		}
	}
	if w.failed > 0 {
		s += fmt.Sprintf("; %d could not be verified", w.failed)
	}
	_, err := fmt.Fprintln(w.g.Stdout, s)
	return err
}
