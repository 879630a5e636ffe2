package verify

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logtool/logtool/clustermeta"
	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/internal/testkit/testutil"
	"github.com/logtool/logtool/logfmt/checkpoint"
	"github.com/logtool/logtool/logfmt/kraft"
	"github.com/logtool/logtool/logfmt/layout"
)

// appendMetadata adds a segment of records to the end of the metadata log
// of logDir, as a controller appends them.
func appendMetadata(t *testing.T, logDir string, records ...[]byte) {
	t.Helper()
	dir := filepath.Join(logDir, clustermeta.PartitionDir)
	im, err := clustermeta.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := kraft.AppendBatch(nil, im.EndOffset, 1, 1704067300000, false, 0, records...)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, layout.SegmentName(im.EndOffset, layout.LogExt)), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func topicIDOf(t *testing.T, partDir string) checkpoint.TopicID {
	t.Helper()
	path := filepath.Join(partDir, layout.PartitionMetadataFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pm, err := checkpoint.ReadPartitionMetadata(b, path)
	if err != nil {
		t.Fatal(err)
	}
	return pm.TopicID
}

func writeTopicID(t *testing.T, partDir string, id checkpoint.TopicID) {
	t.Helper()
	b := checkpoint.AppendPartitionMetadata(nil, checkpoint.PartitionMetadata{TopicID: id})
	if err := os.WriteFile(filepath.Join(partDir, layout.PartitionMetadataFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestPartitionsAgainstMetadata: each partition directory is checked
// against the cluster metadata of its log directory as a KRaft broker
// checks it when it loads the log.
func TestPartitionsAgainstMetadata(t *testing.T) {
	logDir := t.TempDir()
	topics := []string{"deleted", "recreated", "unknown", "other", "moved", "fine", "gone"}
	if _, err := gen.Generate(gen.Options{Out: logDir, Topics: topics, Records: 30, KRaft: true, Seed: 9}); err != nil {
		t.Fatal(err)
	}
	dir := func(name string) string { return filepath.Join(logDir, name) }
	id := func(topic string) checkpoint.TopicID { return topicIDOf(t, dir(topic+"-0")) }
	newID := checkpoint.TopicID{1, 2, 3}
	appendMetadata(t, logDir,
		kraft.AppendRemoveTopicRecord(nil, id("deleted")),
		kraft.AppendRemoveTopicRecord(nil, id("recreated")),
		kraft.AppendTopicRecord(nil, "recreated", newID),
		kraft.AppendPartitionRecord(nil, kraft.PartitionSpec{Topic: newID, Partition: 0, Replicas: []int32{1}, ISR: []int32{1}, Leader: 1}),
		kraft.AppendPartitionChangeRecord(nil, kraft.ChangeSpec{Topic: id("moved"), Partition: 0, Leader: 2, ISR: []int32{2, 3}, Replicas: []int32{2, 3}}),
		kraft.AppendRemoveTopicRecord(nil, id("gone")),
	)
	writeTopicID(t, dir("unknown-0"), checkpoint.TopicID{9, 9, 9})
	writeTopicID(t, dir("other-0"), id("fine"))
	// A partition the topic does not have, and a deleted topic's log
	// renamed as a broker renames it: the latter is as it should be. (The
	// clean shutdown marker goes, or fine-3's missing checkpoint entries
	// would be problems of their own.)
	testutil.CopyTree(t, dir("fine-0"), dir("fine-3"))
	if err := os.Remove(dir(layout.CleanShutdownFile)); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dir("gone-0"), dir("gone-0.0123456789abcdef0123456789abcdef-delete")); err != nil {
		t.Fatal(err)
	}

	r := run(t, Options{}, logDir)
	want := map[string]string{
		dir("deleted-0/partition.metadata"):   "which the cluster metadata deleted (the topic no longer exists): a broker deletes this log, and a deleted topic's log is a -delete directory",
		dir("recreated-0/partition.metadata"): "which the cluster metadata deleted (recreated exists again with topic ID AQIDAAAAAAAAAAAAAAAAAA)",
		dir("unknown-0/partition.metadata"):   "topic ID CQkJAAAAAAAAAAAAAAAAAA of unknown-0 is not in the cluster metadata (while the cluster metadata has unknown with topic ID",
		dir("other-0/partition.metadata"):     "is of topic fine in the cluster metadata, not of other",
		dir("fine-3"):                         "topic fine has 1 partition(s) in the cluster metadata and no partition 3: a broker sets the log aside as stray",
	}
	for file, msg := range want {
		ps := r.problemsAbout(file)
		if len(ps) != 1 || !strings.Contains(ps[0].Msg, msg) {
			t.Errorf("%s: problems %v; want one saying %q", file, ps, msg)
		}
	}
	if r.problems != len(want) {
		t.Errorf("%d problems, want %d:\n%s", r.problems, len(want), r)
	}
	moved := false
	for _, f := range r.findings {
		moved = moved || f.Severity == Info && f.File == dir("moved-0") &&
			strings.Contains(f.Msg, "assigns moved-0 to broker(s) [2 3], not to this log directory's broker 1")
	}
	if !moved {
		t.Errorf("no note about moved-0:\n%s", r)
	}

	// Without the metadata, there is nothing to check against.
	if err := os.RemoveAll(dir(clustermeta.PartitionDir)); err != nil {
		t.Fatal(err)
	}
	if r := run(t, Options{}, logDir); r.problems != 0 {
		t.Errorf("without metadata:\n%s", r)
	}
}

// TestMetadataNotReplayed: damage in the metadata log is a problem, and
// the partitions are then not checked against it.
func TestMetadataNotReplayed(t *testing.T) {
	logDir := t.TempDir()
	if _, err := gen.Generate(gen.Options{Out: logDir, Topics: []string{"t"}, Records: 30, KRaft: true, Seed: 9}); err != nil {
		t.Fatal(err)
	}
	writeTopicID(t, filepath.Join(logDir, "t-0"), checkpoint.TopicID{9})
	// A partition of a topic the metadata never created.
	appendMetadata(t, logDir, kraft.AppendPartitionRecord(nil, kraft.PartitionSpec{Topic: checkpoint.TopicID{7}, Replicas: []int32{1}, ISR: []int32{1}, Leader: 1}))
	r := run(t, Options{}, logDir)
	var found bool
	for _, f := range r.findings {
		found = found || f.Severity == Problem && strings.Contains(f.File, clustermeta.PartitionDir) &&
			strings.Contains(f.Msg, "the cluster metadata cannot be replayed, so no partition was checked against it") &&
			strings.Contains(f.Msg, "PartitionRecord for unknown topic ID")
	}
	if !found || r.problems != 1 {
		t.Errorf("want one problem about the metadata log:\n%s", r)
	}
}
