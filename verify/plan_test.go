package verify

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/logtool/logtool/internal/gen"
	"github.com/logtool/logtool/internal/target"
	"github.com/logtool/logtool/internal/testkit/locktest"
	"github.com/logtool/logtool/internal/testkit/testutil"
	"github.com/logtool/logtool/logfmt/codec"
)

// plan resolves paths as logtool verify does, with the holders of their
// locks, and plans them.
func plan(t testing.TB, paths ...string) (*Plan, *target.Set) {
	t.Helper()
	set, err := target.Resolve(paths, target.Options{Command: "verify", Takes: target.Files | target.Segments | target.Partitions | target.LogDirs})
	if err != nil {
		t.Fatalf("Resolve(%v): %v", paths, err)
	}
	if _, err := set.Lock(target.Read); err != nil {
		t.Fatal(err)
	}
	return NewPlan(set), set
}

func kinds(r result) []string {
	var out []string
	for _, rep := range r.reports {
		out = append(out, fmt.Sprintf("%s %s %d", rep.Kind, filepath.Base(rep.Path), rep.Segments))
	}
	return out
}

// TestPlanUnits checks what each kind of path makes a run verify, and that
// a path given twice is verified once.
func TestPlanUnits(t *testing.T) {
	fx := small(t, 1, codec.None)
	logs := segmentLogs(t, fx)
	n := len(logs)
	base := filepath.Base(fx.dir)
	for _, tc := range []struct {
		name  string
		paths []string
		want  []string
	}{
		{"log dir", []string{fx.dir, fx.dir}, []string{fmt.Sprintf("partition t-0 %d", n), "log-dir " + base + " 0"}},
		{"partition dir", []string{fx.part}, []string{fmt.Sprintf("partition t-0 %d", n), "log-dir " + base + " 0"}},
		{"segment files", []string{logs[1], logs[0], fx.file(filepath.Base(logs[1][:len(logs[1])-4]) + ".index")}, []string{"partition t-0 2"}},
		{"segment then its partition", []string{logs[1], fx.part}, []string{fmt.Sprintf("partition t-0 %d", n), "log-dir " + base + " 0"}},
		{"other files", []string{fx.file("leader-epoch-checkpoint"), filepath.Join(fx.dir, "meta.properties")},
			[]string{"file leader-epoch-checkpoint 0", "file meta.properties 0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, Options{}, tc.paths...)
			if got := kinds(r); !slices.Equal(got, tc.want) || r.problems != 0 {
				t.Errorf("reports %q with %d problems, want %q:\n%s", got, r.problems, tc.want, r)
			}
		})
	}
}

// TestPlanScope checks that a partition given alone is judged against its
// log directory's checkpoints, and that a segment given alone is not
// judged by the others.
func TestPlanScope(t *testing.T) {
	fx := small(t, 2, codec.None)
	cp := filepath.Join(fx.dir, "recovery-point-offset-checkpoint")
	mustWrite(t, cp, []byte("0\n2\nother 0 5\nt 0 1000\n"))
	r := run(t, Options{}, fx.part)
	if got := r.problemsAbout(cp); len(got) != 1 || got[0].Pos != 14 {
		t.Errorf("want one problem about the partition's line at byte 14:\n%s", r)
	}
	if r.infos != 0 {
		t.Errorf("partitions not asked about are not reported:\n%s", r)
	}
	logs := segmentLogs(t, fx)
	edit(t, logs[0], func(b []byte) []byte { b[30] ^= 1; return b })
	if r := run(t, Options{}, logs[1]); r.problems != 0 {
		t.Errorf("segment %s alone: want no problems:\n%s", logs[1], r)
	}
	if r := run(t, Options{}, logs[0]); len(r.problemsAbout(logs[0])) == 0 {
		t.Errorf("segment %s alone: want its problem:\n%s", logs[0], r)
	}
}

