// Package upgrade rewrites the segments of old partitions (magic 0, from
// Kafka 0.8/0.9, or magic 1 from 0.10) to a newer message format with every
// offset kept, in place or into a new log directory. See Run for the rules
// and the crash-safety argument.
package upgrade

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/logtool/logtool/index"
	"github.com/logtool/logtool/internal/parallel"
	"github.com/logtool/logtool/internal/refuse"
	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/internal/segswap"
	"github.com/logtool/logtool/internal/target"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/codec"
	"github.com/logtool/logtool/logfmt/layout"
	"github.com/logtool/logtool/logfmt/logseg"
)

// Options configures Run. The zero value of each field but
// Targets and Workers is the default of `logtool upgrade`.
type Options struct {
	// Targets are the partitions to convert and the log directories named
	// whole, as target.Resolve gives them.
	Targets *target.Set

	// ToMagic is the message format to reach: 1 (the default, also for 0)
	// or 2.
	ToMagic int8

	// TimestampType is what magic-0 messages, which have no timestamp, get.
	// CreateTime (the default) writes timestamp -1, as a broker does when it
	// up-converts for a CreateTime topic. LogAppendTime writes AppendTime and
	// sets the LogAppendTime attribute bit, as a broker does for a
	// LogAppendTime topic. Magic-1 messages keep their own timestamp and
	// type whatever this says.
	TimestampType logfmt.TimestampType

	// AppendTime is the LogAppendTime in ms since the epoch. 0 or less means
	// each segment's .log modification time: Kafka appends to a segment
	// until it rolls, so that is the best estimate of when its messages
	// arrived, and it is also what time-based retention uses for segments
	// without timestamps.
	AppendTime int64

	// Compression, when set, is the codec of every rewritten message set
	// (codec.None writes each legacy wrapper's messages uncompressed; a codec
	// groups runs of uncompressed messages into wrappers or batches). nil
	// keeps each wrapper's codec and leaves uncompressed messages
	// uncompressed. zstd needs ToMagic 2. Entries already at the target are
	// copied byte for byte whatever this says.
	Compression *codec.Type

	// Output, when set, is a directory that receives each converted
	// partition as Output/<partition dir name>; the sources are not
	// modified. See Run for the root files written.
	Output string

	// DryRun converts in memory to measure, and writes nothing.
	DryRun bool

	// MaxRecordBytes bounds one record read from a compressed wrapper or
	// batch (logfmt.RecordIter); 0 means the default.
	MaxRecordBytes int

	// Workers is how many goroutines convert: partitions converted at
	// once, and the rest decoding the batches of each; less than 1 means 1.
	Workers int

	// Progress, when set, is called from time to time with the bytes of
	// segments read so far and the total to read, never concurrently.
	Progress func(done, total int64)
}

// ErrRefused is wrapped by the error of a run that would overwrite
// something it must not (an existing output partition directory) or copy a
// source that an interrupted in-place swap left half done.
var ErrRefused = refuse.ErrRefused

// ErrVerify is wrapped by the error of a rewritten segment that does
// not read back as the original: the run stops before the swap.
var ErrVerify = errors.New("verification failed")

// Report is what Run did, or with DryRun would do.
type Report struct {
	ToMagic    int8
	DryRun     bool
	Partitions []Partition // in the order the paths name them, failed ones included
	// Notes are things left alone and why (-delete directories, directories
	// that are not partitions), and staging directories of killed runs
	// removed from Output.
	Notes []string
	// RootFiles are the log-dir root files copied into Output.
	RootFiles []string
	// Removed are the partition directories and root files of Output that
	// a failed run wrote and removed again (removeOutput); their partitions
	// then have no Output, and RootFiles lists none of them.
	Removed []string
}

