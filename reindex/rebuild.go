package reindex

import (
	"bytes"
	"errors"
	"io"
	"io/fs"

	"github.com/logtool/logtool/index"
	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/logfmt/layout"
)

// indexPath is the segment's path without ".log".
func indexPath(log string) string {
	return log[:len(log)-len(layout.LogExt)]
}

// write replaces, or in DryRun reports, every selected index file whose
// content differs from the rebuild.
func (r *run) write(s layout.Segment, sr *SegmentReport, res *rebuilt) error {
	base := indexPath(s.Log)
	if r.o.Offset {
		b, err := res.rec.OffsetIndexBytes()
		if err != nil {
			return err
		}
		if err := r.put(sr, OffsetIndex, base+layout.IndexExt, b, len(res.rec.Offsets), true); err != nil {
			return err
		}
	}
	if r.o.Time {
		want := res.timeEntries()
		b := make([]byte, 0, len(want)*index.TimeEntrySize)
		for _, e := range want {
			var err error
			if b, err = index.AppendTimeEntry(b, s.Base, e); err != nil {
				return err
			}
		}
		if err := r.put(sr, TimeIndex, base+layout.TimeIndexExt, b, len(want), true); err != nil {
			return err
		}
	}
	if r.o.Txn {
		b := make([]byte, 0, len(res.aborted)*index.TxnEntrySize)
		for _, t := range res.aborted {
			b = index.AppendAbortedTxn(b, t)
		}
		// Kafka creates a .txnindex on its first entry only, and recovery
		// empties an existing one rather than deleting it.
		if err := r.put(sr, TxnIndex, base+layout.TxnIndexExt, b, len(res.aborted), len(b) > 0); err != nil {
			return err
		}
	}
	return nil
}

// put writes data to path unless the file already holds it. create says
// whether an absent file is written.
func (r *run) put(sr *SegmentReport, k Kind, path string, data []byte, entries int, create bool) error {
	fr := FileReport{Kind: k, Path: path, Entries: entries, Before: entries, Action: Unchanged}
	defer func() { sr.Files = append(sr.Files, fr) }()
	same, size, err := sameContent(path, data)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		fr.Before = -1
		if !create {
			fr.Action = NotNeeded
			return nil
		}
	case err != nil:
		return err
	case same:
		return nil
	default:
		fr.Before = int(size / int64(k.entrySize()))
	}
	if r.o.Mode == DryRun {
		fr.Action = WouldWrite
		return nil
	}
	if err := safefile.WriteFile(path, data, 0o644); err != nil {
		return err
	}
	fr.Action = Written
	return nil
}

// sameContent reports whether the file at path holds exactly want, reading
// it in pieces, and its size.
func sameContent(path string, want []byte) (bool, int64, error) {
	f, err := safefile.Open(path)
	if err != nil {
		return false, 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return false, 0, err
	}
	if st.Size() != int64(len(want)) {
		return false, st.Size(), nil
	}
	buf := make([]byte, min(len(want), 64<<10))
	for off := 0; off < len(want); {
		n, err := io.ReadFull(f, buf[:min(len(buf), len(want)-off)])
		if err != nil {
			return false, st.Size(), err
		}
		if !bytes.Equal(buf[:n], want[off:off+n]) {
			return false, st.Size(), nil
		}
		off += n
	}
	return true, st.Size(), nil
}
