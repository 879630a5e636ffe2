// Package target turns the PATH arguments of a command into what it works
// on, in the one way every command shares, and applies the one lock policy.
//
// Resolve evaluates each path once to its real path (symbolic links
// followed), says what it is (a file, a partition directory, a log directory
// or a directory of log directories), expands directories into their
// partitions, and removes duplicates: a partition named twice, spelled
// "D/./orders-0/", reached through a symbolic link, or named together with
// its log directory is one partition. The log directory of each partition is
// the parent of its real path. Everything after Resolve uses the paths it
// returns, which never go through a symbolic link.
//
// Set.Lock then takes what the run needs of every log directory involved:
// writers lock each log directory they write into (Kafka's .lock, in the
// order of their real paths); readers only look and report a holder.
package target

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/logtool/logtool/internal/fielderr"
	"github.com/logtool/logtool/internal/lockfile"
	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/logfmt/checkpoint"
	"github.com/logtool/logtool/logfmt/layout"
)

// Takes says which kinds of path a command accepts.
type Takes uint8

const (
	// Files: any file, worked on as a file of its own (dump, verify).
	Files Takes = 1 << iota
	// Segments: a segment file (.log, .index, .timeindex, .txnindex)
	// selects its segment of its partition (reindex, verify). With Files
	// too, segment files go this way and other files stay files.
	Segments
	// Partitions: partition directories.
	Partitions
	// LogDirs: log directories, and directories of log directories.
	LogDirs
)

// Options shape Resolve.
type Options struct {
	// Command names the command in messages about paths it does not take.
	Command string
	Takes   Takes
	// Topic, when not "", keeps only the partitions whose whole topic name
	// matches this regular expression, as the user typed it (--topic).
	Topic string
	// Skip, when set, is asked about each partition the topic filter kept:
	// skip leaves it out, and a note, when not "", says why (Set.Notes).
	Skip func(p *Partition) (skip bool, note string)
	// Output is a directory the run writes into besides the paths (upgrade
	// --output, gen --out); it need not exist yet. It must not be in, or be,
	// a partition directory or a log directory of the paths: the run would
	// leave there a directory a broker refuses to load.
	Output string
	// OutputPartition says that Output is the partition directory the run
	// creates (salvage --out), which must not exist, rather than a log
	// directory to write into. It may then be a partition-named directory
	// of a log directory of the paths, and Set.Output is its parent: a
	// writer locks it, so that two runs never stage the same output at
	// once (each removes the stages a killed run left there).
	OutputPartition bool
	// Writes says that the run changes the partitions (or, a dry run,
	// plans to): a partition a broker cannot load (Set.Refused) is left
	// out, as it is, for the user to decide what the entry a broker fails
	// on is. A reader keeps it.
	Writes bool
	// OutputFile is a file the run writes besides the paths (export -o,
	// replay --resume); "" and "-" (stdout) are none. It must not be a
	// directory, nor be in a log or partition directory: see outputFile.
	OutputFile string
}

// Set is what a command works on.
type Set struct {
	// Items are the partitions, files and log-directory roots in the order
	// the paths name them; each occurs once. The root of a log directory
	// named whole comes before its partitions.
	Items []Item
	// LogDirs are all the log directories involved, sorted by real path:
	// those holding the partitions and files, those through which a
	// symbolic link reached a partition, and those named whole.
	LogDirs []*LogDir
	// Output is the resolved Options.Output, nil without one.
	Output *LogDir
	// Notes say what was left out and why.
	Notes []string
	// Refused are the partitions holding entries on which a broker's load
	// fails (layout.Refusals), in the order met. With Options.Writes they
	// are not in Items.
	Refused []Refused
}

// Refused is a partition a broker cannot load, and the entries why.
type Refused struct {
	Partition *Partition
	Refusals  []layout.Refusal
}

// Item is one thing to work on; exactly one field is set.
type Item struct {
	Partition *Partition
	File      *File
	// Root is a log directory named whole: its own files (meta.properties,
	// the root checkpoints) belong to the run.
	Root *LogDir
}

