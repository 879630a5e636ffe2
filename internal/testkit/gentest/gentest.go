// Package gentest makes the generated log directories benchmarks share, with
// internal/gen; it is apart from testutil because gen imports packages whose
// own tests use testutil.
package gentest

import (
	"os"
	"path/filepath"

	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/logfmt/codec"
	"github.com/logtool/logtool/logfmt/layout"
)

// SmallBatches writes the partition the targets of parallel batch
// decoding are set on (issue 19), `logtool gen --batch-records 8
// --value-bytes 200 --tombstone-ratio 0.01` with the given codec and number
// of records, ten per key, in one segment, into the log directory dir. It
// returns the partition's directory, and its segment's path and size.
func SmallBatches(dir string, c codec.Type, records int) (part, log string, size int64, err error) {
	parts, err := gen.Generate(gen.Options{Out: dir, Topics: []string{"bench"}, Records: records, Keys: records / 10, ValueBytes: 200,
		BatchRecords: 8, TombstoneRatio: 0.01, Magic: 2, Compression: c, SegmentBytes: 1 << 30, Seed: 19})
	if err != nil {
		return "", "", 0, err
	}
	log = filepath.Join(parts[0].Dir, layout.SegmentName(0, layout.LogExt))
	fi, err := os.Stat(log)
	if err != nil {
		return "", "", 0, err
	}
	return parts[0].Dir, log, fi.Size(), nil
}
