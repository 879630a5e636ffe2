package compact

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/logfmt/checkpoint"
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
	path := filepath.Join(p.dir, checkpoint.Cleaner)
	data := checkpoint.AppendCleaner(nil, checkpoint.CleanerCheckpoint{FirstDirtyOffset: offset, LastCleanTimeMs: cleanTime})
	if err := writeIfChanged(path, data); err != nil {
		return err
	}
	if !p.rootFile || !p.named {
		return nil
	}
	rootMu.Lock()
	defer rootMu.Unlock()
	root := filepath.Join(p.logDir, checkpoint.CleanerOffset)
	entries, err := checkpoint.ReadOffsetsFile(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // migrated away since the partition was read
	}
	if err != nil {
		return err
	}
	found := false
	for i := range entries {
		if entries[i].Topic == p.topic && entries[i].Partition == p.num {
			entries[i].Offset, found = offset, true
		}
	}
	if !found {
		entries = append(entries, checkpoint.OffsetEntry{Topic: p.topic, Partition: p.num, Offset: offset})
	}
	return writeIfChanged(root, checkpoint.AppendOffsets(nil, entries))
}

func writeIfChanged(path string, data []byte) error {
	old, err := os.ReadFile(path)
	if err == nil && bytes.Equal(old, data) {
		return nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return safefile.WriteFile(path, data, 0o644)
}
