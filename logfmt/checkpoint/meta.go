package checkpoint

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/logtool/logtool/logfmt"
)

// MetaProperties is the content of a log directory's meta.properties.
type MetaProperties struct {
	Version     int    // 0 (ZooKeeper era), 1 (KRaft) or 2
	BrokerID    int32  // broker.id of version 0; -1 if absent
	NodeID      int32  // node.id of versions 1 and 2; -1 if absent
	ClusterID   string // cluster.id; "" if absent
	DirectoryID string // directory.id, a Uuid in base64url; "" if absent
	Other       map[string]string
}

// Keys Kafka's MetaProperties reads.
const (
	propVersion     = "version"
	propBrokerID    = "broker.id"
	propNodeID      = "node.id"
	propClusterID   = "cluster.id"
	propDirectoryID = "directory.id"
)

// ReadMetaProperties parses meta.properties as Kafka's
// MetaProperties.Builder(Properties) does: a missing version means 0;
// versions 0, 1 and 2 exist; version 0 may carry an int32 broker.id, later
// versions must carry an int32 node.id, and version 1 must carry cluster.id;
// directory.id, when present, must be a Uuid. Keys Kafka does not read for the
// file's version are kept in Other.
func ReadMetaProperties(b []byte, file string) (MetaProperties, error) {
	m := MetaProperties{BrokerID: -1, NodeID: -1}
	get, err := parseProperties(b, file)
	if err != nil {
		return MetaProperties{}, err
	}

	if p, ok := get[propVersion]; ok {
		// MetaPropertiesVersion.fromNumberString trims; the id parsers do not.
		v, ok := parseInt([]byte(strings.TrimFunc(p.value, func(r rune) bool { return r <= ' ' })), 32)
		if !ok {
			return MetaProperties{}, logfmt.Corruptf(file, p.pos, "version %q is not a number", p.value)
		}
		if v < 0 || v > 2 {
			return MetaProperties{}, logfmt.Corruptf(file, p.pos, "unknown meta.properties version %d", v)
		}
		m.Version = int(v)
	}

	idKey := propNodeID
	if m.Version == 0 {
		idKey = propBrokerID
	}
	if p, ok := get[idKey]; ok {
		id, ok := parseInt([]byte(p.value), 32)
		if !ok {
			return MetaProperties{}, logfmt.Corruptf(file, p.pos, "%s %q is not an int32", idKey, p.value)
		}
		if m.Version == 0 {
			m.BrokerID = int32(id)
		} else {
			m.NodeID = int32(id)
		}
	} else if m.Version > 0 {
		return MetaProperties{}, logfmt.Corruptf(file, -1, "version %d without %s", m.Version, propNodeID)
	}

	p, ok := get[propClusterID]
	if !ok && m.Version == 1 {
		return MetaProperties{}, logfmt.Corruptf(file, -1, "version 1 without %s", propClusterID)
	}
	m.ClusterID = p.value

	if p, ok := get[propDirectoryID]; ok {
		if _, err := parseUUID(p.value); err != nil {
			return MetaProperties{}, &logfmt.CorruptError{File: file, Pos: p.pos, Msg: "bad " + propDirectoryID, Err: err}
		}
		m.DirectoryID = p.value
	}

	for k, p := range get {
		switch k {
		case propVersion, idKey, propClusterID, propDirectoryID:
			continue
		}
		if m.Other == nil {
			m.Other = make(map[string]string)
		}
		m.Other[k] = p.value
	}
	return m, nil
}

// AppendMetaProperties appends m as Kafka writes it with Properties.store: an
// empty comment line, a comment with the time in java.util.Date.toString
// form, then one key=value line per property.
//
// Java before 18 stores properties in hash-table order; Java 18 and later
// sort them by key (JDK-8231640). Sorted order is the one a current broker
// writes and is stable, so that is the order used here.
func AppendMetaProperties(dst []byte, m MetaProperties, comment time.Time) []byte {
	props := map[string]string{propVersion: strconv.Itoa(m.Version)}
	switch {
	case m.Version > 0:
		props[propNodeID] = strconv.Itoa(int(m.NodeID))
	case m.BrokerID >= 0:
		props[propBrokerID] = strconv.Itoa(int(m.BrokerID))
	}
	if m.ClusterID != "" || m.Version == 1 {
		props[propClusterID] = m.ClusterID
	}
	if m.DirectoryID != "" {
		props[propDirectoryID] = m.DirectoryID
	}
	for k, v := range m.Other {
		if _, ok := props[k]; !ok {
			props[k] = v
		}
	}
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)

	dst = append(dst, "#\n#"...)
	dst = comment.AppendFormat(dst, "Mon Jan 02 15:04:05 MST 2006")
	dst = append(dst, '\n')
	for _, k := range keys {
		dst = appendProperty(dst, k, props[k])
	}
	return dst
}
