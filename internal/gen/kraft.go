package gen

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/logtool/logtool/clustermeta"
	"github.com/logtool/logtool/internal/refuse"
	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/checkpoint"
	"github.com/logtool/logtool/logfmt/kraft"
	"github.com/logtool/logtool/logfmt/layout"
)

// KRaft log dirs: what a single node, controller and broker in one
// (process.roles=broker,controller), leaves after creating the topics.
const (
	kraftNode  = 1
	kraftEpoch = 1
	// metadataVersion is the feature level of metadata.version 3.7-IV4, the
	// first with the directories of PartitionRecord version 1.
	metadataVersion = 19
)

// metadataTopicID is Kafka's Uuid.METADATA_TOPIC_ID, the topic ID of
// __cluster_metadata.
var metadataTopicID = checkpoint.TopicID{15: 1}

func directoryID(seed int64) checkpoint.TopicID { return topicID(seed, "\x00directory") }

// writeMetadata writes __cluster_metadata-0 as the controller appends it:
// the leader change of its election, the bootstrap records, then one batch
// per dynamic config of the cluster and one per topic with its configs and
// partitions. When the log dir holds a metadata log already (gen run
// again), the new batches go in a segment rolled at its end, as the
// controller appends topics created later.
//
// A new metadata log is written in a staging directory, as a partition is
// (writePartition), and made is its final path once it is installed.
func writeMetadata(o *Options, at *metadataTail) (made string, err error) {
	final := filepath.Join(o.Out, clustermeta.PartitionDir)
	dir := final
	start, dirID, appending := int64(0), directoryID(o.Seed), at != nil
	if appending {
		start, dirID = at.end, at.dirID
	} else {
		name := layout.StageDirName(clustermeta.PartitionDir, genStageID)
		if err := safefile.RemoveStage(filepath.Join(o.Out, name), layout.StageFile); err != nil {
			return "", err
		}
		st, serr := safefile.CreateStage(o.Out, name, layout.StageFile)
		if serr != nil {
			return "", serr
		}
		defer func() {
			if err == nil {
				err = st.Install(final)
			}
			if err != nil {
				err, made = errors.Join(err, st.Remove()), ""
			}
		}()
		dir, made = st.Dir, final
	}
	w := &partitionWriter{o: o, dir: dir, ts: o.StartTime, offset: start,
		idem: producer{txnFirst: -1, lastOffset: -1}, txn: producer{txnFirst: -1, lastOffset: -1}}
	if err := w.openSegment(start); err != nil {
		return "", err
	}
	batch := func(control bool, ct logfmt.ControlType, values ...[]byte) error {
		var err error
		if w.buf, err = kraft.AppendBatch(w.buf[:0], w.offset, kraftEpoch, w.ts, control, ct, values...); err != nil {
			return err
		}
		w.ts += 500 // the controller appends a batch at most every linger of 500 ms
		return w.append(w.buf, int64(len(values)))
	}
	if !appending {
		err = batch(true, logfmt.ControlLeaderChange, kraft.AppendLeaderChange(nil, kraftNode, []int32{kraftNode}))
		if err == nil {
			err = batch(false, 0, kraft.AppendBeginTransactionRecord(nil, "Bootstrap records"),
				kraft.AppendFeatureLevelRecord(nil, "metadata.version", metadataVersion), kraft.AppendEndTransactionRecord(nil))
		}
	}
	for _, name := range sortedKeys(o.BrokerConfigs) {
		if err == nil {
			v := o.BrokerConfigs[name]
			err = batch(false, 0, kraft.AppendConfigRecord(nil, clustermeta.ResourceBroker, "", name, &v))
		}
	}
	for _, topic := range o.topicNames() {
		if err != nil {
			break
		}
		id := topicID(o.Seed, topic)
		recs := [][]byte{kraft.AppendTopicRecord(nil, topic, id)}
		for _, name := range sortedKeys(o.TopicConfigs[topic]) {
			v := o.TopicConfigs[topic][name]
			recs = append(recs, kraft.AppendConfigRecord(nil, clustermeta.ResourceTopic, topic, name, &v))
		}
		for p := int32(0); p < int32(o.Partitions); p++ {
			recs = append(recs, kraft.AppendPartitionRecord(nil, kraft.PartitionSpec{
				Topic: id, Partition: p, Replicas: []int32{kraftNode}, ISR: []int32{kraftNode}, Leader: kraftNode,
				Directories: []checkpoint.TopicID{dirID}, Version: 1,
			}))
		}
		err = batch(false, 0, recs...)
	}
	if err == nil {
		err = w.closeSegment()
	}
	if err != nil {
		w.abort()
		return "", err
	}
	if err := w.writeSnapshot(w.offset); err != nil {
		return "", err
	}
	if appending {
		return "", nil
	}
	epochs := checkpoint.AppendLeaderEpochs(nil, []checkpoint.EpochEntry{{Epoch: kraftEpoch, StartOffset: 0}})
	if err := safefile.WriteFile(filepath.Join(dir, layout.LeaderEpochCheckpointFile), epochs, 0o644); err != nil {
		return "", err
	}
	meta := checkpoint.AppendPartitionMetadata(nil, checkpoint.PartitionMetadata{Version: 0, TopicID: metadataTopicID})
	if err := safefile.WriteFile(filepath.Join(dir, layout.PartitionMetadataFile), meta, 0o644); err != nil {
		return "", err
	}
	quorum := fmt.Sprintf(`{"clusterId":"","leaderId":%d,"leaderEpoch":%d,"votedId":-1,"appliedOffset":0,"currentVoters":[{"voterId":%d}],"data_version":0}`,
		kraftNode, kraftEpoch, kraftNode)
	return made, safefile.WriteFile(filepath.Join(dir, layout.QuorumStateFile), []byte(quorum), 0o644)
}

