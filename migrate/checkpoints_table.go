package migrate

import (
	"cmp"
	"slices"

	"github.com/logtool/logtool/logfmt/checkpoint"
)

// A root file may list millions of partitions, so where a run must know
// them all, a partition is held as a uint64: its topic's number in the high
// half, its partition in the low half.

// topicNumbers numbers topic names.
type topicNumbers struct {
	ids   map[string]uint32
	names []string // by number
}

// key returns the partition's key, numbering its topic if it is new.
func (t *topicNumbers) key(topic string, partition int32) uint64 {
	id, ok := t.ids[topic]
	if !ok {
		if t.ids == nil {
			t.ids = make(map[string]uint32)
		}
		id = uint32(len(t.names))
		t.ids[topic] = id
		t.names = append(t.names, topic)
	}
	return partitionKey(id, partition)
}

// lookup returns the partition's key if its topic has a number.
func (t *topicNumbers) lookup(topic string, partition int32) (uint64, bool) {
	id, ok := t.ids[topic]
	return partitionKey(id, partition), ok
}

func partitionKey(topic uint32, partition int32) uint64 {
	return uint64(topic)<<32 | uint64(uint32(partition))
}

func keyTopic(k uint64) uint32    { return uint32(k >> 32) }
func keyPartition(k uint64) int32 { return int32(uint32(k)) }

// partitionSet is a set of partitions at 8 bytes each. add them all, then
// sort, then ask.
type partitionSet struct {
	topics topicNumbers
	keys   []uint64
}

func (s *partitionSet) add(e checkpoint.OffsetEntry) {
	s.keys = append(s.keys, s.topics.key(e.Topic, e.Partition))
}

func (s *partitionSet) sort() {
	slices.Sort(s.keys)
	s.keys = slices.Clip(slices.Compact(s.keys))
}

func (s *partitionSet) has(e checkpoint.OffsetEntry) bool {
	k, ok := s.topics.lookup(e.Topic, e.Partition)
	if !ok {
		return false
	}
	_, found := slices.BinarySearch(s.keys, k)
	return found
}

// reverseSource is where a reverse run takes an entry from, in order of
// precedence.
type reverseSource uint8

const (
	srcPartition reverseSource = iota // the partition's cleaner-checkpoint
	srcRoot                           // the root file
	srcMigrated                       // the .migrated file
)

// reverseRecord is one entry of a source, in 24 bytes.
type reverseRecord struct {
	key    uint64
	offset int64
	line   uint32 // in the root file or the .migrated file; 0 else
	src    reverseSource
}

func (r reverseRecord) topic() uint32    { return keyTopic(r.key) }
func (r reverseRecord) partition() int32 { return keyPartition(r.key) }

// reverseTable holds the entries of every source of a reverse run. Once
// sorted, each partition's records are together, in partition order, the
// winning one first: the partition's own file, else the last line of the
// root file, else the last line of the .migrated file.
type reverseTable struct {
	topics topicNumbers
	recs   []reverseRecord
}

func (t *reverseTable) add(e checkpoint.OffsetEntry, src reverseSource) {
	t.recs = append(t.recs, reverseRecord{key: t.topics.key(e.Topic, e.Partition), offset: e.Offset, line: uint32(e.Line), src: src})
}

// sort renumbers the topics in name order, then sorts the records.
func (t *reverseTable) sort() {
	byName := make([]uint32, len(t.topics.names))
	for i := range byName {
		byName[i] = uint32(i)
	}
	slices.SortFunc(byName, func(a, b uint32) int { return cmp.Compare(t.topics.names[a], t.topics.names[b]) })
	rank := make([]uint32, len(byName))
	names := make([]string, len(byName))
	for r, id := range byName {
		rank[id], names[r] = uint32(r), t.topics.names[id]
	}
	t.topics = topicNumbers{names: names}
	for i := range t.recs {
		t.recs[i].key = partitionKey(rank[t.recs[i].topic()], t.recs[i].partition())
	}
	slices.SortFunc(t.recs, func(a, b reverseRecord) int {
		return cmp.Or(cmp.Compare(a.topic(), b.topic()), cmp.Compare(a.partition(), b.partition()),
			cmp.Compare(a.src, b.src), cmp.Compare(b.line, a.line))
	})
}

// each calls fn with the records of each partition, after sort.
func (t *reverseTable) each(fn func([]reverseRecord)) {
	for i := 0; i < len(t.recs); {
		j := i + 1
		for j < len(t.recs) && t.recs[j].key == t.recs[i].key {
			j++
		}
		fn(t.recs[i:j])
		i = j
	}
}

// winners keeps the winning record of each partition only.
func (t *reverseTable) winners() {
	t.recs = slices.Clip(slices.CompactFunc(t.recs, func(a, b reverseRecord) bool { return a.key == b.key }))
}

// name returns the topic of a record, after sort.
func (t *reverseTable) name(r reverseRecord) string { return t.topics.names[r.topic()] }
