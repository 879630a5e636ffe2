package verify

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/logtool/logtool/index"
	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/checkpoint"
	"github.com/logtool/logtool/logfmt/layout"
	"github.com/logtool/logtool/logfmt/logseg"
	"github.com/logtool/logtool/logfmt/snapshot"
	"github.com/logtool/logtool/reindex"
)

func (u *unit) run(p *Plan, o *Options, mem *logfmt.Job) *Report {
	if u.kind == FileUnit {
		return u.runFile(p, o, mem)
	}
	return u.runPartition(p, o, mem)
}

// runPartition verifies a partition directory, or the segments of it that
// were asked for.
func (u *unit) runPartition(p *Plan, o *Options, mem *logfmt.Job) *Report {
	rep := &Report{Path: u.path, Kind: PartitionUnit}
	c := newCollector(rep, o)
	defer c.sort()
	defer c.flush()
	if u.deleted {
		c.info(CodeDeletedTopicDir, u.path, -1, "directory of a deleted topic, which the broker removes: not verified")
		return rep
	}
	part, err := layout.ReadPartition(u.path)
	if err != nil {
		rep.Err = err
		return rep
	}
	// reindex's Check mode judges the index files against the log. It reads
	// the log again, on its own goroutine, so that its pass overlaps ours.
	type reindexed struct {
		rep *reindex.PartitionReport
		err error
	}
	ri := make(chan reindexed, 1)
	go func() {
		r, err := reindex.Partition(u.path, reindex.Options{Mode: reindex.Check, Offset: true, Time: true, Txn: true,
			IntervalBytes: index.DefaultIntervalBytes, Strict: o.StrictIndexes, Segments: u.segments, ListAll: o.ListAll, Job: mem})
		ri <- reindexed{r, err}
	}()

	v := &partitionRun{u: u, o: o, c: c, rep: rep, part: part, live: u.live, it: o.recordIter(), mem: mem}
	err = v.run()
	r := <-ri
	if err == nil {
		err = v.merge(r.rep, r.err)
	}
	if err != nil {
		rep.Err = err
		return rep
	}
	if err := v.indexSanity(); err != nil {
		rep.Err = err
		return rep
	}
	p.md.checkPartition(c, u, part.Dir)
	if u.segments == nil && part.Dir.Kind == layout.Normal && part.Dir.Topic != "" {
		rep.facts = &v.facts
	}
	return rep
}

// partitionRun is the state of verifying one partition directory.
type partitionRun struct {
	u    *unit
	o    *Options
	c    *collector
	rep  *Report
	part *layout.Partition
	live bool
	it   *logfmt.RecordIter
	mem  *logfmt.Job

	facts        partitionFacts
	epochEntries []checkpoint.EpochEntry // of a readable leader-epoch-checkpoint
}

func (v *partitionRun) run() error {
	c, part := v.c, v.part
	for _, f := range slices.Concat(part.Irregular, part.Symlinks) {
		reportIrregular(c, f)
	}
	for _, l := range part.Leftovers {
		c.problem(CodeLeftover, l, 0, "leftover of an interrupted cleaning, segment split or deletion (%s): the broker completes or removes it when it next loads the partition", leftoverKind(l))
	}
	v.facts = partitionFacts{topic: part.Dir.Topic, partition: part.Dir.Partition, complete: true, logEnd: noOffset}
	logStart, err := logseg.LogStartOffset(part)
	if err != nil {
		c.info(CodeLogStartUnknown, part.Path, -1, "log start offset unknown (%v): taking the first segment's base offset", err)
	}
	var logs []layout.Segment
	for _, s := range part.Segments {
		if s.Log != "" {
			logs = append(logs, s)
		}
	}
	if len(logs) > 0 {
		v.facts.hasLog = true
		logStart = max(logStart, logs[0].Base)
	}
	v.facts.logStart = logStart

	epochs, err := v.epochs(logStart)
	if err != nil {
		return err
	}
	prevLast := int64(noOffset)
	lastGood := int64(noOffset)
	for i, s := range logs {
		nextBase := int64(math.MaxInt64)
		if i+1 < len(logs) {
			nextBase = logs[i+1].Base
		}
		if v.u.segments != nil && !slices.Contains(v.u.segments, s.Base) {
			prevLast = noOffset
			continue
		}
		v.it.File = s.Log
		l := &logCheck{c: c, o: v.o, it: v.it, mem: v.mem, file: s.Log, base: s.Base, nextBase: nextBase, prevLast: prevLast,
			later: len(logs) - 1 - i, live: v.live && i == len(logs)-1, epochs: epochs, partition: part.Path}
		res, err := l.run()
		if err != nil {
			return err
		}
		v.rep.Segments++
		v.rep.Batches += res.batches
		v.rep.Records += res.records
		v.rep.Bytes += res.size
		if res.last != noOffset {
			prevLast, lastGood = res.last, res.last
		}
	}
	if v.u.segments != nil {
		v.facts.complete = false
	} else if len(logs) > 0 {
		v.facts.logEnd = logs[len(logs)-1].Base
		if lastGood != noOffset {
			v.facts.logEnd = max(v.facts.logEnd, lastGood+1)
		}
	}
	if !v.facts.hasLog && v.u.segments == nil {
		if err := v.noLog(logStart); err != nil {
			return err
		}
	}
	return v.files()
}