// Partition is a partition directory to work on.
type Partition struct {
	// Path is where to find it: the path as the user spelled it (cleaned)
	// when no symbolic link is on the way, else the real path.
	Path string
	Real string              // absolute real path, which identifies it
	Dir  layout.PartitionDir // what its name says; Topic "" and Partition -1 when it is not a partition name
	// LogDir holds it: the parent of its real path.
	LogDir *LogDir
	// Named is true when a path named the partition (or one of its
	// segments) rather than a log directory holding it.
	Named bool
	// Segments, when not nil, are the base offsets of the only segments
	// to work on (segment files were named).
	Segments []int64
	// via are the links to it in other directories than LogDir through
	// which a path reached it: a broker on them loads it too.
	via []link
}

// File is a file worked on as a file of its own.
type File struct {
	Path   string // as for Partition.Path
	Real   string
	Name   layout.FileName
	LogDir *LogDir // the log directory holding it (layout.LogDirOf)
}

// LogDir is a log directory involved in the run.
type LogDir struct {
	Path string // as for Partition.Path
	Real string
	// Whole is true when the log directory was named (itself, or through
	// a directory of log directories).
	Whole bool
	// Held is the process holding its lock, found by Set.Lock(Read); nil
	// when none does.
	Held *lockfile.Holder
}

// NamedNote is note for a partition named on the command line, and ""
// for one found in a log directory: a note on why a command left out a
// partition is for the one the user asked for.
func (p *Partition) NamedNote(note string) string {
	if p.Named {
		return note
	}
	return ""
}

// UsageError is a path or option the command cannot take: exit 2.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usage(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// Partitions returns the partitions of the set, in order.
func (s *Set) Partitions() []*Partition {
	var out []*Partition
	for _, it := range s.Items {
		if it.Partition != nil {
			out = append(out, it.Partition)
		}
	}
	return out
}

// SegmentBytes is the size of the files of the set that hold records
// (layout.SegmentBytes of each item): a progress bar's total.
func (s *Set) SegmentBytes() int64 {
	var n int64
	for _, it := range s.Items {
		switch {
		case it.Partition != nil:
			n += layout.SegmentBytes(it.Partition.Path)
		case it.Root != nil:
			n += layout.SegmentBytes(it.Root.Path)
		case it.File != nil:
			n += layout.SegmentBytes(it.File.Path)
		}
	}
	return n
}

// Group is the partitions of one log directory.
type Group struct {
	LogDir     *LogDir
	Partitions []*Partition
}

// Groups returns the partitions by log directory, in order of first
// appearance: what shares root checkpoints.
func (s *Set) Groups() []Group {
	var out []Group
	at := map[*LogDir]int{}
	for _, p := range s.Partitions() {
		i, ok := at[p.LogDir]
		if !ok {
			i = len(out)
			at[p.LogDir] = i
			out = append(out, Group{LogDir: p.LogDir})
		}
		out[i].Partitions = append(out[i].Partitions, p)
	}
	return out
}

// resolver is one run of Resolve.
type resolver struct {
	o          Options
	topic      *regexp.Regexp
	set        *Set
	dirs       map[string]*LogDir    // by real path
	parts      map[string]*Partition // by real path
	files      map[string]*File      // by real path
	pending    []*File               // files, placed once every directory is known
	links      []linked              // links to partitions in log directories named whole
	ids        map[fileID]string     // the real path first met of each directory
	mounts     []mount               // this process's, read once when needed
	mountsRead bool
	rootFiles  map[string]bool // holdsRootFiles, by directory
}

// linked is a link to a partition directory that the run does not follow.
type linked struct {
	link
	dir  layout.PartitionDir // what the link's name says
	real string              // the real path it leads to
}

