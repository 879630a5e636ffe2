package clustermeta

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/logtool/logtool/internal/testkit/kafkasamples"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/checkpoint"
	"github.com/logtool/logtool/logfmt/kraft"
	"github.com/logtool/logtool/logfmt/layout"
	p "github.com/logtool/logtool/logfmt/protocol"
)

var samples = kafkasamples.Dir("logdirs")

func sampleDir(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(samples, name)
	if _, err := os.Stat(dir); err != nil {
		kafkasamples.Skip(t, err)
	}
	return dir
}

// The metadata of real brokers: topics, IDs and configs as kafka-dump-log
// shows them, and every partition directory of the log dir known under the
// topic ID its partition.metadata holds.
func TestSamples(t *testing.T) {
	for _, c := range []struct {
		dir     string
		topics  int
		configs map[string]map[string]string
		cluster map[string]string
		end     int64
		note    string
	}{
		{"yashasvi960_kafka-4.1-kraft-streams-config", 5, map[string]map[string]string{
			"__consumer_offsets": {"cleanup.policy": "compact", "compression.type": "producer", "segment.bytes": "104857600"},
			"telemetry-streams-KSTREAM-AGGREGATE-STATE-STORE-0000000001-changelog": {
				"cleanup.policy": "compact,delete", "message.timestamp.type": "CreateTime", "retention.ms": "86430000"},
			"vehicle.avg.speed": nil,
		}, map[string]string{"min.insync.replicas": "1"}, 11468, ""},
		{"ldi-poc_kafka-3.7.0-kraft", 5, map[string]map[string]string{
			"__consumer_offsets": {"cleanup.policy": "compact", "compression.type": "producer", "segment.bytes": "104857600"},
			"TestTopicPatient":   nil,
		}, nil, 4929, ""},
		// The log was not copied, only its snapshots: the state is the
		// newest snapshot's.
		{"itumelengmogase_kraft-ksqldb-txn", 9, map[string]map[string]string{
			"_confluent-ksql-default__command_topic": {"cleanup.policy": "delete", "min.insync.replicas": "1", "retention.ms": "-1", "unclean.leader.election.enable": "false"},
			"docker-connect-offsets":                 {"cleanup.policy": "compact"},
		}, nil, 60500, "no log segment"},
	} {
		t.Run(c.dir, func(t *testing.T) {
			logDir := sampleDir(t, c.dir)
			im, err := Load(filepath.Join(logDir, PartitionDir))
			if err != nil {
				t.Fatal(err)
			}
			if len(im.Topics()) != c.topics || im.EndOffset != c.end {
				t.Errorf("%d topics, end offset %d; want %d, %d", len(im.Topics()), im.EndOffset, c.topics, c.end)
			}
			for topic, want := range c.configs {
				if im.Topic(topic) == nil {
					t.Errorf("no topic %s", topic)
				}
				if got := im.TopicConfig(topic); !reflect.DeepEqual(got, want) && (len(got) > 0 || len(want) > 0) {
					t.Errorf("%s: %v, want %v", topic, got, want)
				}
			}
			if got := im.BrokerConfig(""); !reflect.DeepEqual(got, c.cluster) && (len(got) > 0 || len(c.cluster) > 0) {
				t.Errorf("cluster default %v, want %v", got, c.cluster)
			}
			if (c.note == "") != (len(im.Notes) == 0) || (c.note != "" && !strings.Contains(strings.Join(im.Notes, "\n"), c.note)) {
				t.Errorf("notes %q, want %q", im.Notes, c.note)
			}
			ld, err := layout.ReadLogDir(logDir)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range ld.Partitions {
				if p.Dir.Topic == "__cluster_metadata" {
					continue
				}
				b, err := os.ReadFile(filepath.Join(p.Path, layout.PartitionMetadataFile))
				if err != nil {
					t.Fatal(err)
				}
				pm, err := checkpoint.ReadPartitionMetadata(b, p.Path)
				if err != nil {
					t.Fatal(err)
				}
				tp := im.TopicByID(pm.TopicID)
				if tp == nil || tp.Name != p.Dir.Topic || tp.Partition(p.Dir.Partition) == nil {
					t.Errorf("%s: topic ID %s not in the metadata as this partition", p.Dir.Name, pm.TopicID)
				}
			}
		})
	}
}

