package layout

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/logtool/logtool/internal/safefile"
)

// Segment is the files of one segment, as full paths; a path is "" when its
// file is absent. Log is "" when only index files were found: a broker
// deletes such orphans at load, and a KRaft __cluster_metadata-0 copied
// without its log looks like that.
type Segment struct {
	Base                            int64
	Log, Index, TimeIndex, TxnIndex string
}

// Partition is the contents of a partition directory. All paths are full
// paths (the directory's path joined with the name).
type Partition struct {
	Path string
	// Dir is parsed from the directory's name. When the name is not a
	// partition directory name (a copy the user renamed), Dir.Name is the
	// name, Dir.Topic is "" and Dir.Partition is -1.
	Dir       PartitionDir
	Segments  []Segment // sorted by Base
	Snapshots []string  // producer state snapshots, sorted by offset
	Leftovers []string  // offset-named files with a CleanedSuffix, SwapSuffix, DeletedSuffix or PartSuffix, sorted
	Others    []string  // every other entry (checkpoints, partition.metadata, KRaft snapshots, unknown files, directories), sorted
	// Irregular are the entries that are neither regular files nor
	// directories nor symbolic links: FIFOs, sockets, devices. Kafka loads
	// none of them (File.isFile), and opening a FIFO would block, so they
	// are in no other list, whatever their names say.
	Irregular []string
	// Symlinks are the symbolic links, never followed: a segment, index or
	// checkpoint that is a link holds bytes from outside the partition,
	// which logtool neither reports as the partition's nor writes through.
	Symlinks []string
}

// SymlinkNote says why a link found in a log directory is left out.
const SymlinkNote = "a symbolic link, never followed inside a log directory: skipped"

// IrregularNote says why a FIFO, socket or device found in a log directory
// is left out.
const IrregularNote = "not a regular file: Kafka does not load it, and logtool does not open it: skipped"

// Unread are a line per entry that readers leave out, path and why: the
// links and the irregular files, which may hold records under a segment's
// name, so that a reader's output is not taken for the whole partition.
func (p *Partition) Unread() []string {
	var notes []string
	for _, l := range p.Symlinks {
		notes = append(notes, l+": "+SymlinkNote)
	}
	for _, f := range p.Irregular {
		notes = append(notes, f+": "+IrregularNote)
	}
	return notes
}

// ErrSymlinks is wrapped by the error of Partition.NoSymlinks.
var ErrSymlinks = errors.New("holds a symbolic link, which logtool never follows inside a log directory")

// NoSymlinks fails, naming the first link, when the partition directory
// holds a symbolic link under the name of a file a broker loads: a writer
// refuses such a partition rather than act on the part of it that is not a
// link (a broker follows the link, so compacting or deleting around it
// would be acting on half a partition). A link under a temporary or unknown
// name, which a broker does not load, is left to the write that meets it.
func (p *Partition) NoSymlinks() error {
	for _, l := range p.Symlinks {
		if k := ParseFileName(filepath.Base(l)).Kind; k == Unknown || k == Temp {
			continue
		}
		return fmt.Errorf("%s: %w (%s); move the file into the partition directory, or the partition out of the log directory", p.Path, ErrSymlinks, l)
	}
	return nil
}

// ReadPartition lists a partition directory.
func ReadPartition(dir string) (*Partition, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	name := baseName(dir)
	pd, err := ParsePartitionDir(name)
	if err != nil {
		pd = PartitionDir{Name: name, Partition: -1}
	}
	p := &Partition{Path: dir, Dir: pd}
	segs := map[int64]*Segment{}
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		switch fileKind(e) {
		case dirEntry:
			p.Others = append(p.Others, path)
			continue
		case irregularEntry:
			p.Irregular = append(p.Irregular, path)
			continue
		case linkEntry:
			p.Symlinks = append(p.Symlinks, path)
			continue
		}
		fn := ParseFileName(e.Name())
		switch {
		case fn.Leftover != "":
			p.Leftovers = append(p.Leftovers, path)
		case fn.Kind == Snapshot:
			p.Snapshots = append(p.Snapshots, path)
		case fn.Kind >= Log && fn.Kind <= TxnIndex:
			s := segs[fn.Base]
			if s == nil {
				s = &Segment{Base: fn.Base}
				segs[fn.Base] = s
			}
			switch fn.Kind {
			case Log:
				s.Log = path
			case Index:
				s.Index = path
			case TimeIndex:
				s.TimeIndex = path
			case TxnIndex:
				s.TxnIndex = path
			}
		default:
			p.Others = append(p.Others, path)
		}
	}
	for _, s := range segs {
		p.Segments = append(p.Segments, *s)
	}
	slices.SortFunc(p.Segments, func(a, b Segment) int { return cmp.Compare(a.Base, b.Base) })
	// os.ReadDir sorts by name, and offsets in names have a fixed width, so
	// the other lists are already in order.
	return p, nil
}

