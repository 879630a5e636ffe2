package clustermeta

import (
	"fmt"

	"github.com/logtool/logtool/logfmt/kraft"
	p "github.com/logtool/logtool/logfmt/protocol"
)

// applies tells whether the replay reads records of a type; the others
// change nothing it keeps and are not decoded.
func applies(typ uint32) bool {
	switch typ {
	case kraft.TypeTopic, kraft.TypePartition, kraft.TypeConfig, kraft.TypePartitionChange, kraft.TypeRemoveTopic:
		return true
	}
	return false
}

// Field positions in the decoded records, looked up once.
var (
	fTopicName = kraft.FieldIndex(kraft.TypeTopic, "name")
	fTopicID   = kraft.FieldIndex(kraft.TypeTopic, "topicId")

	fPartID       = kraft.FieldIndex(kraft.TypePartition, "partitionId")
	fPartTopic    = kraft.FieldIndex(kraft.TypePartition, "topicId")
	fPartReplicas = kraft.FieldIndex(kraft.TypePartition, "replicas")
	fPartISR      = kraft.FieldIndex(kraft.TypePartition, "isr")
	fPartLeader   = kraft.FieldIndex(kraft.TypePartition, "leader")
	fPartDirs     = kraft.FieldIndex(kraft.TypePartition, "directories")

	fConfType  = kraft.FieldIndex(kraft.TypeConfig, "resourceType")
	fConfRes   = kraft.FieldIndex(kraft.TypeConfig, "resourceName")
	fConfName  = kraft.FieldIndex(kraft.TypeConfig, "name")
	fConfValue = kraft.FieldIndex(kraft.TypeConfig, "value")

	fChangeID       = kraft.FieldIndex(kraft.TypePartitionChange, "partitionId")
	fChangeTopic    = kraft.FieldIndex(kraft.TypePartitionChange, "topicId")
	fChangeISR      = kraft.FieldIndex(kraft.TypePartitionChange, "isr")
	fChangeLeader   = kraft.FieldIndex(kraft.TypePartitionChange, "leader")
	fChangeReplicas = kraft.FieldIndex(kraft.TypePartitionChange, "replicas")
	fChangeDirs     = kraft.FieldIndex(kraft.TypePartitionChange, "directories")

	fRemoveTopic = kraft.FieldIndex(kraft.TypeRemoveTopic, "topicId")
)

// apply changes the image as Kafka's MetadataDelta.replay does for the
// record. Records that contradict the image (a partition of a topic that
// does not exist, a removal of an unknown topic) are errors: Kafka's loader
// reports them as faults, and a state built past one would be a guess.
func (im *Image) apply(r *kraft.Record) error {
	f := r.Value.Fields
	switch r.Type {
	case kraft.TypeTopic:
		name, id := string(f[fTopicName].Raw), uuid(&f[fTopicID])
		if t := im.byName[name]; t != nil {
			return fmt.Errorf("TopicRecord creates topic %s with ID %s, but it exists with ID %s", name, id, t.ID)
		}
		if t := im.topics[id]; t != nil {
			return fmt.Errorf("TopicRecord creates topic %s with ID %s, which topic %s has", name, id, t.Name)
		}
		t := &Topic{Name: name, ID: id}
		im.topics[id], im.byName[name] = t, t
	case kraft.TypePartition:
		t, err := im.topicFor("PartitionRecord", uuid(&f[fPartTopic]))
		if err != nil {
			return err
		}
		part := Partition{ID: int32(f[fPartID].Int), Leader: int32(f[fPartLeader].Int)}
		part.Replicas, part.ISR = int32Pair(&f[fPartReplicas], &f[fPartISR])
		if f[fPartDirs].Present {
			part.Directories = uuids(&f[fPartDirs])
		}
		i, ok := t.find(part.ID)
		if ok {
			t.Partitions[i] = part
		} else {
			t.Partitions = append(t.Partitions, Partition{})
			copy(t.Partitions[i+1:], t.Partitions[i:])
			t.Partitions[i] = part
		}
	case kraft.TypePartitionChange:
		return im.changePartition(f)
	case kraft.TypeConfig:
		typ := int8(f[fConfType].Int)
		if typ != ResourceTopic && typ != ResourceBroker {
			return nil
		}
		res := resource{typ, string(f[fConfRes].Raw)}
		name, v := string(f[fConfName].Raw), &f[fConfValue]
		m := im.configs[res]
		if v.Null {
			delete(m, name)
			if len(m) == 0 {
				delete(im.configs, res)
			}
			return nil
		}
		if m == nil {
			m = map[string]string{}
			im.configs[res] = m
		}
		m[name] = string(v.Raw)
	case kraft.TypeRemoveTopic:
		t, err := im.topicFor("RemoveTopicRecord", uuid(&f[fRemoveTopic]))
		if err != nil {
			return err
		}
		delete(im.topics, t.ID)
		delete(im.byName, t.Name)
		delete(im.configs, resource{ResourceTopic, t.Name})
		im.removed[t.ID] = t.Name
	}
	return nil
}