// Resolve resolves the paths (see the package documentation). Paths that do
// not exist, are of a kind the command does not take, or are neither files
// nor Kafka directories, and a bad topic pattern, give a *UsageError.
func Resolve(paths []string, o Options) (*Set, error) {
	r := &resolver{o: o, set: &Set{}, dirs: map[string]*LogDir{}, parts: map[string]*Partition{}, files: map[string]*File{}, ids: map[fileID]string{}, rootFiles: map[string]bool{}}
	if o.Topic != "" {
		// Compiled alone first, so that an error shows the pattern as
		// typed rather than the anchored one.
		if _, err := regexp.Compile(o.Topic); err != nil {
			return nil, &UsageError{Err: fielderr.New("Topic", "%q: %v", o.Topic, err)}
		}
		r.topic = regexp.MustCompile("^(?:" + o.Topic + ")$")
	}
	for _, p := range paths {
		if err := r.path(p); err != nil {
			return nil, err
		}
	}
	for _, f := range r.pending {
		r.addFile(f)
	}
	r.duplicates()
	if o.OutputFile != "" && o.OutputFile != "-" {
		if err := outputFile(o.OutputFile); err != nil {
			return nil, err
		}
	}
	if o.Output != "" {
		out, err := r.output(o.Output)
		if err != nil {
			return nil, err
		}
		r.set.Output = out
	}
	for _, d := range r.dirs {
		r.set.LogDirs = append(r.set.LogDirs, d)
	}
	slices.SortFunc(r.set.LogDirs, func(a, b *LogDir) int { return cmp.Compare(a.Real, b.Real) })
	return r.set, nil
}

// resolve resolves path: its absolute real path, and the path to use for
// it. Links are followed before any ".." after them, as the kernel does;
// the path as spelled is used only when cleaning it lexically leads to the
// same place without a link.
func resolve(path string) (realPath, use string, err error) {
	r, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", "", err
	}
	if realPath, err = filepath.Abs(r); err != nil {
		return "", "", err
	}
	clean := filepath.Clean(path)
	if abs, err := filepath.Abs(clean); err == nil && abs == realPath {
		return realPath, clean, nil
	}
	return realPath, realPath, nil
}

// canonical is the real path by which the run knows the directory at
// realPath: the first met of its real paths. A bind mount, or a file system
// mounted twice, gives one directory two real paths, and worked on under
// both, one log directory's partitions were rewritten twice at once (two
// workers removed each other's temporary files, and records were lost).
// use is made the real path too when realPath is not its own.
func (r *resolver) canonical(realPath, use string) (string, string) {
	id, ok := idOf(realPath)
	if !ok {
		return realPath, use
	}
	if first, ok := r.ids[id]; ok && first != realPath {
		return first, first
	}
	r.ids[id] = realPath
	return realPath, use
}

// home is where a partition directory bind-mounted apart from its log
// directory is in that log directory (origin): through the mount it was a
// partition of a folder that holds no log directory's files, whose lock is
// no broker's and whose configuration is none. Only then: a log directory
// is never moved, for the origin's mount may be read-only (a hostPath or
// docker volume bound from a read-only disk, /var bound from a read-only
// /sysroot), and one seen through two mounts is one by its inode.
func (r *resolver) home(realPath, use string) (string, string) {
	if !r.mountsRead {
		r.mounts, r.mountsRead = mounts(), true
	}
	o := origin(r.mounts, realPath)
	if o == realPath || r.holdsRootFiles(filepath.Dir(realPath)) || !r.holdsRootFiles(filepath.Dir(o)) {
		return realPath, use
	}
	return o, o
}

// kafkaFilesIn is layout.KafkaFilesIn; tests count its reads.
var kafkaFilesIn = layout.KafkaFilesIn

// holdsRootFiles tells whether dir holds a log directory's files, reading
// it once a run: a log directory of 10,000 partitions was read again for
// each of them.
func (r *resolver) holdsRootFiles(dir string) bool {
	v, ok := r.rootFiles[dir]
	if !ok {
		k, _ := kafkaFilesIn(dir)
		v = k == layout.KindLogDir
		r.rootFiles[dir] = v
	}
	return v
}

// known is realPath, a path that need not exist whose deepest existing
// ancestor is exists, through the directories the run knows by another
// real path: an output under a second mount of a log directory of the
// paths is in that log directory.
func (r *resolver) known(realPath, exists string) string {
	for at := exists; ; at = filepath.Dir(at) {
		if id, ok := idOf(at); ok {
			if first, ok := r.ids[id]; ok {
				rest, err := filepath.Rel(at, realPath)
				if err != nil {
					return realPath
				}
				return filepath.Join(first, rest)
			}
		}
		if filepath.Dir(at) == at {
			return realPath
		}
	}
}