// Refusal is an entry of a partition directory on which a broker's load of
// the partition fails, and what the broker does (BrokerRefusal).
type Refusal struct {
	Path, Why string
}

func (r Refusal) String() string { return r.Path + ": " + r.Why }

// Refusals lists the entries of the partition directory dir on which a
// broker's load fails, in name order: every command that walks partitions
// asks this before it works on one, so that they all report the same
// entries. Links and irregular files are not judged: they are never
// followed or opened (see Partition.Symlinks, Partition.Irregular).
func Refusals(dir string) ([]Refusal, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	regular := map[string]bool{}
	for _, e := range entries {
		if fileKind(e) == regularEntry {
			regular[e.Name()] = true
		}
	}
	var out []Refusal
	for _, e := range entries {
		k := fileKind(e)
		if k != regularEntry && k != dirEntry {
			continue
		}
		if why := BrokerRefusal(e.Name(), k == dirEntry, func(name string) bool { return regular[name] }); why != "" {
			out = append(out, Refusal{Path: filepath.Join(dir, e.Name()), Why: why})
		}
	}
	return out, nil
}

// LogDir is the contents of a log directory. All paths are full paths.
type LogDir struct {
	Path string
	// Partitions holds every directory whose name parses as a partition
	// directory, of every DirKind, sorted by topic, partition, kind, name.
	Partitions []*Partition
	// RootFiles are the regular files: meta.properties, the offset
	// checkpoints, .lock, .kafka_cleanshutdown and anything else.
	RootFiles []string
	// Irregular are the entries that are neither regular files nor
	// directories nor links (see Partition.Irregular).
	Irregular []string
	// Symlinks are the symbolic links, never followed: a partition
	// directory or root checkpoint that is a link lives outside the log
	// directory.
	Symlinks []string
	// NotPartitions are the directories whose names are not partition
	// directory names. A broker refuses to start on such a log directory.
	NotPartitions []string
}

// ReadLogDir lists a log directory and each of its partition directories.
func ReadLogDir(dir string) (*LogDir, error) {
	ld, names, err := readRoot(dir)
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		p, err := ReadPartition(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		ld.Partitions = append(ld.Partitions, p)
	}
	slices.SortFunc(ld.Partitions, func(a, b *Partition) int { return ComparePartitionDirs(a.Dir, b.Dir) })
	return ld, nil
}

// ReadRoot lists a log directory without reading its partition
// directories: LogDir.Partitions is left empty.
func ReadRoot(dir string) (*LogDir, error) {
	ld, _, err := readRoot(dir)
	return ld, err
}

// readRoot lists dir, returning the names of its partition directories.
func readRoot(dir string) (*LogDir, []string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	ld := &LogDir{Path: dir}
	var names []string
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		switch fileKind(e) {
		case regularEntry:
			ld.RootFiles = append(ld.RootFiles, path)
			continue
		case irregularEntry:
			ld.Irregular = append(ld.Irregular, path)
			continue
		case linkEntry:
			ld.Symlinks = append(ld.Symlinks, path)
			continue
		}
		if _, err := ParsePartitionDir(e.Name()); err != nil {
			ld.NotPartitions = append(ld.NotPartitions, path)
			continue
		}
		names = append(names, e.Name())
	}
	return ld, names, nil
}

