package topicconfig

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/logtool/logtool/internal/javaprops"
	"github.com/logtool/logtool/internal/safefile"
)

// parseServerProperties reads a broker's server.properties as the static
// broker level: its keys are broker config names (log.retention.hours),
// which pick maps to topic configs by their synonyms, and a value is
// checked only when a topic's config comes from it, as the broker parses
// only the names it defines. The warnings name the lines of keys a broker
// ignores that look meant for the log (serverPropertiesWarnings).
func parseServerProperties(path string) (level, []string, error) {
	// Reached through a link as often as not; safefile.Open follows none.
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, nil, err
	}
	b, err := safefile.ReadFile(real)
	if err != nil {
		return nil, nil, err
	}
	entries, err := javaprops.Entries(b)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	l := make(level, len(entries))
	for _, e := range entries {
		l[e.Key] = entry{value: e.Value, source: StaticBroker}
	}
	return l, serverPropertiesWarnings(path, entries), nil
}

// bom is a UTF-8 byte order mark.
const bom = "\ufeff"

// serverPropertiesWarnings says which keys of a server.properties a broker
// ignores though they look meant to configure the log: a log.* key that is
// not a broker config (a typo: log.retention.hour), a topic config's name
// (retention.ms, whose broker config is log.retention.ms), and a first key
// behind a byte order mark. A broker reads the file with
// java.util.Properties.load(InputStream), as ISO 8859-1, where a UTF-8
// mark is three characters of the first key, not whitespace. The many
// other broker configs logtool does not read are not warned about.
func serverPropertiesWarnings(path string, entries []javaprops.Entry) []string {
	var ws []string
	for _, e := range entries {
		where, key := fmt.Sprintf("%s line %d: ", path, e.Line), e.Key
		switch {
		case e.Line == 1 && strings.HasPrefix(key, bom):
			// A comment behind the mark becomes a key no one reads.
			switch k := key[len(bom):]; {
			case k != "" && k[0] != '#' && k[0] != '!':
				ws = append(ws, where+"a UTF-8 byte order mark starts the file, and a broker reads it as part of the first key: "+
					k+" is not recognised; ignored, as a broker ignores it")
			case k == "" && e.Value != "":
				// Whitespace after the mark: the mark is the key, the
				// line the value.
				ws = append(ws, where+"a UTF-8 byte order mark and whitespace start the file, and a broker reads the mark as the first key and "+
					strconv.Quote(e.Value)+" as its value: not recognised; ignored, as a broker ignores it")
			}
		case strings.HasPrefix(key, "log.") && !slices.Contains(brokerLogConfigs, key):
			ws = append(ws, where+key+" is not a broker config logtool knows; ignored, as a broker ignores it")
		default:
			if i, ok := defIndex[key]; ok {
				w := where + key + " is a topic config, not a broker config"
				if syn := defs[i].synonyms; len(syn) > 0 {
					w += " (the broker's is " + syn[0].name + ")"
				}
				ws = append(ws, w+"; ignored, as a broker ignores it")
			}
		}
	}
	return ws
}

// brokerLogConfigs are Kafka's broker configs named log.*: ServerLogConfigs,
// CleanerConfig and the broker synonyms of ServerTopicConfigSynonyms, with
// those 4.0 removed that a 3.x broker still reads.
var brokerLogConfigs = []string{
	"log.dir", "log.dirs", "log.segment.bytes", "log.roll.ms", "log.roll.hours", "log.roll.jitter.ms", "log.roll.jitter.hours",
	"log.retention.ms", "log.retention.minutes", "log.retention.hours", "log.retention.bytes", "log.retention.check.interval.ms",
	"log.cleanup.policy", "log.index.size.max.bytes", "log.index.interval.bytes", "log.flush.interval.messages",
	"log.segment.delete.delay.ms", "log.flush.scheduler.interval.ms", "log.flush.interval.ms",
	"log.flush.offset.checkpoint.interval.ms", "log.flush.start.offset.checkpoint.interval.ms", "log.preallocate",
	"log.message.format.version", "log.message.timestamp.type", "log.message.timestamp.before.max.ms",
	"log.message.timestamp.after.max.ms", "log.initial.task.delay.ms", "log.dir.failure.timeout.ms",
	"log.local.retention.ms", "log.local.retention.bytes",
	"log.cleaner.threads", "log.cleaner.io.max.bytes.per.second", "log.cleaner.dedupe.buffer.size", "log.cleaner.io.buffer.size",
	"log.cleaner.io.buffer.load.factor", "log.cleaner.backoff.ms", "log.cleaner.min.cleanable.ratio", "log.cleaner.enable",
	"log.cleaner.delete.retention.ms", "log.cleaner.min.compaction.lag.ms", "log.cleaner.max.compaction.lag.ms",
	// Removed in 4.0.
	"log.message.downconversion.enable", "log.message.timestamp.difference.max.ms",
}
