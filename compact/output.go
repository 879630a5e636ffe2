package compact

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/logtool/logtool/index"
	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/internal/segswap"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/layout"
)

// segWriter writes one cleaned segment as ".cleaned" files: the .log as the
// batches come, then the .index and .timeindex that LogSegment.recover would
// build for it, and the .txnindex of the aborted transactions whose markers it
// keeps. In a dry run it only counts.
type segWriter struct {
	dir     string
	base    int64
	f       *safefile.File // nil in a dry run
	bw      *bufio.Writer
	rec     *index.Recovery
	txns    []index.AbortedTxn
	size    int64
	records int64
}

func newSegWriter(dir string, base, intervalBytes int64, dry bool) (*segWriter, error) {
	w := &segWriter{dir: dir, base: base, rec: index.NewRecovery(base, intervalBytes)}
	if dry {
		return w, nil
	}
	// Like UnifiedLog.createNewCleanedSegment, start from no stale output.
	segswap.Abort(dir, []int64{base})
	f, err := safefile.Create(segswap.CleanedPath(dir, base, layout.LogExt), 0o644)
	if err != nil {
		return nil, err
	}
	w.f, w.bw = f, bufio.NewWriterSize(f, 1<<20)
	return w, nil
}

// append adds one entry holding records records.
func (w *segWriter) append(entry []byte, records int) error {
	b := logfmt.Batch{Data: entry}
	last := b.LastOffset()
	if d := last - w.base; d < 0 || d > math.MaxInt32 {
		return fmt.Errorf("%s: offset %d does not fit a segment based at %d", w.name(), last, w.base)
	}
	if w.size+int64(len(entry)) > math.MaxInt32 {
		return fmt.Errorf("%s: cleaned segment would exceed %d bytes", w.name(), math.MaxInt32)
	}
	w.rec.Add(last, b.MaxTimestamp(), len(entry))
	w.size += int64(len(entry))
	w.records += int64(records)
	if w.bw == nil {
		return nil
	}
	_, err := w.bw.Write(entry)
	return err
}

func (w *segWriter) name() string { return segswap.CleanedPath(w.dir, w.base, layout.LogExt) }

// finish makes the ".cleaned" files durable, with the modification time of
// the last segment they replace, as Cleaner.cleanSegments keeps it.
func (w *segWriter) finish(mtimeMs int64) error {
	w.rec.Finish()
	if w.f == nil {
		return nil
	}
	if err := w.bw.Flush(); err != nil {
		return err
	}
	if err := w.f.Commit(); err != nil {
		return err
	}
	ib, err := w.rec.OffsetIndexBytes()
	if err != nil {
		return err
	}
	tb, err := w.rec.TimeIndexBytes()
	if err != nil {
		return err
	}
	files := []struct {
		ext  string
		data []byte
	}{{layout.IndexExt, ib}, {layout.TimeIndexExt, tb}}
	if len(w.txns) > 0 {
		var xb []byte
		for _, t := range w.txns {
			xb = index.AppendAbortedTxn(xb, t)
		}
		files = append(files, struct {
			ext  string
			data []byte
		}{layout.TxnIndexExt, xb})
	}
	for _, f := range files {
		if err := safefile.WriteFile(segswap.CleanedPath(w.dir, w.base, f.ext), f.data, 0o644); err != nil {
			return err
		}
	}
	t := time.UnixMilli(mtimeMs)
	for _, ext := range []string{layout.LogExt, layout.IndexExt, layout.TimeIndexExt} {
		if err := os.Chtimes(segswap.CleanedPath(w.dir, w.base, ext), t, t); err != nil {
			return err
		}
	}
	return nil
}

// abort removes whatever the writer left.
func (w *segWriter) abort() {
	if w.f == nil {
		return
	}
	w.f.Abort()
	segswap.Abort(w.dir, []int64{w.base})
}