// ComparePartitionDirs orders partition directories as ReadLogDir lists
// them: by topic, partition, kind and name.
func ComparePartitionDirs(a, b PartitionDir) int {
	return cmp.Or(
		strings.Compare(a.Topic, b.Topic),
		cmp.Compare(a.Partition, b.Partition),
		cmp.Compare(a.Kind, b.Kind),
		strings.Compare(a.Name, b.Name),
	)
}

// isDir follows a symbolic link, as Kafka's File.isDirectory does: it
// judges what a path names, not what a log directory holds.
func isDir(path string, e fs.DirEntry) bool {
	mode := e.Type()
	if mode&fs.ModeSymlink != 0 {
		fi, err := os.Stat(path)
		return err == nil && fi.IsDir()
	}
	return mode.IsDir()
}

type entryKind int

const (
	regularEntry entryKind = iota
	dirEntry
	irregularEntry
	linkEntry
)

// fileKind tells a regular file from a directory, a symbolic link and
// anything else, from the directory entry alone (lstat's answer): a link is
// never followed, so nothing listed in a log directory leads out of it.
func fileKind(e fs.DirEntry) entryKind {
	mode := e.Type()
	switch {
	case mode&fs.ModeSymlink != 0:
		return linkEntry
	case mode.IsDir():
		return dirEntry
	case mode.IsRegular():
		return regularEntry
	}
	return irregularEntry
}

// baseName is the name of the directory path denotes, also for "." and "..".
func baseName(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	return filepath.Base(path)
}

// PathKind is what a path given on the command line is.
type PathKind int

const (
	KindFile         PathKind = iota // a regular file
	KindPartitionDir                 // a partition directory
	KindLogDir                       // a log directory
	KindLogDirs                      // a directory holding log directories, each with meta.properties
)

func (k PathKind) String() string {
	switch k {
	case KindFile:
		return "file"
	case KindPartitionDir:
		return "partition directory"
	case KindLogDir:
		return "log directory"
	case KindLogDirs:
		return "directory of log directories"
	}
	return fmt.Sprintf("PathKind(%d)", int(k))
}

// ErrUnrecognizedPath is wrapped by Classify's errors for paths that exist
// but are none of the three kinds: a usage error.
var ErrUnrecognizedPath = errors.New("not a file, partition directory or log directory")

// Classify tells what path is. A regular file is KindFile. A directory is
// judged by its contents first and its name second, because log directories
// are often named like partitions ("kafka-logs-1"):
//   - a log directory holds partition directories or log-dir root files
//     (meta.properties, the offset checkpoints, .lock, .kafka_cleanshutdown,
//     bootstrap.checkpoint);
//   - a partition directory holds segments, snapshots or the other files of
//     a partition directory, or is empty and named like one;
//   - a directory holding no Kafka file of its own but subdirectories with a
//     meta.properties is a directory of log directories (KindLogDirs), as
//     the volume that holds a JBOD broker's log.dirs often is: such log
//     directories are often named like partitions ("kafka-logs-1").
//
// A directory holding both kinds of evidence, or neither and not named like a
// partition, is an error wrapping ErrUnrecognizedPath; so is anything that is
// neither a regular file nor a directory. A path that cannot be read gives
// the I/O error.
func Classify(path string) (PathKind, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	if fi.Mode().IsRegular() {
		return KindFile, nil
	}
	if !fi.IsDir() {
		return 0, fmt.Errorf("%s: %w", path, ErrUnrecognizedPath)
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return 0, err
	}
	var rootSign, partitionSign, childSign string
	var dirs []string
	for _, e := range entries {
		if isDir(filepath.Join(path, e.Name()), e) {
			dirs = append(dirs, e.Name())
			if _, err := ParsePartitionDir(e.Name()); err == nil && childSign == "" {
				childSign = e.Name()
			}
			continue
		}
		switch k := ParseFileName(e.Name()).Kind; {
		case k.atRoot() && rootSign == "":
			rootSign = e.Name()
		case k.inPartition() && partitionSign == "":
			partitionSign = e.Name()
		}
	}
	if rootSign == "" && partitionSign == "" {
		// Only then are the subdirectories looked into: a log directory
		// has root files, and may hold thousands of partitions.
		if logDirs, err := logDirsIn(path, dirs); err != nil || len(logDirs) > 0 {
			return KindLogDirs, err
		}
	}
	if rootSign == "" {
		rootSign = childSign
	}
	switch {
	case rootSign != "" && partitionSign != "":
		return 0, fmt.Errorf("%s: %w: it holds both %s, which belongs in a log directory, and %s, which belongs in a partition directory",
			path, ErrUnrecognizedPath, rootSign, partitionSign)
	case rootSign != "":
		return KindLogDir, nil
	case partitionSign != "":
		return KindPartitionDir, nil
	}
	if _, err := ParsePartitionDir(baseName(path)); err == nil {
		return KindPartitionDir, nil
	}
	return 0, fmt.Errorf("%s: %w: the directory holds no Kafka files", path, ErrUnrecognizedPath)
}

