package replay

import (
	"fmt"
	"strings"

	"github.com/logtool/logtool/logfmt/layout"
)

// ParseTopicMap reads --topic-map values, each "OLD=NEW": records of topic
// OLD go to topic NEW. Both must be valid topic names and an OLD may be
// named once.
func ParseTopicMap(values []string) (map[string]string, error) {
	m := map[string]string{}
	for _, v := range values {
		from, to, ok := strings.Cut(v, "=")
		if !ok {
			return nil, fmt.Errorf("%q: want OLD=NEW", v)
		}
		for _, t := range []string{from, to} {
			if err := layout.ValidateTopic(t); err != nil {
				return nil, fmt.Errorf("%q: %w", v, err)
			}
		}
		if prev, dup := m[from]; dup {
			return nil, fmt.Errorf("%q: topic %s is already mapped to %s", v, from, prev)
		}
		m[from] = to
	}
	return m, nil
}
