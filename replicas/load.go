package replicas

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"

	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/internal/target"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/checkpoint"
	"github.com/logtool/logtool/logfmt/layout"
	"github.com/logtool/logtool/logfmt/logseg"
)

// Options shape how replicas are read.
type Options struct {
	// MaxRecordBytes bounds one record of a compressed batch read for its
	// hashes (logfmt.RecordIter.MaxRecordBytes).
	MaxRecordBytes int
	// AllRecords hashes the records of every batch, not only those of
	// compacted replicas: a batch cleaned on one broker can then be checked
	// against a broker that never cleaned, at the cost of decompressing
	// every batch.
	AllRecords bool
	// Progress, when set, is told the bytes of each batch as its header
	// is read (for a digest's partitions read on workers, once a partition
	// is written), on the goroutine that reads the Source or writes the digest.
	Progress func(n int64)
	// Workers bounds the goroutines that read: the ranges of a large
	// segment (logfmt.HeaderReader), and a digest's partitions. Below 2,
	// one goroutine reads.
	Workers int
}

// Broker is who holds a set of replicas.
type Broker struct {
	// Name is the node id (broker.id before KRaft), or the log directory's
	// path when it has no meta.properties.
	Name      string
	NodeID    int32 // -1 when unknown
	ClusterID string
	// Dirs are the log directories read (their real paths), or the digest
	// file.
	Dirs []string
	// DirectoryIDs are the log directories' directory.id values, when
	// meta.properties has one.
	DirectoryIDs []string
	// Digest is the digest file it was read from, "" for log directories.
	Digest string
}

// where names the broker's input in messages.
func (b Broker) where() string {
	if b.Digest != "" {
		return b.Digest
	}
	return b.Dirs[0]
}

// Source yields one broker's replicas in PartitionKey order.
type Source interface {
	Broker() Broker
	// Next returns the next replica, nil at the end.
	Next() (*Partition, error)
	Close() error
}

// OpenLogDirs reads the log directories of set, all named whole, as the
// brokers they belong to: log directories with the same node id are one
// broker's (its log.dirs), each with its own Source.
func OpenLogDirs(set *target.Set, o Options) ([]Source, error) {
	var srcs []*logDirSource
	byNode := map[string]*logDirSource{}
	byDir := map[string]*logDirSource{}
	for _, d := range set.LogDirs {
		m, err := readMeta(d.Path)
		if err != nil {
			return nil, err
		}
		b := Broker{Name: d.Real, NodeID: -1}
		if m != nil {
			b.ClusterID = m.ClusterID
			b.NodeID = m.NodeID
			if b.NodeID < 0 {
				b.NodeID = m.BrokerID
			}
			if b.NodeID >= 0 {
				b.Name = strconv.Itoa(int(b.NodeID))
			}
		}
		s := byNode[b.Name]
		if s == nil {
			s = &logDirSource{broker: b, o: o, roots: map[string]*roots{}}
			byNode[b.Name] = s
			srcs = append(srcs, s)
		} else if s.broker.ClusterID != b.ClusterID {
			return nil, &target.UsageError{Err: fmt.Errorf("%s and %s both say they are broker %s, of different clusters", s.broker.Dirs[0], d.Path, b.Name)}
		}
		byDir[d.Real] = s
		s.broker.Dirs = append(s.broker.Dirs, d.Real)
		if m != nil && m.DirectoryID != "" {
			s.broker.DirectoryIDs = append(s.broker.DirectoryIDs, m.DirectoryID)
		}
	}
	for _, p := range set.Partitions() {
		if p.Dir.Kind != layout.Normal || p.Dir.Topic == "" {
			// Being deleted, moved or left stray: not a replica a
			// broker serves.
			continue
		}
		s := byDir[p.LogDir.Real]
		s.parts = append(s.parts, p)
	}
	for _, rp := range set.Refused {
		if s := byDir[rp.Partition.LogDir.Real]; s != nil {
			if s.refused == nil {
				s.refused = map[*target.Partition][]layout.Refusal{}
			}
			s.refused[rp.Partition] = rp.Refusals
		}
	}
	out := make([]Source, len(srcs))
	for i, s := range srcs {
		slices.SortStableFunc(s.parts, func(a, b *target.Partition) int {
			return PartitionKey{a.Dir.Topic, a.Dir.Partition}.Compare(PartitionKey{b.Dir.Topic, b.Dir.Partition})
		})
		for j := 1; j < len(s.parts); j++ {
			a, b := s.parts[j-1], s.parts[j]
			if a.Dir.Topic == b.Dir.Topic && a.Dir.Partition == b.Dir.Partition {
				// Kafka refuses to start with a partition in two of
				// its log directories.
				return nil, &target.UsageError{Err: fmt.Errorf("broker %s holds %s twice: %s and %s", s.broker.Name, a.Dir.Name, a.Path, b.Path)}
			}
		}
		out[i] = s
	}
	return out, nil
}