// Partition is the report for one partition directory.
type Partition struct {
	Dir    string // the source partition directory
	Output string // Output/<name> with Options.Output, else ""
	// Recovered lists what segswap.Recover did first to finish or roll back
	// an interrupted earlier run, and the temporary files it removed.
	Recovered []string
	Segments  []Segment // every segment with a .log, by base offset

	SegmentsRewritten int
	MessagesConverted int64
	// BytesBefore and BytesAfter are the sizes of all the .log files.
	BytesBefore, BytesAfter int64

	// Err is why the partition failed; it was then left as it was, and
	// Segments and the figures above are empty.
	Err error
}

// Failed counts the partitions that failed.
func (r *Report) Failed() int {
	n := 0
	for _, p := range r.Partitions {
		if p.Err != nil {
			n++
		}
	}
	return n
}

// Segment is the report for one segment.
type Segment struct {
	Base int64
	File string // the source .log
	// Rewritten is false when every entry was already at the target; the
	// segment and its indexes are then left as they are (or copied).
	Rewritten bool
	// BatchesBefore and BatchesAfter count shallow entries: messages,
	// wrappers and record batches.
	BatchesBefore, BatchesAfter int
	// MessagesConverted counts the records rewritten to the target magic.
	MessagesConverted       int64
	BytesBefore, BytesAfter int64
	// AppendTime is the LogAppendTime given to magic-0 messages; -1 when
	// none got one (CreateTime, or no magic-0 message).
	AppendTime int64
}

// Run rewrites every message set below opts.ToMagic in the given
// partitions, as a broker up-converts on produce (LogValidator) but keeping
// every offset, key and value; docs/commands/upgrade.md gives the rules.
// Each rewritten segment is read back and compared record by record with
// the original before it replaces it (ErrVerify); in place, through
// segswap.Replace, one run of adjacent rewritten segments at a time (see
// upgradeRun), with Output, through a staging directory (upgradeStageName)
// renamed into place when whole. Corrupt input stops its partition with a
// *logfmt.CorruptError and leaves it as it was. Partitions are independent:
// the report lists every one, and the error joins the failed ones' errors,
// each at the top level, with any error of the run itself.
func Run(opts Options) (*Report, error) {
	u, err := newUpgrader(opts)
	if err != nil {
		return nil, err
	}
	rep := &Report{ToMagic: u.toMagic, DryRun: opts.DryRun}
	if opts.Output != "" && !opts.DryRun {
		if err := safefile.MkdirAllDurable(opts.Output, 0o755); err != nil {
			return nil, err
		}
		stages, err := upgradeRemoveStages(opts.Output)
		for _, s := range stages {
			rep.Notes = append(rep.Notes, s+": removed the staging directory of an interrupted run")
		}
		if err != nil {
			return nil, err
		}
	}
	parts, err := u.plan(rep)
	if err != nil {
		return nil, err
	}
	// The root files go last, with the clean-shutdown marker among them:
	// only an output whose every partition is in place gets them.
	rep.Partitions = u.run(parts)
	var errs []error
	for _, p := range rep.Partitions {
		errs = append(errs, p.Err)
	}
	if err := errors.Join(errs...); (err == nil || opts.DryRun) && u.rootSource != "" {
		rep.RootFiles, err = upgradeCopyRootFiles(u.rootSource, opts.Output, opts.DryRun)
		errs = append(errs, err)
	}
	if errors.Join(errs...) != nil && opts.Output != "" && !opts.DryRun {
		errs = append(errs, removeOutput(rep, opts.Output))
	}
	return rep, errors.Join(errs...)
}

