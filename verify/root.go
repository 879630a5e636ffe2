package verify

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/logtool/logtool/internal/extsort"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/checkpoint"
	"github.com/logtool/logtool/logfmt/layout"
)

// runRoot verifies the root files of a log directory, judging the offset
// checkpoints against the partitions verified before it. The first root
// unit of a run also reports metadata that could not be replayed.
func (u *unit) runRoot(p *Plan, o *Options, facts map[string]*partitionFacts, first bool) *Report {
	rep := &Report{Path: u.path, Kind: RootUnit}
	c := newCollector(rep, o)
	defer c.sort()
	defer c.flush()
	if first {
		p.md.report(c, u.path)
	}
	s := offsetsScope{parts: map[tp]*partitionFacts{}, only: u.scope, whole: u.whole}
	// A running broker rewrites the checkpoints as it goes; the marker is
	// about its last shutdown, not about now.
	if _, err := os.Stat(filepath.Join(u.path, layout.CleanShutdownFile)); err == nil && !u.live {
		s.cleanShutdown = true
	}
	if u.whole {
		s.present = map[tp]bool{}
		for _, pu := range p.units {
			if pu.kind != PartitionUnit || pu.logDir != u.path {
				continue
			}
			if pd, err := layout.ParsePartitionDir(filepath.Base(pu.path)); err == nil && pd.Kind == layout.Normal {
				s.present[tp{pd.Topic, pd.Partition}] = true
			}
			if f := facts[pu.path]; f != nil {
				s.parts[tp{f.topic, f.partition}] = f
			}
		}
		if err := u.rootFiles(c, o, rep); err != nil {
			rep.Err = err
			return rep
		}
	} else {
		for t, path := range u.scope {
			if f := facts[path]; f != nil {
				s.parts[t] = f
			}
		}
	}
	for _, name := range []string{layout.RecoveryPointCheckpointFile, layout.ReplicationOffsetCheckpointFile, layout.LogStartOffsetCheckpointFile, layout.CleanerOffsetCheckpointFile} {
		if err := checkOffsets(c, filepath.Join(u.path, name), s); err != nil {
			rep.Err = err
			return rep
		}
	}
	return rep
}

// rootFiles checks what a log directory holds besides partitions and the
// offset checkpoints.
func (u *unit) rootFiles(c *collector, o *Options, rep *Report) error {
	entries, err := os.ReadDir(u.path)
	if err != nil {
		return err
	}
	var meta, clean bool
	for _, e := range entries {
		path := filepath.Join(u.path, e.Name())
		fi, err := os.Lstat(path)
		if err != nil || !fi.Mode().IsRegular() && !fi.IsDir() {
			reportIrregular(c, path)
			continue
		}
		if fi.IsDir() {
			if _, err := layout.ParsePartitionDir(e.Name()); err != nil {
				c.problem(CodeNotPartitionDir, path, -1, "not a partition directory (%v): a broker fails to load a log directory holding it", err)
			}
			continue
		}
		switch layout.ParseFileName(e.Name()).Kind {
		case layout.MetaProperties:
			meta = true
			err = checkMetaProperties(c, path)
		case layout.CleanShutdown:
			clean = true
			err = checkCleanShutdown(c, path)
		case layout.RecoveryPointCheckpoint, layout.ReplicationOffsetCheckpoint, layout.LogStartOffsetCheckpoint,
			layout.CleanerOffsetCheckpoint, layout.Lock:
			// The checkpoints are judged against the partitions below.
		case layout.BootstrapCheckpoint:
			var res logResult
			res, err = recordSet(c, o, o.recordIter(), nil, path, noOffset)
			rep.Batches += res.batches
			rep.Records += res.records
			rep.Bytes += res.size
		case layout.Temp:
			c.info(CodeTempFile, path, -1, "temporary file of a checkpoint write that did not finish: the next write replaces it")
		default:
			c.info(CodeUnknownFile, path, -1, "not a file Kafka keeps at the root of a log directory: a broker ignores it")
		}
		if err != nil {
			return err
		}
	}
	if !meta {
		c.info(CodeNoMetaProperties, u.path, -1, "no meta.properties: a ZooKeeper-mode broker writes one when it starts, a KRaft broker refuses to start without one")
	}
	if !clean {
		c.info(CodeNoCleanShutdown, u.path, -1, "no .kafka_cleanshutdown: the broker did not shut down cleanly or is running, so its next start recovers every partition's segments past the recovery point")
	}
	return nil
}

