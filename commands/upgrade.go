package commands

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/logtool/logtool/internal/human"
	"github.com/logtool/logtool/internal/jsonbytes"
	"github.com/logtool/logtool/internal/refuse"
	"github.com/logtool/logtool/internal/table"
	"github.com/logtool/logtool/internal/target"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/codec"
	"github.com/logtool/logtool/migrate/upgrade"
)

func upgradeCommand() *cli.Command {
	return &cli.Command{
		Name:        "upgrade",
		Category:    "repair and convert",
		Usage:       "rewrite old message sets (magic 0, 1) to a newer magic with every offset, key and value kept",
		ArgsUsage:   "PATH...",
		Description: description("upgrade"),
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "to-magic", Value: 1, Usage: "message format to reach: 1 or 2"},
			&cli.StringFlag{Name: "timestamp-type", Value: "create", Usage: "what v0 messages get: create (timestamp -1, CreateTime) or log-append (--append-time, LogAppendTime)"},
			&cli.StringFlag{Name: "append-time", Value: "file-mtime", Usage: "the LogAppendTime: ms, RFC 3339, or file-mtime (each segment's .log modification time)"},
			&cli.StringFlag{Name: "compression", Value: "keep", Usage: "codec of rewritten sets: keep, none, gzip, snappy, lz4 or zstd"},
			&cli.StringFlag{Name: "output", Usage: "write each converted partition to DIR, under its own directory name, and leave the source alone (default: convert in place)"},
			&cli.BoolFlag{Name: "dry-run", Usage: "convert in memory and report segments, messages and sizes; write nothing"},
		},
		Action: runUpgrade,
	}
}

func runUpgrade(c *cli.Context) error {
	g, err := global(c)
	if err != nil {
		return err
	}
	opts, err := upgradeOptions(c)
	if err != nil {
		return err
	}
	opts.Workers, opts.MaxRecordBytes = g.Workers, g.MaxRecordBytes
	// In place the log directories are written; with --output the sources
	// must not change while they are copied, and the output is written.
	access := writeAccess(opts.DryRun)
	if opts.Output != "" && !opts.DryRun {
		access = target.Stable
	}
	set, release, err := targets(g, c.Args().Slice(), target.Options{Command: "upgrade", Takes: target.Partitions | target.LogDirs,
		Output: opts.Output, Writes: true}, access)
	if err != nil {
		return err
	}
	defer release()
	opts.Targets = set
	if set.Output != nil {
		opts.Output = set.Output.Path
	}
	if bar := newProgress(g, "upgrading", 0, true); bar != nil {
		opts.Progress = bar.Set
		defer bar.Finish()
	}
	rep, err := upgrade.Run(opts)
	if rep == nil {
		return err
	}
	for _, p := range rep.Partitions {
		for _, a := range p.Recovered {
			g.Warnf("%s: interrupted earlier run: %s", p.Dir, a)
		}
	}
	for _, n := range rep.Notes {
		g.Warnf("%s", n)
	}
	// Each failed partition gets its own error line, as Run prints them;
	// the run's error then only says how many failed.
	if failed := rep.Failed(); failed > 0 {
		code, perrs := ExitFailure, map[error]bool{}
		for _, p := range rep.Partitions {
			if p.Err == nil {
				continue
			}
			perrs[p.Err] = true
			fmt.Fprintf(g.Stderr, "logtool: upgrade: %s\n", oneLine(p.Err))
			if errors.Is(p.Err, refuse.ErrRefused) {
				code = ExitRefused
			}
		}
		rest := []error{&ExitError{Code: code, Err: fmt.Errorf("%d of %d partition(s) failed", failed, len(rep.Partitions))}}
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				if !perrs[e] {
					rest = append(rest, e)
				}
			}
		}
		err = errors.Join(rest...)
	}
	if !g.Quiet || opts.DryRun {
		var werr error
		if g.JSON() {
			werr = writeUpgradeJSON(g.Stdout, rep)
		} else {
			werr = writeUpgradeText(g.Stdout, rep, opts.Output)
		}
		err = errors.Join(err, werr)
	}
	return err
}

