package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/logtool/logtool/fetch"
	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/internal/testkit/kafkasamples"
	"github.com/logtool/logtool/logfmt/codec"
	"github.com/logtool/logtool/logfmt/layout"
)

// cluster starts an in-process Kafka cluster (franz-go's kfake: the real
// protocol over loopback) with the given topics, one broker.
func cluster(t testing.TB, partitions int32, topics []string, opts ...kfake.Opt) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1), kfake.SeedTopics(partitions, topics...)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// rec is a record as a consumer of the destination sees it, or as the
// source holds it.
type rec struct {
	Partition int32
	Key       []byte
	Value     []byte
	Headers   []string
	Timestamp int64 // -1: none in the source
}

func (r rec) String() string {
	return fmt.Sprintf("p%d key=%q(null=%t) value=%q(null=%t) headers=%q ts=%d", r.Partition, r.Key, r.Key == nil, r.Value, r.Value == nil, r.Headers, r.Timestamp)
}

func same(a, b rec) bool {
	return a.Partition == b.Partition && bytes.Equal(a.Key, b.Key) && (a.Key == nil) == (b.Key == nil) &&
		bytes.Equal(a.Value, b.Value) && (a.Value == nil) == (b.Value == nil) && slices.Equal(a.Headers, b.Headers) &&
		(a.Timestamp < 0 || b.Timestamp < 0 || a.Timestamp == b.Timestamp)
}

// consume reads every record of topic back with kgo, read_committed.
func consume(t testing.TB, c *kfake.Cluster, topic string, want int) []rec {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var out []rec
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for len(out) < want || ctx.Err() == nil {
		if len(out) >= want {
			// Anything sent twice arrives too: one more short poll.
			var stop context.CancelFunc
			ctx, stop = context.WithTimeout(ctx, 300*time.Millisecond)
			defer stop()
		}
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			if len(out) >= want {
				break
			}
			t.Fatalf("consumed %d records of %s, want %d", len(out), topic, want)
		}
		fs.EachError(func(_ string, _ int32, err error) { t.Fatal(err) })
		fs.EachRecord(func(r *kgo.Record) {
			x := rec{Partition: r.Partition, Key: r.Key, Value: r.Value, Timestamp: r.Timestamp.UnixMilli()}
			for _, h := range r.Headers {
				x.Headers = append(x.Headers, fmt.Sprintf("%s=%q(null=%t)", h.Key, h.Value, h.Value == nil))
			}
			out = append(out, x)
		})
	}
	return out
}

// source is what replay must send of a partition: what a read_committed
// consumer sees of it, control records aside.
func source(t testing.TB, dir string, iso fetch.Isolation) []rec {
	t.Helper()
	p, err := layout.ReadPartition(dir)
	if err != nil {
		t.Fatal(err)
	}
	o := fetch.DefaultOptions()
	o.Isolation = iso
	pt, err := fetch.Open(p, o)
	if err != nil {
		t.Fatal(err)
	}
	r := pt.Reader()
	defer r.Close()
	var out []rec
	for r.Next() {
		x := r.Record()
		if x.Control {
			continue
		}
		y := rec{Partition: p.Dir.Partition, Key: bytes.Clone(x.Key), Value: bytes.Clone(x.Value), Timestamp: x.Timestamp}
		for _, h := range x.Headers {
			y.Headers = append(y.Headers, fmt.Sprintf("%s=%q(null=%t)", h.Key, h.Value, h.Value == nil))
		}
		out = append(out, y)
	}
	if r.Err() != nil {
		t.Fatal(r.Err())
	}
	return out
}

func sameRecs(t testing.TB, what string, got, want []rec) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d records, want %d", what, len(got), len(want))
	}
	for i := range min(len(got), len(want)) {
		if !same(got[i], want[i]) {
			t.Fatalf("%s: record %d:\n got %v\nwant %v", what, i, got[i], want[i])
		}
	}
}

