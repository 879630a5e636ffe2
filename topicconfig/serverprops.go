package topicconfig

import (
	"fmt"
	"path/filepath"

	"github.com/logtool/logtool/internal/javaprops"
	"github.com/logtool/logtool/internal/safefile"
)

// parseServerProperties reads a broker's server.properties as the static
// broker level: its keys are broker config names (log.retention.hours),
// which pick maps to topic configs by their synonyms, and a value is
// checked only when a topic's config comes from it, as the broker parses
// only the names it defines.
func parseServerProperties(path string) (level, error) {
	// Reached through a link as often as not; safefile.Open follows none.
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, err
	}
	b, err := safefile.ReadFile(real)
	if err != nil {
		return nil, err
	}
	props, err := javaprops.Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	l := make(level, len(props))
	for k, v := range props {
		l[k] = entry{value: v, source: StaticBroker}
	}
	return l, nil
}
