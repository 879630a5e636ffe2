package compact

import (
	"fmt"
	"path/filepath"

	"github.com/logtool/logtool/internal/parallel"
	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/internal/segswap"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/layout"
	"github.com/logtool/logtool/logfmt/logseg"
)

// Job is one partition directory to compact, with its topic's
// configuration.
type Job struct {
	Dir    string
	Config Config
	// Skip, when not "", leaves the partition alone and is its reason: a
	// reason the caller knows, such as a topic the cluster metadata does not
	// know.
	Skip string
}

// Run compacts the partitions of jobs, up to workers at once, each with its
// own Config in place of o's. The offset map memory is shared out among the
// workers, as Kafka shares log.cleaner.dedupe.buffer.size among its cleaner
// threads. done, when not nil, is called after each partition. Results and
// errors are in the order of jobs; every partition has a result, and a
// failed one's has Result.Error set, so that a report can show it as failed.
func Run(jobs []Job, o Options, workers int, done func()) ([]*Result, []error) {
	results, errs := make([]*Result, len(jobs)), make([]error, len(jobs))
	failAll := func(err error) ([]*Result, []error) {
		for i := range errs {
			results[i], errs[i] = failedResult(nil, jobs[i].Dir, &o, err), err
		}
		return results, errs
	}
	if err := o.Check(); err != nil {
		return failAll(err)
	}
	// The partitions cleaned at once share the map memory, and the workers
	// left over decode their batches.
	per := o
	per.BatchWorkers = parallel.PerJob(workers, len(jobs))
	workers = parallel.Workers(workers, len(jobs))
	per.OffsetMapMemory = o.OffsetMapMemory / int64(workers)
	if _, err := mapSlots(per.OffsetMapMemory); err != nil {
		return failAll(fmt.Errorf("%w when shared among %d workers", err, workers))
	}
	// One cleaner, and so one offset map, per worker goroutine.
	cleaners := make(chan *cleaner, workers)
	for range workers {
		cleaners <- &cleaner{}
	}
	parallel.Each(len(jobs), workers, func(i int) error {
		c := <-cleaners
		defer func() { cleaners <- c }()
		jo := per
		jo.Config, jo.Job = jobs[i].Config, logfmt.StartJob(int64(i))
		defer jo.Job.Done()
		c.o = &jo
		if jobs[i].Skip != "" {
			results[i] = newResult(jobs[i].Dir, jo.DryRun)
			results[i].Reason = jobs[i].Skip
		} else if err := jo.Config.Check(); err != nil {
			results[i], errs[i] = failedResult(nil, jobs[i].Dir, &jo, err), err
		} else {
			results[i], errs[i] = c.compact(jobs[i].Dir)
		}
		if done != nil {
			done()
		}
		return nil
	})
	for range workers {
		(<-cleaners).freeMap()
	}
	return results, errs
}

// mapFor readies the cleaner's offset map for a pass over [from, to). The
// map is allocated on first use, for the keys the range can hold (at most
// one a record, so at most one an offset), and kept for the worker's next
// passes while it has the slots they need: a worker whose partitions need
// no cleaning never pays for it, and one whose dirty ranges are small pays
// for them, not for --offset-map-memory. A range whose offsets are not
// regular may hold more keys; the map then grows as it fills.
func (c *cleaner) mapFor(from, to int64) error {
	keys := max(to-from, 0)
	if c.m != nil && len(c.m.slots) >= slotsFor(keys, c.m.maxSlots) {
		return nil
	}
	c.freeMap()
	m, err := newOffsetMap(c.o.OffsetMapMemory, keys)
	if err != nil {
		return err
	}
	c.m = m
	return nil
}

// freeMap frees the cleaner's offset map.
func (c *cleaner) freeMap() {
	if c.m != nil {
		c.m.release()
		c.m = nil
	}
}

// compact cleans one partition, and gives a failed one a result too.
func (c *cleaner) compact(dir string) (*Result, error) {
	res, err := c.clean(dir)
	if err != nil {
		res = failedResult(res, dir, c.o, err)
	}
	return res, err
}

// newResult is the result of the partition directory dir, named as every
// JSON object names a partition: topic and number, or "" and -1 when the
// directory's name is not a partition's.
func newResult(dir string, dryRun bool) *Result {
	name := filepath.Base(filepath.Clean(dir))
	if abs, err := filepath.Abs(dir); err == nil {
		name = filepath.Base(abs) // "." is named by what it is
	}
	res := &Result{Dir: dir, Name: name, Partition: -1, DryRun: dryRun}
	if pd, err := layout.ParsePartitionDir(name); err == nil {
		res.Topic, res.Partition = pd.Topic, pd.Partition
	}
	return res
}

// failedResult marks res, or a new result for dir when the partition failed
// before it had one, as failed with err.
func failedResult(res *Result, dir string, o *Options, err error) *Result {
	if res == nil {
		res = newResult(dir, o.DryRun)
	}
	res.Error = err.Error()
	return res
}

// clean is one partition: recover an interrupted swap, plan, and run passes
// until the cleanable range is clean.
func (c *cleaner) clean(dir string) (*Result, error) {
	o := c.o
	res := newResult(dir, o.DryRun)
	if !o.Compact {
		// As LogCleanerManager, which never looks at such a log.
		res.Reason = "cleanup.policy=" + o.Policy
		return res, nil
	}
	if !o.DryRun {
		removed, err := safefile.RemoveTemps(dir, layout.OwnTemp)
		for _, f := range removed {
			res.Warnings = append(res.Warnings, "removed "+filepath.Base(f)+", left by an interrupted run")
		}
		if err != nil {
			return nil, err
		}
		actions, err := segswap.Recover(dir)
		if err != nil {
			return nil, err
		}
		for _, a := range actions {
			res.Warnings = append(res.Warnings, "recovered an interrupted swap: "+a)
		}
	}
	p, pl, err := planPartition(dir, o, res)
	if err != nil {
		return nil, err
	}
	if pl == nil {
		return res, nil
	}
	cleanTime := p.cp.cleanTime
	if pl.forceCheckpoint {
		cleanTime = -1
	}
	if !pl.eligible {
		if pl.forceCheckpoint && !o.DryRun {
			// LogCleanerManager writes the reset offset at once (KAFKA-6266).
			return res, writeCheckpoint(p, pl.firstDirty, cleanTime)
		}
		return res, nil
	}
	return res, c.passes(p, pl, cleanTime, res)
}