// offsetsScope says what an offset checkpoint is judged against.
type offsetsScope struct {
	parts map[tp]*partitionFacts // the partitions verified whole
	// only, when not nil, limits the check to the entries of these
	// partitions: partition directories given without their log directory.
	only map[tp]string
	// whole is true when the whole log directory is verified: then entries
	// for partitions it does not hold, and partitions without an entry, are
	// reported. present lists the partitions it holds.
	whole   bool
	present map[tp]bool
	// cleanShutdown is true when the log directory holds the clean shutdown
	// marker and no broker runs on it.
	cleanShutdown bool
}

// checkpointRule is what an offset checkpoint holds and how it must relate
// to the log.
type checkpointRule struct {
	what string
	// below and beyond explain an offset below the log start and beyond the
	// log end; below is "" when that is no problem.
	below, beyond string
	// missing explains a partition without an entry; "" when the file lists
	// only some partitions by design.
	missing string
	// clean, when not "", says why the offset equals the log end after a
	// clean shutdown.
	clean string
}

var checkpointRules = map[string]checkpointRule{
	layout.RecoveryPointCheckpointFile: {what: "recovery point",
		below:   "Kafka raises it to the log start when it deletes records",
		beyond:  "records the broker had flushed are gone",
		missing: "a broker takes 0 and, after an unclean shutdown, recovers all their segments",
		clean:   "the log directory holds .kafka_cleanshutdown, and a clean shutdown flushes every log and records its log end offset here, so records were added or lost since, or the file is damaged"},
	layout.ReplicationOffsetCheckpointFile: {what: "high watermark",
		below:   "Kafka never moves the log start past the high watermark",
		beyond:  "records the cluster had replicated are gone",
		missing: "a broker starts them with a high watermark of 0"},
	layout.LogStartOffsetCheckpointFile: {what: "log start offset",
		// LogLoader.deleteSegmentsIfLogStartGreaterThanLogEnd
		beyond: "records up to it are gone, and a broker deletes every segment of the partition when it loads it and starts it empty at that offset"},
	layout.CleanerOffsetCheckpointFile: {what: "cleaner offset",
		below:  "the cleaner resets it to the log start and cleans the whole log again",
		beyond: "the cleaner resets it to the log start and cleans the whole log again"},
}

// checkOffsets checks a root offset checkpoint: that it parses, names every
// partition once, and, for the partitions in s.parts, holds an offset within
// their log. An absent file is no problem: a broker creates it empty.
//
// A checkpoint may hold millions of lines. It is streamed: memory holds 12
// bytes per entry to find the partitions listed twice, the names of its
// topics, and the first maxListed problems; messages are made for those
// only.
func checkOffsets(c *collector, path string, s offsetsScope) error {
	fi, err := os.Lstat(path)
	if isNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return nil // rootFiles reports it
	}
	if fi.Size() > maxCheckpoint {
		c.problem(CodeTooLarge, path, maxCheckpoint, "%d bytes, more entries than any broker holds (about %d partitions fit the %d bytes read here): not read", fi.Size(), maxCheckpoint/40, maxCheckpoint)
		return nil
	}
	rule := checkpointRules[filepath.Base(path)]
	var (
		bads      = badEntries{limit: c.limit()}
		idx       = extsort.New(entrySortMemory)
		key       []byte
		listed    = map[tp]bool{} // the partitions of s.parts with an entry
		unknown   int
		unknownAt = -1
	)
	defer idx.Close()
	err = checkpoint.ScanOffsetsFile(path, func(e checkpoint.OffsetEntry) error {
		t := tp{e.Topic, e.Partition}
		if _, ok := s.only[t]; s.only != nil && !ok {
			return nil
		}
		key = appendEntryKey(key[:0], e)
		if err := idx.Add(key); err != nil {
			return err
		}
		f := s.parts[t]
		if f != nil {
			listed[t] = true
		}
		if layout.ValidateTopic(e.Topic) != nil {
			bads.add(e, badTopic, rule, s)
			return nil
		}
		if f == nil {
			if s.whole && !s.present[t] {
				if unknown++; unknownAt < 0 {
					unknownAt = e.Line
				}
			}
			return nil
		}
		if !f.complete || !f.hasLog {
			return nil
		}
		switch {
		case e.Offset > f.logEnd:
			bads.add(e, beyondEnd, rule, s)
		case rule.below != "" && e.Offset < f.logStart:
			bads.add(e, belowStart, rule, s)
		case rule.clean != "" && s.cleanShutdown && e.Offset != f.logEnd:
			bads.add(e, notEnd, rule, s)
		}
		return nil
	})
	if err != nil {
		return corruptFinding(c, CodeUnreadable, err, path)
	}
	err = repeatedEntries(idx, func(line, first int) {
		bads.keep(badEntry{line: line, why: repeated, msg: fmt.Sprintf("the partition appears again (first on line %d): Kafka writes each partition once, and a broker reading it keeps the last", first)})
	})
	if err != nil {
		return err
	}
	first := bads.first()
	lines := []int{}
	for _, b := range first {
		lines = append(lines, b.line)
	}
	if unknown > 0 {
		lines = append(lines, unknownAt)
	}
	pos := linePositions(path, lines)
	for _, b := range first {
		c.problem(b.why.code(), path, pos[b.line], "line %d: %s", b.line, b.msg)
	}
	if n := bads.n - len(first); n > 0 {
		c.more(path, n)
	}
	if unknown > 0 {
		c.info(CodeCheckpointUnknown, path, pos[unknownAt], "%d entries name partitions this log directory does not hold (the first on line %d): a broker ignores them", unknown, unknownAt)
	}
	if rule.missing != "" {
		missingEntries(c, path, rule, s, listed)
	}
	return nil
}

