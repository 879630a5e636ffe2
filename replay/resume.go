package replay

import (
	"cmp"
	"errors"
	"io/fs"
	"slices"
	"strings"
	"sync"

	"github.com/logtool/logtool/logfmt/checkpoint"
)

// Resume is a replay's resume file: for each source partition, the offset
// of the first record the cluster has not acknowledged. It is a Kafka
// offset checkpoint file (version 0: "0", the count, then "topic partition
// offset" lines), read and written with logfmt/checkpoint, so every write
// is crash-safe (temporary file, fsync, rename, directory fsync).
//
// Set records progress; a goroutine writes the file whenever it changed,
// one write at a time, so a slow disk delays the file, never the replay.
type Resume struct {
	path string

	mu      sync.Mutex
	next    map[tp]int64
	dirty   bool
	wake    chan struct{}
	stopped chan struct{}
	err     error // the first failed write
}

type tp struct {
	topic     string
	partition int32
}

// OpenResume reads the resume file at path, which need not exist, and
// starts the writer.
func OpenResume(path string) (*Resume, error) {
	r := &Resume{path: path, next: map[tp]int64{}, wake: make(chan struct{}, 1), stopped: make(chan struct{})}
	err := checkpoint.ScanOffsetsFile(path, func(e checkpoint.OffsetEntry) error {
		r.next[tp{e.Topic, e.Partition}] = e.Offset
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	go r.writer()
	return r, nil
}

// Next is where a source partition resumes, if the file names it.
func (r *Resume) Next(topic string, partition int32) (int64, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	o, ok := r.next[tp{topic, partition}]
	return o, ok
}

// Set records that every record of the partition before offset next is
// acknowledged.
func (r *Resume) Set(topic string, partition int32, next int64) {
	r.mu.Lock()
	r.next[tp{topic, partition}] = next
	r.dirty = true
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

func (r *Resume) writer() {
	defer close(r.stopped)
	for range r.wake {
		if err := r.write(); err != nil {
			r.mu.Lock()
			r.err = cmp.Or(r.err, err)
			r.mu.Unlock()
		}
	}
}

func (r *Resume) write() error {
	r.mu.Lock()
	if !r.dirty {
		r.mu.Unlock()
		return nil
	}
	entries := make([]checkpoint.OffsetEntry, 0, len(r.next))
	for k, o := range r.next {
		entries = append(entries, checkpoint.OffsetEntry{Topic: k.topic, Partition: k.partition, Offset: o})
	}
	r.dirty = false
	r.mu.Unlock()
	slices.SortFunc(entries, func(a, b checkpoint.OffsetEntry) int {
		return cmp.Or(strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return checkpoint.WriteOffsetsFile(r.path, len(entries), func(write func(checkpoint.OffsetEntry) error) error {
		for _, e := range entries {
			if err := write(e); err != nil {
				return err
			}
		}
		return nil
	})
}

// Close writes what is left and stops the writer; the error is the first
// write that failed.
func (r *Resume) Close() error {
	close(r.wake)
	<-r.stopped
	err := r.write()
	r.mu.Lock()
	defer r.mu.Unlock()
	return cmp.Or(r.err, err)
}
