package checkpoints

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/logtool/logtool/internal/extsort"
	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/checkpoint"
	"github.com/logtool/logtool/logfmt/layout"
)

// checkpointPlan is everything one log directory's run will do, worked out
// before anything is written. apply performs it in a fixed order.
type checkpointPlan struct {
	rep       *LogDir
	writes    []checkpointWrite          // forward: per-partition files
	removes   []string                   // reverse: per-partition files, after the root file
	partFiles map[checkpointKey]partFile // reverse: the partitions' own files
	// rootEntries writes the rootCount entries of the merged .migrated file
	// (forward) or of the root file (reverse), reading the old files again
	// rather than holding their entries.
	rootEntries func(write func(checkpoint.OffsetEntry) error) error
	rootCount   int
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

func planCheckpoints(dir string, opts Options) (*checkpointPlan, error) {
	p := &checkpointPlan{rep: &LogDir{
		Path:         dir,
		RootFile:     filepath.Join(dir, layout.CleanerOffsetCheckpointFile),
		MigratedFile: filepath.Join(dir, MigratedFile),
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
		p.rep.Root != RootNone && p.rep.Root != RootKept && p.rep.Root != RootUnchanged
	return p, nil
}

// scan lists the log directory, records the renamed partition directories
// as skipped, and collects the temporary files of earlier runs: no writer can
// be active while the directory is locked, so they are garbage. Only the
// names this command writes through are collected (safefile.TempName): a
// broker's own "cleaner-offset-checkpoint.tmp" is not ours.
func (p *checkpointPlan) scan(dir string) (*checkpointScan, error) {
	ld, err := layout.ReadLogDir(dir)
	if err != nil {
		return nil, err
	}
	s := &checkpointScan{live: make(map[checkpointKey]*layout.Partition), renamed: make(map[checkpointKey][]string)}
	for _, part := range ld.Partitions {
		k := checkpointKey{part.Dir.Topic, part.Dir.Partition}
		if part.Dir.Kind != layout.Normal {
			p.rep.Skipped = append(p.rep.Skipped, SkippedDir{Path: part.Path, Kind: part.Dir.Kind})
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
		if err := p.addTemp(safefile.TempName(filepath.Join(part.Path, layout.CleanerCheckpointFile))); err != nil {
			return nil, err
		}
	}
	for _, name := range []string{layout.CleanerOffsetCheckpointFile, MigratedFile} {
		if err := p.addTemp(safefile.TempName(filepath.Join(dir, name))); err != nil {
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

func (p *checkpointPlan) planForward(s *checkpointScan, opts Options) error {
	rep := p.rep
	var err error
	if rep.HadMigrated, err = checkpointFileExists(rep.MigratedFile); err != nil {
		return err
	}
	// The root file may list millions of partitions, most of them perhaps
	// not here. It is read twice and never held: first to check it, count
	// it and find the last line of each partition that is here (Kafka reads
	// the entries into a map, so the last line of a partition wins), then
	// to plan. Only a merge with a .migrated file needs its partitions, to
	// sort them with the .migrated file's (planMerge).
	var rootKeys *extsort.Sorter
	if rep.HadMigrated && !opts.KeepOld {
		rootKeys = extsort.New(sortMemory)
		defer func() { rootKeys.Close() }() // unless planMerge took it over
	}
	last := make(map[checkpointKey]int)
	n := 0
	var key []byte
	found, err := scanRootCheckpoint(rep.RootFile, func(e checkpoint.OffsetEntry) error {
		n++
		if k := checkpointKeyOf(e); s.live[k] != nil {
			last[k] = e.Line
		}
		if rootKeys != nil {
			key = appendKey(key[:0], e, srcRoot)
			return rootKeys.Add(key)
		}
		return nil
	})
	if err != nil {
		return err
	}
	rep.HadRoot = found
	if !found {
		rep.Root = RootNone
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

	leftIn := rep.MigratedFile
	if opts.KeepOld {
		leftIn = rep.RootFile
	}
	var conflicts []error
	// The last line of the listed entries of partitions that are not here,
	// to tell an entry a later line overrides.
	lastAbsent := make(map[checkpointKey]int)
	var absent []int // indexes in rep.Entries
	listedLeft := 0
	_, err = scanRootCheckpoint(rep.RootFile, func(e checkpoint.OffsetEntry) error {
		k := checkpointKeyOf(e)
		part := s.live[k]
		if _, ok := lastAbsent[k]; ok {
			lastAbsent[k] = e.Line
		}
		if part == nil || last[k] != e.Line {
			// Left where it is: listed while there is room.
			if listedLeft >= maxListedLeft {
				rep.Unlisted++
				return nil
			}
			listedLeft++
		}
		ent := Entry{
			Topic: e.Topic, Partition: e.Partition, Offset: e.Offset, CleanTimeMs: cleanTime,
			From: rep.RootFile, File: leftIn, Line: e.Line,
		}
		switch {
		case part == nil:
			if _, ok := lastAbsent[k]; !ok {
				lastAbsent[k] = e.Line
			}
			absent = append(absent, len(rep.Entries))
		case last[k] != e.Line:
			ent.Action = Duplicate
			ent.Note = fmt.Sprintf("line %d lists the partition again and wins", last[k])
		default:
			ent.File = filepath.Join(part.Path, layout.CleanerCheckpointFile)
			old, present, err := readCleanerCheckpoint(ent.File)
			switch {
			case err != nil && !opts.Overwrite:
				return err
			case err != nil:
				ent.Action, ent.PreviousOffset, ent.Note = Replace, -1, "replaces an unreadable file"
			case !present:
				ent.Action = Write
			case old.FirstDirtyOffset == e.Offset:
				// The same offset: an earlier run wrote it, maybe with
				// another clean time. Keep the file; a clean time is never
				// better for being replaced by a guess.
				ent.Action, ent.CleanTimeMs = Unchanged, old.LastCleanTimeMs
			case !opts.Overwrite:
				conflicts = append(conflicts, fmt.Errorf("%s: %w: it holds offset %d, line %d of %s says %d",
					ent.File, ErrConflict, old.FirstDirtyOffset, e.Line, rep.RootFile, e.Offset))
			default:
				ent.Action, ent.PreviousOffset = Replace, old.FirstDirtyOffset
			}
			if ent.Action == Write || ent.Action == Replace {
				p.writes = append(p.writes, checkpointWrite{ent.File, checkpoint.CleanerCheckpoint{FirstDirtyOffset: e.Offset, LastCleanTimeMs: cleanTime}})
			}
		}
		rep.Entries = append(rep.Entries, ent)
		return nil
	})
	for _, i := range absent {
		ent := &rep.Entries[i]
		k := checkpointKey{ent.Topic, ent.Partition}
		if l := lastAbsent[k]; l != ent.Line {
			ent.Action, ent.Note = Duplicate, fmt.Sprintf("line %d lists the partition again and wins", l)
		} else {
			ent.Action, ent.Note = Absent, s.absentNote(k)
		}
	}
	if err == nil {
		err = checkpointConflictError(conflicts)
	}
	if err != nil {
		return err
	}
	sortCheckpointEntries(rep.Entries)

	if opts.KeepOld {
		rep.Root = RootKept
		return nil
	}
	keys := rootKeys
	rootKeys = nil
	return p.planMerge(n, keys)
}

// maxListedLeft bounds the entries a report lists that a run leaves where
// they are: those of partitions that are not in the log directory, and
// lines a later line overrides. A damaged or hostile root file may have
// millions; past the bound they are counted in Unlisted.
const maxListedLeft = 1000

// planMerge decides what forward does with the root file of n entries,
// whose partitions rootKeys holds, when a .migrated file may be there too.
//
// A .migrated file next to a root file means a broker ran on the old
// format after an earlier migration (or a reverse run was cut short). The
// root file is newer; the .migrated file may still hold partitions it
// lacks, and those must survive: the new .migrated file is the root file's
// entries followed by the .migrated entries of the other partitions. When
// that is what the .migrated file holds already, the root file is only
// removed.
func (p *checkpointPlan) planMerge(n int, rootKeys *extsort.Sorter) error {
	rep := p.rep
	inRoot, err := migratedInRoot(rep.MigratedFile, rootKeys)
	if err != nil {
		return err
	}
	// The .migrated file is the merged one when it starts with the root
	// file's entries and the rest are all of other partitions.
	root, err := openRootReader(rep.RootFile)
	if err != nil {
		return err
	}
	defer root.Close()
	i, kept, same := 0, 0, true
	found, err := scanRootCheckpoint(rep.MigratedFile, func(m checkpoint.OffsetEntry) error {
		in := inRoot.has(m.Line)
		if !in {
			kept++
		}
		if i < n {
			e, err := root.next()
			if err != nil {
				return err
			}
			same = same && e.Topic == m.Topic && e.Partition == m.Partition && e.Offset == m.Offset
		} else {
			same = same && !in
		}
		i++
		return nil
	})
	if err != nil {
		return err
	}
	switch {
	case !found || kept == 0:
		rep.Root = RootRenamed
	case same && i >= n:
		rep.Root = RootRemoved
	default:
		rep.Root = RootMerged
		p.rootCount = n + kept
		p.rootEntries = func(write func(checkpoint.OffsetEntry) error) error {
			if _, err := scanRootCheckpoint(rep.RootFile, write); err != nil {
				return err
			}
			_, err := scanRootCheckpoint(rep.MigratedFile, func(e checkpoint.OffsetEntry) error {
				if inRoot.has(e.Line) {
					return nil
				}
				return write(e)
			})
			return err
		}
	}
	return nil
}

// migratedInRoot returns the lines of the .migrated file whose partitions
// rootKeys, the root file's, hold: a bit a line, the partitions sorted on
// disk (checkpoints_table.go). It takes rootKeys over; nil means there was
// no .migrated file.
func migratedInRoot(migrated string, rootKeys *extsort.Sorter) (lineSet, error) {
	if rootKeys == nil {
		return nil, nil
	}
	var key []byte
	_, err := scanRootCheckpoint(migrated, func(m checkpoint.OffsetEntry) error {
		key = appendKey(key[:0], m, srcMigrated)
		return rootKeys.Add(key)
	})
	if err != nil {
		rootKeys.Close()
		return nil, err
	}
	it, err := rootKeys.Sort()
	if err != nil {
		return nil, err
	}
	var inRoot lineSet
	listed := false // the current partition's group began with a root entry
	key = key[:0]
	for it.Next() {
		r := sortedEntry(it.Record())
		if !bytes.Equal(r.group(), key) {
			key, listed = append(key[:0], r.group()...), r.source() == srcRoot
		}
		if listed && r.source() == srcMigrated {
			inRoot.add(r.line())
		}
	}
	return inRoot, it.Close()
}

func (p *checkpointPlan) planReverse(s *checkpointScan, opts Options) error {
	rep := p.rep
	// Sources in order of precedence: the partition's own file, then the
	// root file (which a reverse run cut short has already written), then
	// the .migrated file. Within a root file the last line of a partition
	// wins, as in Kafka. The root files may list millions of partitions:
	// their entries are sorted on disk by partition and then by precedence
	// (checkpoints_table.go), so that the first of each partition wins.
	parts := make(map[checkpointKey]partFile)
	it, err := p.reverseSorted(s, parts)
	if err != nil {
		return err
	}
	defer it.Close()
	if len(p.removes) == 0 && !rep.HadMigrated {
		rep.Root = RootNone
		return nil
	}

	type conflict struct {
		line int
		err  error
	}
	var conflicts []conflict
	unchanged := true
	listedLeft := 0
	winners := 0
	err = eachGroup(it, func(g *partitionGroup) error {
		winners++
		win := g.win
		k := checkpointKeyOf(win)
		if g.winSrc == srcPartition && g.inRoot && g.root.Offset != win.Offset && !opts.Overwrite {
			conflicts = append(conflicts, conflict{g.root.Line, fmt.Errorf("%s: %w: line %d says offset %d, %s holds %d",
				rep.RootFile, ErrConflict, g.root.Line, g.root.Offset, parts[k].path, win.Offset)})
		}
		ent := Entry{
			Topic: k.topic, Partition: k.partition, Offset: win.Offset, CleanTimeMs: -1,
			From: rep.RootFile, File: rep.RootFile, Line: win.Line,
		}
		switch {
		case !g.inRoot:
			ent.Action = Write
		case g.root.Offset == win.Offset:
			ent.Action = Unchanged
		default:
			ent.Action, ent.PreviousOffset = Replace, g.root.Offset
		}
		unchanged = unchanged && ent.Action == Unchanged
		switch g.winSrc {
		case srcPartition:
			ent.From, ent.CleanTimeMs, ent.Removed = parts[k].path, parts[k].cleanTime, !opts.KeepOld
		case srcMigrated:
			ent.From = rep.MigratedFile
		}
		if s.live[k] == nil {
			if listedLeft >= maxListedLeft {
				rep.Unlisted++
				return nil
			}
			listedLeft++
			ent.Note = s.absentNote(k)
		}
		rep.Entries = append(rep.Entries, ent)
		return nil
	})
	if err != nil {
		return err
	}
	if len(conflicts) > 0 {
		slices.SortFunc(conflicts, func(a, b conflict) int { return cmp.Compare(a.line, b.line) })
		errs := make([]error, len(conflicts))
		for i, c := range conflicts {
			errs[i] = c.err
		}
		return checkpointConflictError(errs)
	}

	// A root file holding the same partitions and offsets, in any order, is
	// left as it is: rewriting it would change nothing a broker reads.
	rep.Root = RootWritten
	if rep.HadRoot && unchanged {
		rep.Root = RootUnchanged
	} else {
		// The winners are sorted again when written rather than kept.
		p.rootCount = winners
		p.rootEntries = func(write func(checkpoint.OffsetEntry) error) error {
			it, err := p.reverseSorted(s, nil)
			if err != nil {
				return err
			}
			defer it.Close()
			return eachGroup(it, func(g *partitionGroup) error {
				return write(checkpoint.OffsetEntry{Topic: g.win.Topic, Partition: g.win.Partition, Offset: g.win.Offset})
			})
		}
	}
	if opts.KeepOld {
		p.removes = nil
	} else {
		rep.RemovedMigrated = rep.HadMigrated
	}
	return nil
}

// partFile is a partition's own cleaner checkpoint, for a reverse run.
type partFile struct {
	path      string
	offset    int64
	cleanTime int64
}

// reverseSorted sorts the entries of the root file, the .migrated file and
// the partitions' own files (reverseSource). The first time, with parts
// not nil, it also records whether the root files exist, the partitions'
// files in parts and those to remove in the plan; the partitions' files
// are read once, then taken from parts.
func (p *checkpointPlan) reverseSorted(s *checkpointScan, parts map[checkpointKey]partFile) (*extsort.Iter, error) {
	rep := p.rep
	sorter := extsort.New(sortMemory)
	var key []byte
	add := func(src reverseSource) func(checkpoint.OffsetEntry) error {
		return func(e checkpoint.OffsetEntry) error {
			key = appendKey(key[:0], e, src)
			return sorter.Add(key)
		}
	}
	hadRoot, err := scanRootCheckpoint(rep.RootFile, add(srcRoot))
	var hadMigrated bool
	if err == nil {
		hadMigrated, err = scanRootCheckpoint(rep.MigratedFile, add(srcMigrated))
	}
	for _, part := range s.sorted {
		if err != nil {
			break
		}
		k := checkpointKey{part.Dir.Topic, part.Dir.Partition}
		pf, present := p.partFiles[k]
		if parts != nil {
			pf.path = filepath.Join(part.Path, layout.CleanerCheckpointFile)
			var c checkpoint.CleanerCheckpoint
			if c, present, err = readCleanerCheckpoint(pf.path); err != nil {
				break
			}
			if present {
				pf.cleanTime, pf.offset = c.LastCleanTimeMs, c.FirstDirtyOffset
				parts[k] = pf
				p.removes = append(p.removes, pf.path)
			}
		}
		if present {
			err = add(srcPartition)(checkpoint.OffsetEntry{Topic: k.topic, Partition: k.partition, Offset: pf.offset})
		}
	}
	if err != nil {
		sorter.Close()
		return nil, err
	}
	if parts != nil {
		rep.HadRoot, rep.HadMigrated, p.partFiles = hadRoot, hadMigrated, parts
	}
	return sorter.Sort()
}

// absentNote says why an entry has no live partition directory.
func (s *checkpointScan) absentNote(k checkpointKey) string {
	name := layout.PartitionDirName(k.topic, k.partition)
	if r := s.renamed[k]; len(r) > 0 {
		return fmt.Sprintf("no directory %s, only %s, which is never written", name, strings.Join(r, ", "))
	}
	return fmt.Sprintf("no directory %s in this log directory", name)
}

// scanRootCheckpoint streams a version-0 cleaner offset checkpoint to fn,
// reporting whether it exists. On top of Kafka's rules, which take any
// topic name and number, every entry must name a valid topic and a
// partition and offset of at least 0: names from this file become paths,
// and the per-partition format holds no negative offset. fn sees the
// entries before a malformed line further on is found.
func scanRootCheckpoint(path string, fn func(checkpoint.OffsetEntry) error) (bool, error) {
	err := checkpoint.ScanOffsetsFile(path, func(e checkpoint.OffsetEntry) error {
		if err := checkRootEntry(e, path); err != nil {
			return err
		}
		return fn(e)
	})
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

func checkRootEntry(e checkpoint.OffsetEntry, path string) error {
	why := layout.ValidateTopic(e.Topic)
	switch {
	case why != nil:
	case e.Partition < 0:
		why = fmt.Errorf("partition %d is negative", e.Partition)
	case e.Offset < 0:
		why = fmt.Errorf("offset %d is negative", e.Offset)
	}
	if why != nil {
		return logfmt.Corruptf(path, checkpointLinePos(path, e.Line), "line %d: %v", e.Line, why)
	}
	return nil
}

// rootReader reads a root file entry by entry, to walk it beside another.
type rootReader struct {
	f    *os.File
	r    *checkpoint.OffsetReader
	path string
}

func openRootReader(path string) (*rootReader, error) {
	f, err := safefile.Open(path)
	if err != nil {
		return nil, err
	}
	return &rootReader{f: f, r: checkpoint.NewOffsetReader(f, path), path: path}, nil
}

// next returns the next entry; running out is an error, since the caller
// knows how many entries the file has.
func (r *rootReader) next() (checkpoint.OffsetEntry, error) {
	if r.r.Next() {
		e := r.r.Entry()
		return e, checkRootEntry(e, r.path)
	}
	if err := r.r.Err(); err != nil {
		return checkpoint.OffsetEntry{}, err
	}
	return checkpoint.OffsetEntry{}, fmt.Errorf("%s: changed while it was read", r.path)
}

func (r *rootReader) Close() error { return r.f.Close() }

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
	f, err := safefile.Open(path)
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
	f, err := safefile.Open(path)
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

func sortCheckpointEntries(es []Entry) {
	slices.SortStableFunc(es, func(a, b Entry) int {
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
