package clustermeta

import (
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/kraft"
)

func TestReplayTopicsAndConfigs(t *testing.T) {
	im := newLog(t).leaderChange().
		batch(topicRec("orders", 'a'), topicConf("orders", "cleanup.policy", "compact"), partRec('a', 0, 1, 2), partRec('a', 1, 2, 1)).
		batch(brokerConf("", "log.retention.ms", "1000"), brokerConf("1", "log.cleaner.delete.retention.ms", "5")).
		each(topicConf("orders", "retention.ms", "7"), AppendNoOpRecord(nil)).
		mustLoad()
	o := im.Topic("orders")
	if o == nil || o.ID != id('a') || len(o.Partitions) != 2 {
		t.Fatalf("orders = %+v", o)
	}
	if p := o.Partition(1); p == nil || !reflect.DeepEqual(p.Replicas, []int32{2, 1}) || p.Leader != 2 {
		t.Fatalf("partition 1 = %+v", p)
	}
	if im.TopicByID(id('a')) != o || o.Partition(2) != nil {
		t.Fatal("lookup by ID or of a missing partition")
	}
	want := map[string]string{"cleanup.policy": "compact", "retention.ms": "7"}
	if got := im.TopicConfig("orders"); !reflect.DeepEqual(got, want) {
		t.Errorf("topic config %v, want %v", got, want)
	}
	if got := im.BrokerConfig(""); !reflect.DeepEqual(got, map[string]string{"log.retention.ms": "1000"}) {
		t.Errorf("cluster default %v", got)
	}
	if got := im.BrokerConfig("1"); !reflect.DeepEqual(got, map[string]string{"log.cleaner.delete.retention.ms": "5"}) {
		t.Errorf("broker 1 %v", got)
	}
	if im.Records != 8 || im.EndOffset != 9 || im.Snapshot != "" || len(im.Notes) != 0 {
		t.Errorf("records %d, end %d, snapshot %q, notes %v", im.Records, im.EndOffset, im.Snapshot, im.Notes)
	}
}

func TestReplayConfigDeletion(t *testing.T) {
	im := newLog(t).
		batch(topicRec("t", 'a'), topicConf("t", "retention.ms", "1"), topicConf("t", "segment.bytes", "2000000")).
		batch(deleteConf(ResourceTopic, "t", "retention.ms"), brokerConf("", "log.retention.ms", "5")).
		batch(deleteConf(ResourceBroker, "", "log.retention.ms"), deleteConf(ResourceBroker, "", "never.set")).
		mustLoad()
	if got := im.TopicConfig("t"); !reflect.DeepEqual(got, map[string]string{"segment.bytes": "2000000"}) {
		t.Errorf("topic config %v", got)
	}
	if got := im.BrokerConfig(""); got != nil {
		t.Errorf("cluster default %v, want none", got)
	}
}

// A deleted topic takes its partitions and configs with it; created again,
// it has a new ID and only its new configs.
func TestReplayDeleteAndRecreate(t *testing.T) {
	im := newLog(t).
		batch(topicRec("t", 'a'), topicConf("t", "cleanup.policy", "compact"), topicConf("t", "retention.ms", "1"), partRec('a', 0, 1)).
		batch(kraft.AppendRemoveTopicRecord(nil, id('a'))).
		batch(topicRec("t", 'b'), topicConf("t", "segment.bytes", "2000000"), partRec('b', 0, 1), partRec('b', 1, 1)).
		mustLoad()
	tp := im.Topic("t")
	if tp == nil || tp.ID != id('b') || len(tp.Partitions) != 2 || im.TopicByID(id('a')) != nil {
		t.Fatalf("t = %+v", tp)
	}
	if got := im.TopicConfig("t"); !reflect.DeepEqual(got, map[string]string{"segment.bytes": "2000000"}) {
		t.Errorf("configs of the new topic %v", got)
	}
	if name, ok := im.Removed(id('a')); !ok || name != "t" {
		t.Errorf("Removed(old id) = %q %v", name, ok)
	}
	if _, ok := im.Removed(id('b')); ok {
		t.Error("the live topic counts as removed")
	}

	im = newLog(t).batch(topicRec("gone", 'a'), topicConf("gone", "retention.ms", "1")).batch(kraft.AppendRemoveTopicRecord(nil, id('a'))).mustLoad()
	if im.Topic("gone") != nil || im.TopicConfig("gone") != nil || len(im.Topics()) != 0 {
		t.Error("a removed topic remains")
	}
}