// noLog judges a partition without any .log. A broker opens an empty
// segment at the log start offset (LogLoader.recoverLog) and drops whatever
// says the log went further; KRaft's metadata log then jumps to its latest
// snapshot (KafkaMetadataLog.truncateToLatestSnapshot). Anything that says
// the log held records past that offset means they are gone.
func (v *partitionRun) noLog(start int64) error {
	part := v.part
	metadata := part.Dir.Topic == layout.MetadataTopic
	if metadata {
		for _, path := range part.Others {
			if fn := layout.ParseFileName(filepath.Base(path)); fn.Kind == layout.KRaftSnapshot && fn.Leftover == "" {
				start = max(start, fn.Base)
			}
		}
	}
	// end is the highest log end offset a file of the partition records,
	// what says so in why.
	end, why := start, ""
	seen := func(off int64, format string, args ...any) {
		if off > end {
			end, why = off, fmt.Sprintf(format, args...)
		}
	}
	if part.Dir.Kind == layout.Normal && !metadata {
		for _, cp := range []struct{ name, what string }{
			{layout.ReplicationOffsetCheckpointFile, "a high watermark"},
			{layout.RecoveryPointCheckpointFile, "a recovery point"},
			{layout.CleanerOffsetCheckpointFile, "a cleaner offset"},
		} {
			// An unreadable checkpoint is the root's finding.
			if off, ok, err := logseg.RootOffset(part, cp.name); err == nil && ok {
				seen(off, "%s gives it %s of %d", cp.name, cp.what, off)
			}
		}
	}
	for _, e := range v.epochEntries {
		seen(e.StartOffset, "%s starts epoch %d at offset %d", layout.LeaderEpochCheckpointFile, e.Epoch, e.StartOffset)
	}
	for _, path := range part.Snapshots {
		if off, ok := snapshot.OffsetFromName(filepath.Base(path)); ok {
			seen(off, "producer snapshot %s was taken at offset %d", filepath.Base(path), off)
		}
	}
	restart := fmt.Sprintf("starts the partition empty at offset %d", start)
	if metadata {
		restart = fmt.Sprintf("restarts the metadata log at offset %d, the end of its latest snapshot", start)
	}
	if why == "" {
		v.c.info(CodeNoLog, part.Path, -1, "no segment has a .log: a broker %s", restart)
		return nil
	}
	lost := "as a follower it fetches them again from the leader, as the leader it gives their offsets to new records"
	if metadata {
		lost = "the other voters can send them again, a single voter has lost them"
	}
	v.c.problem(CodeLogLost, part.Path, -1, "no segment has a .log, yet %s: the records at offsets %d to %d are gone. A broker %s: %s", why, start, end-1, restart, lost)
	return nil
}

// logEnd is the log end offset when it is known, else noOffset.
func (v *partitionRun) logEnd() int64 {
	if v.facts.complete && v.facts.hasLog {
		return v.facts.logEnd
	}
	return noOffset
}

// epochs reads leader-epoch-checkpoint and returns the check of the batches
// against it, nil when there is nothing to check against.
func (v *partitionRun) epochs(logStart int64) (*epochCheck, error) {
	path := filepath.Join(v.part.Path, layout.LeaderEpochCheckpointFile)
	entries, ok, err := readEpochs(v.c, path)
	if err != nil || !ok || len(entries) == 0 {
		return nil, err
	}
	v.epochEntries = entries
	return &epochCheck{c: v.c, file: path, entries: entries, logStart: logStart, flagged: make([]bool, len(entries))}, nil
}

// files checks the files of the partition other than segments.
func (v *partitionRun) files() error {
	c, end := v.c, v.logEnd()
	for _, path := range v.part.Snapshots {
		if err := checkSnapshot(c, path, end); err != nil {
			return err
		}
	}
	if end != noOffset {
		v.epochRange(end)
	}
	for _, path := range v.part.Others {
		if err := v.other(path, end); err != nil {
			return err
		}
	}
	return nil
}