// Plan is the planning half of a dry run: the partition's cleanable range
// and whether, and why, it is eligible, without simulating a pass. It only
// reads: files of an interrupted swap are left as they are, and warned of.
func Plan(dir string, o Options) (*Result, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	o.DryRun = true
	res := &Result{Dir: dir, DryRun: true}
	if _, _, err := planPartition(dir, &o, res); err != nil {
		return nil, err
	}
	return res, nil
}

// planPartition loads and plans the partition, and fills res with what the
// plan says. pl is nil when the partition has no segments.
func planPartition(dir string, o *Options, res *Result) (p *partition, pl *plan, err error) {
	if p, err = loadPartition(dir, o); err != nil {
		return nil, nil, err
	}
	if o.DryRun && len(p.listing.Leftovers) > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d file(s) of an interrupted swap, which a real run recovers first", len(p.listing.Leftovers)))
	}
	for _, err := range p.badSnaps {
		res.Warnings = append(res.Warnings, "unreadable producer snapshot, skipped as Kafka skips it: "+err.Error())
	}
	res.SegmentsBefore, res.BytesBefore = len(p.segs), sizeOf(p.segs)
	res.SegmentsAfter, res.BytesAfter = res.SegmentsBefore, res.BytesBefore
	if len(p.segs) == 0 {
		res.Reason = "no segments"
		return p, nil, nil
	}
	if pl, err = makePlan(p, o); err != nil {
		return nil, nil, err
	}
	res.Eligible, res.Reason = pl.eligible, pl.reason
	res.FirstDirtyOffset, res.FirstUncleanableOffset = pl.firstDirty, pl.uncleanable
	res.CheckpointSource = p.cp.source
	res.LogStartOffset, res.LogEndOffset, res.LastStableOffset = p.logStart, p.leo, p.lso
	res.CleanBytes, res.CleanableBytes, res.CleanableRatio = pl.cleanBytes, pl.cleanableBytes, pl.ratio
	res.MaxLagExceededByMs, res.ActiveSegmentRolled = pl.delay, pl.rolled && pl.eligible
	res.NewDirtyOffset = pl.firstDirty
	if pl.forceCheckpoint {
		res.Warnings = append(res.Warnings, fmt.Sprintf("checkpointed first dirty offset %d is outside the log [%d, %d]; reset to the log start",
			p.cp.offset, p.logStart, p.leo))
	}
	return p, pl, nil
}

// passes runs cleaning passes from the planned first dirty offset until the
// map no longer fills; a dry run simulates the first only.
func (c *cleaner) passes(p *partition, pl *plan, cleanTime int64, res *Result) (err error) {
	o := c.o
	defer func() {
		// The passes that completed are in place; a dry run changed nothing.
		if err != nil && !o.DryRun {
			res.SegmentsAfter, res.BytesAfter = len(p.segs), sizeOf(p.segs)
		}
	}()
	rewritten := map[int64]bool{}
	firstDirty := pl.firstDirty
	for {
		ps := &pass{c: c, p: p, firstDirty: firstDirty, upper: pl.uncleanable, rewritten: rewritten,
			legacy: newLegacyRule(p.segs, firstDirty, cleanTime, o)}
		if err := c.mapFor(firstDirty, pl.uncleanable); err != nil {
			return err
		}
		if err := ps.run(); err != nil {
			return err
		}
		st := ps.stats
		res.Passes++
		res.RecordsBefore += st.readOriginal
		res.RecordsAfter = st.written
		res.TombstonesRemoved += st.tombstonesOut
		end := max(st.end, firstDirty)
		if end > firstDirty || cleanTime < 0 {
			cleanTime = o.Now
		}
		res.NewDirtyOffset = end
		if o.DryRun {
			res.SegmentsAfter = len(p.segs) - st.sourceSegs + st.groups
			res.BytesAfter = res.BytesBefore - st.sourceBytes + st.outBytes
			if st.full {
				res.Reason += fmt.Sprintf("; the offset map fills at offset %d, so more passes will follow (not simulated)", end)
			}
			return nil
		}
		if err := writeCheckpoint(p, end, cleanTime); err != nil {
			return err
		}
		if err := p.reload(); err != nil {
			return err
		}
		if !st.full || end >= pl.uncleanable {
			break
		}
		if end <= firstDirty {
			return fmt.Errorf("%s: cleaning made no progress past offset %d", p.dir, firstDirty)
		}
		firstDirty = end
	}
	res.SegmentsAfter, res.BytesAfter = len(p.segs), sizeOf(p.segs)
	return nil
}

// reload lists the partition's segments and transaction indexes again after
// a pass replaced some. Offsets, producers and checkpoints are unchanged by
// cleaning.
func (p *partition) reload() error {
	listing, err := layout.ReadPartition(p.dir)
	if err != nil {
		return err
	}
	if p.segs, err = logseg.OpenPartition(listing); err != nil {
		return err
	}
	p.listing = listing
	p.aborted, err = loadAborted(p.segs)
	return err
}