func TestReplayPartitionChange(t *testing.T) {
	d1, d2, d3 := id(1), id(2), id(3)
	im := newLog(t).
		batch(topicRec("t", 'a'), kraft.AppendPartitionRecord(nil, kraft.PartitionSpec{Topic: id('a'), Partition: 0, Replicas: []int32{1, 2}, ISR: []int32{1, 2}, Leader: 1, Directories: []TopicID{d1, d2}, Version: 1})).
		batch(kraft.AppendPartitionChangeRecord(nil, kraft.ChangeSpec{Topic: id('a'), Leader: -2, ISR: []int32{2}})).
		batch(kraft.AppendPartitionChangeRecord(nil, kraft.ChangeSpec{Topic: id('a'), Leader: 2})).
		// a reassignment without directories keeps those of the replicas that stay
		batch(kraft.AppendPartitionChangeRecord(nil, kraft.ChangeSpec{Topic: id('a'), Leader: -2, Replicas: []int32{2, 3}, Version: 1})).
		mustLoad()
	p := im.Topic("t").Partition(0)
	want := Partition{ID: 0, Leader: 2, Replicas: []int32{2, 3}, ISR: []int32{2}, Directories: []TopicID{d2, {}}}
	if !reflect.DeepEqual(*p, want) {
		t.Fatalf("partition %+v\nwant      %+v", *p, want)
	}
	im = newLog(t).
		batch(topicRec("t", 'a'), kraft.AppendPartitionRecord(nil, kraft.PartitionSpec{Topic: id('a'), Partition: 0, Replicas: []int32{1}, ISR: []int32{1}, Leader: 1, Directories: []TopicID{d1}, Version: 2})).
		batch(kraft.AppendPartitionChangeRecord(nil, kraft.ChangeSpec{Topic: id('a'), Leader: -2, Directories: []TopicID{d3}, Version: 2})).
		mustLoad()
	if got := im.Topic("t").Partition(0).Directories; !reflect.DeepEqual(got, []TopicID{d3}) {
		t.Fatalf("directories %v", got)
	}
}

// Partitions arriving out of order are still found by ID.
func TestReplayPartitionOrder(t *testing.T) {
	im := newLog(t).batch(topicRec("t", 'a'), partRec('a', 2, 1), partRec('a', 0, 1), partRec('a', 1, 1), partRec('a', 0, 3)).mustLoad()
	tp := im.Topic("t")
	for i, p := range tp.Partitions {
		if p.ID != int32(i) {
			t.Fatalf("partitions %+v", tp.Partitions)
		}
	}
	if tp.Partition(0).Leader != 3 {
		t.Error("a second PartitionRecord does not replace the first")
	}
}

// The newest snapshot is the state at its end offset; log records from
// there on apply, those before it do not.
func TestReplaySnapshotThenLog(t *testing.T) {
	l := newLog(t)
	l.batch(topicRec("old", 'o'), topicConf("old", "retention.ms", "1")).
		batch(topicRec("t", 'a'), topicConf("t", "retention.ms", "1")).roll()
	l.snapshot(2, 1, topicRec("stale", 's'))
	snap := l.snapshot(4, 1, topicRec("t", 'a'), topicConf("t", "retention.ms", "2"), topicConf("t", "cleanup.policy", "compact"), partRec('a', 0, 1))
	l.write(snapshotName(9, 1)+".deleted", []byte("junk"))
	l.write(snapshotName(9, 1)[:31]+"-123"+".checkpoint.part", []byte("junk"))
	l.batch(brokerConf("", "log.segment.bytes", "1048576"), deleteConf(ResourceTopic, "t", "cleanup.policy")). // offsets 4, 5
															batch(topicConf("t", "segment.bytes", "2000000"))
	im := l.mustLoad()
	if im.Snapshot != snap || im.SnapshotEnd != 4 || im.EndOffset != 7 || im.Records != 4+3 {
		t.Fatalf("snapshot %s end %d, end offset %d, records %d", im.Snapshot, im.SnapshotEnd, im.EndOffset, im.Records)
	}
	if im.Topic("old") != nil || im.Topic("stale") != nil {
		t.Error("records before the snapshot, or an older snapshot, were applied")
	}
	want := map[string]string{"retention.ms": "2", "segment.bytes": "2000000"}
	if got := im.TopicConfig("t"); !reflect.DeepEqual(got, want) {
		t.Errorf("config %v, want %v", got, want)
	}
	if got := im.BrokerConfig(""); got["log.segment.bytes"] != "1048576" {
		t.Errorf("cluster default %v", got)
	}
}

