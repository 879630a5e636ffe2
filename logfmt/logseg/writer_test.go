package logseg

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/logtool/logtool/index"
	"github.com/logtool/logtool/internal/testkit/testutil"
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/layout"
)

// TestWriter: a finished segment is its batches, with the indexes
// LogSegment.recover rebuilds from them, the aborted transactions given,
// and the modification time given on the .log and its indexes; an aborted
// one leaves nothing, and a dry run writes nothing.
func TestWriter(t *testing.T) {
	var batches [][]byte
	for i := range 200 {
		o := logfmt.DefaultBatchOptions(100 + int64(i)*3)
		var recs []logfmt.Record
		for j := range 3 {
			recs = append(recs, logfmt.Record{Offset: o.BaseOffset + int64(j), Timestamp: 1_700_000_000_000 + int64(i), Value: bytes.Repeat([]byte("v"), 40)})
		}
		b, err := logfmt.AppendBatch(nil, o, recs)
		if err != nil {
			t.Fatal(err)
		}
		batches = append(batches, b)
	}
	aborted := []index.AbortedTxn{{ProducerID: 1, FirstOffset: 100, LastOffset: 110, LastStableOffset: 111}}
	mtime := time.UnixMilli(1_600_000_000_000)
	write := func(t *testing.T, dir string, finish bool) *Writer {
		path := func(ext string) string { return filepath.Join(dir, layout.SegmentName(100, ext)) }
		if dir == "" {
			path = nil
		}
		w, err := CreateSegment(path, 100, index.DefaultIntervalBytes)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range batches {
			if err := w.Append(b); err != nil {
				t.Fatal(err)
			}
		}
		if finish {
			if err := w.Finish(aborted, mtime); err != nil {
				t.Fatal(err)
			}
		}
		return w
	}

	dir := t.TempDir()
	write(t, dir, true).Abort() // after Finish, Abort changes nothing
	name := func(ext string) string { return filepath.Join(dir, layout.SegmentName(100, ext)) }
	log, err := os.ReadFile(name(layout.LogExt))
	if err != nil || !bytes.Equal(log, slices.Concat(batches...)) {
		t.Fatalf(".log is not the batches appended (%v)", err)
	}
	r, err := testutil.RebuildSegment(name(layout.LogExt), 100, index.DefaultIntervalBytes, nil)
	if err != nil {
		t.Fatal(err)
	}
	ib, _ := r.OffsetIndexBytes()
	tb, _ := r.TimeIndexBytes()
	var xb []byte
	for _, a := range aborted {
		xb = index.AppendAbortedTxn(xb, a)
	}
	for ext, want := range map[string][]byte{layout.IndexExt: ib, layout.TimeIndexExt: tb, layout.TxnIndexExt: xb} {
		if got, err := os.ReadFile(name(ext)); err != nil || !bytes.Equal(got, want) || len(want) == 0 {
			t.Errorf("%s differs from recovery's (%v)", ext, err)
		}
	}
	for _, ext := range []string{layout.LogExt, layout.IndexExt, layout.TimeIndexExt} {
		if fi, err := os.Stat(name(ext)); err != nil || !fi.ModTime().Equal(mtime) {
			t.Errorf("%s: modification time %v (%v), want %v", ext, fi.ModTime(), err, mtime)
		}
	}

	aborting := t.TempDir()
	if err := write(t, aborting, false).Abort(); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(aborting); len(left) > 0 {
		t.Errorf("an aborted segment left %v", left)
	}

	if w := write(t, "", true); w.Size() != int64(len(log)) {
		t.Errorf("dry run counted %d bytes, want %d", w.Size(), len(log))
	}
}