// readMeta reads a log directory's meta.properties; nil when it has none.
func readMeta(dir string) (*checkpoint.MetaProperties, error) {
	path := filepath.Join(dir, layout.MetaPropertiesFile)
	b, err := safefile.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	m, err := checkpoint.ReadMetaProperties(b, path)
	if err != nil {
		return nil, err
	}
	return &m, nil
}

type logDirSource struct {
	broker Broker
	o      Options
	parts  []*target.Partition
	// refused are the entries of a partition a broker cannot load
	// (target.Set.Refused): damage of the replica, so that its digest
	// carries them.
	refused map[*target.Partition][]layout.Refusal
	next    int // the partition Next reads
	mu      sync.Mutex
	roots   map[string]*roots // under mu: a digest opens partitions on its workers
}

// roots are a log directory's root checkpoints, read once for all its
// partitions.
type roots struct {
	logStart, replication map[PartitionKey]int64
	damage                []Damage
}

func (s *logDirSource) Broker() Broker { return s.broker }
func (s *logDirSource) Close() error   { return nil }

func (s *logDirSource) Next() (*Partition, error) {
	if s.next == len(s.parts) {
		return nil, nil
	}
	s.next++
	rr, err := s.reader(s.next-1, s.o)
	if err != nil {
		return nil, err
	}
	return rr.load()
}

// reader opens the i-th replica, to be read with o.
func (s *logDirSource) reader(i int, o Options) (*replicaReader, error) {
	p := s.parts[i]
	r, err := s.rootsOf(p.LogDir.Path)
	if err != nil {
		return nil, err
	}
	lp, err := layout.ReadPartition(p.Path)
	if err != nil {
		return nil, err
	}
	rr, err := openReplica(lp, r, o)
	if err != nil {
		return nil, err
	}
	for _, f := range s.refused[p] {
		rr.p.Damage = append(rr.p.Damage, Damage{File: f.Path, Pos: -1, Msg: f.Why + " (a broker cannot load the partition)", From: -1, To: -1})
	}
	return rr, nil
}

func (s *logDirSource) rootsOf(dir string) (*roots, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.roots[dir]; r != nil {
		return r, nil
	}
	r := &roots{}
	var err error
	if r.logStart, err = readRoot(dir, layout.LogStartOffsetCheckpointFile, r); err != nil {
		return nil, err
	}
	if r.replication, err = readRoot(dir, layout.ReplicationOffsetCheckpointFile, r); err != nil {
		return nil, err
	}
	s.roots[dir] = r
	return r, nil
}