// removeOutput removes what a failed run with Output wrote there: each
// partition directory it installed, by its exact name and only when it
// holds nothing but the files upgrade writes (safefile.RemoveStage), and
// each root file it copied. An output missing a partition loads as a
// whole log directory, so with a full disk, or any other failure, the
// output is all or nothing: a rerun once the cause is fixed writes it
// again. The error names what was removed, and what could not be.
func removeOutput(rep *Report, output string) error {
	var errs []error
	for i := range rep.Partitions {
		p := &rep.Partitions[i]
		if p.Err != nil || p.Output == "" {
			continue
		}
		if err := safefile.RemoveStage(p.Output, layout.StageFile); err != nil {
			errs = append(errs, fmt.Errorf("%w; remove it by hand before a rerun", err))
			continue
		}
		rep.Removed, p.Output = append(rep.Removed, p.Output), ""
	}
	var kept []string
	for _, f := range rep.RootFiles {
		if err := safefile.Remove(f); err != nil {
			errs = append(errs, fmt.Errorf("%w; remove it by hand before a rerun", err))
			kept = append(kept, f)
			continue
		}
		rep.Removed = append(rep.Removed, f)
	}
	rep.RootFiles = kept
	return errors.Join(append(errs, fmt.Errorf("%s: upgrade did not finish; removed the %d partition director(ies) and root file(s) it had written there: rerun it once the cause is fixed",
		output, len(rep.Removed)))...)
}

// upgrader is one run of Run.
type upgrader struct {
	opts        Options
	toMagic     int8
	compression codec.Type
	recompress  bool
	// rootSource is the log directory whose root files go to Output.
	rootSource string

	progressMu  sync.Mutex
	done, total int64
	// batchWorkers decode the batches of each partition converted: the
	// Workers not busy with partitions of their own.
	batchWorkers int
}

func newUpgrader(opts Options) (*upgrader, error) {
	u := &upgrader{opts: opts, toMagic: opts.ToMagic}
	if u.toMagic == 0 {
		u.toMagic = 1
	}
	switch {
	case opts.Targets == nil:
		return nil, errors.New("no targets given")
	case u.toMagic != 1 && u.toMagic != 2:
		return nil, fmt.Errorf("target magic %d: want 1 or 2", opts.ToMagic)
	case opts.TimestampType != logfmt.CreateTime && opts.TimestampType != logfmt.LogAppendTime:
		return nil, fmt.Errorf("timestamp type %v: want CreateTime or LogAppendTime", opts.TimestampType)
	}
	if opts.Compression != nil {
		u.compression, u.recompress = *opts.Compression, true
		if !u.compression.ValidFor(u.toMagic) {
			return nil, fmt.Errorf("compression %s is not valid for magic %d", u.compression, u.toMagic)
		}
	}
	return u, nil
}

// upgradeJob is one partition to convert.
type upgradeJob struct {
	part   *layout.Partition
	output string // final output directory, "" in place
	err    error  // the partition could not be listed: it fails alone
}

// plan lists the partitions to convert, in path order, and checks that no
// output would be overwritten before anything is written.
func (u *upgrader) plan(rep *Report) ([]upgradeJob, error) {
	var jobs []upgradeJob
	outNames := map[string]string{}
	for _, it := range u.opts.Targets.Items {
		if d := it.Root; d != nil {
			ld, err := layout.ReadRoot(d.Path)
			if err != nil {
				return nil, err
			}
			for _, n := range ld.NotPartitions {
				rep.Notes = append(rep.Notes, n+": left alone: not a partition directory")
			}
			if u.opts.Output != "" && u.rootSource == "" {
				if _, err := os.Stat(filepath.Join(u.opts.Output, layout.MetaPropertiesFile)); errors.Is(err, fs.ErrNotExist) {
					u.rootSource = d.Path
				}
			}
			continue
		}
		tp := it.Partition
		if tp == nil {
			continue
		}
		if tp.Dir.Kind == layout.Delete {
			rep.Notes = append(rep.Notes, tp.Path+": left alone: Kafka is deleting this partition")
			continue
		}
		p, err := layout.ReadPartition(tp.Path)
		if err != nil {
			jobs = append(jobs, upgradeJob{part: &layout.Partition{Path: tp.Path, Dir: tp.Dir}, err: err})
			continue
		}
		j := upgradeJob{part: p}
		if u.opts.Output != "" {
			name := filepath.Base(tp.Real)
			if first, ok := outNames[name]; ok {
				return nil, fmt.Errorf("%s: %w: %s and %s would both be written there", filepath.Join(u.opts.Output, name), ErrRefused, first, p.Path)
			}
			outNames[name] = p.Path
			j.output = filepath.Join(u.opts.Output, name)
			if _, err := os.Lstat(j.output); err == nil {
				return nil, fmt.Errorf("%s: %w: the directory already exists", j.output, ErrRefused)
			} else if !errors.Is(err, fs.ErrNotExist) {
				return nil, err
			}
		}
		jobs = append(jobs, j)
	}
	return jobs, nil
}

