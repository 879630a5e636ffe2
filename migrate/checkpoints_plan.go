package migrate

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/checkpoint"
	"github.com/logtool/logtool/logfmt/layout"
)

// checkpointPlan is everything one log directory's run will do, worked out
// before anything is written. apply performs it in a fixed order.
type checkpointPlan struct {
	rep      *CheckpointLogDir
	writes   []checkpointWrite // forward: per-partition files
	rootData []byte            // the merged .migrated (forward) or the root file (reverse)
	removes  []string          // reverse: per-partition files, after the root file
}

type checkpointWrite struct {
	path string
	c    checkpoint.CleanerCheckpoint
}

type checkpointKey struct {
	topic     string
	partition int32
}

func checkpointKeyOf(e checkpoint.OffsetEntry) checkpointKey {
	return checkpointKey{e.Topic, e.Partition}
}

// checkpointScan is what a log directory holds that migration cares about.
type checkpointScan struct {
	live    map[checkpointKey]*layout.Partition // the Normal partition directories
	renamed map[checkpointKey][]string          // names of -delete, -future and -stray directories
	sorted  []*layout.Partition                 // live, in ReadLogDir's order
}

func planCheckpoints(dir string, opts CheckpointOptions) (*checkpointPlan, error) {
	p := &checkpointPlan{rep: &CheckpointLogDir{
		Path:         dir,
		RootFile:     filepath.Join(dir, layout.CleanerOffsetCheckpointFile),
		MigratedFile: filepath.Join(dir, MigratedCheckpointFile),
	}}
	s, err := p.scan(dir)
	if err != nil {
		return nil, err
	}
	if opts.Reverse {
		err = p.planReverse(s, opts)
	} else {
		err = p.planForward(s, opts)
	}
	if err != nil {
		return nil, err
	}
	p.rep.Changed = len(p.rep.TempsRemoved) > 0 || len(p.writes) > 0 || len(p.removes) > 0 || p.rep.RemovedMigrated ||
		p.rep.Root != CheckpointRootNone && p.rep.Root != CheckpointRootKept && p.rep.Root != CheckpointRootUnchanged
	return p, nil
}

