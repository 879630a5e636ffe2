package gen

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/logtool/logtool/clustermeta"
	"github.com/logtool/logtool/logfmt/checkpoint"
	"github.com/logtool/logtool/logfmt/layout"
	"github.com/logtool/logtool/topicconfig"
)

// A KRaft log dir: its metadata log creates the generated topics, under
// the topic IDs of their partition.metadata, with the configs asked for.
func TestGenKRaft(t *testing.T) {
	out := t.TempDir()
	o := Options{Out: out, Topics: []string{"orders", "clicks"}, Partitions: 2, Records: 20, Seed: 7, KRaft: true,
		TopicConfigs:  map[string]map[string]string{"orders": {"cleanup.policy": "compact", "max.compaction.lag.ms": "3600000"}},
		BrokerConfigs: map[string]string{"log.retention.ms": "86400000"}}
	if _, err := Generate(o); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, layout.MetaPropertiesFile))
	if err != nil {
		t.Fatal(err)
	}
	m, err := checkpoint.ReadMetaProperties(b, "meta.properties")
	if err != nil || m.Version != 1 || m.NodeID != 1 || m.DirectoryID != directoryID(7).String() {
		t.Fatalf("meta.properties %+v %v", m, err)
	}
	im, err := clustermeta.Load(filepath.Join(out, clustermeta.PartitionDir))
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Notes) > 0 || len(im.Topics()) != 2 {
		t.Fatalf("notes %q, topics %d", im.Notes, len(im.Topics()))
	}
	for _, topic := range o.Topics {
		tp := im.Topic(topic)
		if tp == nil || tp.ID != topicID(7, topic) || len(tp.Partitions) != 2 ||
			tp.Partitions[1].Directories[0] != directoryID(7) || tp.Partitions[1].Leader != 1 {
			t.Fatalf("%s: %+v", topic, tp)
		}
	}
	c, err := topicconfig.Load([]string{out}, topicconfig.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := c.For(out)
	for topic, want := range map[string][2]int64{"orders": {3600000, 86400000}, "clicks": {9223372036854775807, 86400000}} {
		cfg, err := r.Topic(topic)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Compact != (topic == "orders") || cfg.MaxCompactionLagMs != want[0] || cfg.RetentionMs != want[1] {
			t.Errorf("%s: %+v", topic, cfg)
		}
	}
}

func TestGenKRaftDeterministicAndRefused(t *testing.T) {
	o := Options{Topics: []string{"t"}, Records: 5, Seed: 3, KRaft: true, TopicConfigs: map[string]map[string]string{"t": {"retention.ms": "1", "segment.bytes": "2000000"}}}
	a, b := t.TempDir(), t.TempDir()
	for _, dir := range []string{a, b} {
		o.Out = dir
		if _, err := Generate(o); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"00000000000000000000.log", "00000000000000000000.index", "quorum-state", "partition.metadata", "leader-epoch-checkpoint"} {
		x, err1 := os.ReadFile(filepath.Join(a, clustermeta.PartitionDir, name))
		y, err2 := os.ReadFile(filepath.Join(b, clustermeta.PartitionDir, name))
		if err1 != nil || err2 != nil || !bytes.Equal(x, y) {
			t.Errorf("%s differs between two runs: %v %v", name, err1, err2)
		}
	}
	// A second run adds its topics to the metadata log, in a segment of
	// their own, with the log dir's directory ID.
	first, err := clustermeta.Load(filepath.Join(a, clustermeta.PartitionDir))
	if err != nil {
		t.Fatal(err)
	}
	o.Out, o.Topics, o.TopicConfigs, o.Seed = a, []string{"u"}, map[string]map[string]string{"u": {"cleanup.policy": "compact"}}, 4
	if _, err := Generate(o); err != nil {
		t.Fatalf("a second KRaft run on one log dir: %v", err)
	}
	im, err := clustermeta.Load(filepath.Join(a, clustermeta.PartitionDir))
	if err != nil {
		t.Fatal(err)
	}
	if u, tt := im.Topic("u"), im.Topic("t"); u == nil || tt == nil || u.ID != topicID(4, "u") || tt.ID != topicID(3, "t") ||
		u.Partitions[0].Directories[0] != directoryID(3) || im.TopicConfig("u")["cleanup.policy"] != "compact" {
		t.Errorf("after a second run: u %+v, t %+v", u, tt)
	}
	if _, err := os.Stat(filepath.Join(a, clustermeta.PartitionDir, layout.SegmentName(first.EndOffset, ".log"))); err != nil || im.EndOffset <= first.EndOffset {
		t.Errorf("no segment rolled at the old end: %v", err)
	}
	// A topic the metadata has is refused before anything is written, and
	// so is --kraft on a log dir that is not a KRaft node's.
	if err := os.RemoveAll(filepath.Join(a, "u-0")); err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(o); !errors.Is(err, ErrTopicExists) || !strings.Contains(err.Error(), "topic u: ") {
		t.Errorf("a topic the metadata has: %v", err)
	}
	if _, err := os.Stat(filepath.Join(a, "u-0")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("u-0 written before the refusal: %v", err)
	}
	zk := t.TempDir()
	if _, err := Generate(Options{Out: zk, Topics: []string{"t"}, Records: 5}); err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(Options{Out: zk, Topics: []string{"u"}, Records: 5, KRaft: true}); !errors.Is(err, ErrNotKRaft) {
		t.Errorf("--kraft on a ZooKeeper-era log dir: %v", err)
	}
	for _, bad := range []Options{
		{Out: a, Topics: []string{"t"}, TopicConfigs: map[string]map[string]string{"t": {"a": "b"}}},
		{Out: a, Topics: []string{"t"}, BrokerConfigs: map[string]string{"a": "b"}},
		{Out: a, Topics: []string{"t"}, KRaft: true, TopicConfigs: map[string]map[string]string{"other": {"a": "b"}}},
	} {
		if err := bad.Check(); err == nil {
			t.Errorf("accepted %+v", bad)
		}
	}
}