// run converts the partitions, Workers at a time. A failed partition is
// left as it was (each is atomic) and reported with its error; the others
// go on, since nothing they hold depends on it.
func (u *upgrader) run(jobs []upgradeJob) []Partition {
	var total int64
	for _, j := range jobs {
		for _, s := range j.part.Segments {
			if s.Log == "" {
				continue
			}
			if fi, err := os.Stat(s.Log); err == nil {
				total += fi.Size()
			}
		}
	}
	u.progress(0, total)
	u.batchWorkers = parallel.PerJob(u.opts.Workers, len(jobs))
	reps := make([]Partition, len(jobs))
	parallel.Each(len(jobs), u.opts.Workers, func(i int) error {
		rep, err := u.partition(jobs[i])
		if err != nil {
			// What was read before the failure describes nothing that
			// happened; what recovery did first still did.
			rep = Partition{Dir: rep.Dir, Output: rep.Output, Recovered: rep.Recovered, Err: err}
		}
		reps[i] = rep
		return nil
	})
	return reps
}

// progress adds n bytes read (and sets the total when total ≥ 0) and tells
// the caller.
func (u *upgrader) progress(n, total int64) {
	if u.opts.Progress == nil {
		return
	}
	u.progressMu.Lock()
	defer u.progressMu.Unlock()
	if total >= 0 {
		u.total = total
	}
	u.done += n
	u.opts.Progress(u.done, u.total)
}

// partition converts one partition directory.
func (u *upgrader) partition(j upgradeJob) (Partition, error) {
	p := j.part
	rep := Partition{Dir: p.Path, Output: j.output}
	if j.err != nil {
		return rep, j.err
	}
	// Refused before anything is written: a broker follows the links, so
	// the partition converted (or copied to the output) would lack what
	// they point at.
	if err := p.NoSymlinks(); err != nil {
		return rep, err
	}
	switch {
	case u.opts.DryRun:
		if len(p.Leftovers) > 0 {
			rep.Recovered = append(rep.Recovered, fmt.Sprintf("%d file(s) of an interrupted rewrite would be recovered first", len(p.Leftovers)))
		}
	case j.output != "":
		// Which of the files a swap left are current only its completion
		// can tell; ".deleted" files are just waiting for removal.
		for _, f := range p.Leftovers {
			if l := layout.ParseFileName(filepath.Base(f)).Leftover; l == layout.CleanedSuffix || l == layout.SwapSuffix {
				return rep, fmt.Errorf("%s: %w: %s is left from an interrupted segment swap; upgrade in place or start the broker on it first",
					p.Path, ErrRefused, filepath.Base(f))
			}
		}
	default:
		actions, err := segswap.Recover(p.Path)
		rep.Recovered = actions
		if err != nil {
			return rep, err
		}
		removed, err := safefile.RemoveTemps(p.Path, layout.OwnTemp)
		for _, f := range removed {
			rep.Recovered = append(rep.Recovered, "removed unfinished "+filepath.Base(f))
		}
		if err != nil {
			return rep, err
		}
		if len(rep.Recovered) > 0 {
			if p, err = layout.ReadPartition(p.Path); err != nil {
				return rep, err
			}
		}
	}
	var err error
	if j.output != "" {
		err = u.partitionToOutput(p, j.output, &rep)
	} else {
		err = u.partitionInPlace(p, &rep)
	}
	if err != nil {
		return rep, err
	}
	for _, s := range rep.Segments {
		if s.Rewritten {
			rep.SegmentsRewritten++
		}
		rep.MessagesConverted += s.MessagesConverted
		rep.BytesBefore += s.BytesBefore
		rep.BytesAfter += s.BytesAfter
	}
	return rep, nil
}

