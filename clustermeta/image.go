// Package clustermeta replays a KRaft cluster metadata log, the
// __cluster_metadata-0 directory every KRaft broker keeps, into the state a
// broker's metadata image holds after loading it: the topics with their IDs
// and partitions, and the dynamic configuration of topics and brokers. Only
// what logtool's commands use is kept; the rest of the image (brokers, ACLs,
// quotas, features, producer IDs) is read past.
//
// Records are decoded by logfmt/kraft, the decoder behind
// dump --cluster-metadata-decoder, so both read them the same way.
package clustermeta

import (
	"cmp"
	"maps"
	"slices"

	"github.com/logtool/logtool/logfmt/checkpoint"
)

// TopicID is a Kafka Uuid; directory IDs are Uuids too.
type TopicID = checkpoint.TopicID

// Resource types of a ConfigRecord (Kafka's ConfigResource.Type ids).
const (
	ResourceTopic  int8 = 2
	ResourceBroker int8 = 4 // resource name "" is the cluster-wide default
)

// Image is the metadata state after a replay.
type Image struct {
	Dir         string   // the __cluster_metadata-0 directory
	Snapshot    string   // path of the snapshot replayed first; "" when there was none
	SnapshotEnd int64    // the snapshot's end offset: the first log offset not in it (0 without a snapshot)
	EndOffset   int64    // the offset after the last record replayed
	Records     int64    // records read, snapshot and log
	Notes       []string // what a reader should know: a torn tail left out, a transaction not applied, ...

	topics  map[TopicID]*Topic
	byName  map[string]*Topic
	removed map[TopicID]string
	configs map[resource]map[string]string
}

type resource struct {
	typ  int8
	name string
}

// Topic is a live topic.
type Topic struct {
	Name       string
	ID         TopicID
	Partitions []Partition // sorted by ID
}

// Partition is a partition's replica assignment and leadership.
type Partition struct {
	ID       int32
	Leader   int32 // -1 when there is none
	Replicas []int32
	ISR      []int32
	// Directories holds, for each replica in Replicas order, the directory
	// ID of the log dir hosting it (KIP-858, metadata version 3.7+); nil when
	// the records carry none. A zero ID is "unassigned".
	Directories []TopicID
}

func newImage(dir string) *Image {
	return &Image{
		Dir: dir, topics: map[TopicID]*Topic{}, byName: map[string]*Topic{},
		removed: map[TopicID]string{}, configs: map[resource]map[string]string{},
	}
}

// Topic returns the live topic of that name, or nil.
func (im *Image) Topic(name string) *Topic { return im.byName[name] }

// TopicByID returns the live topic with that ID, or nil.
func (im *Image) TopicByID(id TopicID) *Topic { return im.topics[id] }

// Removed returns the name of a topic whose removal the replayed log holds.
// Removals older than the snapshot are not known: the snapshot only holds
// what was live.
func (im *Image) Removed(id TopicID) (name string, ok bool) {
	name, ok = im.removed[id]
	return name, ok
}

// Topics returns the live topics sorted by name.
func (im *Image) Topics() []*Topic {
	ts := slices.Collect(maps.Values(im.byName))
	slices.SortFunc(ts, func(a, b *Topic) int { return cmp.Compare(a.Name, b.Name) })
	return ts
}

// TopicConfig returns the dynamic configuration of a topic (its
// DYNAMIC_TOPIC_CONFIG values), nil when it has none. Do not modify it.
func (im *Image) TopicConfig(topic string) map[string]string {
	return im.configs[resource{ResourceTopic, topic}]
}

// BrokerConfig returns the dynamic configuration of one broker, by its id
// in decimal, or with "" the cluster-wide default; nil when there is none.
// Do not modify it.
func (im *Image) BrokerConfig(broker string) map[string]string {
	return im.configs[resource{ResourceBroker, broker}]
}

// Partition returns partition id of the topic, or nil.
func (t *Topic) Partition(id int32) *Partition {
	i, ok := t.find(id)
	if !ok {
		return nil
	}
	return &t.Partitions[i]
}

// find locates partition id: a topic's partitions arrive in order, so the
// index is almost always the id itself.
func (t *Topic) find(id int32) (int, bool) {
	if id >= 0 && int(id) < len(t.Partitions) && t.Partitions[id].ID == id {
		return int(id), true
	}
	return slices.BinarySearchFunc(t.Partitions, id, func(p Partition, id int32) int { return cmp.Compare(p.ID, id) })
}
