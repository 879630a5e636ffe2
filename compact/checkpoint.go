package compact

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"sync"

	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/logfmt/checkpoint"
	"github.com/logtool/logtool/logfmt/layout"
)

// rootMu serialises the read-modify-write of root checkpoint files, which
// partitions cleaned in parallel share.
var rootMu sync.Mutex

// writeCheckpoint records that the partition is clean up to offset as of
// cleanTime: in its cleaner-checkpoint, and in the log directory's
// cleaner-offset-checkpoint when the log directory has one, which is what a
// broker that has not migrated reads. Files that already say so are left
// alone.
func writeCheckpoint(p *partition, offset, cleanTime int64) error {
	path := filepath.Join(p.dir, layout.CleanerCheckpointFile)
	data := checkpoint.AppendCleaner(nil, checkpoint.CleanerCheckpoint{FirstDirtyOffset: offset, LastCleanTimeMs: cleanTime})
	if err := writeIfChanged(path, data); err != nil {
		return err
	}
	if !p.rootFile || !p.named {
		return nil
	}
	rootMu.Lock()
	defer rootMu.Unlock()
	return updateRoot(filepath.Join(p.logDir, layout.CleanerOffsetCheckpointFile), p.topic, p.num, offset)
}

// updateRoot gives every entry of the partition in the root offset
// checkpoint at path the offset, appending an entry when there is none, and
// leaves a file that already says so alone.
//
// The file may list millions of partitions, so it is never held: a first
// pass counts the entries, which the new file declares before them, and
// sees whether any changes; the new file is then written entry by entry
// from the old one. Only a file whose entries all stay is compared byte for
// byte with what would be written, since one not in Kafka's own layout
// (other line ends, signs, spaces) is still rewritten in it.
func updateRoot(path, topic string, num int32, offset int64) error {
	n, found, same := 0, false, true
	err := checkpoint.ScanOffsetsFile(path, func(e checkpoint.OffsetEntry) error {
		n++
		if e.Topic == topic && e.Partition == num {
			found, same = true, same && e.Offset == offset
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil // migrated away since the partition was read
	}
	if err != nil {
		return err
	}
	if !found {
		n++
	}
	write := func(w io.Writer) error {
		ow := checkpoint.NewOffsetWriter(w, path, n)
		err := checkpoint.ScanOffsetsFile(path, func(e checkpoint.OffsetEntry) error {
			if e.Topic == topic && e.Partition == num {
				e.Offset = offset
			}
			return ow.Write(e)
		})
		if err == nil && !found {
			err = ow.Write(checkpoint.OffsetEntry{Topic: topic, Partition: num, Offset: offset})
		}
		if err != nil {
			return err
		}
		return ow.Close()
	}
	if found && same {
		if eq, err := sameContent(path, write); err != nil || eq {
			return err
		}
	}
	f, err := safefile.Create(path, 0o644)
	if err != nil {
		return err
	}
	defer f.Abort()
	if err := write(f); err != nil {
		return err
	}
	return f.Commit()
}

// sameContent reports whether write writes exactly the content of the file
// at path.
func sameContent(path string, write func(io.Writer) error) (bool, error) {
	f, err := safefile.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	w := &sameWriter{r: bufio.NewReader(f), same: true}
	if err := write(w); err != nil {
		return false, err
	}
	if w.err != nil {
		return false, w.err
	}
	_, err = w.r.ReadByte()
	switch {
	case err == io.EOF:
		return w.same, nil
	case err != nil:
		return false, err
	}
	return false, nil
}

// sameWriter compares what is written to it with what r reads.
type sameWriter struct {
	r    *bufio.Reader
	buf  []byte
	same bool
	err  error
}

func (w *sameWriter) Write(p []byte) (int, error) {
	if !w.same || w.err != nil {
		return len(p), nil
	}
	if cap(w.buf) < len(p) {
		w.buf = make([]byte, len(p))
	}
	w.buf = w.buf[:len(p)]
	_, err := io.ReadFull(w.r, w.buf)
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		w.same = false
	case err != nil:
		w.err = err
	default:
		w.same = bytes.Equal(w.buf, p)
	}
	return len(p), nil
}

func writeIfChanged(path string, data []byte) error {
	old, err := safefile.ReadFile(path)
	if err == nil && bytes.Equal(old, data) {
		return nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return safefile.WriteFile(path, data, 0o644)
}