// partitionInPlace converts the segments to ".cleaned" files, verifies them
// and swaps them in, one run of adjacent rewritten segments at a time.
func (u *upgrader) partitionInPlace(p *layout.Partition, rep *Partition) (err error) {
	var bases []int64
	var runs []upgradeRun
	inRun, swapping := false, false
	defer func() {
		// Once the swap has begun, the ".cleaned" files left tell a loader
		// to roll it back; removing them could complete half of it.
		if err != nil && !u.opts.DryRun && !swapping {
			segswap.Abort(p.Path, bases)
		}
	}()
	for _, s := range p.Segments {
		if s.Log == "" {
			continue
		}
		dst := func(ext string) string { return segswap.CleanedPath(p.Path, s.Base, ext) }
		if u.opts.DryRun {
			dst = nil
		}
		seg, err := u.segment(s, dst)
		if seg.Rewritten {
			bases = append(bases, s.Base)
			if !inRun {
				runs = append(runs, upgradeRun{})
			}
			r := &runs[len(runs)-1]
			r.bases, r.old = append(r.bases, s.Base), append(r.old, s)
		}
		inRun = seg.Rewritten
		if err != nil {
			return err
		}
		rep.Segments = append(rep.Segments, seg)
	}
	if u.opts.DryRun || len(bases) == 0 {
		return nil
	}
	swapping = true
	for _, r := range runs {
		if err := segswap.Replace(p.Path, r.bases, r.old); err != nil {
			// Settle the directory now, as the next run or a broker would:
			// this run all old or all new, later ones old. After a crash
			// instead, they will.
			_, rerr := segswap.Recover(p.Path)
			return errors.Join(err, rerr)
		}
	}
	return nil
}

// upgradeRun is a run of adjacent rewritten segments, swapped in at once.
// A swap must never span a segment that stays: Kafka's loader completes an
// interrupted swap over ONE offset range per partition, from the lowest
// ".swap" base offset to the highest ".swap" next offset, and deletes every
// other segment file inside it.
type upgradeRun struct {
	bases []int64
	old   []layout.Segment
}

// partitionToOutput builds the converted partition in a staging directory
// next to its final place and renames it there when complete.
func (u *upgrader) partitionToOutput(p *layout.Partition, final string, rep *Partition) (err error) {
	if u.opts.DryRun {
		return u.partitionInPlace(p, rep)
	}
	parent, name := filepath.Dir(final), upgradeStageName(filepath.Base(final))
	if err := safefile.RemoveStage(filepath.Join(parent, name), layout.StageFile); err != nil {
		return err
	}
	st, err := safefile.CreateStage(parent, name, layout.StageFile)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			st.Remove()
		}
	}()
	stage := st.Dir
	for _, s := range p.Segments {
		if s.Log == "" {
			if err := upgradeCopySegmentFiles(s, stage, false); err != nil {
				return err
			}
			continue
		}
		dst := func(ext string) string { return filepath.Join(stage, layout.SegmentName(s.Base, ext)) }
		seg, err := u.segment(s, dst)
		if err != nil {
			return err
		}
		if !seg.Rewritten {
			if err := upgradeCopySegmentFiles(s, stage, true); err != nil {
				return err
			}
		}
		rep.Segments = append(rep.Segments, seg)
	}
	for _, src := range slices.Concat(p.Snapshots, p.Others) {
		fi, err := os.Stat(src)
		if err != nil {
			return err
		}
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("%s: not a regular file; upgrade copies only files into %s", src, final)
		}
		if err := upgradeCopyFile(src, filepath.Join(stage, filepath.Base(src))); err != nil {
			return err
		}
	}
	return st.Install(final)
}

