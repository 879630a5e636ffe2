package faulttest

import (
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/logtool/logtool/internal/safefile"
	"github.com/logtool/logtool/internal/testkit/testutil"
	"github.com/logtool/logtool/logfmt/codec"
	"github.com/logtool/logtool/logfmt/layout"
)

// TestTruncateCrash (issue 36, C): reindex --truncate-corrupt-tail on a log
// directory whose partitions each have a damaged batch in the middle of
// their active segment is killed at each of its renames, removals and
// truncations in turn. The cut lowers each log end offset, so besides the
// .log, its backup and its indexes, the recovery point and high watermark
// checkpoints and the producer snapshots past the new end change. After
// every kill a re-run must succeed, leave the files of an uninterrupted
// run byte for byte, and verify must pass on the whole log directory.
func TestTruncateCrash(t *testing.T) {
	o := matrixOptions(format{"v2-none", 2, codec.None})
	o.Topics, o.Partitions, o.Records = []string{"events", "orders"}, 2, 200
	setup := func(t *testing.T) string {
		return derivedFixture(t, "torn", o, func(t testing.TB, dir string) {
			for _, part := range testutil.PartitionDirs(t, dir) {
				p, err := layout.ReadPartition(part)
				if err != nil {
					t.Fatal(err)
				}
				log := p.Segments[len(p.Segments)-1].Log
				fi, err := os.Stat(log)
				if err != nil {
					t.Fatal(err)
				}
				testutil.FlipByte(t, log, int(fi.Size()/2))
			}
		})
	}
	argv := func(dir string) []string {
		return []string{"--workers", "1", "reindex", "--truncate-corrupt-tail", dir}
	}

	dir := setup(t)
	if r := run(t, "verify", dir); r.code != 3 {
		t.Fatalf("verify of the damaged fixture: %v", r)
	}
	var count truncateKiller
	restore := safefile.SetFaultHook(count.hook)
	r := run(t, argv(dir)...)
	restore()
	if r.code != 0 || !strings.Contains(r.stdout, "lowered the high watermark") {
		t.Fatalf("uninterrupted run: %v\n%s", r, r.stdout)
	}
	if r := run(t, "verify", "--deep", dir); r.code != 0 {
		t.Fatalf("verify after an uninterrupted run: %v\n%s", r, clip(r.stdout, 1500))
	}
	want := digest(t, dir)
	n := count.n.Load()
	t.Logf("%d kill points", n)
	for at := int64(1); at <= n; at++ {
		dir := setup(t)
		k := &truncateKiller{at: at}
		restore := safefile.SetFaultHook(k.hook)
		r := run(t, argv(dir)...)
		restore()
		if r.code == 0 {
			t.Errorf("kill point %d: exit 0 although the step failed", at)
		}
		if r := run(t, argv(dir)...); r.code != 0 {
			t.Errorf("kill point %d: re-run: %v", at, r)
			continue
		}
		if r := run(t, "verify", "--deep", dir); r.code != 0 {
			t.Errorf("kill point %d: verify after the re-run: %v\n%s", at, r, clip(r.stdout, 1500))
		}
		if d := diff(want, digest(t, dir), func(s string) bool { return !strings.HasSuffix(s, safefile.TempSuffix) }); len(d) > 0 {
			t.Errorf("kill point %d: after the re-run the files differ from an uninterrupted run: %v", at, d)
		}
	}
}

// truncateKiller fails the at-th rename, removal or truncation and every
// step after it, as a process killed there; with at 0 it only counts.
type truncateKiller struct {
	at   int64
	n    atomic.Int64
	dead atomic.Bool
}

func (k *truncateKiller) hook(step safefile.Step, path string) error {
	if k.dead.Load() {
		return fmt.Errorf("%s: %w", path, safefile.ErrInjected)
	}
	if step != safefile.StepRename && step != safefile.StepRemove && step != safefile.StepTruncate {
		return nil
	}
	if n := k.n.Add(1); k.at > 0 && n >= k.at {
		k.dead.Store(true)
		return fmt.Errorf("%s: %w", path, safefile.ErrInjected)
	}
	return nil
}