// maxCheckpoint bounds the size of an offset checkpoint read. A line is
// about 40 bytes, so it allows some 400 000 partitions in one log
// directory, far more than a broker serves.
const maxCheckpoint = 16 << 20

// badEntry is an entry of an offset checkpoint with a problem.
type badEntry struct {
	line int
	why  badWhy
	msg  string
}

type badWhy uint8

const (
	badTopic badWhy = iota
	beyondEnd
	belowStart
	notEnd
	repeated
)

func (w badWhy) code() Code {
	return [...]Code{CodeCheckpointTopic, CodeCheckpointPastEnd, CodeCheckpointBelow, CodeCheckpointNotEnd, CodeCheckpointRepeated}[w]
}

// badEntries counts the problems of a checkpoint and keeps the first limit
// by line, the ones listed.
type badEntries struct {
	n     int
	limit int
	kept  []badEntry
}

// add records a problem with e found while reading the file, in line order.
func (bs *badEntries) add(e checkpoint.OffsetEntry, why badWhy, rule checkpointRule, s offsetsScope) {
	if bs.n >= bs.limit {
		bs.n++ // a later line than all those kept
		return
	}
	bs.keep(badEntry{line: e.Line, why: why, msg: message(e, why, rule, s)})
}

// keep records a problem in any line order.
func (bs *badEntries) keep(b badEntry) {
	bs.n++
	bs.kept = append(bs.kept, b)
	if len(bs.kept)/2 >= bs.limit {
		bs.kept = bs.first()
	}
}

// first returns the first limit problems by line; on one line, the one
// found reading the file before the repetition.
func (bs *badEntries) first() []badEntry {
	slices.SortFunc(bs.kept, func(a, b badEntry) int { return cmp.Or(cmp.Compare(a.line, b.line), cmp.Compare(a.why, b.why)) })
	return bs.kept[:min(len(bs.kept), bs.limit)]
}

func message(e checkpoint.OffsetEntry, why badWhy, rule checkpointRule, s offsetsScope) string {
	t := tp{e.Topic, e.Partition}
	f := s.parts[t]
	switch why {
	case badTopic:
		return fmt.Sprintf("%v: Kafka never writes such an entry", layout.ValidateTopic(e.Topic))
	case beyondEnd:
		return fmt.Sprintf("%s %d of partition %s is beyond its log end offset %d: %s", rule.what, e.Offset, t, f.logEnd, rule.beyond)
	case belowStart:
		return fmt.Sprintf("%s %d of partition %s is below its log start offset %d: %s", rule.what, e.Offset, t, f.logStart, rule.below)
	}
	return fmt.Sprintf("%s %d of partition %s is not its log end offset %d: %s", rule.what, e.Offset, t, f.logEnd, rule.clean)
}

// The partitions a checkpoint lists more than once are found by sorting
// its entries on disk (internal/extsort): memory stays at entrySortMemory
// whatever the number of entries and topics.
const entrySortMemory = 4 << 20

// appendEntryKey appends e's key for repeatedEntries: topic, a byte that
// ends it, partition, line, so that the bytes sort entries by partition and
// then line. A topic holding that byte, which Kafka never writes, has its
// bytes escaped.
func appendEntryKey(dst []byte, e checkpoint.OffsetEntry) []byte {
	for i := 0; i < len(e.Topic); i++ {
		if c := e.Topic[i]; c <= 1 {
			dst = append(dst, 1)
		}
		dst = append(dst, e.Topic[i])
	}
	dst = append(dst, 0)
	dst = binary.BigEndian.AppendUint32(dst, uint32(e.Partition))
	return binary.BigEndian.AppendUint32(dst, uint32(e.Line))
}