func genPartition(t testing.TB, o gen.Options) *layout.Partition {
	t.Helper()
	o.Out = t.TempDir()
	parts, err := gen.Generate(o)
	if err != nil {
		t.Fatal(err)
	}
	p, err := layout.ReadPartition(parts[0].Dir)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func options(c *kfake.Cluster) Options {
	return Options{Brokers: c.ListenAddrs(), Fetch: fetch.DefaultOptions(), Workers: 2}
}

// TestShapes replays every generated shape (v0, v1, v2, every codec,
// transactions with aborts, tombstones, headers, null keys) and reads it
// back: every record arrives, in order, as the source holds it.
func TestShapes(t *testing.T) {
	for magic := int8(0); magic <= 2; magic++ {
		for cd := codec.None; cd <= codec.Zstd; cd++ {
			if !cd.ValidFor(magic) {
				continue
			}
			t.Run(fmt.Sprintf("v%d-%s", magic, cd), func(t *testing.T) {
				o := gen.Options{Topics: []string{"events"}, Partitions: 2, Records: 300, Keys: 30, ValueBytes: 40,
					BatchRecords: 7, SegmentBytes: 4000, Magic: magic, Compression: cd, TombstoneRatio: 0.2, Seed: int64(magic)*7 + int64(cd)}
				if magic == 2 {
					o.TransactionalRatio, o.AbortRatio = 0.4, 0.4
				}
				o.Out = t.TempDir()
				parts, err := gen.Generate(o)
				if err != nil {
					t.Fatal(err)
				}
				// And keyless records in a second topic.
				o.Topics, o.Keys, o.Out = []string{"keyless"}, 0, filepath.Join(o.Out, "keyless")
				kl, err := gen.Generate(o)
				if err != nil {
					t.Fatal(err)
				}
				c := cluster(t, 2, []string{"events", "keyless"})
				var ps []*layout.Partition
				for _, x := range append(parts, kl...) {
					p, _ := layout.ReadPartition(x.Dir)
					ps = append(ps, p)
				}
				res, err := Run(context.Background(), ps, options(c))
				if err != nil {
					t.Fatal(err)
				}
				for _, topic := range []string{"events", "keyless"} {
					var want []rec
					for _, p := range ps {
						if p.Dir.Topic == topic {
							want = append(want, source(t, p.Path, fetch.ReadCommitted)...)
						}
					}
					got := consume(t, c, topic, len(want))
					byPart := func(rs []rec, p int32) (out []rec) {
						for _, r := range rs {
							if r.Partition == p {
								out = append(out, r)
							}
						}
						return out
					}
					for p := int32(0); p < 2; p++ {
						sameRecs(t, fmt.Sprintf("%s-%d", topic, p), byPart(got, p), byPart(want, p))
					}
				}
				for _, r := range res {
					if r.Next != r.Stats.LogEndOffset && !(magic == 2 && r.Next < r.Stats.LogEndOffset) {
						t.Errorf("%s: next %d, log end %d", r.Partition.Path, r.Next, r.Stats.LogEndOffset)
					}
				}
			})
		}
	}
}

// TestSamples replays real brokers' partitions, under another topic name.
func TestSamples(t *testing.T) {
	samples := kafkasamples.Dir("logdirs")
	dirs, _ := filepath.Glob(filepath.Join(samples, "*", "*-[0-9]*"))
	if len(dirs) == 0 {
		kafkasamples.Skip(t, errors.New("no samples at "+samples))
	}
	var ps []*layout.Partition
	topics := map[string]string{}
	for _, d := range dirs {
		p, err := layout.ReadPartition(d)
		if err != nil || p.Dir.Topic == "__cluster_metadata" || len(p.Segments) == 0 {
			continue
		}
		if _, ok := topics[p.Dir.Topic]; !ok {
			topics[p.Dir.Topic] = fmt.Sprintf("sample-%d", len(topics))
		}
		ps = append(ps, p)
	}
	var names []string
	for _, n := range topics {
		names = append(names, n)
	}
	c := cluster(t, 50, names)
	o := options(c)
	o.TopicMap = topics
	if _, err := Run(context.Background(), ps, o); err != nil {
		t.Fatal(err)
	}
	n := 0
	for src, dst := range topics {
		var want []rec
		for _, p := range ps {
			if p.Dir.Topic == src {
				want = append(want, source(t, p.Path, fetch.ReadCommitted)...)
			}
		}
		got := consume(t, c, dst, len(want))
		for part := range int32(50) {
			var g, w []rec
			for _, r := range got {
				if r.Partition == part {
					g = append(g, r)
				}
			}
			for _, r := range want {
				if r.Partition == part {
					w = append(w, r)
				}
			}
			sameRecs(t, fmt.Sprintf("%s-%d", src, part), g, w)
		}
		n += len(want)
	}
	t.Logf("%d records of %d partitions", n, len(ps))
}

// ids reads the "id" gen puts in each value: the record's source offset.
func ids(t testing.TB, rs []rec) []int64 {
	t.Helper()
	var out []int64
	for _, r := range rs {
		v := string(r.Value)
		i := strings.Index(v, `"id":`)
		if i < 0 {
			t.Fatalf("value %q has no id", v)
		}
		j := strings.IndexByte(v[i:], ',')
		id, err := strconv.ParseInt(v[i+5:i+j], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, id)
	}
	return out
}

// checkResumed checks the ids a partition received over two runs: the first
// run's, then the second's from its resume point, in order, with nothing
// missing and at most maxDup records sent twice.
func checkResumed(t testing.TB, got []int64, n int64, maxDup int) {
	t.Helper()
	seen := map[int64]int{}
	for _, id := range got {
		seen[id]++
	}
	dups := 0
	for id := range n {
		switch seen[id] {
		case 0:
			t.Fatalf("offset %d never arrived (a gap)", id)
		case 1:
		default:
			dups += seen[id] - 1
		}
	}
	if dups > maxDup {
		t.Errorf("%d records sent twice, want at most %d", dups, maxDup)
	}
	// Each run sends in order: the ids rise but for one step back, where
	// the second run starts.
	backs := 0
	for i := 1; i < len(got); i++ {
		if got[i] <= got[i-1] {
			backs++
		}
	}
	if backs > 1 {
		t.Errorf("order broken %d times", backs)
	}
	t.Logf("%d records, %d sent twice", len(got), dups)
}

// TestResumeAfterCancel stops a replay in the middle (its context
// cancelled) and resumes it from the resume file: no record is missing,
// and those sent twice are at most the ones in flight.
func TestResumeAfterCancel(t *testing.T) {
	p := genPartition(t, gen.Options{Topics: []string{"events"}, Records: 20_000, Keys: 100, ValueBytes: 50, Magic: 2, BatchRecords: 20, Seed: 5})
	c := cluster(t, 1, []string{"events"})
	resume := filepath.Join(t.TempDir(), "resume")
	ctx, cancel := context.WithCancel(context.Background())
	o := options(c)
	o.ResumeFile, o.MaxInFlight = resume, 500
	var acked atomic.Int64
	o.Progress = func(records, _ int64) {
		if acked.Add(records) > 5000 {
			cancel()
		}
	}
	res, err := Run(ctx, []*layout.Partition{p}, o)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("first run: %v, want cancelled", err)
	}
	first := res[0].Next
	if first <= 0 || first >= 20_000 {
		t.Fatalf("first run stopped at %d", first)
	}
	o.Progress = nil
	res, err = Run(context.Background(), []*layout.Partition{p}, o)
	if err != nil {
		t.Fatal(err)
	}
	if !res[0].Resumed || res[0].From > first {
		t.Errorf("second run from %d (resumed %t), want at most %d", res[0].From, res[0].Resumed, first)
	}
	b, _ := os.ReadFile(resume)
	if string(b) != "0\n1\nevents 0 20000\n" {
		t.Errorf("resume file %q", b)
	}
	got := consume(t, c, "events", 20_000)
	checkResumed(t, ids(t, got), 20_000, o.MaxInFlight)
}