// readRoot reads a root offset checkpoint into a map; a damaged one is
// damage of every replica of the log directory, which then has no entries.
func readRoot(dir, name string, r *roots) (map[PartitionKey]int64, error) {
	m := map[PartitionKey]int64{}
	err := checkpoint.ScanOffsetsFile(filepath.Join(dir, name), func(e checkpoint.OffsetEntry) error {
		m[PartitionKey{e.Topic, e.Partition}] = e.Offset
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return m, nil
	}
	if ce, ok := logfmt.AsCorrupt(err); ok {
		r.damage = append(r.damage, Damage{File: ce.File, Pos: ce.Pos, Msg: ce.Msg, From: -1, To: -1})
		return map[PartitionKey]int64{}, nil
	}
	return m, err
}

// load reads the whole replica into memory.
func (rr *replicaReader) load() (*Partition, error) {
	p := rr.p
	rr.drop = func() { p.Batches = p.Batches[:len(p.Batches)-1] }
	err := rr.headers(func(b *Batch, _ block) error {
		p.Batches = append(p.Batches, *b)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !p.Hashed {
		return p, nil
	}
	err = rr.records(func(i int, h hashed) error {
		b := &p.Batches[i]
		b.Base, b.Count, b.Flags, b.Records = h.base, h.count, h.flags, h.records
		return nil
	})
	return p, err
}

// replicaReader reads one replica: its files when opened, then its batches
// in one pass of headers and checksums (headers) and, for a compacted
// replica, a second pass of record hashes (records), each handed to the
// caller as it is read so that a digest holds no more than a batch.
type replicaReader struct {
	p       *Partition // without its batches
	segs    []logseg.Segment
	epochs  []checkpoint.EpochEntry
	hw      int64
	hwKnown bool
	o       Options
	n       int   // batches read by headers
	cur     Batch // the batch headers gives out
	// ranged, when set, is given the ranges coded on the workers
	// (rangeDigest), when headers reads with workers.
	ranged func(r *rangeDigest, text []byte) error
	// drop, when set, takes back the batch last given to fn or ranged.
	drop func()
	// left are the batches headers left out, which records leaves out too.
	left map[batchAt]bool
}

// batchAt is where a batch lies: its segment's index and its position.
type batchAt struct {
	seg int
	pos int64
}

func openReplica(lp *layout.Partition, r *roots, o Options) (*replicaReader, error) {
	p := &Partition{Source: lp.Path, Topic: lp.Dir.Topic, Partition: lp.Dir.Partition}
	key := p.Key()
	p.Damage = append(p.Damage, r.damage...)
	if err := p.readMetadata(lp.Path); err != nil {
		return nil, err
	}
	epochs, err := p.readEpochs(lp.Path)
	if err != nil {
		return nil, err
	}
	segs, err := logseg.OpenPartition(lp)
	if err != nil {
		return nil, err
	}
	p.LogStartOffset = r.logStart[key]
	if len(segs) > 0 {
		p.LogStartOffset = max(p.LogStartOffset, segs[0].Base)
		p.LogEndOffset = segs[len(segs)-1].Base
	}
	rr := &replicaReader{p: p, segs: segs, epochs: epochs, o: o}
	rr.hw, rr.hwKnown = r.replication[key]
	return rr, nil
}

// headers reads the batches' headers and checksums, giving each to fn
// (valid during the call) with the block it lies in, and then completes the
// replica: log end offset, high watermark, epochs, and whether its records
// are hashed. With rr.ranged set, the batches of a large segment's ranges
// are coded on the goroutines that read them and given to rr.ranged a range
// at a time instead, the rest to fn.
func (rr *replicaReader) headers(fn func(b *Batch, at block) error) error {
	p := rr.p
	s := scan{last: -1, open: -1, left: -1, epochs: slices.Clone(rr.epochs), kept: kept{before: -1, closed: -1}}
	err := rr.each(true, func(path string, pos int64, msg string) {
		if s.open < 0 {
			p.Damage = append(p.Damage, Damage{File: path, Pos: pos, Msg: msg, From: s.last, To: -1})
			s.open = len(p.Damage) - 1
		}
	}, func(seg int, b *logfmt.Batch) error {
		// One Batch for all, given to fn: none escapes to the heap.
		bt := &rr.cur
		readHeader(bt, b)
		if s.last >= 0 && bt.Base < s.last && !rr.outlier(&s, bt.Base) {
			rr.leave(batchAt{seg, b.Pos}, Damage{From: -1, To: -1,
				Msg: fmt.Sprintf("batch of offsets %d to %d goes back to or before offset %d, already read: left out", bt.Base, bt.Last, s.last-1)})
			if s.open < 0 && s.left < 0 {
				s.left = len(p.Damage) - 1
			}
			return nil
		}
		if bt.Flags&Control != 0 && abortMarker(b) {
			bt.Flags |= AbortMarker
		}
		rr.progress(&s, int64(b.Size()))
		s.kept = kept{base: bt.Base, last: bt.Last, before: rr.before(&s, seg), at: batchAt{seg, b.Pos}, closed: s.open, compacted: s.compacted}
		rr.found(&s, bt.Base, bt.Flags&Cleaned != 0)
		s.last = bt.Last + 1
		s.rise(bt.Epoch, bt.Base)
		rr.n++
		return fn(bt, block{seg, b.Pos >> blockShift})
	}, func(r *rangeDigest, text []byte) error {
		if s.last >= 0 && r.first.Base < s.last {
			return errGoesBack
		}
		rr.progress(&s, r.read)
		s.kept = kept{base: r.last().Base, last: r.last().Last, before: rr.before(&s, r.seg), at: batchAt{r.seg, r.lastPos}, closed: s.open, compacted: s.compacted}
		rr.found(&s, r.first.Base, r.marked)
		if r.n > 1 {
			s.kept.before, s.kept.closed, s.kept.compacted = r.beforeLast().Last+1, -1, s.compacted
		}
		s.compacted = s.compacted || r.cleaned || r.gap
		s.last = r.last().Last + 1
		for _, e := range r.rises {
			s.rise(e.Epoch, e.StartOffset)
		}
		rr.n += r.n
		return rr.ranged(r, text)
	})
	if err != nil {
		return err
	}
	if s.read > 0 && rr.o.Progress != nil {
		rr.o.Progress(s.read)
	}
	p.LogEndOffset = max(p.LogEndOffset, s.last)
	p.HighWatermarkKnown = rr.hwKnown
	p.HighWatermark = min(max(rr.hw, p.LogStartOffset), p.LogEndOffset)
	p.Epochs = loadedEpochs(s.epochs, p.LogStartOffset, p.LogEndOffset)
	p.Compacted = s.compacted
	p.Hashed = rr.o.AllRecords || s.compacted
	return nil
}

// outlier tells whether the last batch kept is the one out of order, and
// then takes it back, as salvage does: it jumped ahead of the batch before
// it, and the batch after it, at base, goes back before its end but not
// before the end of the batch before it. Its base offset, outside its
// checksum, is damaged; leaving out the batches after it instead dropped
// all of them.
func (rr *replicaReader) outlier(s *scan, base int64) bool {
	k := s.kept
	if rr.drop == nil || k.before < 0 || k.base <= k.before || base < k.before {
		return false
	}
	rr.drop()
	rr.n--
	p := rr.p
	if s.open >= 0 && p.Damage[s.open].From == k.last+1 {
		// Damage after it began where it seemed to end.
		p.Damage[s.open].From = k.before
	}
	// Its offsets are unknown: within the damage before or after it, when
	// there is any, else its own; none when the batch after it follows the
	// one before.
	from, to := k.before, base-1
	if k.closed >= 0 || s.open >= 0 || base == k.before {
		from, to = -1, -1
	}
	switch {
	case k.closed >= 0 && s.open < 0:
		// It ended the damage before it: the next batch does.
		p.Damage[k.closed].To, s.open = -1, k.closed
	case k.closed >= 0:
		// The damage before it goes on to the next batch; the damage
		// after it is within that.
		p.Damage[s.open].From = -1
		p.Damage[k.closed].To, s.open = -1, k.closed
	}
	if n := len(s.epochs); n > 0 && s.epochs[n-1].StartOffset == k.base {
		// It began an epoch, at offsets not known: no later than
		// the batch after it.
		s.epochs[n-1].StartOffset = k.before
	}
	rr.leave(k.at, Damage{From: from, To: to,
		Msg: fmt.Sprintf("batch of offsets %d to %d jumps ahead of offset %d: the batch after it starts at offset %d: left out", k.base, k.last, k.before-1, base)})
	if s.open < 0 {
		s.left = len(p.Damage) - 1
	}
	// The gap it left is not a cleaner's.
	s.last, s.compacted, s.kept = k.before, k.compacted, kept{before: -1, closed: -1}
	return true
}

// before is one past the batch before the next of segment seg: the
// segment's base offset before the first batch.
func (rr *replicaReader) before(s *scan, seg int) int64 {
	if s.last < 0 {
		return rr.segs[seg].Base
	}
	return s.last
}

// leave leaves out the batch at at, damage d of the replica.
func (rr *replicaReader) leave(at batchAt, d Damage) {
	if rr.left == nil {
		rr.left = map[batchAt]bool{}
	}
	rr.left[at] = true
	d.File, d.Pos = rr.segs[at.seg].Log, at.pos
	rr.p.Damage = append(rr.p.Damage, d)
}

// kept is the last batch headers kept, one past the batch before it, the
// damage it ended (-1 for none), and whether the batches before it showed a
// cleaner.
type kept struct {
	base, last, before int64
	at                 batchAt
	closed             int
	compacted          bool
}

// scan is what headers has learnt from the batches read so far.
type scan struct {
	kept      kept
	last      int64 // one past the last batch
	compacted bool
	open      int // the damage whose end is the next good batch, in whichever segment
	left      int // the first batch left out since, whose offsets are those missing before the next
	epochs    []checkpoint.EpochEntry
	read      int64 // bytes not yet told to Progress
}

// progress tells Progress of n bytes read, a MiB at a time: a call a batch
// was a cost of its own.
func (rr *replicaReader) progress(s *scan, n int64) {
	if s.read += n; s.read >= 1<<20 && rr.o.Progress != nil {
		rr.o.Progress(s.read)
		s.read = 0
	}
}

// found notes the next good batches, from base: they end the damage before
// them, and a cleaned batch, or offsets missing between two batches, which
// only removed batches leave, says that a cleaner has been over the log.
func (rr *replicaReader) found(s *scan, base int64, cleaned bool) {
	p := rr.p
	switch {
	case s.open >= 0:
		// The offsets missing are the damage's, not a cleaner's.
		p.Damage[s.open].To = base - 1
		s.open = -1
	case rr.n > 0 && base > s.last && s.left >= 0:
		// Or those of the batches left out.
		p.Damage[s.left].From, p.Damage[s.left].To = s.last, base-1
	case rr.n > 0 && base > s.last:
		cleaned = true
	}
	s.left = -1
	if cleaned {
		s.compacted = true
	}
}

// rise notes a batch's epoch when it is above the latest of the epochs: the
// checkpoint was not flushed (recoverEpoch).
func (s *scan) rise(epoch int32, base int64) {
	if n := len(s.epochs); n > 0 && epoch > s.epochs[n-1].Epoch {
		s.epochs = recoverEpoch(s.epochs, epoch, base)
	}
}

// hashed is what the second pass learns of a batch.
type hashed struct {
	base    int64 // a legacy wrapper's is only known from its records
	count   int32
	flags   Flags
	records []Record
}

// records reads every batch again, in the same order, giving fn the i-th
// batch's record hashes; a batch whose records cannot be read is damage.
func (rr *replicaReader) records(fn func(i int, h hashed) error) error {
	p := rr.p
	var it logfmt.RecordIter
	it.MaxRecordBytes = rr.o.MaxRecordBytes
	i := 0
	return rr.each(false, nil, func(seg int, b *logfmt.Batch) error {
		if rr.left[batchAt{seg, b.Pos}] {
			return nil
		}
		var bt Batch
		readHeader(&bt, b)
		if i == rr.n {
			return fmt.Errorf("%s: more batches than on the first reading: the partition changed while it was read", p.Source)
		}
		h := hashed{base: bt.Base, count: bt.Count, flags: bt.Flags, records: []Record{}}
		if bt.Flags&Control != 0 && abortMarker(b) {
			h.flags |= AbortMarker
		}
		it.File = rr.segs[seg].Log
		err := it.Reset(b)
		for err == nil && it.Next() {
			h.records = append(h.records, hashRecord(it.Record()))
		}
		if err == nil {
			err = it.Err()
		}
		if err != nil {
			ce, ok := logfmt.AsCorrupt(err)
			if !ok {
				return err
			}
			p.Damage = append(p.Damage, Damage{File: ce.File, Pos: ce.Pos, Msg: ce.Msg, From: bt.Base, To: bt.Last})
			h.records = []Record{}
		} else if bt.Flags&Legacy != 0 && len(h.records) > 0 {
			h.base, h.count = h.records[0].Offset, int32(len(h.records))
			// A compressed wrapper the cleaner rebuilt keeps the
			// holes of the records it dropped.
			if int64(h.count) != bt.Last-h.base+1 {
				h.flags |= Cleaned
			}
		}
		err = fn(i, h)
		i++
		return err
	}, nil)
}

// each reads the valid batches of every segment in order, giving fn each
// with its segment's index in rr.segs: with headers and workers, header
// views (control batches whole) read in ranges on the workers, which frame
// and checksum them, else whole batches; with rr.ranged set too, ranges
// coded on the workers go to ranged instead. Damage is given to damaged
// (when not nil) and passed over as far as the next entry that frames and
// checksums (the segment reader's Resync, as salvage and dump use it); what
// lies between is unknown, not missing. A torn or zero-filled end is what
// Kafka's recovery cuts away: nothing a replica holds.
func (rr *replicaReader) each(headers bool, damaged func(path string, pos int64, msg string), fn func(seg int, b *logfmt.Batch) error, ranged func(r *rangeDigest, text []byte) error) error {
	for i, seg := range rr.segs {
		if seg.Log == "" {
			continue
		}
		src, err := rr.open(seg.Segment, i, headers)
		if err != nil {
			return err
		}
		if h, ok := src.(headerFile); ok && h.Render != nil {
			err = eachRange(h.HeaderReader, ranged)
		}
		if err == nil {
			err = eachIn(src, seg.Log, damaged, func(b *logfmt.Batch) error { return fn(i, b) })
		}
		src.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// errGoesBack is ranged's answer to a range whose first batch goes back to
// or before an offset already read: the range is read again one batch at a
// time, which leaves that batch out.
var errGoesBack = errors.New("a range's first batch goes back")

// eachRange gives ranged the ranges h coded, until one was not coded whole
// or goes back.
func eachRange(h *logfmt.HeaderReader, ranged func(r *rangeDigest, text []byte) error) error {
	for {
		text, rend, release, ok := h.Rendered()
		if !ok {
			return nil
		}
		r := rend.(*rangeDigest)
		err := ranged(r, text)
		release()
		if err == errGoesBack {
			h.SeekTo(r.firstPos)
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// batchSource is what each reads a segment's batches from.
type batchSource interface {
	Next() bool
	Batch() *logfmt.Batch
	Pos() int64
	Err() error
	SeekTo(pos int64)
	Resync() bool
	Close()
}

// headerFile is a HeaderReader over the file it closes.
type headerFile struct {
	*logfmt.HeaderReader
	f *os.File
}

func (h headerFile) Close() {
	h.HeaderReader.Close()
	h.f.Close()
}

type segmentFile struct{ *logfmt.SegmentFile }

func (s segmentFile) Close() { s.SegmentFile.Close() }

func (rr *replicaReader) open(seg layout.Segment, i int, headers bool) (batchSource, error) {
	if !headers || rr.o.Workers < 2 {
		// One goroutine framing and checksumming, and one reading ahead.
		src, err := logfmt.OpenSegment(seg.Log, logfmt.ReadAheadWindows)
		if err != nil {
			return nil, err
		}
		return segmentFile{src}, nil
	}
	f, size, err := safefile.OpenSized(seg.Log)
	if err != nil {
		return nil, err
	}
	// Cut where the .index says batches start, as reindex --check and a
	// shallow dump read: the CRC-32C alone costs about what reading does,
	// so one goroutine cannot keep up with the disk's cache.
	h := logfmt.NewHeaderReader(f, size, seg.Log, 0, logseg.IndexPositions(seg), rr.o.Workers)
	// A control batch's records say whether it aborts.
	h.Keep = (*logfmt.Batch).IsControl
	if rr.ranged != nil {
		h.Render = func() logfmt.Renderer { return &rangeDigest{seg: i} }
		// About 10 bytes a batch: a range of 2 MiB in 1 KB batches
		// codes into 20 KB.
		h.TextBytes = 64 << 10
	}
	return headerFile{h, f}, nil
}

func eachIn(src batchSource, path string, damaged func(path string, pos int64, msg string), fn func(b *logfmt.Batch) error) error {
	resync := func(pos int64, err error) (bool, error) {
		ce, ok := logfmt.AsCorrupt(err)
		if !ok {
			return false, err
		}
		if damaged != nil {
			damaged(path, pos, ce.Msg)
		}
		src.SeekTo(pos)
		return src.Resync(), nil
	}
	for {
		if !src.Next() {
			if src.Err() == nil {
				return nil
			}
			more, err := resync(src.Pos(), src.Err())
			if !more {
				return err
			}
			continue
		}
		b := src.Batch()
		if err := b.Validate(); err != nil {
			more, err := resync(b.Pos, err)
			if !more {
				return err
			}
			continue
		}
		if err := fn(b); err != nil {
			return err
		}
	}
}

// recoverEpoch adds to a leader-epoch-checkpoint a batch's epoch above its
// latest: the checkpoint was not flushed before the broker stopped, and the
// recovery of its next start assigns the epochs of the batches it replays
// (LogSegment.recover, then LeaderEpochFileCache.assign, which drops entries
// starting at or past the new one). A missing checkpoint stays empty, as a
// broker that stopped cleanly without one loads it.
func recoverEpoch(es []checkpoint.EpochEntry, epoch int32, start int64) []checkpoint.EpochEntry {
	for len(es) > 0 && es[len(es)-1].StartOffset >= start {
		es = es[:len(es)-1]
	}
	return append(es, checkpoint.EpochEntry{Epoch: epoch, StartOffset: start})
}

// loadedEpochs is the epoch cache LogLoader leaves: entries at or past the
// log end offset removed (truncateFromEnd), those wholly before the log start
// offset folded into one starting there (truncateFromStart).
func loadedEpochs(es []checkpoint.EpochEntry, start, end int64) []checkpoint.EpochEntry {
	var out []checkpoint.EpochEntry
	for _, e := range es {
		if e.StartOffset >= end {
			break
		}
		if e.StartOffset <= start && len(out) > 0 {
			out = out[:0]
		}
		if e.StartOffset <= start {
			e.StartOffset = start
		}
		out = append(out, e)
	}
	return out
}

func (p *Partition) corrupt(err error, from int64) bool {
	ce, ok := logfmt.AsCorrupt(err)
	if ok {
		p.Damage = append(p.Damage, Damage{File: ce.File, Pos: ce.Pos, Msg: ce.Msg, From: from, To: -1})
	}
	return ok
}

func (p *Partition) readMetadata(dir string) error {
	m, err := checkpoint.ReadPartitionMetadataIn(dir)
	if err != nil {
		if p.corrupt(err, -1) {
			return nil
		}
		return err
	}
	if m != nil {
		p.TopicID, p.HasTopicID = m.TopicID, true
	}
	return nil
}

func (p *Partition) readEpochs(dir string) ([]checkpoint.EpochEntry, error) {
	path := filepath.Join(dir, layout.LeaderEpochCheckpointFile)
	b, err := safefile.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	es, err := checkpoint.ReadLeaderEpochs(bytes.NewReader(b), path)
	if err != nil && p.corrupt(err, -1) {
		return nil, nil
	}
	return es, err
}

// readHeader sets bt to the Batch of a valid entry, from its header alone,
// in place: a batch's fields are set a million times a second.
func readHeader(bt *Batch, b *logfmt.Batch) {
	bt.Last, bt.CRC, bt.Size, bt.MaxTimestamp = b.LastOffset(), b.StoredCRC(), int32(b.Size()), b.MaxTimestamp()
	bt.Epoch, bt.ProducerID, bt.BaseSequence, bt.Flags, bt.Records = logfmt.NoLeaderEpoch, logfmt.NoProducerID, logfmt.NoSequence, 0, nil
	if b.Magic() < 2 {
		// A legacy wrapper's base offset is only known inside it; its
		// last offset is the wrapper's, which is what offsets order by.
		bt.Base, bt.Count, bt.Flags = bt.Last, 1, Legacy
		return
	}
	h := b.Header()
	bt.Base, bt.Epoch, bt.Count = h.BaseOffset(), h.PartitionLeaderEpoch(), h.RecordCount()
	bt.ProducerID, bt.BaseSequence = h.ProducerID(), h.BaseSequence()
	if cleaned(h.RecordCount(), h.LastOffsetDelta(), h.HasDeleteHorizon()) {
		bt.Flags |= Cleaned
	}
	if h.IsTransactional() {
		bt.Flags |= Transactional
	}
	if h.IsControl() {
		bt.Flags |= Control
	}
}

// abortMarker tells whether a control batch holds an ABORT marker, which says
// that the cleaner may drop the transaction's batches.
func abortMarker(b *logfmt.Batch) bool {
	var it logfmt.RecordIter
	if it.Reset(b) != nil || !it.Next() {
		return false
	}
	_, t, err := logfmt.ParseControlKey(it.Record().Key)
	return err == nil && t == logfmt.ControlAbort
}

// nullKey is the key hash of a record without a key.
var nullKey = hashRecord(&logfmt.Record{}).Key

// hashRecord hashes a record: its key alone, and its key, value and headers
// with their lengths (null apart from empty), so that no two different
// records are framed alike.
func hashRecord(r *logfmt.Record) Record {
	h := fnv.New64a()
	field := func(b []byte) {
		var n [9]byte
		if b == nil {
			n[0] = 1
		} else {
			binary.BigEndian.PutUint64(n[1:], uint64(len(b)))
		}
		h.Write(n[:])
		h.Write(b)
	}
	field(r.Key)
	key := h.Sum64()
	field(r.Value)
	for _, hd := range r.Headers {
		field(hd.Key)
		field(hd.Value)
	}
	return Record{Offset: r.Offset, Key: key, Sum: h.Sum64(), Tombstone: r.Value == nil}
}
