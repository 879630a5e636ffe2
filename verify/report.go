package verify

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/logtool/logtool/internal/human"
	"github.com/logtool/logtool/internal/jsonbytes"
	"github.com/logtool/logtool/logfmt/layout"
)

// Summary writes the reports of a run as they come, as text or JSON Lines,
// and sums them up.
type Summary struct {
	w       io.Writer
	json    bool
	verbose bool
	enc     *json.Encoder

	Units, Failed, Partitions, Files, Segments int
	Batches, Records, Bytes                    int64
	Problems, Infos                            int
}

// NewSummary writes to w, in JSON Lines with asJSON; verbose lists the
// information findings too.
func NewSummary(w io.Writer, asJSON, verbose bool) *Summary {
	return &Summary{w: w, json: asJSON, verbose: verbose, enc: json.NewEncoder(w)}
}

// jsonPart is the partition of a JSON object, left out for a file outside
// any.
type jsonPart struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
}

type jsonFinding struct {
	Type      string         `json:"type"`
	File      jsonbytes.Text `json:"file"`
	Topic     *string        `json:"topic,omitempty"`
	Partition *int32         `json:"partition,omitempty"`
	Position  *int64         `json:"position"`
	Code      string         `json:"code"`
	Message   string         `json:"message"`
	// More is how many problems this one stands for, when they are not
	// listed.
	More int `json:"more,omitempty"`
}

type jsonVerified struct {
	Type string         `json:"type"`
	File jsonbytes.Text `json:"file"`
	*jsonPart
	Kind     string `json:"kind"`
	Segments int    `json:"segments"`
	Batches  int64  `json:"batches"`
	Records  int64  `json:"records"`
	Bytes    int64  `json:"bytes"`
	Problems int    `json:"problems"`
	Infos    int    `json:"infos"`
	Failed   bool   `json:"failed"`
	Salvage  string `json:"salvage,omitempty"`
}

type jsonSummary struct {
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
}

// Add counts rep and writes its findings, its salvage suggestion and, in
// JSON, its "verified" object. rep.Err is the caller's to print.
func (s *Summary) Add(rep *Report) error {
	s.Units++
	switch rep.Kind {
	case PartitionUnit:
		s.Partitions++
	case FileUnit:
		s.Files++
	}
	s.Segments += rep.Segments
	s.Batches += rep.Batches
	s.Records += rep.Records
	s.Bytes += rep.Bytes
	s.Problems += rep.Problems
	s.Infos += rep.Infos
	if rep.Err != nil {
		s.Failed++
	}
	for _, f := range rep.Findings {
		if f.Severity == Info && !s.verbose {
			continue
		}
		var err error
		if s.json {
			fj := jsonFinding{Type: f.Severity.String(), File: jsonbytes.Text(f.File), Code: string(f.Code), Message: f.Msg, More: f.More}
			if p := reportPart(rep); p != nil {
				fj.Topic, fj.Partition = &p.Topic, &p.Partition
			}
			if f.Pos >= 0 {
				pos := f.Pos
				fj.Position = &pos
			}
			err = s.enc.Encode(fj)
		} else {
			line := f.String()
			if f.More > 0 {
				line += " (--verbose lists them)"
			}
			_, err = fmt.Fprintln(s.w, line)
		}
		if err != nil {
			return err
		}
	}
	salvage := ""
	if rep.Salvage != "" {
		salvage = salvageLine(rep.Salvage)
		if !s.json {
			if _, err := fmt.Fprintf(s.w, "salvage: %s copies every sound batch of the partition into a new directory, those after the damage too, which Kafka's recovery drops\n", salvage); err != nil {
				return err
			}
		}
	}
	if !s.json {
		return nil
	}
	return s.enc.Encode(jsonVerified{"verified", jsonbytes.Text(rep.Path), reportPart(rep), rep.Kind.String(), rep.Segments, rep.Batches, rep.Records, rep.Bytes,
		rep.Problems, rep.Infos, rep.Err != nil, salvage})
}

// reportPart names the partition of a report: the partition checked, or
// the one holding the file checked; nil for a file outside any.
func reportPart(rep *Report) *jsonPart {
	dir := rep.Path
	if rep.Kind != PartitionUnit {
		dir = filepath.Dir(dir)
	}
	if topic, partition := layout.PartitionOf(dir); partition >= 0 || rep.Kind == PartitionUnit {
		return &jsonPart{topic, partition}
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

// Finish writes the summary of the run over paths: a line, or a "summary"
// object.
func (s *Summary) Finish(paths []string) error {
	if s.json {
		file := ""
		if len(paths) == 1 {
			file = paths[0]
		}
		return s.enc.Encode(jsonSummary{"summary", jsonbytes.Text(file), paths, s.Partitions, s.Files, s.Segments, s.Batches, s.Records, s.Bytes, s.Problems, s.Infos, s.Failed,
			s.Problems == 0 && s.Failed == 0})
	}
	var what []string
	for _, n := range []struct {
		n    int
		unit string
	}{{s.Partitions, "partition(s)"}, {s.Files, "file(s)"}, {s.Segments, "segment(s)"}} {
		if n.n > 0 {
			what = append(what, fmt.Sprintf("%d %s", n.n, n.unit))
		}
	}
	what = append(what, fmt.Sprintf("%d batch(es)", s.Batches))
	if s.Records > 0 {
		what = append(what, fmt.Sprintf("%d record(s)", s.Records))
	}
	line := fmt.Sprintf("verified %s, %s of log: ", strings.Join(what, ", "), human.Bytes(s.Bytes))
	if s.Problems == 0 {
		line += "no problems"
	} else {
		line += fmt.Sprintf("%d problem(s)", s.Problems)
	}
	if s.Infos > 0 {
		line += fmt.Sprintf(", %d information finding(s)", s.Infos)
		if !s.verbose {
			line += " (--verbose lists them)"
		}
	}
	if s.Failed > 0 {
		line += fmt.Sprintf("; %d could not be verified", s.Failed)
	}
	_, err := fmt.Fprintln(s.w, line)
	return err
}
