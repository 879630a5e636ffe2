package topicconfig

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/logtool/logtool/clustermeta"
	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/logfmt/checkpoint"
	"github.com/logtool/logtool/logfmt/layout"
)

// Options are a run's configuration sources besides its log dirs.
type Options struct {
	// File is a --topic-config file; when set, it is the source for every
	// log dir in place of their metadata.
	File string
	// Overrides are values given on the command line, by topic config name
	// (retention.ms, not log.retention.ms), in Kafka's units.
	Overrides map[string]string
	// UnlistedDefaults gives a topic File does not name Kafka's defaults;
	// without it such a topic's configuration is unknown (Resolver.Unknown).
	UnlistedDefaults bool
	// ServerProperties is a broker's server.properties: its values are the
	// static broker level, below the dynamic broker configs.
	ServerProperties string
	// KafkaDefaults states that what no source sets is Kafka's default;
	// without it, or ServerProperties, such a value is unknown (Gaps).
	KafkaDefaults bool
}

// OptionError is a file the user named that cannot be read as the option
// says: a usage error.
type OptionError struct {
	Option string // the command-line option that named it
	Err    error
}

func (e *OptionError) Error() string { return e.Option + ": " + e.Err.Error() }
func (e *OptionError) Unwrap() error { return e.Err }

// Catalog holds the configuration of a run's log dirs.
type Catalog struct {
	byDir map[string]*Resolver
	none  *Resolver
	// Warnings are about the sources read: keys of the server.properties
	// a broker ignores though they look meant for the log.
	Warnings []string
}

// Load reads the configuration sources of the log dirs of a run, each
// metadata log once. A log dir uses the metadata in it; a log dir without
// one (a JBOD data dir, or a copy of some of a broker's dirs) uses the
// metadata of another log dir of the same broker (meta.properties node.id),
// else the most advanced one of the same cluster.
func Load(logDirs []string, o Options) (*Catalog, error) {
	for name, v := range o.Overrides {
		i, ok := defIndex[name]
		if !ok {
			return nil, fmt.Errorf("no topic configuration %s", name)
		}
		if _, _, err := check(&defs[i], Value{Name: name, Value: v, Source: CommandLine}, defs[i].kind, 1, false); err != nil {
			return nil, err
		}
	}
	var static level
	var warnings []string
	if o.ServerProperties != "" {
		var err error
		if static, warnings, err = parseServerProperties(o.ServerProperties); err != nil {
			return nil, &OptionError{Option: "--server-properties", Err: err}
		}
	}
	c := &Catalog{byDir: map[string]*Resolver{}, none: &Resolver{broker: -1, overrides: o.Overrides, static: static, staticPath: o.ServerProperties, kafkaDefaults: o.KafkaDefaults},
		Warnings: warnings}
	var file *FileConfig
	if o.File != "" {
		var err error
		if file, err = ParseFile(o.File); err != nil {
			return nil, &OptionError{Option: "--topic-config", Err: err}
		}
	}
	type dirInfo struct {
		dir, cluster string
		node         int32
		image        *clustermeta.Image
	}
	var infos []*dirInfo
	for _, dir := range logDirs {
		if c.byDir[dir] != nil {
			continue
		}
		d := &dirInfo{dir: dir, node: -1}
		b, err := safefile.ReadFile(filepath.Join(dir, layout.MetaPropertiesFile))
		switch {
		case err == nil:
			m, err := checkpoint.ReadMetaProperties(b, filepath.Join(dir, layout.MetaPropertiesFile))
			if err != nil {
				return nil, err
			}
			d.cluster, d.node = m.ClusterID, m.NodeID
			if m.Version == 0 {
				d.node = m.BrokerID
			}
		case !errors.Is(err, fs.ErrNotExist):
			return nil, err
		}
		c.byDir[dir] = &Resolver{broker: d.node, file: file, overrides: o.Overrides, unlistedDefaults: o.UnlistedDefaults,
			static: static, staticPath: o.ServerProperties, kafkaDefaults: o.KafkaDefaults}
		infos = append(infos, d)
	}
	if file != nil {
		return c, nil
	}
	for _, d := range infos {
		meta := filepath.Join(d.dir, clustermeta.PartitionDir)
		if fi, err := os.Stat(meta); err != nil || !fi.IsDir() {
			continue
		}
		for _, e := range infos {
			if e.image != nil && e.node >= 0 && e.node == d.node && e.cluster == d.cluster {
				return nil, fmt.Errorf("%s and %s both hold the metadata log of node %d", e.image.Dir, meta, d.node)
			}
		}
		im, err := clustermeta.Load(meta)
		if err != nil {
			return nil, err
		}
		d.image = im
	}
	for _, d := range infos {
		im := d.image
		for _, e := range infos {
			if im == nil && e.image != nil && d.node >= 0 && e.node == d.node && e.cluster == d.cluster {
				im = e.image
			}
		}
		if im == nil && d.cluster != "" {
			var same []*clustermeta.Image
			for _, e := range infos {
				if e.image != nil && e.cluster == d.cluster {
					same = append(same, e.image)
				}
			}
			if len(same) > 0 {
				im = slices.MaxFunc(same, func(a, b *clustermeta.Image) int { return cmp.Compare(a.EndOffset, b.EndOffset) })
			}
		}
		c.byDir[d.dir].image = im
	}
	return c, nil
}

// For returns the resolver of a log dir given to Load; any other path gets
// one without a configuration source.
func (c *Catalog) For(logDir string) *Resolver {
	if r := c.byDir[logDir]; r != nil {
		return r
	}
	return c.none
}

// Describe says where the resolver's configuration comes from, for reports.
func (r *Resolver) Describe() string {
	switch {
	case r.file != nil:
		return "topic configuration file " + r.file.Path
	case r.image != nil:
		return fmt.Sprintf("cluster metadata %s up to offset %d", r.image.Dir, r.image.EndOffset)
	}
	return "no topic configuration (Kafka's defaults)"
}

// Static says what stands for the broker's server.properties, for
// reports: the file, Kafka's defaults as the user stated, or "" when
// nothing does (and values only it could set are unknown).
func (r *Resolver) Static() string {
	switch {
	case r.static != nil:
		return "server.properties " + r.staticPath
	case r.kafkaDefaults:
		return "Kafka's defaults (--kafka-defaults)"
	}
	return ""
}