// Each record this package writes is byte for byte what a broker wrote for
// the same content: every record of the sample logs of a type the writer
// knows, with no field the writer leaves at its default, is decoded and
// written again.
func TestWriterMatchesBrokers(t *testing.T) {
	compared := map[string]int{}
	for _, dir := range []string{"yashasvi960_kafka-4.1-kraft-streams-config", "ldi-poc_kafka-3.7.0-kraft"} {
		path := filepath.Join(sampleDir(t, dir), PartitionDir, "00000000000000000000.log")
		f, err := logfmt.OpenSegment(path)
		if err != nil {
			t.Fatal(err)
		}
		var it logfmt.RecordIter
		for f.Next() {
			b := f.Batch()
			if err := it.Reset(b); err != nil {
				t.Fatal(err)
			}
			var values [][]byte
			var ct logfmt.ControlType
			for it.Next() {
				r := it.Record()
				values = append(values, bytes.Clone(r.Value))
				if b.IsControl() {
					_, ct, _ = logfmt.ParseControlKey(r.Key)
					if ct == logfmt.ControlLeaderChange {
						compareLeaderChange(t, r.Value)
						compared["LeaderChange"]++
					}
					continue
				}
				if name, ok := rewrite(t, r.Value); ok {
					compared[name]++
				}
			}
			// The whole batch, header and all, as KRaft writes it.
			h := b.Header()
			again, err := kraft.AppendBatch(nil, h.BaseOffset(), h.PartitionLeaderEpoch(), h.MaxTimestamp(), b.IsControl(), ct, values...)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, b.Data) {
				t.Fatalf("%s: batch at byte %d written again differs:\n%x\n%x", path, b.Pos, again, b.Data)
			}
			compared["batch"]++
		}
		f.Close()
	}
	for _, name := range []string{"TopicRecord", "PartitionRecord v1", "PartitionRecord v2", "ConfigRecord", "PartitionChangeRecord", "NoOpRecord",
		"FeatureLevelRecord", "BeginTransactionRecord", "EndTransactionRecord", "LeaderChange", "batch"} {
		if compared[name] == 0 {
			t.Errorf("no %s compared; compared %v", name, compared)
		}
	}
}

// rewrite writes a decoded record again and compares; ok is false for
// records the writer cannot express.
func rewrite(t *testing.T, value []byte) (string, bool) {
	t.Helper()
	r, err := kraft.Decode(value)
	if err != nil {
		t.Fatal(err)
	}
	again, name, ok := reencode(r)
	if ok && !bytes.Equal(again, value) {
		t.Fatalf("%s written again:\n%x\nbroker wrote:\n%x", name, again, value)
	}
	return name, ok
}

// reencode writes a decoded record again with the package's writers; ok is
// false for records they cannot express.
func reencode(r *kraft.Record) (again []byte, name string, ok bool) {
	field := r.Value.Field
	switch r.Type {
	case kraft.TypeTopic:
		again, name = kraft.AppendTopicRecord(nil, string(field("name").Raw), uuid(field("topicId"))), "TopicRecord"
	case kraft.TypeConfig:
		v := field("value")
		var s *string
		if !v.Null {
			str := string(v.Raw)
			s = &str
		}
		again, name = kraft.AppendConfigRecord(nil, int8(field("resourceType").Int), string(field("resourceName").Raw), string(field("name").Raw), s), "ConfigRecord"
	case kraft.TypePartition:
		if field("leaderRecoveryState").Present || r.Version > 2 || (r.Version == 2 && (field("eligibleLeaderReplicas").Present || field("lastKnownElr").Present)) {
			return nil, "", false
		}
		s := kraft.PartitionSpec{Topic: uuid(field("topicId")), Partition: int32(field("partitionId").Int), Replicas: int32s(field("replicas")),
			ISR: int32s(field("isr")), Leader: int32(field("leader").Int), LeaderEpoch: int32(field("leaderEpoch").Int),
			PartitionEpoch: int32(field("partitionEpoch").Int), Version: r.Version}
		if len(field("removingReplicas").Items)+len(field("addingReplicas").Items) > 0 {
			return nil, "", false
		}
		if r.Version >= 1 {
			s.Directories = uuids(field("directories"))
		}
		again, name = kraft.AppendPartitionRecord(nil, s), "PartitionRecord v"+string('0'+byte(r.Version))
	case kraft.TypePartitionChange:
		for _, n := range []string{"removingReplicas", "addingReplicas", "leaderRecoveryState", "eligibleLeaderReplicas", "lastKnownElr"} {
			if f := field(n); f != nil && f.Present {
				return nil, "", false
			}
		}
		s := kraft.ChangeSpec{Topic: uuid(field("topicId")), Partition: int32(field("partitionId").Int), Leader: -2, Version: r.Version}
		if f := field("leader"); f.Present {
			s.Leader = int32(f.Int)
		}
		if f := field("isr"); f.Present {
			s.ISR = int32s(f)
		}
		if f := field("replicas"); f.Present {
			s.Replicas = int32s(f)
		}
		if f := field("directories"); f != nil && f.Present {
			s.Directories = uuids(f)
		}
		again, name = kraft.AppendPartitionChangeRecord(nil, s), "PartitionChangeRecord"
	case kraft.TypeNoOp:
		again, name = AppendNoOpRecord(nil), "NoOpRecord"
	case kraft.TypeFeatureLevel:
		again, name = kraft.AppendFeatureLevelRecord(nil, string(field("name").Raw), int16(field("featureLevel").Int)), "FeatureLevelRecord"
	case kraft.TypeBeginTransaction:
		if f := field("name"); !f.Present || f.Null {
			return nil, "", false // the writer always names the transaction
		}
		again, name = kraft.AppendBeginTransactionRecord(nil, string(field("name").Raw)), "BeginTransactionRecord"
	case kraft.TypeEndTransaction:
		again, name = kraft.AppendEndTransactionRecord(nil), "EndTransactionRecord"
	default:
		return nil, "", false
	}
	return again, name, true
}

