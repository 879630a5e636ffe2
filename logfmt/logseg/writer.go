package logseg

import (
	"errors"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/logtool/logtool/index"
	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/layout"
)

// Writer writes one new segment: its .log as the batches come, then the
// .index and .timeindex LogSegment.recover would build for it
// (index.Recovery) and a .txnindex of its aborted transactions. Every file
// goes through safefile, so none is visible under its name before it is
// complete and durable. Compact, salvage, upgrade and gen all write their
// segments with it.
type Writer struct {
	path func(ext string) string // nil: a dry run, which only counts
	base int64
	f    *safefile.File
	bw   *behindWriter
	rec  *index.Recovery
	size int64
	made []string // files committed, which Abort removes until Finish returns
	done bool
}

// CreateSegment starts the segment based at base whose files path names by
// extension (layout.LogExt, ...). A nil path is a dry run: batches are
// checked and counted, nothing is written.
func CreateSegment(path func(ext string) string, base, intervalBytes int64) (*Writer, error) {
	w := &Writer{path: path, base: base, rec: index.NewRecovery(base, intervalBytes)}
	if path == nil {
		return w, nil
	}
	f, err := safefile.Create(path(layout.LogExt), 0o644)
	if err != nil {
		return nil, err
	}
	w.f = f
	return w, nil
}

// Append adds one batch (or legacy entry) to the .log. A segment holds at
// most 2^31-1 bytes, and offsets at most 2^31-1 above its base, as a
// broker's LogSegment does.
func (w *Writer) Append(entry []byte) error {
	b := logfmt.Batch{Data: entry}
	last := b.LastOffset()
	if d := last - w.base; d < 0 || d > math.MaxInt32 {
		return fmt.Errorf("%s: offset %d does not fit a segment based at %d", w.name(), last, w.base)
	}
	if w.size+int64(len(entry)) > math.MaxInt32 {
		return fmt.Errorf("%s: the segment would exceed %d bytes", w.name(), math.MaxInt32)
	}
	w.rec.Add(last, b.MaxTimestamp(), len(entry))
	w.size += int64(len(entry))
	if w.f == nil {
		return nil
	}
	if w.bw == nil {
		w.bw = newBehindWriter(w.f)
	}
	return w.bw.Write(entry)
}

// Write writes p to the .log at once, for a caller that frames the batches
// itself and reads the file back while it is written (upgrade's verifier).
// It feeds Recovery nothing: that caller adds each batch it reads back. A
// Writer is written either by Append or by Write, never both.
func (w *Writer) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	w.size += int64(n)
	return n, err
}

// WriteAt writes p at off in the .log, for that caller to fill in the
// header of a batch it wrote the rest of first (BatchBuilder.Spill).
func (w *Writer) WriteAt(p []byte, off int64) (int, error) { return w.f.WriteAt(p, off) }

// Name is the temporary name the .log is written under until Finish.
func (w *Writer) Name() string { return w.f.Name() }

// Size is the bytes written to the .log.
func (w *Writer) Size() int64 { return w.size }

// Recovery is the recovery model the indexes are built from.
func (w *Writer) Recovery() *index.Recovery { return w.rec }

func (w *Writer) name() string {
	if w.path == nil {
		return layout.SegmentName(w.base, layout.LogExt)
	}
	return w.path(layout.LogExt)
}

// Finish makes the .log durable, then writes its .index and .timeindex, and
// a .txnindex when aborted has entries. A non-zero mtime becomes the
// modification time of the .log and its indexes, as
// LogSegment.setLastModified sets it: retention falls back on it.
func (w *Writer) Finish(aborted []index.AbortedTxn, mtime time.Time) error {
	w.rec.Finish()
	if w.f == nil {
		return nil
	}
	if w.bw != nil {
		err := w.bw.Close()
		w.bw = nil
		if err != nil {
			return err
		}
	}
	if err := w.commit(w.f, layout.LogExt, mtime); err != nil {
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
	if len(aborted) > 0 {
		var xb []byte
		for _, t := range aborted {
			xb = index.AppendAbortedTxn(xb, t)
		}
		files = append(files, struct {
			ext  string
			data []byte
		}{layout.TxnIndexExt, xb})
	}
	for _, file := range files {
		f, err := safefile.Create(w.path(file.ext), 0o644)
		if err != nil {
			return err
		}
		if _, err := f.Write(file.data); err != nil {
			f.Abort()
			return err
		}
		if err := w.commit(f, file.ext, mtime); err != nil {
			return err
		}
	}
	w.made, w.done = nil, true
	return nil
}

// commit sets the modification time, when asked, before the fsync that
// makes it durable with the content.
func (w *Writer) commit(f *safefile.File, ext string, mtime time.Time) error {
	if !mtime.IsZero() && ext != layout.TxnIndexExt {
		if err := os.Chtimes(f.Name(), mtime, mtime); err != nil {
			f.Abort()
			return err
		}
	}
	if err := f.Commit(); err != nil {
		f.Abort()
		return err
	}
	w.made = append(w.made, w.path(ext))
	return nil
}

// Abort gives the segment up: the unfinished .log and every file Finish
// had already written are removed, by their exact names.
func (w *Writer) Abort() error {
	if w.f == nil || w.done {
		return nil
	}
	var errs []error
	if w.bw != nil {
		errs = append(errs, w.bw.Close())
		w.bw = nil
	}
	errs = append(errs, w.f.Abort())
	for _, path := range w.made {
		errs = append(errs, safefile.RemoveLeftover(path))
	}
	w.made = nil
	return errors.Join(errs...)
}
