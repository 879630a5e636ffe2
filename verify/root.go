package verify

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/checkpoint"
	"github.com/logtool/logtool/logfmt/layout"
)

// runRoot verifies the root files of a log directory, judging the offset
// checkpoints against the partitions verified before it.
func (u *unit) runRoot(p *Plan, o *Options, facts map[string]*partitionFacts) *Report {
	rep := &Report{Path: u.path, Kind: RootUnit}
	c := newCollector(rep)
	defer c.sort()
	defer c.flush()
	s := offsetsScope{parts: map[tp]*partitionFacts{}, only: u.scope, whole: u.whole}
	// A running broker rewrites the checkpoints as it goes; the marker is
	// about its last shutdown, not about now.
	if _, err := os.Stat(filepath.Join(u.path, layout.CleanShutdownFile)); err == nil && !p.live(u) {
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
	for _, name := range []string{checkpoint.RecoveryPoint, checkpoint.Replication, checkpoint.LogStart, checkpoint.CleanerOffset} {
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
		fi, err := os.Stat(path)
		if err != nil {
			return err
		}
		if fi.IsDir() {
			if _, err := layout.ParsePartitionDir(e.Name()); err != nil {
				c.problem(path, -1, "not a partition directory (%v): a broker fails to load a log directory holding it", err)
			}
			continue
		}
		switch layout.ParseFileName(e.Name()).Kind {
		case layout.MetaProperties:
			meta = true
			err = checkMetaProperties(c, path)
		case layout.CleanShutdown:
			clean = true
		case layout.RecoveryPointCheckpoint, layout.ReplicationOffsetCheckpoint, layout.LogStartOffsetCheckpoint,
			layout.CleanerOffsetCheckpoint, layout.Lock:
			// The checkpoints are judged against the partitions below.
		case layout.BootstrapCheckpoint:
			var res logResult
			res, err = recordSet(c, o, &logfmt.RecordIter{}, path, noOffset)
			rep.Batches += res.batches
			rep.Records += res.records
			rep.Bytes += res.size
		case layout.Temp:
			c.info(path, -1, "temporary file of a checkpoint write that did not finish: the next write replaces it")
		default:
			c.info(path, -1, "not a file Kafka keeps at the root of a log directory: a broker ignores it")
		}
		if err != nil {
			return err
		}
	}
	if !meta {
		c.info(u.path, -1, "no meta.properties: a ZooKeeper-mode broker writes one when it starts, a KRaft broker refuses to start without one")
	}
	if !clean {
		c.info(u.path, -1, "no .kafka_cleanshutdown: the broker did not shut down cleanly or is running, so its next start recovers every partition's segments past the recovery point")
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
	checkpoint.RecoveryPoint: {what: "recovery point",
		below:   "Kafka raises it to the log start when it deletes records",
		beyond:  "records the broker had flushed are gone",
		missing: "a broker takes 0 and, after an unclean shutdown, recovers all their segments",
		clean:   "the log directory holds .kafka_cleanshutdown, and a clean shutdown flushes every log and records its log end offset here, so records were added or lost since, or the file is damaged"},
	checkpoint.Replication: {what: "high watermark",
		below:   "Kafka never moves the log start past the high watermark",
		beyond:  "records the cluster had replicated are gone",
		missing: "a broker starts them with a high watermark of 0"},
	checkpoint.LogStart: {what: "log start offset",
		beyond: "the records up to it are gone"},
	checkpoint.CleanerOffset: {what: "cleaner offset",
		below:  "the cleaner resets it to the log start and cleans the whole log again",
		beyond: "the cleaner resets it to the log start and cleans the whole log again"},
}

// checkOffsets checks a root offset checkpoint: that it parses, names every
// partition once, and, for the partitions in s.parts, holds an offset within
// their log. An absent file is no problem: a broker creates it empty.
//
// A checkpoint may hold millions of lines; beyond its entries, memory holds
// only what is wrong with them, and messages are made only for the problems
// listed.
func checkOffsets(c *collector, path string, s offsetsScope) error {
	fi, err := os.Stat(path)
	if isNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Size() > maxCheckpoint {
		c.problem(path, maxCheckpoint, "%d bytes, more entries than any broker holds (about %d partitions fit the %d bytes read here): not read", fi.Size(), maxCheckpoint/40, maxCheckpoint)
		return nil
	}
	entries, err := checkpoint.ReadOffsetsFile(path)
	if err != nil {
		return corruptFinding(c, err, path)
	}
	rule := checkpointRules[filepath.Base(path)]
	var bads []badEntry
	unknown, unknownAt := 0, -1
	n := 0
	for i, e := range entries {
		t := tp{e.Topic, e.Partition}
		if _, ok := s.only[t]; s.only != nil && !ok {
			continue
		}
		entries[n] = e
		n++
		if layout.ValidateTopic(e.Topic) != nil {
			bads = append(bads, badEntry{line: e.Line, entry: i, why: badTopic})
			continue
		}
		f := s.parts[t]
		if f == nil {
			if s.whole && !s.present[t] {
				if unknown++; unknownAt < 0 {
					unknownAt = e.Line
				}
			}
			continue
		}
		if !f.complete || !f.hasLog {
			continue
		}
		switch {
		case e.Offset > f.logEnd:
			bads = append(bads, badEntry{line: e.Line, entry: i, why: beyondEnd})
		case rule.below != "" && e.Offset < f.logStart:
			bads = append(bads, badEntry{line: e.Line, entry: i, why: belowStart})
		case rule.clean != "" && s.cleanShutdown && e.Offset != f.logEnd:
			bads = append(bads, badEntry{line: e.Line, entry: i, why: notEnd})
		}
	}
	// What is reported refers to entries by line; from here on the entries
	// are in partition order, to find the repeated and the missing.
	msgs := make(map[int]string, len(bads))
	for _, b := range bads {
		if len(msgs) < maxListed {
			msgs[b.line] = b.message(entries[b.entry], rule, s)
		}
	}
	entries = entries[:n]
	slices.SortFunc(entries, func(a, b checkpoint.OffsetEntry) int {
		return cmp.Or(strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition), cmp.Compare(a.Line, b.Line))
	})
	for i := 1; i < len(entries); i++ {
		if a, b := entries[i-1], entries[i]; a.Topic == b.Topic && a.Partition == b.Partition {
			bads = append(bads, badEntry{line: b.Line, entry: a.Line, why: repeated})
		}
	}
	slices.SortFunc(bads, func(a, b badEntry) int { return cmp.Compare(a.line, b.line) })
	lines := []int{}
	for i, b := range bads {
		if i < maxListed {
			lines = append(lines, b.line)
		}
	}
	if unknown > 0 {
		lines = append(lines, unknownAt)
	}
	pos := linePositions(path, lines)
	for i, b := range bads {
		at := int64(-1)
		if i < maxListed {
			at = pos[b.line]
		}
		msg, ok := msgs[b.line]
		if b.why == repeated {
			msg, ok = fmt.Sprintf("the partition appears again (first on line %d): Kafka writes each partition once, and a broker reading it keeps the last", b.entry), true
		}
		if !ok {
			msg = "and more like the problems above"
		}
		c.problem(path, at, "line %d: %s", b.line, msg)
	}
	if unknown > 0 {
		c.info(path, pos[unknownAt], "%d entries name partitions this log directory does not hold (the first on line %d): a broker ignores them", unknown, unknownAt)
	}
	if rule.missing != "" {
		missingEntries(c, path, rule, s, entries)
	}
	return nil
}

// maxCheckpoint bounds the size of an offset checkpoint read whole, which
// then takes up to seven times its size in memory. A line is about 40 bytes,
// so it allows some 400 000 partitions in one log directory, far more than a
// broker serves.
const maxCheckpoint = 16 << 20

// badEntry is an entry of an offset checkpoint with a problem.
type badEntry struct {
	line  int
	entry int // index of the entry; for repeated, the line of the first
	why   badWhy
}

type badWhy uint8

const (
	badTopic badWhy = iota
	beyondEnd
	belowStart
	notEnd
	repeated
)

func (b badEntry) message(e checkpoint.OffsetEntry, rule checkpointRule, s offsetsScope) string {
	t := tp{e.Topic, e.Partition}
	f := s.parts[t]
	switch b.why {
	case badTopic:
		return fmt.Sprintf("%v: Kafka never writes such an entry", layout.ValidateTopic(e.Topic))
	case beyondEnd:
		return fmt.Sprintf("%s %d of partition %s is beyond its log end offset %d: %s", rule.what, e.Offset, t, f.logEnd, rule.beyond)
	case belowStart:
		return fmt.Sprintf("%s %d of partition %s is below its log start offset %d: %s", rule.what, e.Offset, t, f.logStart, rule.below)
	}
	return fmt.Sprintf("%s %d of partition %s is not its log end offset %d: %s", rule.what, e.Offset, t, f.logEnd, rule.clean)
}

// missingEntries reports the partitions verified whole that a checkpoint,
// whose entries are sorted by partition, has no entry for. After a clean
// shutdown the recovery point checkpoint names every log the broker had, so
// a missing entry is a problem there.
func missingEntries(c *collector, path string, rule checkpointRule, s offsetsScope, sorted []checkpoint.OffsetEntry) {
	var missing []tp
	for t, f := range s.parts {
		_, found := slices.BinarySearchFunc(sorted, t, func(e checkpoint.OffsetEntry, t tp) int {
			return cmp.Or(strings.Compare(e.Topic, t.topic), cmp.Compare(e.Partition, t.partition))
		})
		// KRaft's metadata log keeps its own state, not these files.
		if !found && f.hasLog && t.topic != metadataTopic {
			missing = append(missing, t)
		}
	}
	if len(missing) == 0 {
		return
	}
	slices.SortFunc(missing, func(a, b tp) int { return cmp.Or(cmp.Compare(a.topic, b.topic), cmp.Compare(a.partition, b.partition)) })
	if rule.clean != "" && s.cleanShutdown {
		for _, t := range missing {
			c.problem(path, -1, "no entry for partition %s: %s", t, rule.clean)
		}
		return
	}
	c.info(path, -1, "%d partitions have no entry (the first, %s): %s", len(missing), missing[0], rule.missing)
}

// metadataTopic is KRaft's metadata log, which a broker's LogManager does
// not manage.
const metadataTopic = "__cluster_metadata"

// runFile verifies a file given on its own: what its name says it is, or a
// record set when its name says nothing.
func (u *unit) runFile(_ *Plan, o *Options) *Report {
	rep := &Report{Path: u.path, Kind: FileUnit}
	c := newCollector(rep)
	defer c.flush()
	logFile := func(base int64) error {
		res, err := recordSet(c, o, &logfmt.RecordIter{}, u.path, base)
		rep.Batches += res.batches
		rep.Records += res.records
		rep.Bytes += res.size
		return err
	}
	fn := layout.ParseFileName(filepath.Base(u.path))
	var err error
	switch {
	case fn.Leftover != "":
		c.problem(u.path, 0, "leftover of an interrupted cleaning, segment split or deletion (%s): the broker completes or removes it when it next loads the partition", fn.Leftover)
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
	case fn.Kind == layout.Lock || fn.Kind == layout.CleanShutdown:
		c.info(u.path, -1, "a marker file: nothing to verify")
	case fn.Kind == layout.Temp:
		c.info(u.path, -1, "temporary file of a write that did not finish: the next write of the same file replaces it")
	default:
		// A record set, a KRaft snapshot or bootstrap.checkpoint: laid out
		// like a segment.
		err = logFile(noOffset)
	}
	rep.Err = err
	return rep
}
