package topicconfig

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/logfmt/layout"
)

// FileConfig is the configuration a --topic-config file states: the output
// of kafka-topics.sh --describe, of kafka-configs.sh --describe (with or
// without --all) for topics or brokers, or several of them concatenated.
type FileConfig struct {
	Path    string
	topics  map[string]map[string]entry
	brokers map[string]map[string]entry // "" is the cluster-wide default
}

// entry is a value as a level holds it.
type entry struct {
	value  string
	source Source
	from   string // the config the value was read under, when not the topic config's own name
}

// The lines ParseFile reads. kafka-topics.sh (TopicCommand) prints a topic
// line, then one tab-indented line per partition:
//
//	Topic: t	TopicId: <id>	PartitionCount: 3	ReplicationFactor: 2	Configs: cleanup.policy=compact,delete,retention.ms=1000
//	Topic:t	PartitionCount:3	ReplicationFactor:2	Configs:segment.bytes=1000	(ZooKeeper-era tools, before 2.x)
//
// kafka-configs.sh (ConfigCommand) prints a header per entity and one line
// per config, the first synonym being the one in effect:
//
//	All configs for topic t are:
//	  cleanup.policy=compact sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:cleanup.policy=compact, DEFAULT_CONFIG:log.cleanup.policy=delete}
//
// with "Dynamic configs for ..." without --all, "Configs for broker 1 are:"
// and "Default config(s) for brokers in the cluster are:" for brokers, and
// the one-line "Configs for topic 't' are k=v,k=v" of the --zookeeper era.

// ParseFile reads a --topic-config file.
func ParseFile(path string) (*FileConfig, error) {
	// The file is the user's, often reached through a link; safefile.Open
	// follows none, so the path is resolved here, once.
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, err
	}
	b, err := safefile.ReadFile(real)
	if err != nil {
		return nil, err
	}
	return Parse(bytes.NewReader(b), path)
}

