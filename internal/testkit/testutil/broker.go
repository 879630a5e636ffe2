package testutil

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/logtool/logtool/internal/testkit/kafkaloader"
	"github.com/logtool/logtool/logfmt"
)

// BrokerRecords loads the log directory dir as a broker would
// (internal/testkit/kafkaloader: Kafka's loader, not ours) and calls fn with every
// record a consumer reading each partition from its log start offset would
// be served, in order, with the partition directory's name. Like Kafka's
// fetch path and consumer, it reads the segments by base offset and skips
// records below the next offset to fetch, so overlapping segments show as
// they would to a client. A batch the broker would serve but that does not
// read cleanly fails the test. With unflushed the directory is loaded as
// after a broker crash that flushed nothing, so every segment is recovered.
func BrokerRecords(t testing.TB, dir string, unflushed bool, fn func(part string, b *logfmt.Batch, r *logfmt.Record)) {
	t.Helper()
	logs, err := kafkaloader.LoadLogDir(dir, kafkaloader.DirOptions{Unflushed: unflushed})
	if err != nil {
		t.Fatalf("a broker would not load %s: %v", dir, err)
	}
	for _, l := range kafkaloader.Partitions(logs) {
		part := filepath.Base(l.Dir)
		next := l.LogStartOffset
		for _, s := range l.Segments {
			if s.File != "" && s.Size > 0 {
				next = brokerSegment(t, part, s, next, l.LogEndOffset, fn)
			}
		}
	}
}

func brokerSegment(t testing.TB, part string, s kafkaloader.Segment, next, end int64, fn func(string, *logfmt.Batch, *logfmt.Record)) int64 {
	t.Helper()
	f, err := os.Open(s.File)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	seg := logfmt.NewSegmentReader(f, s.Size, s.File)
	var it logfmt.RecordIter
	it.File = s.File
	for seg.Next() {
		b := seg.Batch()
		if b.LastOffset() < next {
			continue
		}
		if err := b.Validate(); err != nil {
			t.Fatalf("%s: a broker would serve a bad batch: %v", part, err)
		}
		if err := it.Reset(b); err != nil {
			t.Fatalf("%s: %v", part, err)
		}
		for it.Next() {
			r := it.Record()
			if r.Offset < next || r.Offset >= end {
				continue
			}
			fn(part, b, r)
			next = r.Offset + 1
		}
		if it.Err() != nil {
			t.Fatalf("%s: %v", part, it.Err())
		}
	}
	if seg.Err() != nil || seg.End() != logfmt.EndClean {
		t.Fatalf("%s: segment %d as a broker loads it (%d bytes of %s) does not end cleanly: %v (%v)", part, s.Base, s.Size, s.File, seg.Err(), seg.End())
	}
	return next
}
