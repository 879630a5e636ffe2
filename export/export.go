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
	"github.com/logtool/logtool/logfmt/layout"
)

// Options shape an export.
type Options struct {
	Fetch    fetch.Options
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

var chunkPool = sync.Pool{New: func() any { b := make([]byte, 0, chunkSize+64<<10); return &b }}

// Partition writes the records of one partition directory to w.
func Partition(w io.Writer, p *layout.Partition, o Options) (fetch.Stats, error) {
	return encode(p, o, func(b []byte) error {
		_, err := w.Write(b)
		return err
	})
}

// encode reads p and passes its lines to emit in chunks of about chunkSize.
func encode(p *layout.Partition, o Options, emit func([]byte) error) (fetch.Stats, error) {
	r, err := fetch.Open(p, o.Fetch)
	if err != nil {
		return fetch.Stats{}, err
	}
	defer r.Close()
	topic := p.Dir.Topic
	if topic == "" {
		topic = p.Dir.Name
	}
	enc := NewEncoder(topic, p.Dir.Partition, o.Encoding, o.Fetch.Isolation)
	bp := chunkPool.Get().(*[]byte)
	defer func() { chunkPool.Put(bp) }()
	buf := (*bp)[:0]
	for r.Next() {
		buf = enc.Append(buf, r.Record())
		if len(buf) >= chunkSize {
			if err := emit(buf); err != nil {
				return r.Stats(), err
			}
			buf = buf[:0]
		}
	}
	if err := r.Err(); err != nil {
		return r.Stats(), err
	}
	*bp = buf
	if len(buf) > 0 {
		if err := emit(buf); err != nil {
			return r.Stats(), err
		}
	}
	return r.Stats(), nil
}

// errStopped ends the workers after the writer failed.
var errStopped = errors.New("export stopped")

// Run writes the partitions to w in order, encoding up to o.Workers of them
// at once. done is called with each partition's result, in order, once its
// lines are written. Run stops at the first failure, of a partition or of
// w, and returns it.
func Run(w io.Writer, parts []*layout.Partition, o Options, done func(Result)) error {
	type job struct {
		chunks chan []byte
		res    Result
	}
	jobs := make([]*job, len(parts))
	for i := range jobs {
		jobs[i] = &job{chunks: make(chan []byte, chunksAhead), res: Result{Partition: parts[i]}}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	go func() {
		// Workers start in the order the writer drains them, so the one it
		// waits for always holds a slot.
		slots := make(chan struct{}, max(1, o.Workers))
		for _, j := range jobs {
			select {
			case slots <- struct{}{}:
			case <-stop:
				close(j.chunks)
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-slots }()
				j.res.Stats, j.res.Err = encode(j.res.Partition, o, func(b []byte) error {
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
				close(j.chunks)
			}()
		}
	}()
	var err error
	for _, j := range jobs {
		for c := range j.chunks {
			if err == nil {
				_, err = w.Write(c)
				if err != nil {
					close(stop)
				}
			}
			chunkPool.Put(&c)
		}
		if err != nil {
			continue // drain the rest so every worker ends
		}
		if j.res.Err != nil {
			err = j.res.Err
			close(stop)
		}
		done(j.res)
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
		return o.file.Commit()
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