// split cuts path into the directory that holds its last element, as
// spelled, and that element.
func split(path string) (dir, base string) {
	path = strings.TrimRight(path, string(filepath.Separator))
	if path == "" {
		return string(filepath.Separator), ""
	}
	i := strings.LastIndexByte(path, filepath.Separator)
	switch {
	case i < 0:
		return ".", path
	case i == 0:
		return string(filepath.Separator), path[1:]
	}
	return path[:i], path[i+1:]
}

func (r *resolver) path(arg string) error {
	fi, err := os.Lstat(arg)
	if err != nil {
		return usage("%w", err)
	}
	if fi.Mode().IsRegular() || fi.Mode()&fs.ModeSymlink != 0 && !isDir(arg) {
		return r.file(arg)
	}
	realPath, use, err := resolve(arg)
	if err != nil {
		return usage("%w", err)
	}
	kind, err := layout.Classify(use)
	switch {
	case errors.Is(err, layout.ErrUnrecognizedPath):
		return &UsageError{Err: err}
	case err != nil:
		// A partition directory that cannot be read is one by its name:
		// it fails alone when the command reads it, and the others go on.
		if _, perr := layout.ParsePartitionDir(filepath.Base(realPath)); perr != nil {
			return err
		}
		kind = layout.KindPartitionDir
	}
	switch kind {
	case layout.KindPartitionDir:
		if r.o.Takes&Partitions == 0 {
			return r.refuse(arg, kind)
		}
		return r.partition(use, realPath, arg, true, nil)
	case layout.KindLogDir:
		if r.o.Takes&LogDirs == 0 {
			return r.refuse(arg, kind)
		}
		return r.logDir(use, realPath)
	case layout.KindLogDirs:
		if r.o.Takes&LogDirs == 0 {
			return r.refuse(arg, kind)
		}
		subs, err := layout.LogDirsIn(realPath)
		if err != nil {
			return err
		}
		for _, sub := range subs {
			if err := r.path(filepath.Join(use, filepath.Base(sub))); err != nil {
				return err
			}
		}
		return nil
	}
	return r.refuse(arg, kind)
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// file resolves a file argument. For a segment its directory is resolved,
// not the file itself: a segment that is a symbolic link still belongs to
// the partition it is in, whose listing reports it and never follows it. A
// file worked on alone is resolved whole.
func (r *resolver) file(arg string) error {
	dir, base := split(arg)
	dirReal, dirUse, err := resolve(dir)
	if err != nil {
		return usage("%w", err)
	}
	fi, err := os.Stat(filepath.Join(dirReal, base))
	if err != nil {
		return usage("%w", err)
	}
	if !fi.Mode().IsRegular() {
		return usage("%s: %w", arg, layout.ErrUnrecognizedPath)
	}
	name := layout.ParseFileName(base)
	segment := name.Leftover == "" && name.Kind >= layout.Log && name.Kind <= layout.TxnIndex
	switch {
	case segment && r.o.Takes&Segments != 0:
		return r.partition(dirUse, dirReal, dir, true, &name.Base)
	case r.o.Takes&Files != 0:
		// A file worked on alone is read at its real path, where nothing
		// follows a link again.
		realPath, use, err := resolve(arg)
		if err != nil {
			return usage("%w", err)
		}
		name = layout.ParseFileName(filepath.Base(realPath))
		r.pending = append(r.pending, &File{Path: use, Real: realPath, Name: name,
			LogDir: r.logDirAt(layout.LogDirOf(use, layout.KindFile), layout.LogDirOf(realPath, layout.KindFile), false)})
		return nil
	case r.o.Takes&Segments != 0:
		return usage("%s is not a segment file (.log, .index, .timeindex or .txnindex)", arg)
	}
	return r.refuse(arg, layout.KindFile)
}

// refuse is the usage error for a path of a kind the command does not take.
func (r *resolver) refuse(arg string, kind layout.PathKind) error {
	var takes []string
	for _, k := range []struct {
		t    Takes
		name string
	}{{Files | Segments, "files"}, {Partitions, "partition directories"}, {LogDirs, "log directories"}} {
		if r.o.Takes&k.t != 0 {
			takes = append(takes, k.name)
		}
	}
	what := ""
	switch len(takes) {
	case 1:
		what = takes[0]
	case 2:
		what = takes[0] + " and " + takes[1]
	default:
		what = "files, partition directories and log directories"
	}
	return usage("%s is a %s; %s takes %s", arg, kind, r.o.Command, what)
}

// logDirAt returns the log directory at realPath, adding it once.
func (r *resolver) logDirAt(use, realPath string, whole bool) *LogDir {
	realPath, use = r.canonical(realPath, use)
	d := r.dirs[realPath]
	if d == nil {
		d = &LogDir{Path: use, Real: realPath}
		r.dirs[realPath] = d
	}
	if whole && !d.Whole {
		d.Whole = true
		r.set.Items = append(r.set.Items, Item{Root: d})
	}
	return d
}

// logDir adds a log directory named whole, and its partitions.
func (r *resolver) logDir(use, realPath string) error {
	realPath, use = r.canonical(realPath, use)
	if d := r.dirs[realPath]; d != nil && d.Whole {
		return nil
	}
	r.logDirAt(use, realPath, true)
	entries, err := os.ReadDir(realPath)
	if err != nil {
		return err
	}
	type child struct {
		dir       layout.PartitionDir
		use, real string
	}
	var children []child
	for _, e := range entries {
		pd, err := layout.ParsePartitionDir(e.Name())
		if err != nil {
			continue
		}
		c := child{dir: pd, use: filepath.Join(use, e.Name()), real: filepath.Join(realPath, e.Name())}
		if e.Type()&fs.ModeSymlink != 0 {
			// Never followed (layout lists it as a link): the partition
			// lives outside this log directory, and neither its bytes
			// nor a lock of the directory it is in belong to the run. A
			// broker follows it, though: it counts for duplicates.
			r.set.Notes = append(r.set.Notes, c.use+": "+layout.SymlinkNote+" (name the link itself to work on the partition it points at)")
			if real, err := filepath.EvalSymlinks(c.real); err == nil && isDir(real) {
				real, _ = r.canonical(r.home(real, real))
				r.links = append(r.links, linked{link: link{dir: r.dirs[realPath], name: c.real}, dir: pd, real: real})
			}
			continue
		}
		if !e.IsDir() {
			continue
		}
		children = append(children, c)
	}
	slices.SortFunc(children, func(a, b child) int { return layout.ComparePartitionDirs(a.dir, b.dir) })
	for _, c := range children {
		if err := r.partition(c.use, c.real, "", false, nil); err != nil {
			return err
		}
	}
	return nil
}

// parentOf is the real path of the directory that holds path as spelled:
// the log directory through which it was reached ("" when path ends in "."
// or "..", or does not resolve).
func parentOf(path string) string {
	dir, base := split(path)
	if base == "" || base == "." || base == ".." {
		return ""
	}
	via, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return ""
	}
	if via, err = filepath.Abs(via); err != nil {
		return ""
	}
	return via
}