// upgradeOptions reads and checks the command's flags.
func upgradeOptions(c *cli.Context) (upgrade.Options, error) {
	o := upgrade.Options{Output: c.String("output"), DryRun: c.Bool("dry-run")}
	if c.NArg() == 0 {
		return o, usageErr("no PATH given")
	}
	switch m := c.Int("to-magic"); m {
	case 1, 2:
		o.ToMagic = int8(m)
	default:
		return o, usageErr("--to-magic: want 1 or 2, got %d", m)
	}
	switch s := c.String("timestamp-type"); s {
	case "create":
		o.TimestampType = logfmt.CreateTime
	case "log-append":
		o.TimestampType = logfmt.LogAppendTime
	default:
		return o, usageErr("--timestamp-type: want create or log-append, got %q", s)
	}
	if s := c.String("append-time"); s != "file-mtime" {
		if o.TimestampType != logfmt.LogAppendTime {
			return o, usageErr("--append-time applies only with --timestamp-type log-append")
		}
		ms, err := timeArg("append-time", s, 1)
		if err != nil {
			return o, err
		}
		o.AppendTime = ms
	}
	if s := c.String("compression"); s != "keep" {
		t, err := codec.Parse(s)
		if err != nil {
			return o, usageErr("--compression: want keep, none, gzip, snappy, lz4 or zstd, got %q", s)
		}
		if !t.ValidFor(o.ToMagic) {
			return o, usageErr("--compression %s needs --to-magic 2", s)
		}
		o.Compression = &t
	}
	return o, nil
}

// upgradePartitionJSON is one "upgrade" object: a partition.
type upgradePartitionJSON struct {
	Type string         `json:"type"`
	File jsonbytes.Text `json:"file"`
	partJSON
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

// upgradeSegmentJSON is one "upgrade-segment" object: a rewritten segment.
type upgradeSegmentJSON struct {
	Type string         `json:"type"`
	File jsonbytes.Text `json:"file"`
	partJSON
	BaseOffset        int64  `json:"baseOffset"`
	BatchesBefore     int    `json:"batchesBefore"`
	BatchesAfter      int    `json:"batchesAfter"`
	MessagesConverted int64  `json:"messagesConverted"`
	BytesBefore       int64  `json:"bytesBefore"`
	BytesAfter        int64  `json:"bytesAfter"`
	AppendTime        *int64 `json:"appendTime"` // null under CreateTime
}

func writeUpgradeJSON(w io.Writer, rep *upgrade.Report) error {
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
			obj := upgradeSegmentJSON{Type: "upgrade-segment", File: jsonbytes.Text(s.File), partJSON: partOf(p.Dir), BaseOffset: s.Base, BatchesBefore: s.BatchesBefore,
				BatchesAfter: s.BatchesAfter, MessagesConverted: s.MessagesConverted, BytesBefore: s.BytesBefore, BytesAfter: s.BytesAfter}
			if s.AppendTime >= 0 {
				obj.AppendTime = &s.AppendTime
			}
			if err := enc.Encode(obj); err != nil {
				return err
			}
		}
		obj := upgradePartitionJSON{Type: "upgrade", File: jsonbytes.Text(p.Dir), partJSON: partOf(p.Dir), Output: jsonbytes.Text(p.Output), DryRun: rep.DryRun, ToMagic: rep.ToMagic,
			Segments: len(p.Segments), SegmentsRewritten: p.SegmentsRewritten, MessagesConverted: p.MessagesConverted,
			BytesBefore: p.BytesBefore, BytesAfter: p.BytesAfter, Recovered: p.Recovered}
		if p.Err != nil {
			obj.Error = oneLine(p.Err)
		}
		if err := enc.Encode(obj); err != nil {
			return err
		}
	}
	return nil
}

func writeUpgradeText(w io.Writer, rep *upgrade.Report, output string) error {
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