// ErrTopicExists is returned, wrapped, when the metadata log of the log
// directory has a topic to generate already; ErrNotKRaft when KRaft is
// asked of a log directory that is not a KRaft node's.
var (
	ErrTopicExists = refuse.Wrap(fmt.Errorf("the topic is in the metadata log already; gen adds topics, it never creates one twice: %w", fs.ErrExist))
	ErrNotKRaft    = errors.New("not a KRaft node's log directory")
)

// metadataTail is where gen adds to the metadata log of a log dir it
// wrote before: the log's end, and the log dir's directory ID.
type metadataTail struct {
	end   int64
	dirID checkpoint.TopicID
}

// readMetadataTail reads the metadata log of the log dir when there is one
// (nil when there is none), refusing a log dir that is not a KRaft node's
// and topics the metadata has already.
func readMetadataTail(o *Options) (*metadataTail, error) {
	metaPath := filepath.Join(o.Out, layout.MetaPropertiesFile)
	b, err := safefile.ReadFile(metaPath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	m, err := checkpoint.ReadMetaProperties(b, metaPath)
	if err != nil {
		return nil, err
	}
	if m.Version != 1 {
		return nil, fmt.Errorf("%w: %s has meta.properties version %d", ErrNotKRaft, o.Out, m.Version)
	}
	dir := filepath.Join(o.Out, clustermeta.PartitionDir)
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	t := &metadataTail{}
	if t.dirID, err = checkpoint.ParseTopicID(m.DirectoryID); err != nil {
		return nil, fmt.Errorf("%s: directory.id: %w", metaPath, err)
	}
	im, err := clustermeta.Load(dir)
	if err != nil {
		return nil, err
	}
	for _, topic := range o.topicNames() {
		if im.Topic(topic) != nil {
			return nil, fmt.Errorf("%s: topic %s: %w", dir, topic, ErrTopicExists)
		}
	}
	t.end = im.EndOffset
	return t, nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
