package replay

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/logfmt/layout"
)

// TestSlowPartitionBoundsChunks, end to end: a key-hash replay into 32
// partitions, one of whose leaders stops answering produce requests for a
// while (a broker under load, a leader moving). The client fills its
// MaxInFlight buffer with that partition's records while the others are
// acknowledged, so each chunk would stay in use for its few records of the
// slow partition (one chunk per ~8 records here, found by an adversary
// test: 234 chunks, 68 MiB): the chunks allocated stay within
// maxLiveChunks, and the replay completes once the leader answers.
func TestSlowPartitionBoundsChunks(t *testing.T) {
	p := genPartition(t, gen.Options{Topics: []string{"events"}, Records: 120_000, Keys: 5000, ValueBytes: 20, BatchRecords: 50, Magic: 2, Seed: 3})
	c := cluster(t, 32, []string{"events"}, kfake.NumBrokers(2))
	bad := c.LeaderFor("events", 0)
	for q := int32(1); q < 32; q++ {
		if c.LeaderFor("events", q) == bad {
			if err := c.MoveTopicPartition("events", q, 1-bad); err != nil {
				t.Fatal(err)
			}
		}
	}
	release := make(chan struct{})
	c.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if c.CurrentNode() == bad {
			c.SleepControl(func() { <-release })
		}
		return nil, nil, false
	})
	var allocated atomic.Int64
	oldNew := chunks.New
	chunks.New = func() any { allocated.Add(1); return oldNew() }
	defer func() { chunks.New = oldNew }()
	o := options(c)
	o.Partitioning, o.MaxInFlight, o.Workers = KeyHash, 2000, 1
	var acked atomic.Int64
	o.Progress = func(r, _ int64) { acked.Add(r) }
	done := make(chan error, 1)
	go func() {
		_, err := Run(context.Background(), []*layout.Partition{p}, o)
		done <- err
	}()
	// Wait for the acknowledgements to stop: the buffer is full of the
	// slow partition's records.
	for last := int64(-1); acked.Load() != last; {
		last = acked.Load()
		time.Sleep(2 * time.Second)
	}
	pinned := allocated.Load()
	t.Logf("stalled after %d acknowledged, %d records in flight: %d chunks allocated (~%d MiB)", acked.Load(), o.MaxInFlight, pinned, pinned*300/1024)
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if limit := int64(maxLiveChunks + 8); pinned > limit {
		t.Errorf("%d chunks for %d records in flight, want at most %d", pinned, o.MaxInFlight, limit)
	}
}