// repeatedEntries sorts the keys of idx and calls fn for every entry of a
// partition listed on an earlier line too, with the line of the entry
// before it.
func repeatedEntries(idx *extsort.Sorter, fn func(line, before int)) error {
	it, err := idx.Sort()
	if err != nil {
		return err
	}
	var prev []byte
	for it.Next() {
		k := it.Record()
		if len(prev) == len(k) && bytes.Equal(prev[:len(prev)-4], k[:len(k)-4]) {
			fn(int(binary.BigEndian.Uint32(k[len(k)-4:])), int(binary.BigEndian.Uint32(prev[len(prev)-4:])))
		}
		prev = append(prev[:0], k...)
	}
	return it.Close()
}

// missingEntries reports the partitions verified whole that a checkpoint
// has no entry for. After a clean shutdown the recovery point checkpoint
// names every log the broker had, so a missing entry is a problem there.
func missingEntries(c *collector, path string, rule checkpointRule, s offsetsScope, listed map[tp]bool) {
	var missing []tp
	for t, f := range s.parts {
		// KRaft's metadata log keeps its own state, not these files.
		if !listed[t] && f.hasLog && t.topic != layout.MetadataTopic {
			missing = append(missing, t)
		}
	}
	if len(missing) == 0 {
		return
	}
	slices.SortFunc(missing, func(a, b tp) int { return cmp.Or(cmp.Compare(a.topic, b.topic), cmp.Compare(a.partition, b.partition)) })
	if rule.clean != "" && s.cleanShutdown {
		for _, t := range missing {
			c.problem(CodeCheckpointMissing, path, -1, "no entry for partition %s: %s", t, rule.clean)
		}
		return
	}
	c.info(CodeCheckpointMissing, path, -1, "%d partitions have no entry (the first, %s): %s", len(missing), missing[0], rule.missing)
}

// runFile verifies a file given on its own: what its name says it is, or a
// record set when its name says nothing.
func (u *unit) runFile(_ *Plan, o *Options, mem *logfmt.Job) *Report {
	rep := &Report{Path: u.path, Kind: FileUnit}
	c := newCollector(rep, o)
	defer c.flush()
	logFile := func(base int64) error {
		res, err := recordSet(c, o, o.recordIter(), mem, u.path, base)
		rep.Batches += res.batches
		rep.Records += res.records
		rep.Bytes += res.size
		return err
	}
	fn := layout.ParseFileName(filepath.Base(u.path))
	var err error
	switch {
	case fn.Leftover != "":
		c.problem(CodeLeftover, u.path, 0, "leftover of an interrupted cleaning, segment split or deletion (%s): the broker completes or removes it when it next loads the partition", fn.Leftover)
		if fn.Kind == layout.Log {
			err = logFile(fn.Base)
		}
	case fn.Kind == layout.Snapshot:
		err = checkSnapshot(c, u.path, noOffset)
	case fn.Kind == layout.LeaderEpochCheckpoint:
		_, _, err = readEpochs(c, u.path)
	case fn.Kind == layout.PartitionMetadata:
		err = checkPartitionMetadata(c, u.path)
	case fn.Kind == layout.CleanerCheckpoint:
		err = checkCleaner(c, u.path, 0, noOffset)
	case fn.Kind == layout.QuorumState:
		err = checkQuorumState(c, u.path)
	case fn.Kind == layout.MetaProperties:
		err = checkMetaProperties(c, u.path)
	case fn.Kind >= layout.RecoveryPointCheckpoint && fn.Kind <= layout.CleanerOffsetCheckpoint:
		err = checkOffsets(c, u.path, offsetsScope{})
	case fn.Kind == layout.CleanShutdown:
		err = checkCleanShutdown(c, u.path)
	case fn.Kind == layout.Lock:
		c.info(CodeMarkerFile, u.path, -1, "a marker file: nothing to verify")
	case fn.Kind == layout.Temp:
		c.info(CodeTempFile, u.path, -1, "temporary file of a write that did not finish: the next write of the same file replaces it")
	default:
		// A record set, a KRaft snapshot or bootstrap.checkpoint: laid out
		// like a segment.
		err = logFile(noOffset)
	}
	rep.Err = err
	return rep
}
