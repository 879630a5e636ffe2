package compact

import (
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/internal/testkit/testutil"
	"github.com/logtool/logtool/logfmt/codec"
)

// TestBatchWorkersSameBytes cleans the same partitions with one batch
// worker and with four, for every codec and magic, with tombstones and,
// in v2, transactions committed and aborted: the cleaning pass filters and
// rebuilds batches on the workers, and its output must not depend on them.
// A second run, past the delete retention, cleans whatever is due then.
func TestBatchWorkersSameBytes(t *testing.T) {
	for _, magic := range []int8{0, 1, 2} {
		for _, c := range []codec.Type{codec.None, codec.Gzip, codec.Snappy, codec.LZ4, codec.Zstd} {
			if !c.ValidFor(magic) {
				continue
			}
			t.Run(fmt.Sprintf("v%d-%s", magic, c), func(t *testing.T) {
				t.Parallel()
				o := gen.Options{Out: t.TempDir(), Topics: []string{"t"}, Magic: magic, Compression: c, Records: 2000, Keys: 150,
					BatchRecords: 4, TombstoneRatio: 0.1, SegmentBytes: 64 << 10, StartTime: t0, Seed: int64(magic)*10 + int64(c)}
				if magic == 2 {
					o.TransactionalRatio, o.AbortRatio = 0.4, 0.3
				}
				if _, err := gen.Generate(o); err != nil {
					t.Fatal(err)
				}
				one := filepath.Join(o.Out, "t-0")
				four := filepath.Join(t.TempDir(), "t-0")
				testutil.CopyTree(t, one, four)
				for round, now := range []int64{t0 + 30*day, t0 + 32*day} {
					opts := testOptions(now)
					opts.MaxLag = day
					opts.BatchWorkers = 1
					r1 := mustCompact(t, one, opts)
					opts.BatchWorkers = 4
					r4 := mustCompact(t, four, opts)
					if round == 0 && r1.Passes == 0 {
						t.Fatalf("no pass at %d: %s", now, r1.Reason)
					}
					r1.Dir, r4.Dir = "", ""
					if !reflect.DeepEqual(r1, r4) {
						t.Errorf("at %d, one worker did %+v, four did %+v", now, *r1, *r4)
					}
					if digest(t, one) != digest(t, four) {
						t.Fatalf("at %d, the cleaned partitions differ", now)
					}
				}
			})
		}
	}
}
