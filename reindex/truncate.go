package reindex

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/logtool/logtool/internal/refuse"
	"github.com/logtool/logtool/internal/safefile"
)

// ErrBackupExists is returned by Partition when TruncateCorruptTail would
// overwrite a backup file holding other bytes than those it would remove.
var ErrBackupExists = refuse.New("backup file already exists with other content")

// BackupName is the file TruncateCorruptTail writes the removed bytes of
// the .log at logPath to, when they start at byte pos:
// "00000000000000000000.log.truncated-4096". The name ends in none of the
// extensions Kafka's log loader acts on, so a broker leaves it alone, and
// restoring is `cat name.log name.log.truncated-N > restored.log`.
func BackupName(logPath string, pos int64) string {
	return fmt.Sprintf("%s.truncated-%d", logPath, pos)
}

// truncate cuts the .log after its valid batches when asked to, keeping the
// bytes removed in a backup file. The backup is complete and durable before
// the .log is touched, so a crash leaves either the old .log or the cut one
// with its backup; running again with the backup in place is harmless. The
// cut of the partition's last segment (last) moves its log end offset, and
// what says the partition goes further is brought down first (newEnd).
func (r *run) truncate(sr *SegmentReport, last bool) error {
	if !r.o.TruncateCorruptTail || sr.Overflow || sr.Tail() <= 0 {
		return nil
	}
	// The cut is made in place: never through a link, to a file that may
	// not even be in the log directory.
	if err := safefile.NoSymlinks(sr.Log); err != nil {
		return err
	}
	zeros, err := zeroTail(sr.Log, sr.ValidBytes, sr.Size)
	if err != nil {
		return err
	}
	if zeros {
		// A backup would be a file of zeros as long as the tail, which may
		// be gigabytes of a sparse file: its length says it all.
		sr.Cut = true
		if last {
			if err := r.newEnd(sr.NextOffset); err != nil {
				return err
			}
		}
		if r.o.Mode == DryRun {
			r.c.note(sr.Log, fmt.Sprintf("would cut the %d bytes from byte %d; all zeros, so no backup is needed", sr.Tail(), sr.ValidBytes))
			return nil
		}
		if err := safefile.Truncate(sr.Log, sr.ValidBytes); err != nil {
			return err
		}
		sr.ZerosCut = sr.Tail()
		r.c.note(sr.Log, fmt.Sprintf("cut the %d bytes from byte %d; all zeros, so no backup was kept", sr.Tail(), sr.ValidBytes))
		return nil
	}
	backup := BackupName(sr.Log, sr.ValidBytes)
	same, err := sameTail(backup, sr.Log, sr.ValidBytes, sr.Size)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return err
	case !same:
		return fmt.Errorf("%s: %w; move it away to truncate %s", backup, ErrBackupExists, sr.Log)
	}
	sr.Cut = true
	if r.o.Mode == DryRun {
		sr.Backup = backup
		if last {
			if err := r.newEnd(sr.NextOffset); err != nil {
				return err
			}
		}
		r.c.note(sr.Log, fmt.Sprintf("would cut the %d bytes from byte %d, keeping them in %s", sr.Tail(), sr.ValidBytes, backup))
		return nil
	}
	if !same {
		if err := copyTail(backup, sr.Log, sr.ValidBytes, sr.Size); err != nil {
			return err
		}
	}
	if last {
		if err := r.newEnd(sr.NextOffset); err != nil {
			return err
		}
	}
	if err := safefile.Truncate(sr.Log, sr.ValidBytes); err != nil {
		return err
	}
	sr.Backup = backup
	r.c.note(sr.Log, fmt.Sprintf("cut the %d bytes from byte %d; they are kept in %s", sr.Tail(), sr.ValidBytes, backup))
	return nil
}

// sameTail reports whether backup holds exactly bytes [from, to) of log.
func sameTail(backup, log string, from, to int64) (bool, error) {
	b, err := safefile.Open(backup)
	if err != nil {
		return false, err
	}
	defer b.Close()
	st, err := b.Stat()
	if err != nil {
		return false, err
	}
	if st.Size() != to-from {
		return false, nil
	}
	l, err := safefile.Open(log)
	if err != nil {
		return false, err
	}
	defer l.Close()
	x, y := make([]byte, 64<<10), make([]byte, 64<<10)
	for off := from; off < to; {
		n := int(min(int64(len(x)), to-off))
		if _, err := l.ReadAt(x[:n], off); err != nil {
			return false, err
		}
		if _, err := b.ReadAt(y[:n], off-from); err != nil {
			return false, err
		}
		if !bytes.Equal(x[:n], y[:n]) {
			return false, nil
		}
		off += int64(n)
	}
	return true, nil
}

// copyTail writes bytes [from, to) of log to backup through safefile.
func copyTail(backup, log string, from, to int64) error {
	l, err := safefile.Open(log)
	if err != nil {
		return err
	}
	defer l.Close()
	w, err := safefile.Create(backup, 0o644)
	if err != nil {
		return err
	}
	defer w.Abort()
	if _, err := io.Copy(w, io.NewSectionReader(l, from, to-from)); err != nil {
		return err
	}
	return w.Commit()
}