// partition adds the partition directory at realPath. arg is the path given
// for it, as spelled ("" for a partition found in a log directory named
// whole, which is in the set already): the directory it went through may
// hold a link to it. segment, when not nil, limits it to that segment
// unless it is also wanted whole.
func (r *resolver) partition(use, realPath, arg string, named bool, segment *int64) error {
	realPath, use = r.canonical(r.home(realPath, use))
	p := r.parts[realPath]
	if p == nil {
		name := filepath.Base(realPath)
		pd, err := layout.ParsePartitionDir(name)
		if err != nil {
			pd = layout.PartitionDir{Name: name, Partition: -1}
		}
		p = &Partition{Path: use, Real: realPath, Dir: pd, Named: named}
		if segment != nil {
			p.Segments = []int64{*segment}
		}
		// A directory not named <topic>-<partition> has no topic to match.
		if r.topic != nil && (pd.Topic == "" || !r.topic.MatchString(pd.Topic)) {
			return nil
		}
		if r.o.Skip != nil {
			if skip, note := r.o.Skip(p); skip {
				if note != "" {
					r.set.Notes = append(r.set.Notes, use+": "+note)
				}
				return nil
			}
		}
		p.LogDir = r.logDirAt(filepath.Dir(use), filepath.Dir(realPath), false)
		r.parts[realPath] = p
		// A directory that cannot be listed fails where the command reads
		// it, with the error of that read.
		refusals, _ := layout.Refusals(use)
		if len(refusals) > 0 {
			r.set.Refused = append(r.set.Refused, Refused{Partition: p, Refusals: refusals})
			if r.o.Writes {
				return nil
			}
		}
		r.set.Items = append(r.set.Items, Item{Partition: p})
	} else {
		p.Named = p.Named || named
		switch {
		case segment == nil:
			p.Segments = nil
		case p.Segments != nil && !slices.Contains(p.Segments, *segment):
			p.Segments = append(p.Segments, *segment)
		}
	}
	// A broker on the log directory holding the link uses the partition
	// too: it is locked as well as the partition's own.
	if via := parentOf(arg); via != "" && via != filepath.Dir(realPath) {
		d := r.logDirAt(via, via, false)
		if via = d.Real; via == filepath.Dir(realPath) {
			return nil
		}
		_, base := split(arg)
		name := filepath.Join(via, base)
		if !slices.ContainsFunc(p.via, func(l link) bool { return l.name == name }) {
			p.via = append(p.via, link{dir: d, name: name})
		}
	}
	return nil
}

