package commands

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/logtool/logtool/internal/human"
	"github.com/logtool/logtool/internal/jsonbytes"
	"github.com/logtool/logtool/internal/table"
	"github.com/logtool/logtool/internal/target"
	"github.com/logtool/logtool/logfmt/layout"
	"github.com/logtool/logtool/migrate/checkpoints"
)

func migrateCommand() *cli.Command {
	return &cli.Command{
		Name:        "migrate-checkpoints",
		Category:    "repair and convert",
		Usage:       "move cleaner checkpoints from the per-disk file to per-partition files with a clean time, and back",
		ArgsUsage:   "LOGDIR...",
		Description: description("migrate-checkpoints"),
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "reverse", Usage: "rebuild cleaner-offset-checkpoint from the per-partition files, for a stock broker, which reads only that file"},
			&cli.StringFlag{Name: "clean-time", Value: "unknown", Usage: "clean time of migrated entries: unknown, file-mtime (risky: it can expire tombstones early, see --help) or MS"},
			&cli.BoolFlag{Name: "keep-old", Usage: "leave the source in place (the root file; with --reverse the per-partition and .migrated files)"},
			&cli.BoolFlag{Name: "overwrite", Usage: "let the source win where the destination holds a different offset"},
			&cli.BoolFlag{Name: "dry-run", Usage: "print the plan and write nothing"},
		},
		Action: runMigrate,
	}
}

func runMigrate(c *cli.Context) error {
	g, err := global(c)
	if err != nil {
		return err
	}
	if c.NArg() == 0 {
		return usageErr("no LOGDIR given")
	}
	opts := checkpoints.Options{
		Reverse: c.Bool("reverse"), KeepOld: c.Bool("keep-old"),
		Overwrite: c.Bool("overwrite"), DryRun: c.Bool("dry-run"), Workers: g.Workers,
	}
	if opts.Reverse && c.IsSet("clean-time") {
		return usageErr("--clean-time applies to forward migration only; --reverse drops clean times")
	}
	if opts.CleanTime, opts.CleanTimeMs, err = parseCleanTime(c.String("clean-time")); err != nil {
		return err
	}
	if opts.CleanTime == checkpoints.CleanTimeFileMtime {
		g.Warnf("--clean-time file-mtime: the root file's modification time can be later than a partition's last " +
			"cleaning, which makes its tombstones expire too early")
	}
	// A dry run changes nothing but plans what a run would do: it refuses
	// a log directory a broker holds, as the run would.
	access := target.Write
	if opts.DryRun {
		access = target.Stable
	}
	set, release, err := targets(g, c.Args().Slice(), target.Options{Command: "migrate-checkpoints", Takes: target.LogDirs, Writes: true}, access)
	if err != nil {
		return err
	}
	defer release()
	// A log directory's files are migrated all at once, so one holding a
	// partition a broker cannot load is left unchanged whole.
	refused := map[*target.LogDir]bool{}
	for _, rp := range set.Refused {
		refused[rp.Partition.LogDir] = true
	}
	for _, it := range set.Items {
		if it.Root != nil && refused[it.Root] {
			fmt.Fprintf(g.Stderr, "logtool: migrate-checkpoints: %s: left unchanged: it holds a partition a broker cannot load\n", it.Root.Path)
		} else if it.Root != nil {
			opts.LogDirs = append(opts.LogDirs, it.Root.Path)
		}
	}
	if len(opts.LogDirs) == 0 && len(refused) > 0 {
		return nil // the run's exit says what was left unchanged
	}

	rep, err := checkpoints.Migrate(opts)
	if errors.Is(err, checkpoints.ErrConflict) {
		source := "the root file"
		if opts.Reverse {
			source = "the per-partition files"
		}
		return fmt.Errorf("%w; nothing written (--overwrite lets %s win)", err, source)
	}
	if err != nil {
		return err
	}
	if g.Quiet && !rep.DryRun { // a dry run's plan is its only output
		return nil
	}
	if g.JSON() {
		return writeMigrateJSON(g.Stdout, rep)
	}
	return writeMigrateText(g.Stdout, rep)
}

// parseCleanTime reads --clean-time. "-1" is accepted as "unknown", the
// value it stands for in the file.
func parseCleanTime(s string) (checkpoints.CleanTimeSource, int64, error) {
	switch s {
	case "unknown", "-1":
		return checkpoints.CleanTimeUnknown, -1, nil
	case "file-mtime":
		return checkpoints.CleanTimeFileMtime, 0, nil
	}
	ms, err := timeArg("clean-time", s, 0)
	if err != nil {
		return 0, 0, err
	}
	return checkpoints.CleanTimeFixed, ms, nil
}