// TestFailure: a destination that cannot be written fails the replay with
// the partition and the offset reached.
func TestFailure(t *testing.T) {
	p := genPartition(t, gen.Options{Topics: []string{"events"}, Records: 100, Magic: 2, Seed: 1})
	c := cluster(t, 1, []string{"other"})
	_, err := Run(context.Background(), []*layout.Partition{p}, options(c))
	if err == nil || !strings.Contains(err.Error(), "events") {
		t.Errorf("missing topic: %v", err)
	}
	c = cluster(t, 1, []string{"events"})
	// Every produce refused, as an ACL would.
	c.ControlKey(int16(kmsg.Produce), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		req := kreq.(*kmsg.ProduceRequest)
		resp := req.ResponseKind().(*kmsg.ProduceResponse)
		for _, rt := range req.Topics {
			st := kmsg.NewProduceResponseTopic()
			st.Topic, st.TopicID = rt.Topic, rt.TopicID
			for _, rp := range rt.Partitions {
				sp := kmsg.NewProduceResponseTopicPartition()
				sp.Partition, sp.ErrorCode = rp.Partition, kerr.TopicAuthorizationFailed.Code
				st.Partitions = append(st.Partitions, sp)
			}
			resp.Topics = append(resp.Topics, st)
		}
		return resp, nil, true
	})
	o := options(c)
	o.Retries = 2
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := Run(ctx, []*layout.Partition{p}, o)
	if err == nil || res[0].FailedAtOffset != 0 || !strings.Contains(err.Error(), "offset 0") || !strings.Contains(err.Error(), "events-0") {
		t.Errorf("refused produce: %v, failed at %d", err, res[0].FailedAtOffset)
	}
}