func (im *Image) topicFor(record string, id TopicID) (*Topic, error) {
	t := im.topics[id]
	if t == nil {
		if name, ok := im.removed[id]; ok {
			return nil, fmt.Errorf("%s for topic ID %s, which was removed (topic %s)", record, id, name)
		}
		return nil, fmt.Errorf("%s for unknown topic ID %s", record, id)
	}
	return t, nil
}

// changePartition merges a PartitionChangeRecord as Kafka's
// PartitionRegistration.merge does: absent (null) fields leave the
// partition unchanged, leader -2 means "no change".
func (im *Image) changePartition(f []p.Value) error {
	t, err := im.topicFor("PartitionChangeRecord", uuid(&f[fChangeTopic]))
	if err != nil {
		return err
	}
	id := int32(f[fChangeID].Int)
	part := t.Partition(id)
	if part == nil {
		return fmt.Errorf("PartitionChangeRecord for partition %d of topic %s, which has no such partition", id, t.Name)
	}
	if l := f[fChangeLeader]; l.Present && l.Int != -2 {
		part.Leader = int32(l.Int)
	}
	if isr := &f[fChangeISR]; isr.Present && !isr.Null {
		// ISR changes are most of a busy cluster's log: reuse the room.
		part.ISR = appendItems(part.ISR[:0], isr)
	}
	dirs := &f[fChangeDirs]
	if r := &f[fChangeReplicas]; r.Present && !r.Null {
		old := part.Replicas
		part.Replicas = appendItems(nil, r)
		if part.Directories != nil && (!dirs.Present || dirs.Null) {
			part.Directories = carryDirectories(part.Replicas, old, part.Directories)
		}
	}
	if dirs.Present && !dirs.Null {
		part.Directories = uuids(dirs)
	}
	return nil
}

// carryDirectories keeps the directory of each replica that stays, and
// leaves new replicas unassigned (DirectoryId.createDirectoriesFrom).
func carryDirectories(replicas, oldReplicas []int32, oldDirs []TopicID) []TopicID {
	dirs := make([]TopicID, len(replicas))
	for i, r := range replicas {
		for j, o := range oldReplicas {
			if o == r && j < len(oldDirs) {
				dirs[i] = oldDirs[j]
			}
		}
	}
	return dirs
}

func uuid(v *p.Value) TopicID {
	var id TopicID
	copy(id[:], v.Raw)
	return id
}

func uuids(v *p.Value) []TopicID {
	ids := make([]TopicID, len(v.Items))
	for i := range v.Items {
		copy(ids[i][:], v.Items[i].Raw)
	}
	return ids
}

func appendItems(dst []int32, v *p.Value) []int32 {
	for i := range v.Items {
		dst = append(dst, int32(v.Items[i].Int))
	}
	return dst
}

// int32Pair copies two lists into one allocation: a cluster has as many
// partitions as records, and each holds both lists.
func int32Pair(a, b *p.Value) ([]int32, []int32) {
	s := make([]int32, len(a.Items)+len(b.Items))
	for i := range a.Items {
		s[i] = int32(a.Items[i].Int)
	}
	n := len(a.Items)
	for i := range b.Items {
		s[n+i] = int32(b.Items[i].Int)
	}
	return s[:n:n], s[n:]
}