// link is a link to a partition directory in a log directory, by which a
// broker on that log directory loads the partition too.
type link struct {
	dir  *LogDir
	name string // the link's path, in dir
}

// duplicates refuses the partitions that a broker loads twice, as logs or as
// future logs: from two of its log directories (meta.properties: the same
// cluster.id and node id), or under two names. Such a broker does not start
// (LogManager.loadLog: "Duplicate log directories for ... are found in
// both"), and which copy to keep is the user's to say. A partition is loaded
// from its parent and from each log directory holding a link to it, which a
// broker follows. A KRaft broker (3.7 and later) first sets aside as stray a
// copy whose topic ID is not its metadata's (LogManager.loadLog, KAFKA-16234;
// without a topic ID too from 3.8): copies of different topic IDs, or
// without one, are not duplicates there, and the stray rule judges them.
// Log directories of different brokers hold replicas; so do those without
// a readable meta.properties, unless it is one and the same. KRaft's
// metadata log is not loaded by LogManager, and -delete and -stray
// directories are not in its maps.
func (r *resolver) duplicates() {
	type key struct {
		holder string // the broker, or the log directory when it names none
		topic  string
		part   int32
		kind   layout.DirKind
		id     string // the topic ID, on a KRaft broker
	}
	type copyOf struct {
		p    *Partition // nil for a link the run does not follow
		name string     // the real path of the entry the broker loads it by
		dir  *LogDir    // the log directory it is loaded from
	}
	type holder struct {
		id, dirID string
		kraft     bool
	}
	holders := map[string]holder{}
	holderOf := func(d *LogDir, named bool) (holder, bool) {
		h, ok := holders[d.Real]
		if !ok {
			h.id, h.dirID, h.kraft = brokerOf(d.Real)
			holders[d.Real] = h
		}
		if h.id == "" && named {
			// A folder of links to partitions is no log directory.
			return h, false
		}
		if h.id == "" {
			h.id = "dir " + d.Real
		}
		return h, true
	}
	copies := map[key][]copyOf{}
	var keys []key
	add := func(d *LogDir, viaLink bool, pd layout.PartitionDir, real string, c copyOf) {
		if pd.Topic == "" || pd.Topic == layout.MetadataTopic || pd.Kind != layout.Normal && pd.Kind != layout.Future {
			return
		}
		h, ok := holderOf(d, viaLink)
		if !ok {
			return
		}
		k := key{holder: h.id, topic: pd.Topic, part: pd.Partition, kind: pd.Kind}
		if h.kraft {
			if m, _ := checkpoint.ReadPartitionMetadataIn(real); m != nil {
				k.id = m.TopicID.String()
			} else {
				return // stray on a KRaft broker that has the rule
			}
		}
		if copies[k] == nil {
			keys = append(keys, k)
		}
		if !slices.ContainsFunc(copies[k], func(o copyOf) bool { return o.name == c.name }) {
			c.dir = d
			copies[k] = append(copies[k], c)
		}
	}
	// Two log directories of one directory.id are one log directory at two
	// times (a backup and the live one), which no broker holds both of.
	twice := func(a, b copyOf) bool {
		if a.name == b.name {
			return false
		}
		da, db := holders[a.dir.Real].dirID, holders[b.dir.Real].dirID
		return a.dir == b.dir || da == "" || da != db
	}
	// Those refused already count: the broker loads them too, or fails.
	all := r.set.Partitions()
	for _, rp := range r.set.Refused {
		if !slices.Contains(all, rp.Partition) {
			all = append(all, rp.Partition)
		}
	}
	for _, p := range all {
		add(p.LogDir, false, p.Dir, p.Real, copyOf{p: p, name: p.Real})
		for _, l := range p.via {
			pd, err := layout.ParsePartitionDir(filepath.Base(l.name))
			if err != nil {
				continue
			}
			add(l.dir, true, pd, p.Real, copyOf{p: p, name: l.name})
		}
	}
	for _, l := range r.links {
		var p *Partition
		if q := r.parts[l.real]; q != nil && slices.Contains(all, q) {
			p = q
		}
		add(l.link.dir, false, l.dir, l.real, copyOf{p: p, name: l.name})
	}
	refused := map[*Partition]bool{}
	for _, k := range keys {
		cs := copies[k]
		if len(cs) < 2 {
			continue
		}
		for _, c := range cs {
			if c.p == nil || refused[c.p] {
				continue
			}
			var others []string
			for _, o := range cs {
				if twice(c, o) {
					others = append(others, o.name)
				}
			}
			if len(others) == 0 {
				continue
			}
			why := fmt.Sprintf("%s holds this partition too, in a log directory of the same broker: a broker with both does not start; keep one", strings.Join(others, ", "))
			r.refused(c.p, layout.Refusal{Path: c.p.Path, Why: why})
			refused[c.p] = true
		}
	}
	if r.o.Writes && len(refused) > 0 {
		r.set.Items = slices.DeleteFunc(r.set.Items, func(it Item) bool { return refused[it.Partition] })
	}
}

