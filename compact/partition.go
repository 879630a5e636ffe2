package compact

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/logtool/logtool/index"
	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/checkpoint"
	"github.com/logtool/logtool/logfmt/layout"
	"github.com/logtool/logtool/logfmt/logseg"
)

// partition is the state of one partition directory that the cleaner reads
// before it changes anything.
type partition struct {
	dir    string
	logDir string
	topic  string
	num    int32
	named  bool // topic and partition were parsed from the directory name

	listing  *layout.Partition
	segs     []segment
	logStart int64
	leo      int64
	hw       int64
	lso      int64
	prods    *logseg.ProducerState
	// badSnaps are the producer snapshots loadProducers skipped.
	badSnaps []*logfmt.CorruptError
	aborted  []index.AbortedTxn
	cp       dirtyCheckpoint
	rootFile bool // the log directory has a cleaner-offset-checkpoint
}

// dirtyCheckpoint is where the last clean ended, if anywhere.
type dirtyCheckpoint struct {
	offset    int64 // -1 when no checkpoint names the partition
	cleanTime int64 // when the pass that reached offset ran; -1 unknown
	source    string
}

// Checkpoint sources, as reported in Result.CheckpointSource.
const (
	SourcePartition = layout.CleanerCheckpointFile       // <partition>/cleaner-checkpoint
	SourceRoot      = layout.CleanerOffsetCheckpointFile // <logdir>/cleaner-offset-checkpoint
	SourceLogStart  = "log start"
)

func loadPartition(dir string, o *Options) (*partition, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	listing, err := layout.ReadPartition(dir)
	if err != nil {
		return nil, err
	}
	// Refused before anything is written: a broker follows the links, so
	// cleaning the rest would act on half the partition.
	if err := listing.NoSymlinks(); err != nil {
		return nil, err
	}
	p := &partition{dir: dir, logDir: filepath.Dir(abs), listing: listing}
	if listing.Dir.Topic != "" {
		p.topic, p.num, p.named = listing.Dir.Topic, listing.Dir.Partition, true
	}
	if p.segs, err = logseg.OpenPartition(listing); err != nil {
		return nil, err
	}
	if len(p.segs) == 0 {
		return p, nil
	}
	last := &p.segs[len(p.segs)-1]
	if p.leo, err = last.NextOffset(); err != nil {
		return nil, err
	}
	p.logStart = p.segs[0].Base
	if off, ok, err := logseg.RootOffset(listing, layout.LogStartOffsetCheckpointFile); err != nil {
		return nil, err
	} else if ok {
		p.logStart = max(p.logStart, off)
	}
	p.hw = p.leo
	if off, ok, err := logseg.RootOffset(listing, layout.ReplicationOffsetCheckpointFile); err != nil {
		return nil, err
	} else if ok {
		p.hw = min(max(off, p.logStart), p.leo)
	}
	if p.prods, p.badSnaps, err = loadProducers(listing.Snapshots, p.segs, p.logStart, p.leo, o); err != nil {
		return nil, err
	}
	p.lso = p.hw
	if first := p.prods.FirstUnstableOffset(); first >= 0 {
		p.lso = min(p.lso, first)
	}
	if p.aborted, err = loadAborted(p.segs); err != nil {
		return nil, err
	}
	p.cp, err = p.readCheckpoint()
	return p, err
}

// readCheckpoint finds the first dirty offset: the per-partition file, else
// the log directory's file, else none.
func (p *partition) readCheckpoint() (dirtyCheckpoint, error) {
	rootOff, rootOK, err := logseg.RootOffset(p.listing, layout.CleanerOffsetCheckpointFile)
	if err != nil {
		return dirtyCheckpoint{}, err
	}
	// When the log directory has the root file, it is kept up to date too.
	if p.named {
		_, err := os.Stat(filepath.Join(p.logDir, layout.CleanerOffsetCheckpointFile))
		p.rootFile = err == nil
	}
	path := filepath.Join(p.dir, layout.CleanerCheckpointFile)
	f, err := safefile.Open(path)
	switch {
	case err == nil:
		defer f.Close()
		c, err := checkpoint.ReadCleaner(f, path)
		if err != nil {
			return dirtyCheckpoint{}, err
		}
		return dirtyCheckpoint{offset: c.FirstDirtyOffset, cleanTime: c.LastCleanTimeMs, source: SourcePartition}, nil
	case !errors.Is(err, fs.ErrNotExist):
		return dirtyCheckpoint{}, err
	case rootOK:
		return dirtyCheckpoint{offset: rootOff, cleanTime: -1, source: SourceRoot}, nil
	}
	return dirtyCheckpoint{offset: -1, cleanTime: -1, source: SourceLogStart}, nil
}

// loadAborted reads every .txnindex of the partition. Entries Kafka would
// not read (after an unknown version) end a file, as they end Kafka's reader.
func loadAborted(segs []segment) ([]index.AbortedTxn, error) {
	var all []index.AbortedTxn
	for i := range segs {
		path := segs[i].TxnIndex
		if path == "" {
			continue
		}
		txns, err := readTxnIndex(path)
		if err != nil {
			return nil, err
		}
		all = append(all, txns...)
	}
	return all, nil
}

func readTxnIndex(path string) ([]index.AbortedTxn, error) {
	f, err := safefile.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	var txns []index.AbortedTxn
	r := index.NewTxnReader(f, fi.Size(), path)
	for r.Next() {
		txns = append(txns, r.Txn())
	}
	return txns, r.Err()
}