// KafkaFilesIn says what dir is by the Kafka files it holds itself, never
// by names of directories: KindLogDir when it holds a log-dir root file
// (meta.properties, an offset checkpoint, .kafka_cleanshutdown,
// bootstrap.checkpoint; not a .lock alone, which logtool itself may have
// made), KindPartitionDir when it holds a file of a partition directory,
// and ok false otherwise (or when it cannot be read). It is how writers tell an
// existing log directory, which they must lock and not litter, from a plain
// directory, which they must not make look like one.
func KafkaFilesIn(dir string) (kind PathKind, ok bool) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, false
	}
	for _, e := range entries {
		if isDir(filepath.Join(dir, e.Name()), e) {
			continue
		}
		switch k := ParseFileName(e.Name()).Kind; {
		case k.atRoot() && k != Lock:
			return KindLogDir, true
		case k.inPartition():
			kind, ok = KindPartitionDir, true
		}
	}
	return kind, ok
}

// LogDirsIn returns the log directories in dir, a KindLogDirs directory:
// its subdirectories holding a meta.properties, in name order.
func LogDirsIn(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var dirs []string
	for _, e := range entries {
		if isDir(filepath.Join(dir, e.Name()), e) {
			dirs = append(dirs, e.Name())
		}
	}
	return logDirsIn(dir, dirs)
}

func logDirsIn(dir string, names []string) ([]string, error) {
	var out []string
	for _, n := range names {
		sub := filepath.Join(dir, n)
		fi, err := os.Stat(filepath.Join(sub, MetaPropertiesFile))
		switch {
		case err == nil && fi.Mode().IsRegular():
			out = append(out, sub)
		case err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
			return nil, err
		}
	}
	return out, nil
}

// LogDirOf returns the log directory that holds path, a path of the given
// kind: path itself for a log directory, its parent for a partition
// directory or a log-dir root file, its grandparent for any other file. It
// works on the path's text alone; ".." is resolved lexically.
func LogDirOf(path string, kind PathKind) string {
	switch kind {
	case KindLogDir:
		return filepath.Clean(path)
	case KindPartitionDir:
		return filepath.Join(path, "..")
	}
	name := strings.TrimSuffix(filepath.Base(path), safefile.TempSuffix)
	if ParseFileName(name).Kind.atRoot() {
		return filepath.Join(path, "..")
	}
	return filepath.Join(path, "..", "..")
}

// SegmentBytes adds up the sizes of the files at path that hold records
// (segments, leftover ones too, KRaft snapshots, the bootstrap checkpoint):
// those of a partition or log directory (not below it), or path itself
// when it is a file. What cannot be read counts nothing: it is a progress
// bar's total.
func SegmentBytes(path string) int64 {
	var n int64
	add := func(name string, info func() (fs.FileInfo, error)) {
		switch ParseFileName(name).Kind {
		case Log, KRaftSnapshot, BootstrapCheckpoint:
			if fi, err := info(); err == nil && fi.Mode().IsRegular() {
				n += fi.Size()
			}
		}
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		add(filepath.Base(path), func() (fs.FileInfo, error) { return os.Stat(path) })
		return n
	}
	for _, e := range entries {
		add(e.Name(), e.Info)
	}
	return n
}