// A log whose start was truncated to the snapshot, and a snapshot alone.
func TestReplaySnapshotAlone(t *testing.T) {
	l := newLog(t)
	l.snapshot(10, 3, topicRec("t", 'a'))
	l.skipTo(10).batch(topicConf("t", "retention.ms", "5"))
	im := l.mustLoad()
	if im.TopicConfig("t")["retention.ms"] != "5" || im.EndOffset != 11 {
		t.Fatalf("config %v end %d", im.TopicConfig("t"), im.EndOffset)
	}

	l = newLog(t)
	l.snapshot(10, 3, topicRec("t", 'a'))
	im = l.mustLoad()
	if im.Topic("t") == nil || im.EndOffset != 10 || len(im.Notes) != 1 || !strings.Contains(im.Notes[0], "no log segment") {
		t.Fatalf("topic %v end %d notes %q", im.Topic("t"), im.EndOffset, im.Notes)
	}
}

func TestReplayTransactions(t *testing.T) {
	im := newLog(t).
		batch(topicRec("before", 'b'), kraft.AppendBeginTransactionRecord(nil, "create"), topicRec("t", 'a')).
		batch(topicConf("t", "retention.ms", "1")).roll().
		batch(kraft.AppendEndTransactionRecord(nil), topicConf("t", "segment.bytes", "2000000")).
		batch(kraft.AppendBeginTransactionRecord(nil, "aborted"), topicRec("u", 'u')).
		batch(topicConf("t", "retention.ms", "2"), AppendAbortTransactionRecord(nil)).
		batch(kraft.AppendBeginTransactionRecord(nil, "open"), topicRec("v", 'v')).
		mustLoad()
	if im.Topic("before") == nil || im.Topic("t") == nil {
		t.Fatal("a committed transaction, or the record before it, was not applied")
	}
	if im.Topic("u") != nil || im.Topic("v") != nil || im.TopicConfig("t")["retention.ms"] != "1" {
		t.Fatal("an aborted or open transaction was applied")
	}
	if im.TopicConfig("t")["segment.bytes"] != "2000000" {
		t.Error("the record after the transaction's end was not applied")
	}
	if len(im.Notes) != 1 || !strings.Contains(im.Notes[0], "begun at offset 10 has not ended") {
		t.Errorf("notes %q", im.Notes)
	}
	if im.Records != 12 {
		t.Errorf("records %d, want 12", im.Records)
	}
}

func TestReplayUnknownRecordType(t *testing.T) {
	unknown := append(kraft.AppendFrame(nil, 999, 0), 1, 2, 3)
	im := newLog(t).batch(topicRec("t", 'a'), unknown, unknown, kraft.AppendFeatureLevelRecord(nil, "metadata.version", 21)).mustLoad()
	if im.Topic("t") == nil || len(im.Notes) != 1 || !strings.Contains(im.Notes[0], "999 (2)") {
		t.Fatalf("notes %q", im.Notes)
	}
}

