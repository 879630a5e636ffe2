package dump

import (
	"github.com/logtool/logtool/internal/target"
	"github.com/logtool/logtool/topicconfig"
)

// Policies gives the cleanup.policy of each partition's topic, from the
// cluster metadata of set's log dirs, for Options.Policy: "" where the
// topic's configuration is not known.
func Policies(set *target.Set) (func(*target.Partition) string, error) {
	var dirs []string
	for _, d := range set.LogDirs {
		dirs = append(dirs, d.Path)
	}
	cat, err := topicconfig.Load(dirs, topicconfig.Options{})
	if err != nil {
		return nil, err
	}
	return func(p *target.Partition) string {
		r := cat.For(p.LogDir.Path)
		if !r.Known() {
			return ""
		}
		cfg, err := r.Topic(p.Dir.Topic)
		if err != nil || !cfg.Known {
			return ""
		}
		v, _ := cfg.Get(topicconfig.CleanupPolicy)
		return v.Value
	}, nil
}
