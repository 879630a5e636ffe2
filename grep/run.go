package grep

import (
	"io"
	"sync"

	"github.com/logtool/logtool/compact"
	"github.com/logtool/logtool/fetch"
	"github.com/logtool/logtool/internal/parallel"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/layout"
)

// Options shape a search.
type Options struct {
	// Match decides which records match; nil audits every key of the jobs
	// that have an Audit, and skips the others.
	Match *Matcher
	// Range bounds the offsets searched: FromOffset, ToOffset, FromTime,
	// ToTime. Statuses and the audit look at the whole log whatever it is.
	Range  fetch.Options
	Format Format
	// Count writes no lines: the Results hold the counts.
	Count bool
	// Workers is how many goroutines search at once: partitions, and units
	// of a partition when there are fewer partitions.
	Workers int
	// KeyMapMemory bounds the key map of the partitions searched at once,
	// shared among them.
	KeyMapMemory int64
	// Progress, when set, is told of .log bytes to read (todo) as each pass
	// of a partition starts, and of those read (done) as it goes, from
	// several goroutines at once. A pass that ends early (it fails, its
	// units are read again, tails hold no batch) counts the rest as read.
	Progress func(done, todo int64)
}

// Job is one partition to search.
type Job struct {
	Partition *layout.Partition
	// Segments, when not nil, are the base offsets of the only segments
	// searched (segment files were named). Statuses and the audit still
	// read the whole log.
	Segments []int64
	Audit    *Audit // nil: no audit
}

// Result is what the search of one partition found.
type Result struct {
	Partition *layout.Partition
	Audit     *Audit
	Counts    Counts // matches by status
	Findings  int64  // versions past their deadline
	Keys      int    // keys in the key map: the wanted keys (see the package documentation)
	// Plan is the cleaner's plan for the partition, in an audit.
	Plan  *compact.Result
	Notes []string // segments whose data ends early (fetch.Stats.Notes)
	Err   error

	// An audit without matchers counts versions: superseded or deleted
	// ones, newest tombstones, and those past their deadline.
	Versions, VersionsPast     int64
	Tombstones, TombstonesPast int64
	oldest, oldestPast         oldVersion
}

// Run searches the partitions and writes their lines to w, partition after
// partition in the order given, while o.Workers goroutines search. done is
// called with each partition's result, in order, once its lines are
// written. A partition that fails has Result.Err set and the others go on;
// Run returns only an error of w.
func Run(w io.Writer, jobs []Job, o Options, done func(*Result)) error {
	outer := parallel.Workers(o.Workers, len(jobs))
	inner := parallel.PerJob(o.Workers, len(jobs))
	per := o
	per.KeyMapMemory = o.KeyMapMemory / int64(outer)
	outs := make([]*partOut, len(jobs))
	results := make([]*Result, len(jobs))
	for i := range outs {
		outs[i] = &partOut{ch: make(chan []byte, 2)}
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		parallel.Each(len(jobs), outer, func(i int) error {
			mem := logfmt.StartJob(int64(i))
			results[i] = searchOne(jobs[i], &per, inner, outs[i], mem)
			mem.Done()
			outs[i].close()
			return nil
		})
	})
	var err error
	// Match lines come first in a partition's output: the header goes above
	// the first chunk, when there are match lines to name.
	var header []byte
	if o.Match != nil && !o.Count {
		header = o.Format.header()
	}
	for i, out := range outs {
		for c := range out.ch {
			if err == nil && header != nil {
				_, err = w.Write(header)
				header = nil
			}
			if err == nil {
				_, err = w.Write(c)
			}
			if err != nil {
				out.stop()
			}
		}
		done(results[i])
	}
	wg.Wait()
	return err
}

func searchOne(job Job, o *Options, inner int, out *partOut, mem *logfmt.Job) *Result {
	p := job.Partition
	res := &Result{Partition: p, Audit: job.Audit}
	topic := p.Dir.Topic
	if topic == "" {
		topic = p.Dir.Name
	}
	s := &search{o: o, job: job, res: res, out: out, inner: inner, mem: mem, m: o.Match, audit: job.Audit,
		enc: newEncoder(o.Format, p.Path, topic, p.Dir.Partition)}
	if job.Audit != nil {
		s.now = job.Audit.Cleaner.Now
	}
	res.Err = s.run()
	return res
}

// chunkSize is how much output a partition collects before it hands it
// over.
const chunkSize = 1 << 20

// partOut is a partition's output: chunks that the writer takes in order.
// A partition that runs ahead of the writer waits once two chunks wait.
type partOut struct {
	ch      chan []byte
	buf     []byte
	stopped bool // the writer failed: chunks are dropped
	mu      sync.Mutex
}

// write adds a line, handing a chunk over once it is full.
func (o *partOut) write(b []byte) {
	o.buf = append(o.buf, b...)
	if len(o.buf) >= chunkSize {
		o.flush()
	}
}

func (o *partOut) flush() {
	if len(o.buf) > 0 {
		o.put(o.buf)
		o.buf = nil
	}
}

func (o *partOut) put(b []byte) {
	o.mu.Lock()
	stopped := o.stopped
	o.mu.Unlock()
	if !stopped {
		o.ch <- b
	}
}

func (o *partOut) close() {
	o.flush()
	close(o.ch)
}

// stop drops the rest of the output, after the writer failed; the
// partition searches on to its end.
func (o *partOut) stop() {
	o.mu.Lock()
	o.stopped = true
	o.mu.Unlock()
}
