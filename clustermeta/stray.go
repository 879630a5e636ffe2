package clustermeta

import (
	"slices"

	"github.com/logtool/logtool/logfmt/checkpoint"
)

// Stray is why a KRaft broker sets a partition's log aside as stray when
// it loads it, or NotStray.
type Stray int

const (
	NotStray          Stray = iota
	NoTopicID               // no partition.metadata, so no topic ID
	TopicIDUnknown          // no live topic has the log's topic ID (deleted, or never created)
	TopicIDOtherTopic       // the topic ID is another topic's than the directory names
	PartitionUnknown        // the topic has no partition of that number
	NotAssigned             // the partition's replicas do not include the broker
)

// Why is a short reason for a note, "" for NotStray.
func (s Stray) Why() string {
	switch s {
	case NoTopicID:
		return "it has no partition.metadata, so no topic ID"
	case TopicIDUnknown:
		return "its topic ID is not the cluster metadata's for its topic"
	case TopicIDOtherTopic:
		return "its topic ID is another topic's in the cluster metadata"
	case PartitionUnknown:
		return "its topic has no such partition in the cluster metadata"
	case NotAssigned:
		return "the cluster metadata does not assign it to this broker"
	}
	return ""
}

// Stray applies LogManager.isStrayKraftReplica to the log of partition of
// topic on broker: id is the topic ID of its partition.metadata, nil when
// it has none, and broker -1 (unknown) leaves the replica assignment
// unchecked. A topic ID of another topic counts too: Kafka looks the
// partition up by ID, so it would take the log for the other topic's.
func (im *Image) Stray(topic string, partition int32, id *TopicID, broker int32) Stray {
	if id == nil {
		return NoTopicID
	}
	t := im.TopicByID(*id)
	switch {
	case t == nil:
		return TopicIDUnknown
	case t.Name != topic:
		return TopicIDOtherTopic
	}
	p := t.Partition(partition)
	switch {
	case p == nil:
		return PartitionUnknown
	case broker >= 0 && !slices.Contains(p.Replicas, broker):
		return NotAssigned
	}
	return NotStray
}

// LogTopicID reads the topic ID of partition directory dir from its
// partition.metadata; nil, and no error, when there is none.
func LogTopicID(dir string) (*TopicID, error) {
	m, err := checkpoint.ReadPartitionMetadataIn(dir)
	if m == nil {
		return nil, err
	}
	return &m.TopicID, nil
}