// upgradeStageID starts the unique id of a staging directory's name.
const upgradeStageID = "logtoolupgrade"

// upgradeStageName is the staging directory of the output partition name
// (layout.StageDirName).
func upgradeStageName(name string) string { return layout.StageDirName(name, upgradeStageID) }

// isUpgradeStage tells a staging directory of this or an earlier version by
// its name.
func isUpgradeStage(name string) bool {
	pd, err := layout.ParsePartitionDir(name)
	return err == nil && pd.Kind == layout.Delete && strings.HasPrefix(pd.UniqueID, upgradeStageID)
}

// upgradeRemoveStages removes the staging directories that killed runs left
// in dir, the output log directory, whose lock the caller holds.
func upgradeRemoveStages(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, e := range entries {
		if e.IsDir() && isUpgradeStage(e.Name()) {
			path := filepath.Join(dir, e.Name())
			if err := safefile.RemoveStage(path, layout.StageFile); err != nil {
				return removed, err
			}
			removed = append(removed, path)
		}
	}
	return removed, nil
}

// upgradeCopySegmentFiles copies an unchanged segment's files into dir.
func upgradeCopySegmentFiles(s layout.Segment, dir string, withLog bool) error {
	files := []string{s.Index, s.TimeIndex, s.TxnIndex}
	if withLog {
		files = append(files, s.Log)
	}
	for _, f := range files {
		if f == "" {
			continue
		}
		if err := upgradeCopyFile(f, filepath.Join(dir, filepath.Base(f))); err != nil {
			return err
		}
	}
	return nil
}

// upgradeCopyFile copies src to dst durably, keeping src's modification
// time (retention and the append-time default read it). The copy gets the
// mode a broker gives its files, whatever src had.
func upgradeCopyFile(src, dst string) error {
	in, err := safefile.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := safefile.Create(dst, 0o644)
	if err != nil {
		return err
	}
	defer out.Abort()
	// Hiding the file's WriteTo makes the copy use buf: few, large writes.
	buf := make([]byte, upgradeWriteChunk)
	if _, err := io.CopyBuffer(out, struct{ io.Reader }{in}, buf); err != nil {
		return err
	}
	if err := os.Chtimes(out.Name(), fi.ModTime(), fi.ModTime()); err != nil {
		return err
	}
	return out.Commit()
}

// upgradeCopyRootFiles copies the root files a broker needs to start on a
// new log directory (see Run), before any partition: a broker ignores
// checkpoint entries of partitions it does not find. Files dst already has
// are kept, and meta.properties comes last, so a run interrupted here
// copies the rest when run again.
func upgradeCopyRootFiles(src, dst string, dryRun bool) ([]string, error) {
	names := []string{layout.RecoveryPointCheckpointFile, layout.ReplicationOffsetCheckpointFile, layout.LogStartOffsetCheckpointFile,
		layout.CleanerOffsetCheckpointFile, layout.CleanShutdownFile, layout.MetaPropertiesFile}
	var copied []string
	for _, name := range names {
		from, to := filepath.Join(src, name), filepath.Join(dst, name)
		if _, err := os.Stat(from); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if _, err := os.Stat(to); err == nil {
			continue
		}
		if !dryRun {
			if err := upgradeCopyFile(from, to); err != nil {
				return copied, err
			}
		}
		copied = append(copied, to)
	}
	return copied, nil
}

// upgradeDiscard is a dry run's destination: an io.WriterAt, so that a
// large batch is measured a piece at a time as it would be written.
type upgradeDiscard struct{}

func (upgradeDiscard) Write(p []byte) (int, error)            { return len(p), nil }
func (upgradeDiscard) WriteAt(p []byte, _ int64) (int, error) { return len(p), nil }