// refused adds a refusal of p to the set's.
func (r *resolver) refused(p *Partition, f layout.Refusal) {
	for i := range r.set.Refused {
		if r.set.Refused[i].Partition == p {
			r.set.Refused[i].Refusals = append(r.set.Refused[i].Refusals, f)
			return
		}
	}
	r.set.Refused = append(r.set.Refused, Refused{Partition: p, Refusals: []layout.Refusal{f}})
}

// brokerOf is the broker a log directory's meta.properties names, "" when
// it names none, with the directory's directory.id and whether it is a
// KRaft broker's (version 1 and later).
func brokerOf(dir string) (id, dirID string, kraft bool) {
	b, err := safefile.ReadFile(filepath.Join(dir, layout.MetaPropertiesFile))
	if err != nil {
		return "", "", false
	}
	m, err := checkpoint.ReadMetaProperties(b, dir)
	if err != nil {
		return "", "", false
	}
	node := m.NodeID
	if node < 0 {
		node = m.BrokerID
	}
	// Without a cluster.id (Kafka before 0.10.1, which moved no replica
	// between its disks) a broker.id names no broker of its own.
	if node < 0 || m.ClusterID == "" {
		return "", "", false
	}
	return fmt.Sprintf("%s/%d", m.ClusterID, node), m.DirectoryID, m.Version >= 1
}

// addFile adds a file unless the run already covers it: a file of a whole
// partition, or a root file of a log directory named whole.
func (r *resolver) addFile(f *File) {
	if r.files[f.Real] != nil {
		return
	}
	if p := r.parts[filepath.Dir(f.Real)]; p != nil && p.Segments == nil {
		return
	}
	if d := r.dirs[filepath.Dir(f.Real)]; d != nil && d.Whole {
		return
	}
	r.files[f.Real] = f
	r.set.Items = append(r.set.Items, Item{File: f})
}