// Every error names the file and the byte where the bad bytes start.
func TestReplayErrors(t *testing.T) {
	// The first batch of each log below is 61 bytes of header before its
	// first record.
	rec := func(values ...[]byte) int64 { // position of the record after values in one batch
		p := int64(logfmt.V2HeaderSize)
		for _, v := range values {
			r := logfmt.Record{Offset: 0, Timestamp: 0, Value: v}
			b, _ := logfmt.AppendBatch(nil, logfmt.DefaultBatchOptions(0), []logfmt.Record{r})
			p += int64(len(b) - logfmt.V2HeaderSize)
		}
		return p
	}
	for _, c := range []struct {
		name string
		log  func(l *logBuilder)
		file string
		pos  int64
		want string
	}{
		{"partition of unknown topic", func(l *logBuilder) { l.batch(topicRec("t", 'a'), partRec('b', 0, 1)) },
			"00000000000000000000.log", rec(topicRec("t", 'a')), "PartitionRecord for unknown topic ID"},
		{"removal of unknown topic", func(l *logBuilder) { l.batch(kraft.AppendRemoveTopicRecord(nil, id('x'))) },
			"00000000000000000000.log", rec(), "RemoveTopicRecord for unknown topic ID"},
		{"change of a removed topic", func(l *logBuilder) {
			l.batch(topicRec("t", 'a'), partRec('a', 0, 1), kraft.AppendRemoveTopicRecord(nil, id('a')), kraft.AppendPartitionChangeRecord(nil, kraft.ChangeSpec{Topic: id('a'), Leader: 1}))
		}, "00000000000000000000.log", rec(topicRec("t", 'a'), partRec('a', 0, 1), kraft.AppendRemoveTopicRecord(nil, id('a'))), "which was removed (topic t)"},
		{"change of unknown partition", func(l *logBuilder) {
			l.batch(topicRec("t", 'a'), kraft.AppendPartitionChangeRecord(nil, kraft.ChangeSpec{Topic: id('a'), Partition: 3, Leader: 1}))
		}, "00000000000000000000.log", rec(topicRec("t", 'a')), "no such partition"},
		{"topic name taken", func(l *logBuilder) { l.batch(topicRec("t", 'a'), topicRec("t", 'b')) },
			"00000000000000000000.log", rec(topicRec("t", 'a')), "exists with ID"},
		{"unsupported version", func(l *logBuilder) { l.batch(append(kraft.AppendFrame(nil, kraft.TypeTopic, 9), 0)) },
			"00000000000000000000.log", rec(), "Can't read version 9 of TopicRecord"},
		{"bad frame", func(l *logBuilder) { l.batch([]byte{7, 2, 0}) }, "00000000000000000000.log", rec(), "unknown frame version 7"},
		{"garbage after a record", func(l *logBuilder) { l.batch(append(topicRec("t", 'a'), 0)) }, "00000000000000000000.log", rec(), "garbage"},
		{"null value", func(l *logBuilder) { l.batch(nil) }, "00000000000000000000.log", rec(), "has no value"},
		{"nested transaction", func(l *logBuilder) {
			l.batch(kraft.AppendBeginTransactionRecord(nil, "a"), kraft.AppendBeginTransactionRecord(nil, "b"))
		}, "00000000000000000000.log", rec(kraft.AppendBeginTransactionRecord(nil, "a")), "inside the transaction begun at offset 0"},
		{"end without begin", func(l *logBuilder) { l.batch(kraft.AppendEndTransactionRecord(nil)) }, "00000000000000000000.log", rec(), "without a BeginTransactionRecord"},
		{"offset gap", func(l *logBuilder) { l.batch(topicRec("t", 'a')); l.next++; l.batch(topicRec("u", 'b')) },
			"00000000000000000000.log", rec(topicRec("t", 'a')), "batch at offset 2 where offset 1 was expected"},
		{"log after a gap from the snapshot", func(l *logBuilder) { l.snapshot(5, 1, topicRec("t", 'a')); l.skipTo(7).batch(topicRec("u", 'b')) },
			"00000000000000000007.log", 0, "the newest snapshot ends at offset 5: the records from offset 5 are missing"},
		{"log not from 0", func(l *logBuilder) { l.skipTo(7).batch(topicRec("u", 'b')) },
			"00000000000000000007.log", 0, "there is no snapshot"},
		{"record contradicting the snapshot", func(l *logBuilder) {
			l.snapshot(1, 1, topicRec("t", 'a'))
			l.skipTo(1).batch(topicRec("t", 'b'))
		}, "00000000000000000001.log", rec(), "exists with ID"},
		{"bad record in a snapshot", func(l *logBuilder) { l.snapshot(1, 1, topicRec("t", 'a'), partRec('x', 0, 1)) },
			"00000000000000000001-0000000001.checkpoint", -1, "PartitionRecord for unknown topic ID"},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := newLog(t)
			c.log(l)
			_, err := l.load()
			ce, ok := logfmt.AsCorrupt(err)
			if !ok {
				t.Fatalf("got %v, want a CorruptError", err)
			}
			if !strings.Contains(err.Error(), c.want) || !strings.HasSuffix(ce.File, c.file) || (c.pos >= 0 && ce.Pos != c.pos) {
				t.Fatalf("got %v (file %s, byte %d)\nwant %q in %s at byte %d", err, ce.File, ce.Pos, c.want, c.file, c.pos)
			}
		})
	}
}

