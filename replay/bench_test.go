package replay

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/internal/testkit/testutil"
	"github.com/logtool/logtool/logfmt/layout"
)

// BenchmarkReplayKfake replays 200,000 uncompressed records (100-byte
// values) to an in-process kfake cluster. The cluster runs in the same
// process, so `go test -bench ReplayKfake -cpuprofile` shows how the CPU is
// shared between logtool (fetch, replay), the client (kgo) and the cluster
// (kfake): issue 20 wants logtool under 30% of it.
func BenchmarkReplayKfake(b *testing.B) {
	p := genPartition(b, gen.Options{Topics: []string{"bench"}, Records: 200_000, Keys: 10_000, Magic: 2, Seed: 1})
	var size int64
	for _, s := range p.Segments {
		fi, _ := os.Stat(s.Log)
		size += fi.Size()
	}
	b.SetBytes(size)
	b.ResetTimer()
	defer testutil.ReportCPU(b, size)()
	for i := range b.N {
		b.StopTimer()
		topic := fmt.Sprintf("bench%d", i)
		c := cluster(b, 1, []string{topic})
		o := options(c)
		o.TopicMap = map[string]string{"bench": topic}
		b.StartTimer()
		if _, err := Run(context.Background(), []*layout.Partition{p}, o); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		c.Close()
		b.StartTimer()
	}
}
