// Package export writes the records of partition directories as JSON Lines,
// one object per record, losslessly: every field a consumer sees (topic,
// partition, offset, timestamp and its type, key, value, headers, producer
// id and epoch, sequence, transactional flag, leader epoch), null keys and
// values as null, byte strings in base64 or, where valid, UTF-8.
//
// What is written is what package fetch reads: read_committed by default,
// from the log start offset, within the range asked for. Partitions are
// encoded in parallel and written one after the other, in the order given,
// so the output does not depend on the number of workers; each worker holds
// a few 1 MiB chunks of encoded lines at most.
package export

import (
	"bufio"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/logtool/logtool/fetch"
	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/layout"
)

// Options shape an export.
type Options struct {
	Fetch    fetch.Options
	Format   Format
	Encoding Encoding
	// Workers is the number of partitions encoded at once (at least 1).
	Workers int
}

// Result is what the export of one partition did.
type Result struct {
	Partition *layout.Partition
	Stats     fetch.Stats
	Err       error
}

const (
	chunkSize   = 1 << 20
	chunksAhead = 4 // chunks a worker may encode before the writer takes them
)

// chunkRoom is the capacity of a chunk: a chunk's worth of lines and the
// line that fills it.
const chunkRoom = chunkSize + 64<<10

var chunkPool = sync.Pool{New: func() any { b := make([]byte, 0, chunkRoom); return &b }}

// Partition writes the records of one partition directory to w.
func Partition(w io.Writer, p *layout.Partition, o Options) (fetch.Stats, error) {
	pt, err := fetch.Open(p, o.Fetch)
	if err != nil {
		return fetch.Stats{}, err
	}
	st := pt.Stats()
	st.Read, err = encode(pt.Reader(), encoder(p, o), func(b []byte) error {
		_, err := w.Write(b)
		return err
	})
	return st, err
}

func encoder(p *layout.Partition, o Options) *Encoder {
	topic := p.Dir.Topic
	if topic == "" {
		topic = p.Dir.Name
	}
	return NewEncoder(topic, p.Dir.Partition, o.Format, o.Encoding, o.Fetch.Isolation)
}

// encode reads r and passes its lines to emit in chunks of about chunkSize.
// The line of a record whose value is larger than a chunk is passed on as
// it is made (Encoder.AppendStreamed), and any line larger than a chunk a
// chunk at a time, so that the chunks in flight between the workers and the
// writer keep their size; a buffer grown for a line is then dropped rather
// than kept in the pool.
func encode(r *fetch.Reader, enc *Encoder, emit func([]byte) error) (fetch.Read, error) {
	defer r.Close()
	bp := chunkPool.Get().(*[]byte)
	defer func() { chunkPool.Put(bp) }()
	buf := (*bp)[:0]
	defer func() {
		if cap(buf) <= cap(*bp) {
			*bp = buf
		}
	}()
	flush := func(b []byte) ([]byte, error) { return b[:0], emit(b) }
	for r.Next() {
		if rec := r.Record(); largeBytes(rec) > chunkSize {
			var err error
			if buf, err = enc.AppendStreamed(buf, rec, flush); err != nil {
				return r.Read(), err
			}
		} else {
			buf = enc.Append(buf, rec)
		}
		if len(buf) >= chunkSize {
			for p := buf; len(p) > 0; {
				n := len(p)
				if n > chunkRoom {
					n = chunkSize
				}
				if err := emit(p[:n]); err != nil {
					return r.Read(), err
				}
				p = p[n:]
			}
			buf = buf[:0]
		}
	}
	if err := r.Err(); err != nil {
		return r.Read(), err
	}
	if len(buf) > 0 {
		if err := emit(buf); err != nil {
			return r.Read(), err
		}
	}
	return r.Read(), nil
}

// errStopped ends the workers after a failure.
var errStopped = errors.New("export stopped")

// job is one unit of a partition (fetch.Partition.Unit) to encode.
type job struct {
	order  int64   // in the writer's order
	res    *Result // shared by the jobs of a partition
	r      *fetch.Reader
	enc    *Encoder
	chunks chan []byte
	read   fetch.Read
	err    error
	last   bool // the partition's last job
}