// TestSASL connects with PLAIN and SCRAM, and a wrong password fails
// without the password in the error.
func TestSASL(t *testing.T) {
	p := genPartition(t, gen.Options{Topics: []string{"events"}, Records: 50, Magic: 2, Seed: 1})
	for _, mech := range []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"} {
		c := cluster(t, 1, []string{"events"}, kfake.EnableSASL(), kfake.Superuser(mech, "replayer", "s3cret-pw"))
		o := options(c)
		o.Security = Security{SASLMechanism: strings.ToLower(mech), User: "replayer", Password: "s3cret-pw"}
		if _, err := Run(context.Background(), []*layout.Partition{p}, o); err != nil {
			t.Errorf("%s: %v", mech, err)
		}
		o.Security.Password = "wrong-pw-123"
		o.ClientOpts = []kgo.Opt{kgo.RequestRetries(0)}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := Run(ctx, []*layout.Partition{p}, o)
		cancel()
		if err == nil || strings.Contains(err.Error(), "wrong-pw-123") {
			t.Errorf("%s with a wrong password: %v", mech, err)
		}
	}
}

// TestDryRunAndRate: a dry run counts without connecting; a rate limit
// spreads the bytes.
func TestDryRunAndRate(t *testing.T) {
	p := genPartition(t, gen.Options{Topics: []string{"events"}, Records: 400, Keys: 10, ValueBytes: 50, Magic: 2, Seed: 1})
	want := source(t, p.Path, fetch.ReadCommitted)
	res, err := Run(context.Background(), []*layout.Partition{p}, Options{Brokers: []string{"127.0.0.1:1"}, Fetch: fetch.DefaultOptions(), DryRun: true})
	if err != nil || res[0].Records != int64(len(want)) {
		t.Fatalf("dry run: %v, %d records, want %d", err, res[0].Records, len(want))
	}
	c := cluster(t, 1, []string{"events"})
	o := options(c)
	o.Rate = res[0].Bytes * 2 // half a second's worth
	start := time.Now()
	if _, err := Run(context.Background(), []*layout.Partition{p}, o); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 400*time.Millisecond {
		t.Errorf("rate-limited replay took %v, want about 500ms", d)
	}
}

func TestParseTopicMap(t *testing.T) {
	m, err := ParseTopicMap([]string{"a=b", "c.x=d_y"})
	if err != nil || len(m) != 2 || m["a"] != "b" || m["c.x"] != "d_y" {
		t.Errorf("%v %v", m, err)
	}
	for _, bad := range [][]string{{"a"}, {"=b"}, {"a="}, {"a=b", "a=c"}, {"a/b=c"}} {
		if _, err := ParseTopicMap(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func FuzzParseTopicMap(f *testing.F) {
	f.Add("a=b", "c=d")
	f.Add("a==b", "")
	f.Fuzz(func(t *testing.T, a, b string) {
		m, err := ParseTopicMap([]string{a, b})
		if err != nil {
			return
		}
		for from, to := range m {
			if layout.ValidateTopic(from) != nil || layout.ValidateTopic(to) != nil {
				t.Fatalf("%q -> %q accepted", from, to)
			}
		}
	})
}
