// Package replay produces the records of partition directories to a live
// Kafka cluster with franz-go's kgo client, so that data that survives only
// in a dead broker's log directory can be given back to consumers.
//
// What is sent is what package fetch reads, as a consumer would see it
// (read_committed by default; control records are never sent, being the
// broker's own): keys, values, headers and timestamps, which arrive as
// CreateTime (a record without one, magic 0, gets the time it is sent).
// Each source partition goes to the partition of the same number of its
// topic (or of the topic --topic-map names), or to the partition the key's
// hash picks, as Kafka's default partitioner does (murmur2; records
// without a key are spread).
//
// The producer is idempotent with acks=all: every record is written to all
// in-sync replicas before it counts as sent, and retries never duplicate or
// reorder within a producer session. Order within a partition is kept: the
// records of a source partition are produced in offset order by one
// goroutine, and kgo keeps the order of the records of a partition across
// up to five requests in flight, the broker rejecting any batch out of
// sequence (idempotence), as the Java producer does.
//
// Resuming. With a resume file, each acknowledgement moves the partition's
// position to the offset after the last record acknowledged with all the
// records before it, and the file is rewritten crash-safely with the new
// positions as soon as the previous write is done. A re-run with the same
// file starts each partition at its position. Nothing is skipped: the file
// only names offsets below which every record was acknowledged. Records
// may be sent twice: those acknowledged after the file's last write and
// those in flight when the run stopped; the client holds at most
// MaxInFlight records unacknowledged. (Idempotence does not remove them,
// since a new run is a new producer.)
package replay

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/logtool/logtool/fetch"
	"github.com/logtool/logtool/internal/fielderr"
	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/logfmt/checkpoint"
	"github.com/logtool/logtool/logfmt/layout"
)

// Partitioning is how records find their destination partition.
type Partitioning int

const (
	SamePartition Partitioning = iota // the source partition's number
	KeyHash                           // murmur2 of the key, as Kafka's default partitioner
)

// ParsePartitioning reads the --partition values.
func ParsePartitioning(s string) (Partitioning, error) {
	switch s {
	case "same":
		return SamePartition, nil
	case "key-hash":
		return KeyHash, nil
	}
	return 0, fmt.Errorf("want same or key-hash, got %q", s)
}

// DefaultMaxInFlight bounds the records the client holds unacknowledged.
const DefaultMaxInFlight = 10_000

// DefaultRetries is how many times a record is tried, with kgo's backoff
// (250 ms growing to 2.5 s): about 20 seconds of a failing cluster.
const DefaultRetries = 10

// Options shape a replay.
type Options struct {
	Brokers      []string
	Security     Security
	TopicMap     map[string]string // source topic → destination topic
	Partitioning Partitioning
	// Fetch selects the records; FromOffset is raised, per partition, to
	// the resume file's position.
	Fetch fetch.Options
	// Rate limits the bytes of keys, values and headers sent per second;
	// 0 means no limit.
	Rate int64
	// DryRun counts what would be sent, connecting to nothing.
	DryRun bool
	// ResumeFile, when set, is read at the start and kept up to date.
	ResumeFile string
	// Workers is the number of source partitions read at once.
	Workers int
	// MaxInFlight bounds the records sent and not yet acknowledged; 0 means
	// DefaultMaxInFlight.
	MaxInFlight int
	// Retries is how many times a record is tried before the replay fails;
	// 0 means DefaultRetries. (kgo measures a delivery timeout from the
	// record's timestamp, which here is the source's: a limit on tries is
	// the one that means something.)
	Retries int
	// Progress, when set, is called with records and bytes acknowledged
	// (counted, in a dry run) since its last call, from several goroutines.
	Progress func(records, bytes int64)
	// ClientOpts are added to the client's options.
	ClientOpts []kgo.Opt
}

// Result is what became of one source partition.
type Result struct {
	Partition     *layout.Partition
	Topic         string // destination
	DestPartition int32  // -1 with KeyHash
	// From is the first source offset read: the range's start or the resume
	// file's position; Resumed tells which.
	From    int64
	Resumed bool
	// Next is the source offset after the last record acknowledged (with
	// every record before it): where a re-run resumes. From when nothing
	// was acknowledged.
	Next           int64
	Records, Bytes int64 // acknowledged (counted, in a dry run)
	Skipped        int64 // control records, never sent
	Stats          fetch.Stats
	Err            error
	FailedAtOffset int64 // the source offset of the record that failed, with Err
}