// TestListingLimit checks that a file with many problems lists a few and
// counts them all.
func TestListingLimit(t *testing.T) {
	fx := small(t, 0, codec.None)
	log := segmentLogs(t, fx)[0]
	bs := testutil.Batches(t, log)
	// Offsets lie outside a legacy message's checksum: every message but
	// the first goes back to offset 0, each one a problem.
	edit(t, log, func(b []byte) []byte {
		for _, x := range bs[1:] {
			clear(b[x.Pos : x.Pos+8])
		}
		return b
	})
	r := run(t, Options{}, fx.part)
	listed := r.problemsAbout(log)
	if r.problems < len(bs)-1 || len(listed) != maxListed+1 || listed[maxListed].Pos != bs[maxListed+1].Pos {
		t.Errorf("%d problems, %d listed; want at least %d, %d listed and a last line about byte %d:\n%s",
			r.problems, len(listed), len(bs)-1, maxListed+1, bs[maxListed+1].Pos, r)
	}
}

// TestRunningBroker checks that a log directory a broker holds is verified
// all the same, with the end of its active segments taken for a write in
// progress, and nothing written.
func TestRunningBroker(t *testing.T) {
	fx := small(t, 2, codec.LZ4)
	logs := segmentLogs(t, fx)
	active, older := logs[len(logs)-1], logs[0]
	zeros := func(b []byte) []byte { return append(b, make([]byte, 100)...) }
	edit(t, active, zeros)
	edit(t, older, zeros)
	locktest.Hold(t, fx.dir)
	before := listing(t, fx.dir)

	_, set := plan(t, fx.dir)
	if len(set.LogDirs) != 1 || set.LogDirs[0].Held == nil {
		t.Errorf("the broker holding %s was not seen", fx.dir)
	}
	r := run(t, Options{}, fx.dir)
	if len(r.problemsAbout(active)) != 0 || len(r.problemsAbout(older)) != 1 {
		t.Errorf("want the zeros of the older segment a problem, of the active one not:\n%s", r)
	}
	if after := listing(t, fx.dir); !slices.Equal(before, after) {
		t.Errorf("files changed:\n%q\n%q", before, after)
	}
}

// listing names, sizes and modification times every file under dir.
func listing(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		out = append(out, fmt.Sprintf("%s %d %v", path, fi.Size(), fi.ModTime().UnixNano()))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestProgress checks that the progress reported adds up to LogBytes.
func TestProgress(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join(samples, "logdirs", "*"))
	paths := []string{"../testdata/kafka-logs"}
	for _, d := range dirs {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			paths = append(paths, d)
		}
	}
	p, _ := plan(t, paths...)
	var got atomic.Int64
	if err := p.Run(Options{Workers: 3, Progress: func(n int64) { got.Add(n) }}, func(*Report) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if want := p.LogBytes(); got.Load() != want || want == 0 {
		t.Errorf("progress %d bytes, LogBytes %d", got.Load(), want)
	}
}

// TestRunStopsOnEmitError checks that a failing writer ends the run with
// its error, however many units are left.
func TestRunStopsOnEmitError(t *testing.T) {
	p, _ := plan(t, "../testdata/kafka-logs")
	stop := errors.New("stdout closed")
	calls := 0
	err := p.Run(Options{Workers: 1}, func(*Report) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("Run = %v after %d calls, want %v after 1", err, calls, stop)
	}
}

// TestBatchWorkers: a partition verified alone, named or with its log
// directory, gets every worker for its batches; several share them.
func TestBatchWorkers(t *testing.T) {
	one := generate(t, gen.Options{Records: 10})
	two := generate(t, gen.Options{Records: 10, Partitions: 2})
	for _, c := range []struct {
		paths []string
		want  int
	}{
		{[]string{one.part}, 4},
		{[]string{one.dir}, 4},
		{[]string{one.file("00000000000000000000.log")}, 4},
		{[]string{two.dir}, 2},
		{[]string{one.part, two.dir}, 1},
	} {
		p, _ := plan(t, c.paths...)
		if got := p.batchWorkers(4); got != c.want {
			t.Errorf("%v: %d batch workers of 4, want %d", c.paths, got, c.want)
		}
	}
}
