package verify

import (
	"os"
	"path/filepath"
	"slices"

	"github.com/logtool/logtool/internal/target"
	"github.com/logtool/logtool/logfmt/layout"
)

// Plan is the work a set of paths makes: partition directories, files, and
// the root files of log directories, in the order they will be reported.
type Plan struct {
	units   []*unit
	logDirs []string  // every log directory involved, whose metadata is read
	md      *metadata // read by Run
}

// unit is one piece of work.
type unit struct {
	kind   UnitKind
	path   string
	logDir string // the log directory holding it
	live   bool   // a running broker holds that log directory

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

// NewPlan works out what verifying the targets means (target.Resolve with
// Files, Segments, Partitions and LogDirs). A log directory that a running
// broker holds (target.LogDir.Held, set by target.Set.Lock) is verified as
// live: the end of each active segment may be a write in progress.
func NewPlan(set *target.Set) *Plan {
	p := &Plan{}
	var open *unit               // the root unit of the log directory whose partitions are being listed
	var scopedRoots []*unit      // root units for partitions given alone, last
	scoped := map[string]*unit{} // those by log dir
	closeRoot := func() {
		if open != nil {
			p.units = append(p.units, open)
			open = nil
		}
	}
	for _, it := range set.Items {
		switch {
		case it.Root != nil:
			// Placed after its partitions, whose facts it is judged on.
			closeRoot()
			open = &unit{kind: RootUnit, path: it.Root.Path, logDir: it.Root.Path, live: it.Root.Held != nil, whole: true}
		case it.Partition != nil:
			part := it.Partition
			if open != nil && part.LogDir.Path != open.path {
				closeRoot()
			}
			u := &unit{kind: PartitionUnit, path: part.Path, logDir: part.LogDir.Path, live: part.LogDir.Held != nil,
				segments: part.Segments, deleted: part.Dir.Kind == layout.Delete}
			p.units = append(p.units, u)
			// Partitions given alone are judged against the checkpoints of
			// the log directory holding them, unless that directory is
			// verified whole.
			if !part.Named || part.LogDir.Whole || part.Segments != nil || part.Dir.Kind != layout.Normal || part.Dir.Topic == "" {
				continue
			}
			r := scoped[u.logDir]
			if r == nil {
				r = &unit{kind: RootUnit, path: u.logDir, logDir: u.logDir, live: u.live, scope: map[tp]string{}}
				scoped[u.logDir] = r
				scopedRoots = append(scopedRoots, r)
			}
			r.scope[tp{part.Dir.Topic, part.Dir.Partition}] = u.path
		case it.File != nil:
			closeRoot()
			p.units = append(p.units, &unit{kind: FileUnit, path: it.File.Path, logDir: it.File.LogDir.Path, live: it.File.LogDir.Held != nil})
		}
	}
	closeRoot()
	p.units = append(p.units, scopedRoots...)
	for _, d := range set.LogDirs {
		p.logDirs = append(p.logDirs, d.Path)
	}
	return p
}

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