// Run writes the partitions to w in order. Partitions are opened (their
// transactions resolved) one after the other, and their units, slices of
// about 16 MiB of log, are encoded by o.Workers goroutines at once while
// the lines are written in order. done is called with each partition's
// result, in order, once its lines are written. Run stops at the first
// failure, of a partition or of w, and returns it.
func Run(w io.Writer, parts []*layout.Partition, o Options, done func(Result)) error {
	workers := max(1, o.Workers)
	ordered := make(chan *job, 2*workers) // the writer's order
	work := make(chan *job, 2*workers)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	go func() {
		defer close(work)
		defer close(ordered)
		send := func(j *job) bool {
			select {
			case ordered <- j:
			case <-stop:
				return false
			}
			if j.r == nil {
				close(j.chunks)
				return true
			}
			work <- j
			return true
		}
		var order int64
		for _, p := range parts {
			res := &Result{Partition: p}
			pt, err := fetch.Open(p, o.Fetch)
			if err != nil {
				send(&job{res: res, err: err, last: true, chunks: make(chan []byte)})
				return
			}
			res.Stats = pt.Stats()
			enc := encoder(p, o)
			if pt.Units() == 0 && !send(&job{res: res, last: true, chunks: make(chan []byte)}) {
				return
			}
			for i := range pt.Units() {
				j := &job{order: order, res: res, r: pt.Unit(i), enc: enc, chunks: make(chan []byte, chunksAhead), last: i == pt.Units()-1}
				order++
				if !send(j) {
					return
				}
			}
		}
	}()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				select {
				case <-stop:
					j.err = errStopped
				default:
					mem := logfmt.StartJob(j.order)
					j.r.Job = mem
					j.read, j.err = encode(j.r, j.enc, func(b []byte) error {
						c := chunkPool.Get().(*[]byte)
						*c = append((*c)[:0], b...)
						select {
						case j.chunks <- *c:
							return nil
						case <-stop:
							chunkPool.Put(c)
							return errStopped
						}
					})
					mem.Done()
				}
				// The job waits for the writer with the units before it:
				// its reader's buffers are the collector's.
				j.r = nil
				close(j.chunks)
			}
		}()
	}
	var err error
	for j := range ordered {
		for c := range j.chunks {
			if err == nil {
				if _, err = w.Write(c); err != nil {
					close(stop)
				}
			}
			chunkPool.Put(&c)
		}
		if err != nil {
			continue // drain, so that every goroutine ends
		}
		j.res.Stats.Read.Add(j.read)
		if j.err != nil {
			j.res.Err, err = j.err, j.err
			close(stop)
			continue
		}
		if j.last {
			done(*j.res)
		}
	}
	wg.Wait()
	return err
}

// Output is where an export goes: a file written crash-safely (a temporary
// file renamed into place by Commit, so a failed or killed export leaves the
// old file, if any, untouched) or standard output. A file name ending in
// ".zst" gets zstd compression.
type Output struct {
	io.Writer
	file *safefile.File
	bw   *bufio.Writer
	zw   *zstd.Encoder
}

// Create opens the output: path "" or "-" is stdout.
func Create(path string, stdout io.Writer) (*Output, error) {
	o := &Output{}
	var w io.Writer = stdout
	if path != "" && path != "-" {
		f, err := safefile.Create(path, 0o644)
		if err != nil {
			return nil, err
		}
		o.file, w = f, f
	}
	o.bw = bufio.NewWriterSize(w, chunkSize)
	o.Writer = o.bw
	if strings.EqualFold(filepath.Ext(path), ".zst") {
		zw, err := zstd.NewWriter(o.bw, zstd.WithEncoderLevel(zstd.SpeedDefault))
		if err != nil {
			o.Abort()
			return nil, err
		}
		o.zw, o.Writer = zw, zw
	}
	return o, nil
}

// Commit flushes everything and, for a file, makes it durable under its
// name.
func (o *Output) Commit() error {
	if o.zw != nil {
		if err := o.zw.Close(); err != nil {
			o.Abort()
			return err
		}
	}
	if err := o.bw.Flush(); err != nil {
		o.Abort()
		return err
	}
	if o.file != nil {
		if err := o.file.Commit(); err != nil {
			// Before the rename the temporary file is still there.
			o.file.Abort()
			return err
		}
	}
	return nil
}

// Abort gives up a file output, leaving what was there before.
func (o *Output) Abort() {
	if o.zw != nil {
		o.zw.Close()
	}
	if o.file != nil {
		o.file.Abort()
	}
}
