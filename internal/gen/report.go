package gen

import (
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/logtool/logtool/internal/jsonbytes"
	"github.com/logtool/logtool/internal/table"
)

// ParseTopicConfigs reads topics' dynamic configs given as
// TOPIC:NAME=VALUE, for Options.TopicConfigs; nil for none. The error
// quotes the value it refuses.
func ParseTopicConfigs(kvs []string) (map[string]map[string]string, error) {
	var m map[string]map[string]string
	for _, kv := range kvs {
		topic, nv, ok := strings.Cut(kv, ":")
		name, value, ok2 := strings.Cut(nv, "=")
		if !ok || !ok2 || topic == "" || name == "" {
			return nil, fmt.Errorf("%q: want TOPIC:NAME=VALUE", kv)
		}
		if m == nil {
			m = map[string]map[string]string{}
		}
		if m[topic] == nil {
			m[topic] = map[string]string{}
		}
		m[topic][name] = value
	}
	return m, nil
}

// ParseBrokerConfigs reads cluster-wide dynamic broker configs given as
// NAME=VALUE, for Options.BrokerConfigs; nil for none.
func ParseBrokerConfigs(kvs []string) (map[string]string, error) {
	var m map[string]string
	for _, kv := range kvs {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("%q: want NAME=VALUE", kv)
		}
		if m == nil {
			m = map[string]string{}
		}
		m[name] = value
	}
	return m, nil
}

// Report is what Generate wrote into the log directory Out.
type Report struct {
	Out        string
	Partitions []Partition
}

// WriteJSON writes an object per partition.
func (r *Report) WriteJSON(w io.Writer) error {
	for _, p := range r.Partitions {
		// Go's %q is not JSON, and a path or topic need not be UTF-8.
		b := jsonbytes.AppendString(append([]byte(nil), `{"type":"generated","file":`...), p.Dir)
		b = jsonbytes.AppendString(append(b, `,"topic":`...), p.Topic)
		b = fmt.Appendf(b, `,"partition":%d,"segments":%d,"records":%d,"logEndOffset":%d}`+"\n",
			p.Partition, p.Segments, p.Records, p.LogEndOffset)
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// WriteText writes a row per partition and the totals.
func (r *Report) WriteText(w io.Writer) error {
	t := table.New("PARTITION", "SEGMENTS", "RECORDS", "LOG END OFFSET")
	records := 0
	for _, p := range r.Partitions {
		t.Append(filepath.Base(p.Dir), strconv.Itoa(p.Segments), strconv.Itoa(p.Records), strconv.FormatInt(p.LogEndOffset, 10))
		records += p.Records
	}
	if _, err := t.WriteTo(w); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "wrote %d record(s) in %d partition(s) into %s\n", records, len(r.Partitions), r.Out)
	return err
}
