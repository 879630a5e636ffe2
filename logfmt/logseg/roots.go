package logseg

import (
	"errors"
	"io/fs"
	"path/filepath"

	"github.com/logtool/logtool/logfmt/checkpoint"
	"github.com/logtool/logtool/logfmt/layout"
)

// RootOffset returns the partition's entry in the root offset checkpoint
// name (layout.LogStartOffsetCheckpointFile, layout.ReplicationOffsetCheckpointFile, ...) of the log
// directory holding it, and whether there is one. An absent file holds no
// entry; an unreadable one gives none and the error. A partition directory
// not named <topic>-<partition> has no entry anywhere.
func RootOffset(p *layout.Partition, name string) (int64, bool, error) {
	if p.Dir.Topic == "" {
		return 0, false, nil
	}
	// The file, which may list millions of partitions, is streamed to its
	// end even after the entry is found: a checkpoint that turns out
	// malformed gives no offset.
	var off int64
	found := false
	err := checkpoint.ScanOffsetsFile(filepath.Join(p.Path, "..", name), func(e checkpoint.OffsetEntry) error {
		if !found && e.Topic == p.Dir.Topic && e.Partition == p.Dir.Partition {
			off, found = e.Offset, true
		}
		return nil
	})
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return 0, false, nil
	case err != nil:
		return 0, false, err
	}
	return off, found, nil
}

// LogStartOffset returns the log start offset checkpoint LogLoader is
// given: the partition's entry in its log directory's
// log-start-offset-checkpoint, or 0 when there is none. An unreadable
// checkpoint gives 0 and the error.
func LogStartOffset(p *layout.Partition) (int64, error) {
	off, _, err := RootOffset(p, layout.LogStartOffsetCheckpointFile)
	return off, err
}