type migrateEntryJSON struct {
	Type           string         `json:"type"`
	File           jsonbytes.Text `json:"file"`
	From           string         `json:"from"`
	Line           int            `json:"line,omitempty"`
	LogDir         jsonbytes.Text `json:"logDir"`
	Topic          string         `json:"topic"`
	Partition      int32          `json:"partition"`
	Offset         int64          `json:"offset"`
	CleanTimeMs    int64          `json:"cleanTimeMs"`
	Action         string         `json:"action"`
	PreviousOffset *int64         `json:"previousOffset,omitempty"`
	Removed        bool           `json:"removed,omitempty"`
	Note           string         `json:"note,omitempty"`
}

type migrateSkippedJSON struct {
	Type   string         `json:"type"`
	File   jsonbytes.Text `json:"file"`
	LogDir jsonbytes.Text `json:"logDir"`
	Kind   string         `json:"kind"`
	Reason string         `json:"reason"`
}

type migrationJSON struct {
	Type            string         `json:"type"`
	File            jsonbytes.Text `json:"file"`
	LogDir          jsonbytes.Text `json:"logDir"`
	MigratedFile    jsonbytes.Text `json:"migratedFile"`
	Direction       string         `json:"direction"`
	DryRun          bool           `json:"dryRun"`
	Changed         bool           `json:"changed"`
	Root            string         `json:"root"`
	RemovedMigrated bool           `json:"removedMigrated"`
	Entries         int            `json:"entries"`
	Unlisted        int            `json:"unlisted"`
	Actions         map[string]int `json:"actions"`
	Skipped         int            `json:"skippedDirs"`
	TempsRemoved    []string       `json:"tempsRemoved"`
	Summary         string         `json:"summary"`
}

func writeMigrateJSON(w io.Writer, rep *checkpoints.Report) error {
	enc := json.NewEncoder(w)
	direction := "forward"
	if rep.Reverse {
		direction = "reverse"
	}
	for _, d := range rep.LogDirs {
		for _, e := range d.Entries {
			j := migrateEntryJSON{
				Type: "checkpoint-entry", File: jsonbytes.Text(e.File), From: e.From, Line: e.Line, LogDir: jsonbytes.Text(d.Path),
				Topic: e.Topic, Partition: e.Partition, Offset: e.Offset, CleanTimeMs: e.CleanTimeMs,
				Action: string(e.Action), Removed: e.Removed, Note: e.Note,
			}
			if e.Action == checkpoints.Replace {
				j.PreviousOffset = &e.PreviousOffset
			}
			if err := enc.Encode(j); err != nil {
				return err
			}
		}
		for _, s := range d.Skipped {
			j := migrateSkippedJSON{Type: "skipped-dir", File: jsonbytes.Text(s.Path), LogDir: jsonbytes.Text(d.Path), Kind: s.Kind.String(), Reason: migrateSkippedReason(s)}
			if err := enc.Encode(j); err != nil {
				return err
			}
		}
		j := migrationJSON{
			Type: "migration", File: jsonbytes.Text(d.RootFile), LogDir: jsonbytes.Text(d.Path), MigratedFile: jsonbytes.Text(d.MigratedFile), Direction: direction,
			DryRun: rep.DryRun, Changed: d.Changed, Root: string(d.Root), RemovedMigrated: d.RemovedMigrated,
			Entries: len(d.Entries) + d.Unlisted, Unlisted: d.Unlisted, Actions: migrateActionCounts(d), Skipped: len(d.Skipped),
			TempsRemoved: append([]string{}, d.TempsRemoved...), Summary: migrateSummary(rep, d),
		}
		if err := enc.Encode(j); err != nil {
			return err
		}
	}
	return nil
}

func writeMigrateText(w io.Writer, rep *checkpoints.Report) error {
	if rep.DryRun {
		fmt.Fprintln(w, "dry run: nothing is written")
	}
	for i, d := range rep.LogDirs {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if len(d.Entries) > 0 {
			if err := migrateTable(w, d); err != nil {
				return err
			}
		}
		if d.Unlisted > 0 {
			fmt.Fprintf(w, "... and %d more entries not listed: %s\n", d.Unlisted, unlistedWhat)
		}
		for _, s := range d.Skipped {
			fmt.Fprintf(w, "skipped %s: %s\n", s.Path, migrateSkippedReason(s))
		}
		for _, t := range d.TempsRemoved {
			fmt.Fprintf(w, "%s %s, left by an interrupted run\n", migratePick(rep.DryRun, "would remove", "removed"), t)
		}
		fmt.Fprintf(w, "%s: %s\n", d.Path, migrateSummary(rep, d))
	}
	return nil
}