// Run replays the partitions. It returns one result per partition, in
// order; the error is the first failure, after which the other partitions
// stop too.
func Run(ctx context.Context, parts []*layout.Partition, o Options) ([]Result, error) {
	if err := oneCopy(parts); err != nil {
		return nil, err
	}
	res := make([]Result, len(parts))
	for i, p := range parts {
		res[i] = Result{Partition: p, Topic: o.destTopic(p), DestPartition: -1, From: -1, Next: -1, FailedAtOffset: -1}
		if o.Partitioning == SamePartition {
			if p.Dir.Partition < 0 {
				return res, fielderr.New("Partitioning", "%s: the directory's name gives no partition number to keep; partition by key hash", p.Path)
			}
			res[i].DestPartition = p.Dir.Partition
		}
	}
	r := &replayer{o: o, limit: newLimiter(o.Rate)}
	if !o.DryRun {
		if o.ResumeFile != "" {
			resume, err := OpenResume(o.ResumeFile)
			if err != nil {
				return res, err
			}
			r.resume = resume
		}
		cl, err := r.client()
		if err != nil {
			return res, r.closeResume(err)
		}
		defer cl.Close()
		r.cl = cl
		if err := r.checkDestinations(ctx, res); err != nil {
			return res, r.closeResume(err)
		}
	}
	parent := ctx
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range max(1, o.Workers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				if r.partition(ctx, &res[i]); res[i].Err != nil {
					cancel()
				}
			}
		}()
	}
feed:
	for i := range parts {
		select {
		case jobs <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	// The first failure is the one to report; the partitions it stopped
	// report a cancellation.
	err := parent.Err()
	for i := range res {
		if res[i].Err != nil && !errors.Is(res[i].Err, context.Canceled) {
			err = res[i].Err
			break
		}
	}
	return res, r.closeResume(err)
}

// CopiesError is a partition given twice, as two copies (two brokers'
// replicas, a log and its -future copy): a replay of both sends its records
// twice, and the resume file would mix their offsets.
type CopiesError struct{ A, B *layout.Partition }

func (e *CopiesError) Error() string {
	return fmt.Sprintf("%s and %s are both partition %d of %s: replaying both sends its records twice; name one copy", e.A.Path, e.B.Path, e.A.Dir.Partition, e.A.Dir.Topic)
}

// oneCopy refuses parts holding two copies of a partition: the same topic
// and partition, of one topic ID (partition.metadata) or, without both IDs,
// of one cluster (meta.properties), or when neither tells. Partitions of
// other clusters that share a name may be replayed into one topic.
func oneCopy(parts []*layout.Partition) error {
	type key struct {
		topic string
		part  int32
	}
	seen := map[key][]*layout.Partition{}
	for _, p := range parts {
		if p.Dir.Topic == "" {
			continue
		}
		k := key{p.Dir.Topic, p.Dir.Partition}
		for _, q := range seen[k] {
			if sameCopy(p, q) {
				return &CopiesError{q, p}
			}
		}
		seen[k] = append(seen[k], p)
	}
	return nil
}

func sameCopy(a, b *layout.Partition) bool {
	ma, _ := checkpoint.ReadPartitionMetadataIn(a.Path)
	mb, _ := checkpoint.ReadPartitionMetadataIn(b.Path)
	if ma != nil && mb != nil {
		return ma.TopicID == mb.TopicID
	}
	// One broker's, or one cluster's, log directories all name a cluster
	// or none.
	ca, cb := clusterOf(a.Path), clusterOf(b.Path)
	if ca != "" || cb != "" {
		return ca == cb
	}
	return true
}

// clusterOf is the cluster.id of the log directory holding partition
// directory dir, "" when it has none.
func clusterOf(dir string) string {
	b, err := safefile.ReadFile(filepath.Join(filepath.Dir(dir), layout.MetaPropertiesFile))
	if err != nil {
		return ""
	}
	m, err := checkpoint.ReadMetaProperties(b, dir)
	if err != nil {
		return ""
	}
	return m.ClusterID
}

func (o *Options) destTopic(p *layout.Partition) string {
	t := p.Dir.Topic
	if t == "" {
		t = p.Dir.Name
	}
	if to, ok := o.TopicMap[t]; ok {
		return to
	}
	return t
}

type replayer struct {
	o      Options
	cl     *kgo.Client
	resume *Resume
	limit  *limiter
}

func (r *replayer) closeResume(err error) error {
	if r.resume == nil {
		return err
	}
	return errors.Join(err, r.resume.Close())
}

func (r *replayer) client() (*kgo.Client, error) {
	o := r.o
	opts := []kgo.Opt{
		kgo.SeedBrokers(o.Brokers...),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.MaxBufferedRecords(max(1, cmpOr(o.MaxInFlight, DefaultMaxInFlight))),
		kgo.RecordRetries(cmpOr(o.Retries, DefaultRetries)),
		kgo.ProducerLinger(5 * time.Millisecond),
		kgo.ClientID("logtool-replay"),
	}
	if o.Partitioning == SamePartition {
		opts = append(opts, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	} else {
		opts = append(opts, kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)))
	}
	sec, err := o.Security.Opts()
	if err != nil {
		return nil, err
	}
	return kgo.NewClient(append(append(opts, sec...), o.ClientOpts...)...)
}

