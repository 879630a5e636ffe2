package verify

import (
	"os"
	"path/filepath"
	"slices"

	"github.com/logtool/logtool/internal/lockfile"
	"github.com/logtool/logtool/logfmt/layout"
)

// Plan is the work a set of paths makes: partition directories, files, and
// the root files of log directories, in the order they will be reported.
type Plan struct {
	units  []*unit
	locked map[string]bool // log directory → a running broker holds it
	dirs   []string        // log directories involved, in order
}

// unit is one piece of work.
type unit struct {
	kind   UnitKind
	path   string
	logDir string // the log directory holding it, by the path's text

	// PartitionUnit: the base offsets of the segments to verify; nil means
	// all of them, and only then are facts for the checkpoints collected.
	segments []int64
	deleted  bool // a "-delete" directory: the broker removes it, nothing to verify

	// RootUnit: whole is true when the log directory itself was given; else
	// only the checkpoint entries of these partitions (topic-partition →
	// partition directory) are judged.
	whole bool
	scope map[tp]string
}

// tp is a topic-partition.
type tp struct {
	topic     string
	partition int32
}

func (t tp) String() string { return layout.PartitionDirName(t.topic, t.partition) }

// NewPlan works out what verifying paths means. A path that does not exist
// or is neither a file, a partition directory nor a log directory gives an
// error wrapping fs.ErrNotExist or layout.ErrUnrecognizedPath.
func NewPlan(paths []string) (*Plan, error) {
	p := &Plan{locked: map[string]bool{}}
	parts := map[string]*unit{} // partition units by path
	wholeDirs := map[string]bool{}
	scoped := map[string]*unit{} // root units for partitions given alone, by log dir
	var pending []*unit          // partitions given alone, for their scoped roots
	addPartition := func(dir, logDir string, base int64, whole bool) *unit {
		key := filepath.Clean(dir)
		u := parts[key]
		if u == nil {
			u = &unit{kind: PartitionUnit, path: key, logDir: logDir, segments: []int64{}}
			parts[key] = u
			p.units = append(p.units, u)
		}
		switch {
		case whole:
			u.segments = nil
		case u.segments != nil && !slices.Contains(u.segments, base):
			u.segments = append(u.segments, base)
		}
		return u
	}
	for _, path := range paths {
		kind, err := layout.Classify(path)
		if err != nil {
			return nil, err
		}
		logDir := layout.LogDirOf(path, kind)
		switch kind {
		case layout.KindLogDir:
			key := filepath.Clean(path)
			if wholeDirs[key] {
				continue
			}
			wholeDirs[key] = true
			ld, err := layout.ReadLogDir(path)
			if err != nil {
				return nil, err
			}
			for _, part := range ld.Partitions {
				u := addPartition(part.Path, key, 0, true)
				u.deleted = part.Dir.Kind == layout.Delete
			}
			p.units = append(p.units, &unit{kind: RootUnit, path: key, logDir: key, whole: true})
			p.addDir(key)
		case layout.KindPartitionDir:
			pending = append(pending, addPartition(path, logDir, 0, true))
			p.addDir(logDir)
		default:
			fn := layout.ParseFileName(filepath.Base(path))
			if fn.Leftover == "" && fn.Kind >= layout.Log && fn.Kind <= layout.TxnIndex {
				addPartition(filepath.Dir(path), logDir, fn.Base, false)
			} else {
				p.units = append(p.units, &unit{kind: FileUnit, path: filepath.Clean(path), logDir: logDir})
			}
			p.addDir(logDir)
		}
	}
	// Partitions given alone are judged against the checkpoints of the log
	// directory holding them, unless that directory is verified whole.
	for _, u := range pending {
		if wholeDirs[u.logDir] || u.segments != nil {
			continue
		}
		pd, err := layout.ParsePartitionDir(filepath.Base(u.path))
		if err != nil || pd.Kind != layout.Normal {
			continue
		}
		r := scoped[u.logDir]
		if r == nil {
			r = &unit{kind: RootUnit, path: filepath.Clean(u.logDir), logDir: u.logDir, scope: map[tp]string{}}
			scoped[u.logDir] = r
			p.units = append(p.units, r)
		}
		r.scope[tp{pd.Topic, pd.Partition}] = u.path
	}
	for _, d := range p.dirs {
		if held, err := lockfile.Held(d); err == nil && held {
			p.locked[d] = true
		}
	}
	return p, nil
}

func (p *Plan) addDir(d string) {
	d = filepath.Clean(d)
	if !slices.Contains(p.dirs, d) {
		p.dirs = append(p.dirs, d)
	}
}

// Locked returns the log directories that a running broker holds: verify
// reads them while they change.
func (p *Plan) Locked() []string {
	var out []string
	for _, d := range p.dirs {
		if p.locked[d] {
			out = append(out, d)
		}
	}
	return out
}

// live reports whether the log directory holding u is in use by a broker.
func (p *Plan) live(u *unit) bool { return p.locked[filepath.Clean(u.logDir)] }

// LogBytes is the size of the .log-shaped files the plan reads (segments,
// KRaft snapshots, record sets), which Options.Progress counts, for a
// progress bar.
func (p *Plan) LogBytes() int64 {
	var n int64
	size := func(path string) {
		if fi, err := os.Stat(path); err == nil {
			n += fi.Size()
		}
	}
	for _, u := range p.units {
		switch u.kind {
		case PartitionUnit:
			part, err := layout.ReadPartition(u.path)
			if err != nil || u.deleted {
				continue
			}
			for _, s := range part.Segments {
				if s.Log != "" && (u.segments == nil || slices.Contains(u.segments, s.Base)) {
					size(s.Log)
				}
			}
			for _, o := range part.Others {
				if layout.ParseFileName(filepath.Base(o)).Kind == layout.KRaftSnapshot {
					size(o)
				}
			}
		case RootUnit:
			if u.whole {
				size(filepath.Join(u.path, layout.BootstrapCheckpointFile))
			}
		case FileUnit:
			size(u.path)
		}
	}
	return n
}