// Parse reads a --topic-config file's contents; name names it in errors. A
// line it cannot read is an error naming the line.
func Parse(r io.Reader, name string) (*FileConfig, error) {
	fc := &FileConfig{Path: name, topics: map[string]map[string]entry{}, brokers: map[string]map[string]entry{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 16<<20)
	var section map[string]entry // the entity whose config lines follow
	var sectionSource Source     // the source of its lines without synonyms
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSuffix(sc.Text(), "\r")
		fail := func(format string, args ...any) error {
			return fmt.Errorf("%s: line %d: %s", name, n, fmt.Sprintf(format, args...))
		}
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "":
		case strings.HasPrefix(line, "Topic:"):
			section = nil
			if err := fc.topicLine(line); err != nil {
				return nil, fail("%v", err)
			}
		case strings.HasPrefix(trimmed, "Topic:") && strings.Contains(line, "\tPartition:"):
			// a partition line of kafka-topics.sh
		case strings.HasPrefix(line, "  ") && section != nil:
			if err := configLine(trimmed, section, sectionSource); err != nil {
				return nil, fail("%v", err)
			}
		default:
			var err error
			section, sectionSource, err = fc.header(line)
			if err != nil {
				return nil, fail("%v", err)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return fc, nil
}

// topicLine reads a kafka-topics.sh topic line: tab-separated "Key: value"
// fields (no blank after the colon in old versions).
func (fc *FileConfig) topicLine(line string) error {
	var topic, configs string
	hasConfigs := false
	for _, field := range strings.Split(line, "\t") {
		k, v, ok := strings.Cut(field, ":")
		if !ok {
			return fmt.Errorf("field %q of a kafka-topics.sh line has no colon", field)
		}
		v = strings.TrimPrefix(v, " ")
		switch k {
		case "Topic":
			topic = v
		case "Configs":
			configs, hasConfigs = v, true
		}
	}
	if err := layout.ValidateTopic(topic); err != nil {
		return err
	}
	if !hasConfigs {
		return fmt.Errorf("kafka-topics.sh line for topic %s has no Configs field", topic)
	}
	m := fc.topic(topic)
	for _, kv := range splitConfigs(configs) {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = entry{value: v, source: File}
	}
	return nil
}

// splitConfigs splits "k=v,k=v" where values may hold commas
// (cleanup.policy=compact,delete): a new pair starts only where a
// config-like name and "=" follow a comma.
func splitConfigs(s string) []string {
	if s == "" {
		return nil
	}
	var out []string
	for _, piece := range strings.Split(s, ",") {
		if len(out) > 0 && !startsPair(piece) {
			out[len(out)-1] += "," + piece
			continue
		}
		out = append(out, piece)
	}
	return out
}

func startsPair(s string) bool {
	name, _, ok := strings.Cut(s, "=")
	return ok && isConfigName(name)
}

func isConfigName(s string) bool {
	if s == "" || !isLetter(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !isLetter(c) && (c < '0' || c > '9') && c != '.' && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// header reads a kafka-configs.sh header and returns the entity's level and
// the source of its lines that carry no synonyms.
func (fc *FileConfig) header(line string) (map[string]entry, Source, error) {
	bad := fmt.Errorf("not a line of kafka-topics.sh or kafka-configs.sh --describe: %q", truncate(line))
	if level, configs, ok, err := fc.zkLine(line); ok || err != nil {
		if err != nil {
			return nil, "", err
		}
		for _, kv := range splitConfigs(configs) {
			k, v, _ := strings.Cut(kv, "=")
			level[k] = entry{value: v, source: File}
		}
		return nil, "", nil
	}
	body, ok := strings.CutSuffix(line, " are:")
	if !ok {
		return nil, "", bad
	}
	if body == "Default configs for brokers in the cluster" || body == "Default config for brokers in the cluster" {
		return fc.broker(""), DynamicDefaultBroker, nil
	}
	dynamic := true
	switch {
	case strings.HasPrefix(body, "All configs for "):
		dynamic, body = false, strings.TrimPrefix(body, "All configs for ")
	case strings.HasPrefix(body, "Dynamic configs for "):
		body = strings.TrimPrefix(body, "Dynamic configs for ")
	case strings.HasPrefix(body, "Configs for "):
		body = strings.TrimPrefix(body, "Configs for ")
	default:
		return nil, "", bad
	}
	if topic, ok := strings.CutPrefix(body, "topic "); ok {
		if err := layout.ValidateTopic(topic); err != nil {
			return nil, "", err
		}
		if dynamic {
			return fc.topic(topic), DynamicTopic, nil
		}
		return fc.topic(topic), File, nil
	}
	if id, ok := strings.CutPrefix(body, "broker "); ok && id != "" && strings.TrimLeft(id, "0123456789") == "" {
		if dynamic {
			return fc.broker(id), DynamicBroker, nil
		}
		return fc.broker(id), File, nil
	}
	return nil, "", bad
}

// zkLine reads the one-line form of kafka-configs.sh --zookeeper:
// "Configs for topic 't' are k=v,k=v", "Configs for brokers '1' are ..." or
// "Configs for default brokers are ...".
func (fc *FileConfig) zkLine(line string) (level map[string]entry, configs string, ok bool, err error) {
	rest, ok := strings.CutPrefix(line, "Configs for ")
	if !ok {
		return nil, "", false, nil
	}
	var entity string
	switch {
	case strings.HasPrefix(rest, "default brokers are"):
		level, rest = fc.broker(""), strings.TrimPrefix(rest, "default brokers are")
	case strings.HasPrefix(rest, "topic '"), strings.HasPrefix(rest, "brokers '"):
		kind, quoted, _ := strings.Cut(rest, " '")
		if entity, rest, ok = strings.Cut(quoted, "' are"); !ok {
			return nil, "", false, nil
		}
		if kind == "topic" {
			if err := layout.ValidateTopic(entity); err != nil {
				return nil, "", true, err
			}
			level = fc.topic(entity)
		} else {
			if entity == "" || strings.TrimLeft(entity, "0123456789") != "" {
				return nil, "", true, fmt.Errorf("broker %q is not a broker id", entity)
			}
			level = fc.broker(entity)
		}
	default:
		return nil, "", false, nil
	}
	if rest != "" && !strings.HasPrefix(rest, " ") {
		return nil, "", false, nil
	}
	return level, strings.TrimPrefix(rest, " "), true, nil
}

// configLine reads "name=value sensitive=B synonyms={SOURCE:name=value, ...}".
func configLine(s string, level map[string]entry, source Source) error {
	i := strings.LastIndex(s, " sensitive=")
	if i < 0 || !strings.HasSuffix(s, "}") {
		return fmt.Errorf("config line %q does not end with sensitive=... synonyms={...}", truncate(s))
	}
	sensitive, synonyms, ok := strings.Cut(s[i+len(" sensitive="):len(s)-1], " synonyms={")
	if !ok || (sensitive != "true" && sensitive != "false") {
		return fmt.Errorf("config line %q does not end with sensitive=... synonyms={...}", truncate(s))
	}
	name, value, ok := strings.Cut(s[:i], "=")
	if !ok || !isConfigName(name) {
		return fmt.Errorf("config line %q does not start with name=value", truncate(s))
	}
	e := entry{value: value, source: source}
	if synonyms != "" {
		first := synonyms
		if j := nextSynonym(synonyms); j >= 0 {
			first = synonyms[:j]
		}
		src, kv, ok := strings.Cut(first, ":")
		syn, _, ok2 := strings.Cut(kv, "=")
		if !ok || !ok2 || !isSourceName(src) {
			return fmt.Errorf("synonym %q is not SOURCE:name=value", truncate(first))
		}
		e.source = Source(src)
		if syn != name {
			e.from = syn
		}
	}
	// A sensitive value is printed as null; a null one is not set.
	if sensitive == "true" || value == "null" {
		return nil
	}
	level[name] = e
	return nil
}

// nextSynonym finds the ", " that starts the second synonym: values may
// hold ", " too, but a synonym starts with a source name and a colon.
func nextSynonym(s string) int {
	for i := 0; ; {
		j := strings.Index(s[i:], ", ")
		if j < 0 {
			return -1
		}
		i += j + 2
		if src, _, ok := strings.Cut(s[i:], ":"); ok && isSourceName(src) {
			return i - 2
		}
	}
}

func isSourceName(s string) bool {
	return s != "" && strings.Trim(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_") == ""
}

func truncate(s string) string {
	if len(s) > 120 {
		return s[:120] + "..."
	}
	return s
}

func (fc *FileConfig) topic(name string) map[string]entry { return levelOf(fc.topics, name) }

func (fc *FileConfig) broker(id string) map[string]entry { return levelOf(fc.brokers, id) }

func levelOf(levels map[string]map[string]entry, key string) map[string]entry {
	m := levels[key]
	if m == nil {
		m = map[string]entry{}
		levels[key] = m
	}
	return m
}

// Topics returns the names of the topics the file describes.
func (fc *FileConfig) Topics() []string {
	names := make([]string, 0, len(fc.topics))
	for n := range fc.topics {
		names = append(names, n)
	}
	return names
}