func cmpOr[T comparable](a, b T) T {
	var zero T
	if a != zero {
		return a
	}
	return b
}

// checkDestinations fails early, and clearly, when a destination topic is
// missing or has too few partitions for SamePartition.
func (r *replayer) checkDestinations(ctx context.Context, res []Result) error {
	need := map[string]int32{}
	for _, x := range res {
		need[x.Topic] = max(need[x.Topic], x.DestPartition+1)
	}
	req := kmsg.NewPtrMetadataRequest()
	for t := range need {
		mt := kmsg.NewMetadataRequestTopic()
		mt.Topic = kmsg.StringPtr(t)
		req.Topics = append(req.Topics, mt)
	}
	resp, err := req.RequestWith(ctx, r.cl)
	if err != nil {
		return fmt.Errorf("cannot reach the cluster at %v: %w", r.o.Brokers, err)
	}
	for _, t := range resp.Topics {
		name := ""
		if t.Topic != nil {
			name = *t.Topic
		}
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			return fmt.Errorf("destination topic %s: %w (create it first, with as many partitions as the source)", name, err)
		}
		if n := int32(len(t.Partitions)); n < need[name] {
			return fmt.Errorf("destination topic %s has %d partitions; keeping the partition numbers needs %d", name, n, need[name])
		}
	}
	return nil
}

// partition replays one source partition.
func (r *replayer) partition(ctx context.Context, res *Result) {
	o := r.o
	p := res.Partition
	fo := o.Fetch
	if r.resume != nil {
		if next, ok := r.resume.Next(p.Dir.Topic, p.Dir.Partition); ok {
			if fo.FromOffset == fetch.NoOffset || next > fo.FromOffset {
				fo.FromOffset, res.Resumed = next, true
			}
		}
	}
	pt, err := fetch.Open(p, fo)
	if err != nil {
		res.Err = err
		return
	}
	res.Stats = pt.Stats()
	res.From = max(res.Stats.LogStartOffset, fo.FromOffset)
	res.Next = res.From
	rd := pt.Reader()
	defer rd.Close()
	tr := &tracker{res: res, resume: r.resume, progress: o.Progress, topic: p.Dir.Topic, partition: p.Dir.Partition}
	var wg sync.WaitGroup
	// One promise for every record: a closure each would be one more
	// allocation per record.
	promise := func(kr *kgo.Record, err error) {
		sl := slotOf(kr)
		tr.ack(sl.seq, err)
		sl.chunk.release()
		wg.Done()
	}
	var arena recordArena
	defer arena.close()
	for rd.Next() && !tr.failed() {
		rec := rd.Record()
		if rec.Control {
			res.Skipped++
			continue
		}
		n := recordBytes(rec)
		if err := r.limit.wait(ctx, n); err != nil {
			tr.fail(err, rec.Offset)
			break
		}
		if o.DryRun {
			res.Records++
			res.Bytes += n
			res.Next = rec.Offset + 1
			if o.Progress != nil {
				o.Progress(1, n)
			}
			continue
		}
		sl := arena.record(ctx, rec, n, res.Topic, res.DestPartition)
		sl.seq = tr.add(rec.Offset, n)
		wg.Add(1)
		r.cl.Produce(ctx, &sl.rec, promise)
	}
	wg.Wait()
	res.Stats.Read = rd.Read()
	if err := rd.Err(); err != nil && res.Err == nil {
		res.Err = err
	}
}