func migrateTable(w io.Writer, d *checkpoints.LogDir) error {
	notes := false
	for _, e := range d.Entries {
		notes = notes || e.Note != ""
	}
	header := []string{"PARTITION", "OFFSET", "CLEAN TIME", "ACTION", "FROM", "TO"}
	if notes {
		header = append(header, "NOTE")
	}
	t := table.New(header...)
	for _, e := range d.Entries {
		from := migrateRel(d.Path, e.From)
		if e.Line > 0 {
			from += ":" + strconv.Itoa(e.Line)
		}
		if e.Removed {
			from += " (removed)"
		}
		action := string(e.Action)
		if e.Action == checkpoints.Replace && e.PreviousOffset >= 0 {
			action += " " + strconv.FormatInt(e.PreviousOffset, 10)
		}
		row := []string{
			layout.PartitionDirName(e.Topic, e.Partition), strconv.FormatInt(e.Offset, 10),
			migrateCleanTime(e.CleanTimeMs), action, from, migrateRel(d.Path, e.File),
		}
		if notes {
			row = append(row, e.Note)
		}
		t.Append(row...)
	}
	_, err := t.WriteTo(w)
	return err
}

// migrateSummary says in one line what happened to a log directory.
func migrateSummary(rep *checkpoints.Report, d *checkpoints.LogDir) string {
	root := filepath.Base(d.RootFile)
	migrated := filepath.Base(d.MigratedFile)
	if d.Root == checkpoints.RootNone {
		nothing := migratePick(len(d.TempsRemoved) > 0, "nothing else", "nothing")
		switch {
		case rep.Reverse:
			return "no per-partition cleaner checkpoints and no " + migrated + ": " + nothing + " to reverse"
		case d.HadMigrated:
			return "already migrated (" + migrated + " present, no " + root + "): " + nothing + " to do"
		default:
			return "no " + root + ": " + nothing + " to migrate"
		}
	}
	if !d.Changed {
		if rep.Reverse {
			return root + " already holds every entry: nothing changed"
		}
		return "already migrated, " + root + " kept: nothing changed"
	}
	counts := migrateActionCounts(d)
	var parts []string
	for _, a := range []struct {
		action    checkpoints.Action
		done, dry string
	}{
		{checkpoints.Write, "written", "to write"},
		{checkpoints.Replace, "replaced", "to replace"},
		{checkpoints.Unchanged, "unchanged", "unchanged"},
		{checkpoints.Absent, "absent", "absent"},
		{checkpoints.Duplicate, "duplicate (a later line wins)", "duplicate"},
	} {
		if n := counts[string(a.action)]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, migratePick(rep.DryRun, a.dry, a.done)))
		}
	}
	if d.Unlisted > 0 {
		parts = append(parts, fmt.Sprintf("%d more not listed", d.Unlisted))
	}
	if len(parts) == 0 {
		parts = append(parts, "no entries")
	}
	would := migratePick(rep.DryRun, "would be ", "")
	s := strings.Join(parts, ", ") + "; " + root + " "
	switch d.Root {
	case checkpoints.RootRenamed:
		s += would + "renamed to " + migrated
	case checkpoints.RootMerged:
		s += would + "merged into " + migrated + ", which keeps the partitions only it has"
	case checkpoints.RootRemoved:
		s += would + "removed (" + migrated + " holds its entries)"
	case checkpoints.RootKept:
		s += "kept"
	case checkpoints.RootWritten:
		s += would + "written"
	case checkpoints.RootUnchanged:
		s += "unchanged"
	}
	removed := 0
	for _, e := range d.Entries {
		if e.Removed {
			removed++
		}
	}
	if removed > 0 {
		s += fmt.Sprintf("; %d per-partition file(s) %sremoved", removed, would)
	}
	if d.RemovedMigrated {
		s += "; " + migrated + " " + would + "removed"
	}
	return s
}

// unlistedWhat is what the entries a report leaves out are: a root file
// may hold millions, and listing them all cost gigabytes.
const unlistedWhat = "partitions not in this log directory, or lines a later line overrides; they stay where they are"

func migrateActionCounts(d *checkpoints.LogDir) map[string]int {
	m := make(map[string]int)
	for _, e := range d.Entries {
		m[string(e.Action)]++
	}
	return m
}

func migrateSkippedReason(s checkpoints.SkippedDir) string {
	return fmt.Sprintf("-%v directory (Kafka renamed it while deleting or moving the partition), never written", s.Kind)
}

func migrateCleanTime(ms int64) string {
	if ms < 0 {
		return "unknown"
	}
	return human.Time(ms)
}

// rel shows path relative to the log directory when it is inside it.
func migrateRel(dir, path string) string {
	if r, err := filepath.Rel(dir, path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return path
}

func migratePick(cond bool, yes, no string) string {
	if cond {
		return yes
	}
	return no
}