// scan lists the log directory, records the renamed partition directories
// as skipped, and collects the temporary files of earlier runs: no writer can
// be active while the directory is locked, so they are garbage.
func (p *checkpointPlan) scan(dir string) (*checkpointScan, error) {
	ld, err := layout.ReadLogDir(dir)
	if err != nil {
		return nil, err
	}
	s := &checkpointScan{live: make(map[checkpointKey]*layout.Partition), renamed: make(map[checkpointKey][]string)}
	for _, part := range ld.Partitions {
		k := checkpointKey{part.Dir.Topic, part.Dir.Partition}
		if part.Dir.Kind != layout.Normal {
			p.rep.Skipped = append(p.rep.Skipped, CheckpointSkippedDir{Path: part.Path, Kind: part.Dir.Kind})
			s.renamed[k] = append(s.renamed[k], part.Dir.Name)
			continue
		}
		// Kafka parses "orders-01" as partition 1 too, and refuses to start
		// with two directories for one partition.
		if other := s.live[k]; other != nil {
			return nil, fmt.Errorf("%s: both %s and %s are directories of partition %s",
				dir, other.Dir.Name, part.Dir.Name, layout.PartitionDirName(k.topic, k.partition))
		}
		s.live[k] = part
		s.sorted = append(s.sorted, part)
		if err := p.addTemp(filepath.Join(part.Path, layout.CleanerCheckpointFile+safefile.TempSuffix)); err != nil {
			return nil, err
		}
	}
	for _, name := range []string{layout.CleanerOffsetCheckpointFile, MigratedCheckpointFile} {
		if err := p.addTemp(filepath.Join(dir, name+safefile.TempSuffix)); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (p *checkpointPlan) addTemp(path string) error {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case fi.Mode().IsRegular():
		p.rep.TempsRemoved = append(p.rep.TempsRemoved, path)
	}
	return nil
}

func (p *checkpointPlan) planForward(s *checkpointScan, opts CheckpointOptions) error {
	rep := p.rep
	entries, found, err := readRootCheckpoint(rep.RootFile)
	if err != nil {
		return err
	}
	rep.HadRoot = found
	if rep.HadMigrated, err = checkpointFileExists(rep.MigratedFile); err != nil {
		return err
	}
	if !found {
		rep.Root = CheckpointRootNone
		return nil
	}
	cleanTime := int64(-1)
	switch opts.CleanTime {
	case CleanTimeFileMtime:
		fi, err := os.Stat(rep.RootFile)
		if err != nil {
			return err
		}
		if cleanTime = fi.ModTime().UnixMilli(); cleanTime < 0 {
			return fmt.Errorf("%s: modification time %v is before 1970", rep.RootFile, fi.ModTime())
		}
	case CleanTimeFixed:
		cleanTime = opts.CleanTimeMs
	}

	// Kafka reads the entries into a map, so the last line of a partition wins.
	last := make(map[checkpointKey]int, len(entries))
	for i, e := range entries {
		last[checkpointKeyOf(e)] = i
	}
	leftIn := rep.MigratedFile
	if opts.KeepOld {
		leftIn = rep.RootFile
	}
	var conflicts []error
	for i, e := range entries {
		k := checkpointKeyOf(e)
		ent := CheckpointEntry{
			Topic: e.Topic, Partition: e.Partition, Offset: e.Offset, CleanTimeMs: cleanTime,
			From: rep.RootFile, File: leftIn, Line: e.Line,
		}
		part := s.live[k]
		switch {
		case last[k] != i:
			ent.Action = CheckpointDuplicate
			ent.Note = fmt.Sprintf("line %d lists the partition again and wins", entries[last[k]].Line)
		case part == nil:
			ent.Action = CheckpointAbsent
			ent.Note = s.absentNote(k)
		default:
			ent.File = filepath.Join(part.Path, layout.CleanerCheckpointFile)
			old, present, err := readCleanerCheckpoint(ent.File)
			switch {
			case err != nil && !opts.Overwrite:
				return err
			case err != nil:
				ent.Action, ent.PreviousOffset, ent.Note = CheckpointReplace, -1, "replaces an unreadable file"
			case !present:
				ent.Action = CheckpointWrite
			case old.FirstDirtyOffset == e.Offset:
				// The same offset: an earlier run wrote it, maybe with
				// another clean time. Keep the file; a clean time is never
				// better for being replaced by a guess.
				ent.Action, ent.CleanTimeMs = CheckpointUnchanged, old.LastCleanTimeMs
			case !opts.Overwrite:
				conflicts = append(conflicts, fmt.Errorf("%s: %w: it holds offset %d, line %d of %s says %d",
					ent.File, ErrCheckpointConflict, old.FirstDirtyOffset, e.Line, rep.RootFile, e.Offset))
			default:
				ent.Action, ent.PreviousOffset = CheckpointReplace, old.FirstDirtyOffset
			}
			if ent.Action == CheckpointWrite || ent.Action == CheckpointReplace {
				p.writes = append(p.writes, checkpointWrite{ent.File, checkpoint.CleanerCheckpoint{FirstDirtyOffset: e.Offset, LastCleanTimeMs: cleanTime}})
			}
		}
		rep.Entries = append(rep.Entries, ent)
	}
	if err := checkpointConflictError(conflicts); err != nil {
		return err
	}
	sortCheckpointEntries(rep.Entries)

	if opts.KeepOld {
		rep.Root = CheckpointRootKept
		return nil
	}
	migrated, found, err := readRootCheckpoint(rep.MigratedFile)
	if err != nil {
		return err
	}
	// A .migrated file next to a root file means a broker ran on the old
	// format after an earlier migration (or a reverse run was cut short). The
	// root file is newer; the .migrated file may still hold partitions it
	// lacks, and those must survive.
	var kept []checkpoint.OffsetEntry
	if found {
		inRoot := make(map[checkpointKey]bool, len(entries))
		for _, e := range entries {
			inRoot[checkpointKeyOf(e)] = true
		}
		for _, e := range migrated {
			if !inRoot[checkpointKeyOf(e)] {
				kept = append(kept, e)
			}
		}
	}
	switch merged := append(slices.Clip(entries), kept...); {
	case len(kept) == 0:
		rep.Root = CheckpointRootRenamed
	case sameOffsetEntries(merged, migrated):
		rep.Root = CheckpointRootRemoved
	default:
		rep.Root = CheckpointRootMerged
		p.rootData = checkpoint.AppendOffsets(nil, merged)
	}
	return nil
}

func (p *checkpointPlan) planReverse(s *checkpointScan, opts CheckpointOptions) error {
	rep := p.rep
	root, rootFound, err := readRootCheckpoint(rep.RootFile)
	if err != nil {
		return err
	}
	migrated, migratedFound, err := readRootCheckpoint(rep.MigratedFile)
	if err != nil {
		return err
	}
	rep.HadRoot, rep.HadMigrated = rootFound, migratedFound

	// Sources in order of precedence: the partition's own file, then the
	// root file (which a reverse run cut short has already written), then
	// the .migrated file. Within a root file the last line of a partition
	// wins, as in Kafka.
	type source struct {
		e         checkpoint.OffsetEntry
		from      string
		cleanTime int64
	}
	chosen := make(map[checkpointKey]source)
	for _, part := range s.sorted {
		path := filepath.Join(part.Path, layout.CleanerCheckpointFile)
		c, present, err := readCleanerCheckpoint(path)
		if err != nil {
			return err
		}
		if present {
			e := checkpoint.OffsetEntry{Topic: part.Dir.Topic, Partition: part.Dir.Partition, Offset: c.FirstDirtyOffset}
			chosen[checkpointKeyOf(e)] = source{e, path, c.LastCleanTimeMs}
			p.removes = append(p.removes, path)
		}
	}
	if len(p.removes) == 0 && !migratedFound {
		rep.Root = CheckpointRootNone
		return nil
	}
	inRoot := lastOffsetEntries(root)
	var conflicts []error
	for _, e := range root {
		k := checkpointKeyOf(e)
		if c, ok := chosen[k]; ok && inRoot[k].Line == e.Line && c.e.Offset != e.Offset && !opts.Overwrite {
			conflicts = append(conflicts, fmt.Errorf("%s: %w: line %d says offset %d, %s holds %d",
				rep.RootFile, ErrCheckpointConflict, e.Line, e.Offset, c.from, c.e.Offset))
		}
	}
	if err := checkpointConflictError(conflicts); err != nil {
		return err
	}
	for k, e := range inRoot {
		if _, ok := chosen[k]; !ok {
			chosen[k] = source{e, rep.RootFile, -1}
		}
	}
	for k, e := range lastOffsetEntries(migrated) {
		if _, ok := chosen[k]; !ok {
			chosen[k] = source{e, rep.MigratedFile, -1}
		}
	}

	for _, c := range chosen {
		ent := CheckpointEntry{
			Topic: c.e.Topic, Partition: c.e.Partition, Offset: c.e.Offset, CleanTimeMs: c.cleanTime,
			From: c.from, File: rep.RootFile, Line: c.e.Line,
		}
		switch old, ok := inRoot[checkpointKeyOf(c.e)]; {
		case !ok:
			ent.Action = CheckpointWrite
		case old.Offset == c.e.Offset:
			ent.Action = CheckpointUnchanged
		default:
			ent.Action, ent.PreviousOffset = CheckpointReplace, old.Offset
		}
		if c.from != rep.RootFile && c.from != rep.MigratedFile {
			ent.Removed = !opts.KeepOld
		}
		if s.live[checkpointKeyOf(c.e)] == nil {
			ent.Note = s.absentNote(checkpointKeyOf(c.e))
		}
		rep.Entries = append(rep.Entries, ent)
	}
	sortCheckpointEntries(rep.Entries)

	// A root file holding the same partitions and offsets, in any order, is
	// left as it is: rewriting it would change nothing a broker reads.
	rep.Root = CheckpointRootWritten
	if rootFound && !slices.ContainsFunc(rep.Entries, func(e CheckpointEntry) bool { return e.Action != CheckpointUnchanged }) {
		rep.Root = CheckpointRootUnchanged
	} else {
		out := make([]checkpoint.OffsetEntry, len(rep.Entries))
		for i, e := range rep.Entries {
			out[i] = checkpoint.OffsetEntry{Topic: e.Topic, Partition: e.Partition, Offset: e.Offset}
		}
		p.rootData = checkpoint.AppendOffsets(nil, out)
	}
	if opts.KeepOld {
		p.removes = nil
	} else {
		rep.RemovedMigrated = migratedFound
	}
	return nil
}

// absentNote says why an entry has no live partition directory.
func (s *checkpointScan) absentNote(k checkpointKey) string {
	name := layout.PartitionDirName(k.topic, k.partition)
	if r := s.renamed[k]; len(r) > 0 {
		return fmt.Sprintf("no directory %s, only %s, which is never written", name, strings.Join(r, ", "))
	}
	return fmt.Sprintf("no directory %s in this log directory", name)
}

// readRootCheckpoint reads a version-0 cleaner offset checkpoint, reporting whether
// it exists. On top of Kafka's rules, which take any topic name and number,
// every entry must name a valid topic and a partition and offset of at least
// 0: names from this file become paths, and the per-partition format holds
// no negative offset.
func readRootCheckpoint(path string) ([]checkpoint.OffsetEntry, bool, error) {
	entries, err := checkpoint.ReadOffsetsFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	for _, e := range entries {
		why := layout.ValidateTopic(e.Topic)
		switch {
		case why != nil:
		case e.Partition < 0:
			why = fmt.Errorf("partition %d is negative", e.Partition)
		case e.Offset < 0:
			why = fmt.Errorf("offset %d is negative", e.Offset)
		}
		if why != nil {
			return nil, false, logfmt.Corruptf(path, checkpointLinePos(path, e.Line), "line %d: %v", e.Line, why)
		}
	}
	return entries, true, nil
}

func checkpointFileExists(path string) (bool, error) {
	_, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// readCleanerCheckpoint reads a per-partition cleaner checkpoint, reporting whether it
// exists.
func readCleanerCheckpoint(path string) (checkpoint.CleanerCheckpoint, bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return checkpoint.CleanerCheckpoint{}, false, nil
	}
	if err != nil {
		return checkpoint.CleanerCheckpoint{}, false, err
	}
	defer f.Close()
	c, err := checkpoint.ReadCleaner(f, path)
	return c, err == nil, err
}

// checkpointLinePos returns the byte position where line n (1-based) of the file
// starts, ending lines as the checkpoint reader does (at "\n", "\r" and
// "\r\n"), or -1 if the file cannot be read that far.
func checkpointLinePos(path string, n int) int64 {
	f, err := os.Open(path)
	if err != nil {
		return -1
	}
	defer f.Close()
	r := bufio.NewReader(f)
	var pos int64
	for line := 1; line < n; {
		c, err := r.ReadByte()
		if err != nil {
			return -1
		}
		pos++
		switch c {
		case '\r':
			if next, err := r.Peek(1); err == nil && next[0] == '\n' {
				r.ReadByte()
				pos++
			} else if err != nil && err != io.EOF {
				return -1
			}
			line++
		case '\n':
			line++
		}
	}
	return pos
}

// lastOffsetEntries maps each partition of a root file to its last entry.
func lastOffsetEntries(entries []checkpoint.OffsetEntry) map[checkpointKey]checkpoint.OffsetEntry {
	m := make(map[checkpointKey]checkpoint.OffsetEntry, len(entries))
	for _, e := range entries {
		m[checkpointKeyOf(e)] = e
	}
	return m
}

func sameOffsetEntries(a, b []checkpoint.OffsetEntry) bool {
	return slices.EqualFunc(a, b, func(x, y checkpoint.OffsetEntry) bool {
		return x.Topic == y.Topic && x.Partition == y.Partition && x.Offset == y.Offset
	})
}

func sortCheckpointEntries(es []CheckpointEntry) {
	slices.SortStableFunc(es, func(a, b CheckpointEntry) int {
		return cmp.Or(strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
}

// checkpointConflictError names the first conflict and counts the others.
func checkpointConflictError(conflicts []error) error {
	switch len(conflicts) {
	case 0:
		return nil
	case 1:
		return conflicts[0]
	}
	return fmt.Errorf("%w (and %d more)", conflicts[0], len(conflicts)-1)
}