// The end of the last segment may be torn by a crash: the valid prefix is
// replayed and a note says what was left out. Elsewhere damage is an error.
func TestReplayTornTail(t *testing.T) {
	build := func(t *testing.T) (*logBuilder, int) {
		l := newLog(t).batch(topicRec("t", 'a'))
		n := len(l.buf)
		l.batch(topicConf("t", "retention.ms", "9"))
		return l, n
	}
	for _, c := range []struct {
		name   string
		damage func(b []byte, first int) []byte
		note   string
	}{
		{"torn last batch", func(b []byte, first int) []byte { return b[:len(b)-5] }, "declares"},
		{"a few bytes of a header", func(b []byte, first int) []byte { return b[:first+15] }, "too few"},
		{"zero tail", func(b []byte, first int) []byte { return append(b[:first], make([]byte, 100)...) }, "zero bytes"},
		{"checksum of the last batch", func(b []byte, first int) []byte { b[len(b)-1] ^= 1; return b }, "damaged"},
	} {
		t.Run(c.name, func(t *testing.T) {
			l, first := build(t)
			l.buf = c.damage(l.buf, first)
			im := l.mustLoad()
			if im.Topic("t") == nil || im.TopicConfig("t") != nil || im.EndOffset != 1 {
				t.Fatalf("topic %v config %v end %d", im.Topic("t"), im.TopicConfig("t"), im.EndOffset)
			}
			if len(im.Notes) != 1 || !strings.Contains(im.Notes[0], c.note) || !strings.Contains(im.Notes[0], "00000000000000000000.log") {
				t.Fatalf("notes %q, want one with %q", im.Notes, c.note)
			}
		})
	}
	t.Run("damage with a valid batch after it", func(t *testing.T) {
		l, first := build(t)
		l.buf[first+20] ^= 1 // a byte under the CRC of the second batch
		l.batch(topicRec("u", 'b'))
		_, err := l.load()
		if ce, ok := logfmt.AsCorrupt(err); !ok || ce.Pos != int64(first) {
			t.Fatalf("got %v, want a CorruptError at byte %d", err, first)
		}
	})
	t.Run("damaged length with a valid batch after it", func(t *testing.T) {
		l, first := build(t)
		l.buf[first+8] = 0x7f // the second batch's length now runs past the end
		l.batch(topicRec("u", 'b'))
		_, err := l.load()
		if ce, ok := logfmt.AsCorrupt(err); !ok || ce.Pos != int64(first) || !strings.Contains(err.Error(), "a valid batch follows") {
			t.Fatalf("got %v, want a CorruptError at byte %d", err, first)
		}
	})
	t.Run("torn segment that is not the last", func(t *testing.T) {
		l, _ := build(t)
		l.buf = l.buf[:len(l.buf)-5]
		l.roll().skipTo(1).batch(topicRec("u", 'b'))
		_, err := l.load()
		if ce, ok := logfmt.AsCorrupt(err); !ok || !strings.HasSuffix(ce.File, "00000000000000000000.log") || !strings.Contains(err.Error(), "not the last") {
			t.Fatalf("got %v", err)
		}
	})
}

func TestReplaySnapshotDamage(t *testing.T) {
	for _, c := range []struct {
		name   string
		damage func(b []byte) []byte
		want   string
	}{
		{"no footer", func(b []byte) []byte { return b[:len(b)-75] }, "no footer"},
		{"torn", func(b []byte) []byte { return b[:len(b)-3] }, "incomplete snapshot"},
		{"header missing", func(b []byte) []byte { return b[83:] }, "does not start with a header"},
		{"bad checksum", func(b []byte) []byte { b[100] ^= 1; return b }, "checksum mismatch"},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := newLog(t)
			path := l.snapshot(1, 1, topicRec("t", 'a'))
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, c.damage(b), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err = l.load()
			ce, ok := logfmt.AsCorrupt(err)
			if !ok || ce.File != path || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want a CorruptError in %s with %q", err, path, c.want)
			}
		})
	}
}

func TestLoadNothing(t *testing.T) {
	l := newLog(t)
	if _, err := Load(l.dir); err == nil || !strings.Contains(err.Error(), "nothing to replay") {
		t.Fatalf("got %v", err)
	}
	if _, err := Load(l.dir + "-missing"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("got %v", err)
	}
}