// other checks a file of the partition directory that is not a segment, a
// snapshot or a leftover.
func (v *partitionRun) other(path string, end int64) error {
	c := v.c
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if why := layout.BrokerRefusalAt(path); why != "" {
		if !c.has(path) {
			c.problem(CodeBrokerRefusesName, path, -1, "%s", why)
		}
		return nil
	}
	if fi.IsDir() {
		c.info(CodeDirInPartition, path, -1, "a directory inside a partition directory: a broker ignores it")
		return nil
	}
	switch layout.ParseFileName(filepath.Base(path)).Kind {
	case layout.LeaderEpochCheckpoint:
		// Read before the segments, to check their batches against it.
	case layout.PartitionMetadata:
		return checkPartitionMetadata(c, path)
	case layout.CleanerCheckpoint:
		return checkCleaner(c, path, v.facts.logStart, end)
	case layout.QuorumState:
		return checkQuorumState(c, path)
	case layout.KRaftSnapshot:
		res, err := recordSet(c, v.o, v.it, v.mem, path, noOffset)
		v.rep.Batches += res.batches
		v.rep.Records += res.records
		v.rep.Bytes += res.size
		return err
	case layout.Temp:
		c.info(CodeTempFile, path, -1, "temporary file of a write that did not finish: the next write of the same file replaces it")
	default:
		c.info(CodeUnknownFile, path, -1, "not a file Kafka keeps in a partition directory: a broker ignores it")
	}
	return nil
}

// epochRange checks that no leader epoch starts after the log end: Kafka
// drops such entries when it loads the log, and they mean records of that
// epoch are gone.
func (v *partitionRun) epochRange(end int64) {
	path := filepath.Join(v.part.Path, layout.LeaderEpochCheckpointFile)
	var bad []int
	for i, e := range v.epochEntries {
		if e.StartOffset > end {
			bad = append(bad, i)
		}
	}
	pos := epochPositions(path, bad)
	for _, i := range bad {
		e := v.epochEntries[i]
		v.c.problem(CodeEpochPastEnd, path, pos[i], "epoch %d starts at offset %d, beyond the log end offset %d: the records of that epoch are gone", e.Epoch, e.StartOffset, end)
	}
}

// merge adds reindex's findings about the index files. Its findings about a
// .log restate what this package's own scan says about framing and
// checksums, so they are kept only for a .log the scan found nothing wrong
// with (the transaction state of the batches is reindex's alone). Findings
// about files already reported here are left out for the same reason.
func (v *partitionRun) merge(r *reindex.PartitionReport, err error) error {
	if err != nil {
		if err := corruptFinding(v.c, CodeUnreadable, err, v.part.Path); err != nil {
			return err
		}
	}
	if r == nil {
		return nil
	}
	reported := map[string]bool{}
	for _, f := range r.Findings {
		if _, ok := reported[f.File]; !ok {
			reported[f.File] = v.c.has(f.File)
		}
	}
	for _, f := range r.Findings {
		if reported[f.File] {
			continue
		}
		// reindex lists a few findings of a kind and counts the rest.
		if f.Left != [3]int{} {
			if n := f.Left[reindex.Problem]; n > 0 {
				v.c.more(f.File, n)
			}
			v.rep.Infos += f.Left[reindex.Note] + f.Left[reindex.Difference]
			continue
		}
		sev := Info
		if f.Severity == reindex.Problem {
			sev = Problem
		}
		v.c.add(Finding{Severity: sev, Code: reindexCode(f.Group, f.Entry), File: f.File, Pos: f.Pos, Msg: f.Detail()})
	}
	return nil
}

// indexSanity runs Kafka's startup sanity checks of the index files. They
// say less than reindex's entry-by-entry checks, so a failure is reported
// only for a file those found nothing about. That leaves out a preallocated
// zero tail, which fails the time index check by design and which reindex
// always notes: the index readers alone tell a tail from entries.
func (v *partitionRun) indexSanity() error {
	for _, s := range v.part.Segments {
		if s.Log == "" || v.u.segments != nil && !slices.Contains(v.u.segments, s.Base) {
			continue
		}
		for _, ix := range []struct {
			path  string
			check func(r io.ReaderAt, size, base int64, file string) error
		}{
			{s.Index, index.SanityCheckOffsetIndex},
			{s.TimeIndex, index.SanityCheckTimeIndex},
			{s.TxnIndex, index.SanityCheckTxnIndex},
		} {
			if ix.path == "" || v.c.has(ix.path) {
				continue
			}
			if err := sanity(ix.path, s.Base, ix.check); err != nil {
				if err := corruptFinding(v.c, CodeIndexSanity, err, ix.path); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func sanity(path string, base int64, check func(io.ReaderAt, int64, int64, string) error) error {
	f, err := safefile.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	return check(f, fi.Size(), base, path)
}

func leftoverKind(path string) string {
	for _, s := range []string{layout.CleanedSuffix, layout.SwapSuffix, layout.DeletedSuffix, layout.PartSuffix} {
		if strings.HasSuffix(path, s) {
			return s
		}
	}
	return filepath.Ext(path)
}
