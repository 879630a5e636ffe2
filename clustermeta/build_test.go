package clustermeta

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/kraft"
	"github.com/logtool/logtool/logfmt/layout"
)

// logBuilder writes metadata log segments and snapshots for tests.
type logBuilder struct {
	t     testing.TB
	dir   string
	buf   []byte // the segment being built
	base  int64  // its base offset
	next  int64
	epoch int32
	ts    int64
}

func newLog(t testing.TB) *logBuilder {
	dir := filepath.Join(t.TempDir(), PartitionDir)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return &logBuilder{t: t, dir: dir, epoch: 1, ts: 1_700_000_000_000}
}

// batch appends one batch of framed records.
func (l *logBuilder) batch(values ...[]byte) *logBuilder {
	l.t.Helper()
	var err error
	if l.buf, err = kraft.AppendBatch(l.buf, l.next, l.epoch, l.ts, false, 0, values...); err != nil {
		l.t.Fatal(err)
	}
	l.next += int64(len(values))
	l.ts++
	return l
}

// each appends one batch per record.
func (l *logBuilder) each(values ...[]byte) *logBuilder {
	for _, v := range values {
		l.batch(v)
	}
	return l
}

func (l *logBuilder) leaderChange() *logBuilder {
	l.t.Helper()
	var err error
	if l.buf, err = kraft.AppendBatch(l.buf, l.next, l.epoch, l.ts, true, logfmt.ControlLeaderChange, kraft.AppendLeaderChange(nil, 1, []int32{1})); err != nil {
		l.t.Fatal(err)
	}
	l.next++
	return l
}

// roll writes the segment built so far and starts the next one.
func (l *logBuilder) roll() *logBuilder {
	l.t.Helper()
	l.write(layout.SegmentName(l.base, layout.LogExt), l.buf)
	l.buf, l.base = nil, l.next
	return l
}

// skipTo makes the next segment start at offset, as after a truncation of
// the log's start.
func (l *logBuilder) skipTo(offset int64) *logBuilder {
	l.next, l.base = offset, offset
	return l
}

func (l *logBuilder) write(name string, b []byte) string {
	l.t.Helper()
	path := filepath.Join(l.dir, name)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		l.t.Fatal(err)
	}
	return path
}

// snapshot writes a snapshot with end offset end holding records.
func (l *logBuilder) snapshot(end int64, epoch int32, records ...[]byte) string {
	l.t.Helper()
	b, err := AppendSnapshot(nil, epoch, l.ts, 3, records)
	if err != nil {
		l.t.Fatal(err)
	}
	return l.write(snapshotName(end, epoch), b)
}

func snapshotName(end int64, epoch int32) string {
	return fmt.Sprintf("%020d-%010d%s", end, epoch, layout.CheckpointExt)
}

// load writes the segment being built, if any, and replays the directory.
func (l *logBuilder) load() (*Image, error) {
	l.t.Helper()
	if len(l.buf) > 0 {
		l.roll()
	}
	return Load(l.dir)
}

func (l *logBuilder) mustLoad() *Image {
	l.t.Helper()
	im, err := l.load()
	if err != nil {
		l.t.Fatal(err)
	}
	return im
}

// Record shorthands.

func id(c byte) TopicID {
	var u TopicID
	for i := range u {
		u[i] = c
	}
	return u
}

func topicRec(name string, c byte) []byte { return kraft.AppendTopicRecord(nil, name, id(c)) }

func partRec(c byte, p int32, replicas ...int32) []byte {
	return kraft.AppendPartitionRecord(nil, kraft.PartitionSpec{Topic: id(c), Partition: p, Replicas: replicas, ISR: replicas, Leader: replicas[0]})
}

func topicConf(topic, name, value string) []byte {
	return kraft.AppendConfigRecord(nil, ResourceTopic, topic, name, &value)
}

func brokerConf(broker, name, value string) []byte {
	return kraft.AppendConfigRecord(nil, ResourceBroker, broker, name, &value)
}

func deleteConf(typ int8, res, name string) []byte {
	return kraft.AppendConfigRecord(nil, typ, res, name, nil)
}