// output resolves a directory the run writes into, which need not exist.
func (r *resolver) output(dir string) (*LogDir, error) {
	abs, err := filepath.Abs(filepath.Clean(dir))
	if err != nil {
		return nil, err
	}
	realPath, exists, err := realPathOf(abs)
	if err != nil {
		return nil, err
	}
	realPath = r.known(realPath, exists)
	if fi, err := os.Stat(realPath); err == nil && !fi.IsDir() {
		return nil, usage("%s is not a directory", dir)
	}
	for _, p := range r.parts {
		if within(realPath, p.Real) {
			return nil, usage("%s is in %s, a partition directory of the paths: write it outside", dir, p.Path)
		}
	}
	for _, d := range r.dirs {
		if !within(realPath, d.Real) {
			continue
		}
		_, perr := layout.ParsePartitionDir(filepath.Base(realPath))
		if !r.o.OutputPartition || filepath.Dir(realPath) != d.Real || perr != nil {
			return nil, usage("%s is in %s, a log directory of the paths, where a broker loads only partition directories: write it outside", dir, d.Path)
		}
	}
	use := filepath.Clean(dir)
	if realPath != abs {
		use = realPath
	}
	name := ""
	if r.o.OutputPartition {
		name = filepath.Base(realPath)
		realPath, use = filepath.Dir(realPath), filepath.Dir(use)
	}
	out := r.logDirAt(use, realPath, false)
	r.sameBroker(out, name)
	return out, nil
}

// sameBroker warns when the run writes into a log directory of the broker
// whose partitions it reads (name, when not "", is the one partition it
// writes): that broker does not start with both copies of a partition
// (duplicates), and the run leaves that to the user, who may mean to move
// the source away.
func (r *resolver) sameBroker(out *LogDir, name string) {
	id, _, _ := brokerOf(out.Real)
	if id == "" {
		return
	}
	want, err := layout.ParsePartitionDir(name)
	for _, p := range r.set.Partitions() {
		if p.LogDir.Real == out.Real || name != "" && (err != nil || want.Topic != p.Dir.Topic || want.Partition != p.Dir.Partition) {
			continue
		}
		if pid, _, _ := brokerOf(p.LogDir.Real); pid == id {
			r.set.Notes = append(r.set.Notes, fmt.Sprintf("%s is a log directory of the same broker as %s: a broker with both copies of %s does not start; move one away before starting it", out.Path, p.LogDir.Path, p.Dir.Name))
			return
		}
	}
}

// within reports whether path is dir or inside it; both are clean and
// absolute.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// realPathOf is the real path of abs, an absolute path that need not exist:
// that of its deepest existing ancestor, exists, joined to the rest.
func realPathOf(abs string) (realPath, exists string, err error) {
	rest := ""
	at := abs
	for {
		realPath, err := filepath.EvalSymlinks(at)
		if err == nil {
			return filepath.Join(realPath, rest), realPath, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", "", err
		}
		parent := filepath.Dir(at)
		if parent == at {
			return "", "", err
		}
		rest = filepath.Join(filepath.Base(at), rest)
		at = parent
	}
}

// outputFile checks a file the run writes besides its paths. A directory
// is refused before anything is written. So is a file in a log directory or
// a partition directory, at any depth, or named as a Kafka file: there it
// would replace a segment or a checkpoint, or be a file a broker does not
// expect (a directory it creates in a log directory stops the broker from
// loading it). Both are usage errors, unless a broker holds the log
// directory: then it is a lockfile.LockedError (exit 4), as for any write
// into it.
func outputFile(path string) error {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return usage("%s is a directory; want a file to write", path)
	}
	abs, err := filepath.Abs(filepath.Clean(path))
	if err != nil {
		return usage("%w", err)
	}
	name := layout.ParseFileName(filepath.Base(abs))
	_, dir, err := realPathOf(filepath.Dir(abs))
	if err != nil {
		return usage("%w", err)
	}
	for at := dir; ; at = filepath.Dir(at) {
		if kind, ok := layout.KafkaFilesIn(at); ok {
			logDir := layout.LogDirOf(at, kind)
			if h, err := lockfile.Held(logDir); err == nil && h != nil {
				return &lockfile.LockedError{Dir: logDir, Holder: *h}
			}
			return usage("%s is inside %s, a Kafka %s: write it outside every log directory", path, at, kind)
		}
		if filepath.Dir(at) == at {
			break
		}
	}
	if name.Kind != layout.Unknown && name.Kind != layout.Temp {
		return usage("%s is named as a Kafka %s file: write it under another name", path, name.Kind)
	}
	return nil
}