// segment converts one segment. dst names the new files by extension; nil
// means a dry run. The report tells whether a rewrite was started, also on
// error, so that the caller knows what to clean up.
func (u *upgrader) segment(s layout.Segment, dst func(ext string) string) (Segment, error) {
	rep := Segment{Base: s.Base, File: s.Log, AppendTime: logfmt.NoTimestamp}
	src, size, err := safefile.OpenSized(s.Log)
	if err != nil {
		return rep, err
	}
	defer src.Close()
	fi, err := src.Stat()
	if err != nil {
		return rep, err
	}
	rep.BytesBefore = size
	rules := upgradeRules{toMagic: u.toMagic, tsType: u.opts.TimestampType, compression: u.compression, recompress: u.recompress,
		maxRecord: u.opts.MaxRecordBytes, workers: u.batchWorkers}
	if rules.tsType == logfmt.LogAppendTime {
		rules.appendTime = u.opts.AppendTime
		if rules.appendTime <= 0 {
			rules.appendTime = fi.ModTime().UnixMilli()
		}
	}
	// The converter and its verifier take turns with large entries, so
	// that one is held at a time: the verifier, which holds nothing when
	// it starts reading one, waits until the converter is done (a budget
	// of 0, in which the earliest job alone does not wait). verifyJob is
	// done once the verifier has finished: its defer runs after
	// follow.wait's.
	turns := logfmt.NewBudget(0)
	convertJob, verifyJob := turns.Start(0), turns.Start(1)
	defer verifyJob.Done()
	var out *logseg.Writer
	var back *os.File // the new file, read back while it is written
	var follow *upgradeFollower
	defer func() {
		if follow != nil {
			follow.wait()
			back.Close()
		}
		if out != nil {
			out.Abort()
		}
	}()
	conv := newUpgradeConverter(&rules, src, size, s.Log, s.Base)
	conv.job = convertJob
	conv.progress = func(n int64) { u.progress(n, -1) }
	conv.open = func() (io.Writer, error) {
		rep.Rewritten = true
		if dst == nil {
			return upgradeDiscard{}, nil
		}
		if out, err = logseg.CreateSegment(dst, s.Base, index.DefaultIntervalBytes); err != nil {
			return nil, err
		}
		// The new file is read back through its own descriptor while it is
		// written, by the verifier that follows the writer; the indexes are
		// built from what it reads.
		if back, err = safefile.Open(out.Name()); err != nil {
			return nil, err
		}
		v := newUpgradeVerifier(&rules, src, size, s.Log, back, dst(layout.LogExt), s.Base, out.Recovery())
		v.setJob(verifyJob)
		follow = newUpgradeFollower(v)
		conv.wrote = follow.wrote
		return out, nil
	}
	if err := conv.run(); err != nil {
		return rep, err
	}
	rep.BatchesBefore, rep.BatchesAfter = conv.batchesIn, conv.batchesOut
	rep.MessagesConverted = conv.converted
	if conv.stamped > 0 {
		rep.AppendTime = rules.appendTime
	}
	rep.BytesAfter = rep.BytesBefore
	if !rep.Rewritten {
		return rep, nil
	}
	rep.BytesAfter = conv.bytesOut
	if dst == nil {
		return rep, nil
	}
	if err := follow.wait(); err != nil {
		return rep, err
	}
	if _, err := follow.v.finish(); err != nil {
		return rep, err
	}
	// The modification time of the original, which retention falls back on
	// when a segment has no timestamps.
	if err := out.Finish(nil, fi.ModTime()); err != nil {
		return rep, err
	}
	out = nil
	// Offsets do not change, so the aborted transactions stay where they
	// were; only v2 data can have them.
	if s.TxnIndex != "" {
		if err := upgradeCopyFile(s.TxnIndex, dst(layout.TxnIndexExt)); err != nil {
			return rep, err
		}
	}
	return rep, nil
}