// recordBytes is what a record sends: its key, value and headers.
func recordBytes(rec *fetch.Record) int64 {
	n := len(rec.Key) + len(rec.Value)
	for _, h := range rec.Headers {
		n += len(h.Key) + len(h.Value)
	}
	return int64(n)
}

// slot is a record handed to the client, with the sequence number its
// promise acknowledges. The record is its first field, so that the one
// promise finds the slot from the record kgo hands back (slotOf) without
// a Context of its own for each record: the record's Context is Produce's,
// as kgo would have set it. kgo may read a record's Context after its
// promise has run (waitUnknownTopic), which reads the context, never
// changed, and not the slot.
type slot struct {
	rec   kgo.Record
	seq   int
	chunk *chunk
}

// slotOf is the slot whose record kr is.
func slotOf(kr *kgo.Record) *slot {
	return (*slot)(unsafe.Pointer(kr))
}

// chunk holds many consecutive records, their bytes and headers copied out
// of the reader's buffers (which it reuses), so that a record costs no
// allocation of its own. The client reads
// them until a record's promise has run, so a chunk is reused only once
// every record in it has been acknowledged and the arena has moved on to
// another: refs counts those, plus one for the arena.
type chunk struct {
	slots   []slot
	headers []kgo.RecordHeader
	buf     []byte
	refs    atomic.Int32
}

// Chunk sizes: records, headers, and bytes of keys and values.
const (
	chunkRecords = 256
	chunkHeaders = 256
	chunkBytes   = 256 << 10
)

var chunks = sync.Pool{New: func() any {
	return &chunk{slots: make([]slot, 0, chunkRecords), headers: make([]kgo.RecordHeader, 0, chunkHeaders), buf: make([]byte, 0, chunkBytes)}
}}

// One record acknowledged late keeps its whole chunk: with --partition
// key-hash and one slow destination partition, every chunk may hold a few
// of its records. So the chunks in use, across every partition's arena,
// are bounded (about 20 MiB); past the bound a record gets buffers of its
// own, and memory follows the records in flight rather than their chunks.
const maxLiveChunks = 64

var liveChunks atomic.Int64

// release drops one reference, and reuses the chunk after the last. Its
// slots and headers are overwritten when reused. A record with buffers of
// its own has no chunk.
func (c *chunk) release() {
	if c == nil {
		return
	}
	if c.refs.Add(-1) == 0 {
		c.slots, c.headers, c.buf = c.slots[:0], c.headers[:0], c.buf[:0]
		liveChunks.Add(-1)
		chunks.Put(c)
	}
}

// recordArena copies records into chunks.
type recordArena struct {
	c    *chunk
	keys []string // header keys seen last, shared rather than allocated again
}

// record copies a record of n bytes (recordBytes) into the arena, keeping
// null keys and values null. A record of over a quarter of a chunk's
// bytes or headers gets buffers of its own.
func (a *recordArena) record(ctx context.Context, rec *fetch.Record, n int64, topic string, partition int32) *slot {
	own := n > chunkBytes/4 || len(rec.Headers) > chunkHeaders/4
	c := a.c
	if c == nil || len(c.slots) == cap(c.slots) ||
		!own && (int64(cap(c.buf)-len(c.buf)) < n || len(rec.Headers) > cap(c.headers)-len(c.headers)) {
		c.release()
		c, a.c = nil, nil
		if liveChunks.Add(1) <= maxLiveChunks {
			c = chunks.Get().(*chunk)
			c.refs.Store(1)
			a.c = c
		} else {
			liveChunks.Add(-1)
		}
	}
	var sl *slot
	if c != nil {
		c.refs.Add(1)
		c.slots = append(c.slots, slot{chunk: c})
		sl = &c.slots[len(c.slots)-1]
	} else {
		sl, own = &slot{}, true
	}
	var buf *[]byte
	var headers *[]kgo.RecordHeader
	if own {
		b, h := make([]byte, 0, n), make([]kgo.RecordHeader, 0, len(rec.Headers))
		buf, headers = &b, &h
	} else {
		buf, headers = &c.buf, &c.headers
	}
	kr := &sl.rec
	kr.Context, kr.Topic, kr.Partition = ctx, topic, partition
	kr.Key, kr.Value = clone(buf, rec.Key), clone(buf, rec.Value)
	if rec.Timestamp >= 0 {
		kr.Timestamp = time.UnixMilli(rec.Timestamp)
	}
	if len(rec.Headers) > 0 {
		start := len(*headers)
		for i, h := range rec.Headers {
			*headers = append(*headers, kgo.RecordHeader{Key: a.key(i, h.Key), Value: clone(buf, h.Value)})
		}
		kr.Headers = (*headers)[start:len(*headers):len(*headers)]
	}
	return sl
}

