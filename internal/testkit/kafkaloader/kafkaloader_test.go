package kafkaloader

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/logtool/logtool/logfmt"
)

// The tests build partition directories by hand, one rule of LogLoader at a
// time. Batches are written with logfmt (tests only; the model reads them
// with its own framing).

// batches returns a .log holding one v2 batch of one record per offset.
func batches(t *testing.T, offsets ...int64) []byte {
	t.Helper()
	var out []byte
	for _, o := range offsets {
		var err error
		out, err = logfmt.AppendBatch(out, logfmt.DefaultBatchOptions(o), []logfmt.Record{{Offset: o, Timestamp: 1000 + o, Value: []byte(fmt.Sprint("v", o))}})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// seq is the offsets [from, to).
func seq(from, to int64) []int64 {
	var out []int64
	for o := from; o < to; o++ {
		out = append(out, o)
	}
	return out
}

// put writes name in dir with content b.
func put(t *testing.T, dir, name string, b []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// segFiles writes a segment: .log with the offsets, an empty .index and
// .timeindex, all with suffix appended to their names.
func segFiles(t *testing.T, dir string, base int64, suffix string, offsets ...int64) {
	t.Helper()
	put(t, dir, segmentName(base, logSuffix)+suffix, batches(t, offsets...))
	put(t, dir, segmentName(base, indexSuffix)+suffix, nil)
	put(t, dir, segmentName(base, timeIndexSuffix)+suffix, nil)
}

func partDir(t *testing.T) string {
	t.Helper()
	d := filepath.Join(t.TempDir(), "orders-0")
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// bases lists a log's segments as "base:next".
func bases(l *Log) string {
	var s []string
	for _, g := range l.Segments {
		s = append(s, fmt.Sprintf("%d:%d", g.Base, g.NextOffset))
	}
	return strings.Join(s, " ")
}

func load(t *testing.T, dir string, o Options) *Log {
	t.Helper()
	l, err := LoadPartition(dir, o)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func wantSegments(t *testing.T, l *Log, want string) {
	t.Helper()
	if got := bases(l); got != want {
		t.Fatalf("segments %q, want %q\nactions:\n%s", got, want, strings.Join(l.Actions, "\n"))
	}
}

func wantAction(t *testing.T, l *Log, prefix string) {
	t.Helper()
	if !slices.ContainsFunc(l.Actions, func(a string) bool { return strings.HasPrefix(a, prefix) }) {
		t.Fatalf("no action %q in:\n%s", prefix, strings.Join(l.Actions, "\n"))
	}
}

var clean = Options{HadCleanShutdown: true}

// Files marked for deletion are deleted, KRaft snapshots excepted; the
// directory on disk is not touched.
func TestDeletedFilesRemoved(t *testing.T) {
	d := partDir(t)
	segFiles(t, d, 0, "", seq(0, 5)...)
	segFiles(t, d, 5, deletedSuffix, seq(5, 9)...)
	put(t, d, "00000000000000000005-0000000001.checkpoint.deleted", nil)
	l := load(t, d, clean)
	wantSegments(t, l, "0:5")
	wantAction(t, l, "delete 00000000000000000005.log.deleted")
	if slices.ContainsFunc(l.Actions, func(a string) bool { return strings.Contains(a, ".checkpoint.deleted") }) {
		t.Fatalf("a KRaft snapshot was deleted: %v", l.Actions)
	}
	if _, err := os.Stat(filepath.Join(d, "00000000000000000005.log.deleted")); err != nil {
		t.Fatal("the model changed the directory")
	}
}

// .cleaned files are deleted, and with them every .swap at or above the
// lowest .cleaned offset: the replacement had not finished renaming, so the
// old segments stay.
func TestCleanedRollsBackSwapsAbove(t *testing.T) {
	d := partDir(t)
	segFiles(t, d, 0, "", seq(0, 10)...)
	segFiles(t, d, 10, "", seq(10, 20)...)
	// A replacement of both by one segment at 0, half renamed: its .log is
	// a .swap, its .index still .cleaned.
	put(t, d, segmentName(0, logSuffix)+swapSuffix, batches(t, 0, 19))
	put(t, d, segmentName(0, indexSuffix)+cleanedSuffix, nil)
	l := load(t, d, clean)
	wantSegments(t, l, "0:10 10:20")
	wantAction(t, l, "delete 00000000000000000000.log.swap: swap file at or above the lowest .cleaned offset 0")
	wantAction(t, l, "delete 00000000000000000000.index.cleaned")
}

// A .swap below every .cleaned is complete: it replaces the segments in
// its range and is renamed.
func TestSwapBelowCleanedCompletes(t *testing.T) {
	d := partDir(t)
	segFiles(t, d, 0, "", seq(0, 10)...)
	segFiles(t, d, 10, "", seq(10, 20)...)
	segFiles(t, d, 20, "", seq(20, 30)...)
	segFiles(t, d, 0, swapSuffix, 3, 7, 19) // cleaned 0..19
	put(t, d, segmentName(20, logSuffix)+cleanedSuffix, nil)
	l := load(t, d, clean)
	wantSegments(t, l, "0:20 20:30")
	if l.Segments[0].File != filepath.Join(d, "00000000000000000000.log.swap") {
		t.Fatalf("segment 0 reads %s", l.Segments[0].File)
	}
	wantAction(t, l, "delete 00000000000000000010.log: in the range [0, 20)")
	wantAction(t, l, "rename 00000000000000000000.log.swap 00000000000000000000.log")
}

// The swap range is one range per partition, from the lowest .swap base
// to the highest .swap next offset: a segment between two swapped ones is
// deleted although it was not being replaced (issue 15, item 2).
func TestSwapRangeDeletesSegmentBetweenSwaps(t *testing.T) {
	d := partDir(t)
	segFiles(t, d, 0, swapSuffix, seq(0, 10)...)
	segFiles(t, d, 10, "", seq(10, 20)...) // kept by the writer
	segFiles(t, d, 20, swapSuffix, seq(20, 30)...)
	l := load(t, d, clean)
	wantSegments(t, l, "0:10 20:30")
	wantAction(t, l, "delete 00000000000000000010.log: in the range [0, 30)")
}

// The range ends at the swap's next offset, exclusive, and every file
// named with an offset in it goes, snapshots included.
func TestSwapRangeBounds(t *testing.T) {
	d := partDir(t)
	segFiles(t, d, 0, "", seq(0, 10)...)
	segFiles(t, d, 10, "", seq(10, 20)...)
	segFiles(t, d, 0, swapSuffix, 2, 9)
	put(t, d, "00000000000000000005.snapshot", nil)
	put(t, d, "leader-epoch-checkpoint", nil)
	l := load(t, d, clean)
	wantSegments(t, l, "0:10 10:20")
	wantAction(t, l, "delete 00000000000000000005.snapshot: in the range [0, 10)")
}

// An index .swap without its log .swap is renamed, then deleted as an
// orphan; an index without a .log is deleted.
func TestOrphanIndexes(t *testing.T) {
	d := partDir(t)
	segFiles(t, d, 0, "", seq(0, 10)...)
	put(t, d, segmentName(10, indexSuffix)+swapSuffix, nil)
	put(t, d, segmentName(20, timeIndexSuffix), nil)
	put(t, d, segmentName(30, txnIndexSuffix), nil)
	l := load(t, d, clean)
	wantSegments(t, l, "0:10")
	for _, a := range []string{
		"rename 00000000000000000010.index.swap 00000000000000000010.index",
		"delete 00000000000000000010.index: orphaned",
		"delete 00000000000000000020.timeindex: orphaned",
		"delete 00000000000000000030.txnindex: orphaned",
	} {
		wantAction(t, l, a)
	}
}

// A segment without an offset index is recovered even after a clean
// shutdown: cut at its first torn batch. Later segments stay.
func TestMissingIndexRecovers(t *testing.T) {
	d := partDir(t)
	b := batches(t, seq(0, 10)...)
	put(t, d, segmentName(0, logSuffix), b[:len(b)-3])
	segFiles(t, d, 10, "", seq(10, 20)...)
	l := load(t, d, clean)
	wantSegments(t, l, "0:9 10:20")
	wantAction(t, l, "truncate 00000000000000000000.log to")
}

// A transaction index entry ending below its segment fails the sanity
// check: the segment is recovered.
func TestCorruptTxnIndexRecovers(t *testing.T) {
	d := partDir(t)
	segFiles(t, d, 100, "", seq(100, 110)...)
	entry := make([]byte, 34)
	entry[25] = 50 // lastOffset 50 < base 100
	put(t, d, segmentName(100, txnIndexSuffix), entry)
	l := load(t, d, clean)
	wantAction(t, l, "recover 00000000000000000100.log: corrupt transaction index")
	wantSegments(t, l, "100:110")
}

// After an unclean shutdown the segment holding the recovery point and all
// later ones are recovered; at the first damaged batch the log is cut and
// every later segment deleted. Segments below the recovery point are
// trusted.
func TestUncleanRecovery(t *testing.T) {
	d := partDir(t)
	first := batches(t, seq(0, 10)...)
	first[len(first)-1] ^= 1 // below the recovery point: not looked at
	put(t, d, segmentName(0, logSuffix), first)
	put(t, d, segmentName(0, indexSuffix), nil)
	segFiles(t, d, 10, "", seq(10, 20)...)
	mid := batches(t, seq(20, 30)...)
	one := len(batches(t, 20))
	mid[4*one+30] ^= 1 // the fifth batch's CRC fails
	put(t, d, segmentName(20, logSuffix), mid)
	put(t, d, segmentName(20, indexSuffix), nil)
	segFiles(t, d, 30, "", seq(30, 40)...)
	l := load(t, d, Options{RecoveryPoint: 15})
	wantSegments(t, l, "0:10 10:20 20:24")
	wantAction(t, l, "recover 00000000000000000010.log")
	wantAction(t, l, fmt.Sprintf("truncate 00000000000000000020.log to %d", 4*one))
	wantAction(t, l, "delete 00000000000000000030.log: after the corruption found in segment 20")
	if l.LogEndOffset != 24 || l.RecoveryPoint != 15 {
		t.Fatalf("log end %d, recovery point %d", l.LogEndOffset, l.RecoveryPoint)
	}
	// A recovery point inside segment 10 still recovers segment 10: it is
	// the floor segment.
	if l := load(t, d, Options{RecoveryPoint: 10}); !slices.Contains(l.Actions, "recover 00000000000000000010.log: unflushed: at or after the recovery point 10") {
		t.Fatalf("%v", l.Actions)
	}
}

// Legacy messages are checked by their CRC-32 too.
func TestUncleanRecoveryLegacy(t *testing.T) {
	d := partDir(t)
	var b []byte
	for o := int64(0); o < 6; o++ {
		b = logfmt.AppendLegacyMessage(b, 1, o, 0, 1000+o, nil, []byte("x"))
	}
	one := len(b) / 6
	b[3*one+20] ^= 1
	put(t, d, segmentName(0, logSuffix), b)
	put(t, d, segmentName(0, indexSuffix), nil)
	l := load(t, d, Options{})
	wantSegments(t, l, "0:3")
}

// Offset index entries that do not increase during recovery throw
// InvalidOffsetException: the segment is emptied and later ones deleted.
func TestRecoveryInvalidOffsetEmptiesSegment(t *testing.T) {
	d := partDir(t)
	put(t, d, segmentName(0, logSuffix), batches(t, 0, 1, 2, 1, 3))
	put(t, d, segmentName(0, indexSuffix), nil)
	segFiles(t, d, 10, "", seq(10, 20)...)
	l := load(t, d, Options{IndexIntervalBytes: 1})
	wantSegments(t, l, "0:0")
	wantAction(t, l, "truncate 00000000000000000000.log to 0: invalid offset")
	wantAction(t, l, "delete 00000000000000000010.log")
	// The same segment below the recovery point of a clean shutdown loads.
	wantSegments(t, load(t, d, Options{HadCleanShutdown: true, IndexIntervalBytes: 1}), "0:4 10:20")
}

// The log start offset is the larger of the checkpoint and the first base;
// a log ending below it loses every segment and restarts empty there.
func TestLogStartOffset(t *testing.T) {
	d := partDir(t)
	segFiles(t, d, 10, "", seq(10, 20)...)
	if l := load(t, d, Options{HadCleanShutdown: true, LogStartOffset: 5}); l.LogStartOffset != 10 || l.LogEndOffset != 20 {
		t.Fatalf("start %d end %d", l.LogStartOffset, l.LogEndOffset)
	}
	if l := load(t, d, Options{HadCleanShutdown: true, LogStartOffset: 15}); l.LogStartOffset != 15 {
		t.Fatalf("start %d", l.LogStartOffset)
	}
	l := load(t, d, Options{HadCleanShutdown: true, LogStartOffset: 25})
	wantSegments(t, l, "25:25")
	wantAction(t, l, "delete 00000000000000000010.log: the log end offset 20 is below the log start offset 25")
	if l.Segments[0].File != "" || l.LogStartOffset != 25 || l.LogEndOffset != 25 {
		t.Fatalf("%+v", l)
	}
	// No segment at all: an empty one at the log start offset.
	wantSegments(t, load(t, partDir(t), Options{LogStartOffset: 7}), "7:7")
}

// What Kafka would do but the model cannot say is an error, never a guess.
func TestNotModeled(t *testing.T) {
	d := partDir(t)
	put(t, d, segmentName(0, logSuffix)+swapSuffix, batches(t, 0))
	if _, err := LoadPartition(d, clean); err == nil || !strings.Contains(err.Error(), "not modeled") {
		t.Fatalf("swap without an index: %v", err)
	}
	d = partDir(t)
	put(t, d, "x.log", nil)
	if _, err := LoadPartition(d, clean); err == nil {
		t.Fatal("a .log without an offset in its name loaded")
	}
	d = partDir(t)
	put(t, d, segmentName(0, logSuffix), batches(t, 1<<40))
	if _, err := LoadPartition(d, Options{}); err == nil || !strings.Contains(err.Error(), "overflows") {
		t.Fatalf("offset overflow: %v", err)
	}
	d = partDir(t)
	segFiles(t, d, 0, "", 0, 1)
	f, _ := os.OpenFile(filepath.Join(d, segmentName(0, logSuffix)), os.O_APPEND|os.O_WRONLY, 0)
	f.Write(make([]byte, 40)) // a zero tail: size 0 is CorruptRecordException
	f.Close()
	if _, err := LoadPartition(d, clean); err == nil {
		t.Fatal("a zero tail in a trusted segment loaded")
	}
	if l := load(t, d, Options{}); bases(l) != "0:2" {
		t.Fatalf("recovery keeps %s", bases(l))
	}
}

// Directory names: partitions load, renamed kinds are recognised, the
// remote index cache and the metadata partition are skipped, anything else
// stops the broker. The root files give each partition its options.
func TestLoadLogDir(t *testing.T) {
	root := t.TempDir()
	mk := func(name string) string {
		p := filepath.Join(root, name)
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	segFiles(t, mk("orders-0"), 0, "", seq(0, 10)...)
	segFiles(t, mk("orders-1"), 0, "", seq(0, 10)...)
	mk("orders-0.0123abcd-delete")
	mk("orders-1.0123abcd-future")
	mk("remote-log-index-cache")
	mk("__cluster_metadata-0")
	put(t, root, "meta.properties", nil)
	put(t, root, recoveryPointFile, []byte("0\n2\norders 0 10\norders 1 4\n"))
	put(t, root, logStartOffsetFile, []byte("0\n1\norders 0 3\n"))
	logs, err := LoadLogDir(root, DirOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range logs {
		got = append(got, fmt.Sprintf("%s %s-%d kind=%q start=%d end=%d", filepath.Base(l.Dir), l.Topic, l.Partition, l.Kind, l.LogStartOffset, l.LogEndOffset))
	}
	want := []string{
		`orders-0 orders-0 kind="" start=3 end=10`,
		`orders-0.0123abcd-delete orders-0 kind="delete" start=3 end=0`,
		`orders-1 orders-1 kind="" start=0 end=10`,
		`orders-1.0123abcd-future orders-1 kind="future" start=0 end=0`,
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := len(Partitions(logs)); n != 2 {
		t.Fatalf("%d partitions", n)
	}
	// No clean shutdown marker: orders-1 is recovered from offset 4.
	if !slices.ContainsFunc(logs[2].Actions, func(a string) bool { return strings.HasPrefix(a, "recover ") }) {
		t.Fatalf("orders-1 was not recovered: %v", logs[2].Actions)
	}
	put(t, root, cleanShutdownFile, nil)
	if logs, _ := LoadLogDir(root, DirOptions{}); slices.ContainsFunc(logs[2].Actions, func(a string) bool { return strings.HasPrefix(a, "recover ") }) {
		t.Fatalf("recovered after a clean shutdown: %v", logs[2].Actions)
	}
	// Unflushed: every segment recovered, from offset 0.
	if logs, _ := LoadLogDir(root, DirOptions{Unflushed: true}); !slices.Contains(logs[0].Actions, "recover 00000000000000000000.log: unflushed: at or after the recovery point 0") {
		t.Fatalf("not recovered as unflushed: %v", logs[0].Actions)
	}

	for _, bad := range []string{"orders-0.upgrade.tmp", "lost+found", "orders-x", "-0", "orders-0.abc-delete.x", "a.b-delete"} {
		mk(bad)
		if _, err := LoadLogDir(root, DirOptions{}); err == nil || !strings.Contains(err.Error(), "refuses to start") {
			t.Errorf("%s: %v", bad, err)
		}
		os.Remove(filepath.Join(root, bad))
	}
}

// A checkpoint Kafka cannot read counts as empty.
func TestReadCheckpoint(t *testing.T) {
	dir := t.TempDir()
	for content, want := range map[string]int{
		"0\n2\na 0 1\nb 1 2\n": 2,
		"0\n3\na 0 1\nb 1 2\n": 0,
		"1\n1\na 0 1\n":        0,
		"0\n1\na 0\n":          0,
		"":                     0,
		"0\n":                  0,
	} {
		p := filepath.Join(dir, "cp")
		os.WriteFile(p, []byte(content), 0o644)
		if got := len(readCheckpoint(p)); got != want {
			t.Errorf("%q: %d entries, want %d", content, got, want)
		}
	}
	if len(readCheckpoint(filepath.Join(dir, "missing"))) != 0 {
		t.Fatal("a missing checkpoint has entries")
	}
}

// The model's framing agrees with logfmt on a v2 batch's last offset.
func TestNextBatchLastOffset(t *testing.T) {
	b, err := logfmt.AppendBatch(nil, logfmt.DefaultBatchOptions(100), []logfmt.Record{{Offset: 100}, {Offset: 107}})
	if err != nil {
		t.Fatal(err)
	}
	got, ok, err := nextBatch(bytes.NewReader(b), 0, int64(len(b)))
	if !ok || err != nil || got.lastOffset != 107 || got.size != int64(len(b)) || got.ensureValid(bytes.NewReader(b)) != nil {
		t.Fatalf("%+v %v %v", got, ok, err)
	}
}

// Every directory a broker loads, a "-delete" one too, must have a
// partition.metadata and a leader-epoch-checkpoint that read, or the log
// directory goes offline. Kafka writes both through a ".tmp" name, which
// it ignores.
func TestPartitionFiles(t *testing.T) {
	const id = "topic_id: 3oLaJhJRQ8CmL6gzHHYCTw"
	for _, tc := range []struct {
		file, content string
		ok            bool
	}{
		{partitionMetadataFile, "version: 0\n" + id + "\n", true},
		{partitionMetadataFile, "version: 0\r\n" + id, true},
		{partitionMetadataFile, "version: 1\n" + id + "==\nmore", true},
		{partitionMetadataFile, "", false},
		{partitionMetadataFile, "version: 0\n", false},
		{partitionMetadataFile, "version: 0\ntopic_id: 3oLaJhJRQ8", false},
		{partitionMetadataFile, "version: -1\n" + id, false},
		{partitionMetadataFile, "version:0\n" + id, false},
		{partitionMetadataFile, "version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA", false},
		{partitionMetadataFile + ".tmp", "", true},
		{leaderEpochFile, "", true},
		{leaderEpochFile, "0\n", true},
		{leaderEpochFile, "0\n0\n", true},
		{leaderEpochFile, "0\n2\n0 0\n3  120\n", true},
		{leaderEpochFile, "0\n2\n0 0\n", false},
		{leaderEpochFile, "0\n2\n0 0\n3 12", true},
		{leaderEpochFile, "0\n1\n0 0 1\n", false},
		{leaderEpochFile, "0\n1\n 0 0\n", false},
		{leaderEpochFile, "1\n0\n", false},
		{leaderEpochFile, "0\nx\n", false},
	} {
		dir := filepath.Join(t.TempDir(), "orders-0.0123abcd-delete")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		segFiles(t, dir, 0, "", seq(0, 3)...)
		put(t, dir, tc.file, []byte(tc.content))
		_, err := LoadLogDir(filepath.Dir(dir), DirOptions{})
		if ok := err == nil; ok != tc.ok || !ok && !strings.Contains(err.Error(), "offline") {
			t.Errorf("%s %q: %v", tc.file, tc.content, err)
		}
	}
}
