package checkpoints

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/logtool/logtool/internal/human"
	"github.com/logtool/logtool/internal/jsonbytes"
	"github.com/logtool/logtool/internal/table"
	"github.com/logtool/logtool/internal/target"
	"github.com/logtool/logtool/logfmt/layout"
)

type jsonEntry struct {
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

type jsonSkipped struct {
	Type   string         `json:"type"`
	File   jsonbytes.Text `json:"file"`
	LogDir jsonbytes.Text `json:"logDir"`
	Kind   string         `json:"kind"`
	Reason string         `json:"reason"`
}

type jsonMigration struct {
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

// WriteJSON writes a "checkpoint-entry" object per entry, a "skipped-dir"
// object per directory left alone, and a "migration" object per log
// directory.
func (rep *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	direction := "forward"
	if rep.Reverse {
		direction = "reverse"
	}
	for _, d := range rep.LogDirs {
		for _, e := range d.Entries {
			j := jsonEntry{
				Type: "checkpoint-entry", File: jsonbytes.Text(e.File), From: e.From, Line: e.Line, LogDir: jsonbytes.Text(d.Path),
				Topic: e.Topic, Partition: e.Partition, Offset: e.Offset, CleanTimeMs: e.CleanTimeMs,
				Action: string(e.Action), Removed: e.Removed, Note: e.Note,
			}
			if e.Action == Replace {
				j.PreviousOffset = &e.PreviousOffset
			}
			if err := enc.Encode(j); err != nil {
				return err
			}
		}
		for _, s := range d.Skipped {
			j := jsonSkipped{Type: "skipped-dir", File: jsonbytes.Text(s.Path), LogDir: jsonbytes.Text(d.Path), Kind: s.Kind.String(), Reason: skippedReason(s)}
			if err := enc.Encode(j); err != nil {
				return err
			}
		}
		j := jsonMigration{
			Type: "migration", File: jsonbytes.Text(d.RootFile), LogDir: jsonbytes.Text(d.Path), MigratedFile: jsonbytes.Text(d.MigratedFile), Direction: direction,
			DryRun: rep.DryRun, Changed: d.Changed, Root: string(d.Root), RemovedMigrated: d.RemovedMigrated,
			Entries: len(d.Entries) + d.Unlisted, Unlisted: d.Unlisted, Actions: actionCounts(d), Skipped: len(d.Skipped),
			TempsRemoved: append([]string{}, d.TempsRemoved...), Summary: summary(rep, d),
		}
		if err := enc.Encode(j); err != nil {
			return err
		}
	}
	return nil
}

// WriteText writes a table of the entries of each log directory, what was
// skipped or cleaned up, and a line of what happened to it.
func (rep *Report) WriteText(w io.Writer) error {
	if rep.DryRun {
		fmt.Fprintln(w, "dry run: nothing is written")
	}
	for i, d := range rep.LogDirs {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if len(d.Entries) > 0 {
			if err := entryTable(w, d); err != nil {
				return err
			}
		}
		if d.Unlisted > 0 {
			fmt.Fprintf(w, "... and %d more entries not listed: %s\n", d.Unlisted, unlistedWhat)
		}
		for _, s := range d.Skipped {
			fmt.Fprintf(w, "skipped %s: %s\n", s.Path, skippedReason(s))
		}
		for _, t := range d.TempsRemoved {
			fmt.Fprintf(w, "%s %s, left by an interrupted run\n", pick(rep.DryRun, "would remove", "removed"), t)
		}
		fmt.Fprintf(w, "%s: %s\n", d.Path, summary(rep, d))
	}
	return nil
}

func entryTable(w io.Writer, d *LogDir) error {
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
		from := rel(d.Path, e.From)
		if e.Line > 0 {
			from += ":" + strconv.Itoa(e.Line)
		}
		if e.Removed {
			from += " (removed)"
		}
		action := string(e.Action)
		if e.Action == Replace && e.PreviousOffset >= 0 {
			action += " " + strconv.FormatInt(e.PreviousOffset, 10)
		}
		row := []string{
			layout.PartitionDirName(e.Topic, e.Partition), strconv.FormatInt(e.Offset, 10),
			cleanTime(e.CleanTimeMs), action, from, rel(d.Path, e.File),
		}
		if notes {
			row = append(row, e.Note)
		}
		t.Append(row...)
	}
	_, err := t.WriteTo(w)
	return err
}

// summary says in one line what happened to a log directory.
func summary(rep *Report, d *LogDir) string {
	root := filepath.Base(d.RootFile)
	migrated := filepath.Base(d.MigratedFile)
	if d.Root == RootNone {
		nothing := pick(len(d.TempsRemoved) > 0, "nothing else", "nothing")
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
	counts := actionCounts(d)
	var parts []string
	for _, a := range []struct {
		action    Action
		done, dry string
	}{
		{Write, "written", "to write"},
		{Replace, "replaced", "to replace"},
		{Unchanged, "unchanged", "unchanged"},
		{Absent, "absent", "absent"},
		{Duplicate, "duplicate (a later line wins)", "duplicate"},
	} {
		if n := counts[string(a.action)]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, pick(rep.DryRun, a.dry, a.done)))
		}
	}
	if d.Unlisted > 0 {
		parts = append(parts, fmt.Sprintf("%d more not listed", d.Unlisted))
	}
	if len(parts) == 0 {
		parts = append(parts, "no entries")
	}
	would := pick(rep.DryRun, "would be ", "")
	s := strings.Join(parts, ", ") + "; " + root + " "
	switch d.Root {
	case RootRenamed:
		s += would + "renamed to " + migrated
	case RootMerged:
		s += would + "merged into " + migrated + ", which keeps the partitions only it has"
	case RootRemoved:
		s += would + "removed (" + migrated + " holds its entries)"
	case RootKept:
		s += "kept"
	case RootWritten:
		s += would + "written"
	case RootUnchanged:
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

func actionCounts(d *LogDir) map[string]int {
	m := make(map[string]int)
	for _, e := range d.Entries {
		m[string(e.Action)]++
	}
	return m
}

func skippedReason(s SkippedDir) string {
	return fmt.Sprintf("-%v directory (Kafka renamed it while deleting or moving the partition), never written", s.Kind)
}

func cleanTime(ms int64) string {
	if ms < 0 {
		return "unknown"
	}
	return human.Time(ms)
}

// rel shows path relative to the log directory when it is inside it.
func rel(dir, path string) string {
	if r, err := filepath.Rel(dir, path); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return path
}

func pick(cond bool, yes, no string) string {
	if cond {
		return yes
	}
	return no
}

// LogDirs are the log directories of set that a run may migrate, and those
// it leaves unchanged: a log directory's files are migrated all at once, so
// one holding a partition a broker cannot load is left unchanged whole.
func LogDirs(set *target.Set) (dirs, refused []string) {
	held := map[*target.LogDir]bool{}
	for _, rp := range set.Refused {
		held[rp.Partition.LogDir] = true
	}
	for _, it := range set.Items {
		if it.Root != nil && held[it.Root] {
			refused = append(refused, it.Root.Path)
		} else if it.Root != nil {
			dirs = append(dirs, it.Root.Path)
		}
	}
	return dirs, refused
}