// close lets the arena's last chunk be reused once its records are done.
func (a *recordArena) close() {
	a.c.release()
	a.c = nil
}

// clone appends b to *buf, whose room the caller has checked.
func clone(buf *[]byte, b []byte) []byte {
	if b == nil {
		return nil
	}
	start := len(*buf)
	*buf = append(*buf, b...)
	return (*buf)[start:len(*buf):len(*buf)]
}

// key returns the i-th header key as a string, the one of the record
// before when it is the same: records mostly carry the same header keys.
func (a *recordArena) key(i int, b []byte) string {
	if i < len(a.keys) && a.keys[i] == string(b) {
		return a.keys[i]
	}
	k := string(b)
	if i < len(a.keys) {
		a.keys[i] = k
	} else if i == len(a.keys) && i < 16 {
		a.keys = append(a.keys, k)
	}
	return k
}

// tracker follows the records of one source partition from Produce to
// acknowledgement, and moves the partition's position past each record
// acknowledged with all those before it.
type tracker struct {
	res       *Result
	resume    *Resume
	progress  func(records, bytes int64)
	topic     string
	partition int32

	mu      sync.Mutex
	pending []pending // in production order, from index head on
	head    int
	base    int // sequence number of pending[0]
	err     error
	stopped atomic.Bool // err is set
}

type pending struct {
	offset, size int64
	done         bool
}

func (t *tracker) add(offset, size int64) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.head > 4096 && t.head > len(t.pending)/2 {
		n := copy(t.pending, t.pending[t.head:])
		t.pending, t.base, t.head = t.pending[:n], t.base+t.head, 0
	}
	t.pending = append(t.pending, pending{offset: offset, size: size})
	return t.base + len(t.pending) - 1
}

func (t *tracker) ack(seq int, err error) {
	t.mu.Lock()
	p := &t.pending[seq-t.base]
	if err != nil {
		if t.err == nil {
			t.err = err
			t.stopped.Store(true)
			t.res.Err = fmt.Errorf("producing offset %d of %s to %s: %w", p.offset, t.res.Partition.Path, destName(t.res), err)
			t.res.FailedAtOffset = p.offset
		}
		t.mu.Unlock()
		return
	}
	p.done = true
	var recs, bytes int64
	for t.head < len(t.pending) && t.pending[t.head].done {
		q := t.pending[t.head]
		t.res.Next = q.offset + 1
		recs++
		bytes += q.size
		t.head++
	}
	t.res.Records += recs
	t.res.Bytes += bytes
	next := t.res.Next
	t.mu.Unlock()
	if recs > 0 {
		if t.resume != nil {
			t.resume.Set(t.topic, t.partition, next)
		}
		if t.progress != nil {
			t.progress(recs, bytes)
		}
	}
}

func (t *tracker) fail(err error, offset int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err == nil {
		t.err, t.res.Err, t.res.FailedAtOffset = err, err, offset
		t.stopped.Store(true)
	}
}

// failed is asked before every record: an atomic rather than the mutex
// the promises take.
func (t *tracker) failed() bool { return t.stopped.Load() }

func destName(res *Result) string {
	if res.DestPartition < 0 {
		return res.Topic
	}
	return fmt.Sprintf("%s-%d", res.Topic, res.DestPartition)
}

// limiter spreads the bytes sent evenly over time.
type limiter struct {
	rate  int64
	mu    sync.Mutex
	start time.Time
	sent  int64
}

func newLimiter(rate int64) *limiter {
	if rate <= 0 {
		return nil
	}
	return &limiter{rate: rate, start: time.Now()}
}

func (l *limiter) wait(ctx context.Context, n int64) error {
	if l == nil {
		return ctx.Err()
	}
	l.mu.Lock()
	l.sent += n
	due := l.start.Add(time.Duration(float64(l.sent) / float64(l.rate) * float64(time.Second)))
	l.mu.Unlock()
	d := time.Until(due)
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
