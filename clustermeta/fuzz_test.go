package clustermeta

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/kraft"
)

// FuzzLoad replays mutated metadata logs and snapshots: the replay must
// never panic or hang, and every failure must be a CorruptError naming the
// file and a byte position.
func FuzzLoad(f *testing.F) {
	l := newLog(f)
	l.leaderChange().
		batch(kraft.AppendBeginTransactionRecord(nil, "b"), topicRec("t", 'a'), topicConf("t", "cleanup.policy", "compact"), partRec('a', 0, 1, 2), kraft.AppendEndTransactionRecord(nil)).
		batch(kraft.AppendPartitionChangeRecord(nil, kraft.ChangeSpec{Topic: id('a'), Leader: 2, ISR: []int32{2}, Replicas: []int32{2, 3}, Version: 1})).
		batch(brokerConf("", "log.retention.ms", "5"), deleteConf(ResourceTopic, "t", "cleanup.policy"), kraft.AppendRemoveTopicRecord(nil, id('a')), topicRec("t", 'b'))
	seg := l.buf
	snap, err := AppendSnapshot(nil, 1, 1, 2, [][]byte{topicRec("s", 'c'), partRec('c', 0, 1), topicConf("s", "retention.ms", "1")})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seg, []byte(nil))
	f.Add(seg[:len(seg)-7], snap)
	f.Add([]byte{}, snap)
	dir := filepath.Join(f.TempDir(), PartitionDir)
	if err := os.Mkdir(dir, 0o755); err != nil {
		f.Fatal(err)
	}
	segPath := filepath.Join(dir, "00000000000000000000.log")
	snapPath := filepath.Join(dir, snapshotName(0, 1))
	f.Fuzz(func(t *testing.T, seg, snap []byte) {
		if err := os.WriteFile(segPath, seg, 0o644); err != nil {
			t.Fatal(err)
		}
		os.Remove(snapPath)
		if len(snap) > 0 {
			if err := os.WriteFile(snapPath, snap, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		im, err := Load(dir)
		if err != nil {
			ce, ok := logfmt.AsCorrupt(err)
			if !ok || ce.File == "" || ce.Pos < 0 {
				t.Fatalf("error without file and position: %v", err)
			}
			return
		}
		for id, tp := range im.topics {
			if tp.ID != id || im.byName[tp.Name] != tp {
				t.Fatalf("topic maps disagree on %s", tp.Name)
			}
		}
		if len(im.byName) != len(im.topics) {
			t.Fatalf("%d names for %d topics", len(im.byName), len(im.topics))
		}
	})
}

// FuzzRecordRoundTrip decodes arbitrary metadata record values: decoding
// never panics and gives valid JSON, and a record the package's writers can
// express, written again, decodes to the same record and is written again
// byte for byte. (The input itself may differ from what is written: a
// varint longer than needed or a bool byte of 2 decode like their canonical
// forms.)
func FuzzRecordRoundTrip(f *testing.F) {
	for _, v := range [][]byte{
		topicRec("t", 'a'), partRec('a', 0, 1, 2), topicConf("t", "cleanup.policy", "compact"), deleteConf(ResourceTopic, "t", "retention.ms"),
		kraft.AppendPartitionChangeRecord(nil, kraft.ChangeSpec{Topic: id('a'), Leader: 2, ISR: []int32{2}, Replicas: []int32{2, 3}, Version: 1}),
		kraft.AppendRemoveTopicRecord(nil, id('a')), kraft.AppendBeginTransactionRecord(nil, "b"), kraft.AppendEndTransactionRecord(nil),
		AppendNoOpRecord(nil), kraft.AppendFeatureLevelRecord(nil, "metadata.version", 21),
	} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, value []byte) {
		r, err := kraft.Decode(value)
		if err != nil {
			return
		}
		first := string(r.AppendJSON(nil))
		if !json.Valid([]byte(first)) {
			t.Fatalf("invalid JSON %s", first)
		}
		once, name, ok := reencode(r)
		if !ok {
			return
		}
		r, err = kraft.Decode(once)
		if err != nil {
			t.Fatalf("%s written again does not decode: %v\n%x", name, err, once)
		}
		if again := string(r.AppendJSON(nil)); again != first {
			t.Fatalf("%s written again decodes as\n%s\nnot\n%s", name, again, first)
		}
		if twice, _, _ := reencode(r); !bytes.Equal(twice, once) {
			t.Fatalf("%s written twice differs:\n%x\n%x", name, once, twice)
		}
	})
}
