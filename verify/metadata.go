package verify

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/logtool/logtool/clustermeta"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/layout"
	"github.com/logtool/logtool/topicconfig"
)

// metadata is the KRaft cluster metadata of the run's log directories,
// replayed once: what each partition directory is checked against.
type metadata struct {
	cat *topicconfig.Catalog
	err error // why it could not be read; reported once, by a root unit
}

// loadMetadata replays the metadata logs of the log directories, as a
// broker's loader would before it loads its logs.
func loadMetadata(logDirs []string) *metadata {
	cat, err := topicconfig.Load(logDirs, topicconfig.Options{})
	return &metadata{cat: cat, err: err}
}

// report adds the failure to replay the metadata to a root unit. Damage
// in the metadata log is a problem a broker would stop at; any other
// failure (a meta.properties that cannot be read, which its own check
// reports) only means the partitions were not checked against it.
func (md *metadata) report(c *collector, root string) {
	if md == nil || md.err == nil {
		return
	}
	if ce, ok := logfmt.AsCorrupt(md.err); ok && strings.Contains(ce.File, clustermeta.PartitionDir) {
		c.problem(CodeMetadataUnreadable, ce.File, ce.Pos, "the cluster metadata cannot be replayed, so no partition was checked against it: %s", ce.Msg+errSuffix(ce.Err))
		return
	}
	c.info(CodeMetadataUnchecked, root, -1, "no partition was checked against the cluster metadata: %v", md.err)
}

func errSuffix(err error) string {
	if err == nil {
		return ""
	}
	return ": " + err.Error()
}

// checkPartition checks a partition directory against the cluster metadata
// of its log directory, as a KRaft broker does when it loads the log
// (LogManager.isStrayKraftReplica): its topic ID must be the live topic's
// of the directory's name, and the partition must exist. A log of another
// topic, an unknown one, a deleted one, or a partition the topic does not
// have, are problems: the broker sets such a log aside (renamed -stray, or
// deleted) and its records are not served. A partition the metadata
// assigns to other brokers is a note: a broker that was down during a
// reassignment finds such a log, sets it aside, and the replicas serve it.
func (md *metadata) checkPartition(c *collector, u *unit, dir layout.PartitionDir) {
	name := layout.PartitionDirName(dir.Topic, dir.Partition)
	if md == nil || md.cat == nil || dir.Kind != layout.Normal || dir.Topic == "" || name == clustermeta.PartitionDir {
		return
	}
	r := md.cat.For(u.logDir)
	im := r.Image()
	if im == nil {
		return
	}
	path := filepath.Join(u.path, layout.PartitionMetadataFile)
	id, err := clustermeta.LogTopicID(u.path)
	if err != nil {
		return // the file check reports it
	}
	switch im.Stray(dir.Topic, dir.Partition, id, r.BrokerID()) {
	case clustermeta.NoTopicID:
		c.info(CodeNoPartitionMeta, u.path, -1, "no partition.metadata, so no topic ID: a KRaft broker sets the log aside as stray when it loads it")
	case clustermeta.TopicIDUnknown:
		live := im.Topic(dir.Topic)
		if deleted, ok := im.Removed(*id); ok {
			now := "the topic no longer exists"
			if live != nil {
				now = fmt.Sprintf("%s exists again with topic ID %s", live.Name, live.ID)
			}
			c.problem(CodeTopicIDDeleted, path, -1, "topic ID %s is of topic %s, which the cluster metadata deleted (%s): a broker deletes this log, and a deleted topic's log is a -delete directory", *id, deleted, now)
			return
		}
		now := "which the cluster metadata does not have"
		if live != nil {
			now = fmt.Sprintf("while the cluster metadata has %s with topic ID %s", live.Name, live.ID)
		}
		c.problem(CodeTopicIDUnknown, path, -1, "topic ID %s of %s is not in the cluster metadata (%s): a broker sets the log aside as stray", *id, name, now)
	case clustermeta.TopicIDOtherTopic:
		c.problem(CodeTopicIDOtherTopic, path, -1, "topic ID %s is of topic %s in the cluster metadata, not of %s", *id, im.TopicByID(*id).Name, dir.Topic)
	case clustermeta.PartitionUnknown:
		t := im.TopicByID(*id)
		c.problem(CodePartitionUnknown, u.path, -1, "topic %s has %d partition(s) in the cluster metadata and no partition %d: a broker sets the log aside as stray", t.Name, len(t.Partitions), dir.Partition)
	case clustermeta.NotAssigned:
		p := im.TopicByID(*id).Partition(dir.Partition)
		c.info(CodeStrayReplica, u.path, -1, "the cluster metadata assigns %s to broker(s) %v, not to this log directory's broker %d: a broker sets the log aside as stray when it loads it", name, p.Replicas, r.BrokerID())
	}
}