// compareLeaderChange reads a broker's LeaderChangeMessage with franz-go and
// writes it again.
func compareLeaderChange(t *testing.T, value []byte) {
	t.Helper()
	var m kmsg.LeaderChangeMessage
	if err := m.ReadFrom(value); err != nil {
		t.Fatal(err)
	}
	var voters []int32
	for _, v := range m.Voters {
		voters = append(voters, v.VoterID)
	}
	if again := kraft.AppendLeaderChange(nil, m.LeaderID, voters); !bytes.Equal(again, value) {
		t.Fatalf("LeaderChange written again:\n%x\nbroker wrote:\n%x", again, value)
	}
}

// A broker's snapshot header and footer are what the writer writes.
func TestWriterSnapshotMatchesBroker(t *testing.T) {
	path := filepath.Join(sampleDir(t, "itumelengmogase_kraft-ksqldb-txn"), PartitionDir, "00000000000000060500-0000000025.checkpoint")
	f, err := logfmt.OpenSegment(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var it logfmt.RecordIter
	seen := 0
	for f.Next() {
		b := f.Batch()
		if !b.IsControl() {
			continue
		}
		if err := it.Reset(b); err != nil {
			t.Fatal(err)
		}
		for it.Next() {
			r := it.Record()
			_, ct, _ := logfmt.ParseControlKey(r.Key)
			var again []byte
			switch ct {
			case logfmt.ControlSnapshotHeader:
				again = AppendSnapshotHeader(nil, 1728594221482) // the lastContainedLogTimestamp dump shows
			case logfmt.ControlSnapshotFooter:
				again = AppendSnapshotFooter(nil)
			}
			if !bytes.Equal(again, r.Value) {
				t.Fatalf("%s written again %x, broker wrote %x", ct, again, r.Value)
			}
			seen++
		}
	}
	if seen != 2 {
		t.Fatalf("%d control records, want the header and the footer", seen)
	}
}

// franz-go reads the batches and the LeaderChange value the writer writes.
func TestWriterAgainstKmsg(t *testing.T) {
	value := kraft.AppendLeaderChange(nil, 3, []int32{1, 2, 3})
	var m kmsg.LeaderChangeMessage
	if err := m.ReadFrom(value); err != nil {
		t.Fatal(err)
	}
	if m.LeaderID != 3 || len(m.Voters) != 3 || len(m.GrantingVoters) != 3 || m.Voters[2].VoterID != 3 {
		t.Fatalf("kmsg read %+v", m)
	}
	b, err := kraft.AppendBatch(nil, 42, 7, 1234, false, 0, AppendNoOpRecord(nil), kraft.AppendTopicRecord(nil, "t", id(1)))
	if err != nil {
		t.Fatal(err)
	}
	var rb kmsg.RecordBatch
	if err := rb.ReadFrom(b); err != nil {
		t.Fatal(err)
	}
	if rb.FirstOffset != 42 || rb.PartitionLeaderEpoch != 7 || rb.NumRecords != 2 || rb.ProducerID != -1 || rb.Attributes != 0 || rb.FirstTimestamp != 1234 {
		t.Fatalf("kmsg read %+v", rb)
	}
	raw := rb.Records
	var recs []kmsg.Record
	for len(raw) > 0 {
		var r kmsg.Record
		if err := r.ReadFrom(raw); err != nil {
			t.Fatal(err)
		}
		_, n := binary.Varint(raw)
		raw = raw[n+int(r.Length):]
		recs = append(recs, r)
	}
	if len(recs) != 2 || !bytes.Equal(recs[1].Value, kraft.AppendTopicRecord(nil, "t", id(1))) || recs[0].Key != nil || recs[1].OffsetDelta != 1 {
		t.Fatalf("kmsg records %+v", recs)
	}
}

// Every record the writer writes decodes to what was written.
func TestWriterAgainstDecoder(t *testing.T) {
	retention := "1000"
	for _, c := range []struct {
		value []byte
		want  string
	}{
		{kraft.AppendTopicRecord(nil, "t", id(1)), `{"type":"TOPIC_RECORD","version":0,"data":{"name":"t","topicId":"AQEBAQEBAQEBAQEBAQEBAQ"}}`},
		{kraft.AppendPartitionRecord(nil, kraft.PartitionSpec{Topic: id(1), Partition: 2, Replicas: []int32{1, 2}, ISR: []int32{2}, Leader: 2, LeaderEpoch: 3, PartitionEpoch: 4}),
			`{"type":"PARTITION_RECORD","version":0,"data":{"partitionId":2,"topicId":"AQEBAQEBAQEBAQEBAQEBAQ","replicas":[1,2],"isr":[2],"removingReplicas":[],"addingReplicas":[],"leader":2,"leaderEpoch":3,"partitionEpoch":4}}`},
		{kraft.AppendPartitionRecord(nil, kraft.PartitionSpec{Topic: id(1), Replicas: []int32{1}, ISR: []int32{1}, Leader: 1, Directories: []TopicID{id(2)}, Version: 2}),
			`{"type":"PARTITION_RECORD","version":2,"data":{"partitionId":0,"topicId":"AQEBAQEBAQEBAQEBAQEBAQ","replicas":[1],"isr":[1],"removingReplicas":[],"addingReplicas":[],"leader":1,"leaderEpoch":0,"partitionEpoch":0,"directories":["AgICAgICAgICAgICAgICAg"]}}`},
		{kraft.AppendConfigRecord(nil, ResourceBroker, "", "log.retention.ms", &retention), `{"type":"CONFIG_RECORD","version":0,"data":{"resourceType":4,"resourceName":"","name":"log.retention.ms","value":"1000"}}`},
		{kraft.AppendConfigRecord(nil, ResourceTopic, "t", "retention.ms", nil), `{"type":"CONFIG_RECORD","version":0,"data":{"resourceType":2,"resourceName":"t","name":"retention.ms","value":null}}`},
		{kraft.AppendPartitionChangeRecord(nil, kraft.ChangeSpec{Topic: id(1), Partition: 1, Leader: 3, ISR: []int32{3}, Replicas: []int32{3, 4}, Directories: []TopicID{id(2), id(3)}, Version: 1}),
			`{"type":"PARTITION_CHANGE_RECORD","version":1,"data":{"partitionId":1,"topicId":"AQEBAQEBAQEBAQEBAQEBAQ","isr":[3],"leader":3,"replicas":[3,4],"directories":["AgICAgICAgICAgICAgICAg","AwMDAwMDAwMDAwMDAwMDAw"]}}`},
		{kraft.AppendRemoveTopicRecord(nil, id(1)), `{"type":"REMOVE_TOPIC_RECORD","version":0,"data":{"topicId":"AQEBAQEBAQEBAQEBAQEBAQ"}}`},
		{kraft.AppendBeginTransactionRecord(nil, "x"), `{"type":"BEGIN_TRANSACTION_RECORD","version":0,"data":{"name":"x"}}`},
		{kraft.AppendEndTransactionRecord(nil), `{"type":"END_TRANSACTION_RECORD","version":0,"data":{}}`},
		{AppendAbortTransactionRecord(nil), `{"type":"ABORT_TRANSACTION_RECORD","version":0,"data":{}}`},
		{AppendNoOpRecord(nil), `{"type":"NO_OP_RECORD","version":0,"data":{}}`},
		{kraft.AppendFeatureLevelRecord(nil, "metadata.version", 21), `{"type":"FEATURE_LEVEL_RECORD","version":0,"data":{"name":"metadata.version","featureLevel":21}}`},
	} {
		got, err := kraft.Format(c.value, 0)
		if err != nil || got != c.want {
			t.Errorf("got  %s %v\nwant %s", got, err, c.want)
		}
	}
	for _, c := range []struct {
		t     logfmt.ControlType
		value []byte
		want  string
	}{
		{logfmt.ControlLeaderChange, kraft.AppendLeaderChange(nil, 1, []int32{1, 2}), `{"version":0,"leaderId":1,"voters":[{"voterId":1},{"voterId":2}],"grantingVoters":[{"voterId":1},{"voterId":2}]}`},
		{logfmt.ControlSnapshotHeader, AppendSnapshotHeader(nil, 77), `{"version":0,"lastContainedLogTimestamp":77}`},
		{logfmt.ControlSnapshotFooter, AppendSnapshotFooter(nil), `{"version":0}`},
	} {
		_, js, err := kraft.FormatControl(c.t, c.value)
		if err != nil || string(js) != c.want {
			t.Errorf("%s: got %s %v, want %s", c.t, js, err, c.want)
		}
	}
}

func int32s(v *p.Value) []int32 { return appendItems(nil, v) }
