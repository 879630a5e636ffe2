package parallel

import (
	"errors"
	"fmt"
	"hash/crc32"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

func TestWorkers(t *testing.T) {
	for _, c := range []struct{ w, n, want int }{{4, 10, 4}, {4, 2, 2}, {0, 5, 1}, {3, 0, 1}} {
		if got := Workers(c.w, c.n); got != c.want {
			t.Errorf("Workers(%d, %d) = %d, want %d", c.w, c.n, got, c.want)
		}
	}
}

// TestPerJob: jobs at once × goroutines each stays within w.
func TestPerJob(t *testing.T) {
	for _, c := range []struct{ w, n, want int }{{8, 1, 8}, {8, 2, 4}, {8, 3, 2}, {8, 20, 1}, {3, 2, 1}, {1, 1, 1}, {4, 0, 4}} {
		if got := PerJob(c.w, c.n); got != c.want || got*Workers(c.w, c.n) > max(c.w, 1) {
			t.Errorf("PerJob(%d, %d) = %d, want %d", c.w, c.n, got, c.want)
		}
	}
}

// TestEachBounded: never more than w calls at once, and every index once.
func TestEachBounded(t *testing.T) {
	const n, w = 200, 3
	var running, peak atomic.Int32
	seen := make([]atomic.Int32, n)
	err := Each(n, w, func(i int) error {
		r := running.Add(1)
		for {
			p := peak.Load()
			if r <= p || peak.CompareAndSwap(p, r) {
				break
			}
		}
		time.Sleep(50 * time.Microsecond)
		running.Add(-1)
		seen[i].Add(1)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if p := peak.Load(); p > w {
		t.Errorf("%d calls at once, want at most %d", p, w)
	}
	for i := range seen {
		if seen[i].Load() != 1 {
			t.Fatalf("index %d ran %d times", i, seen[i].Load())
		}
	}
}

// TestEachInOrder: jobs are taken in index order, so a job that waits for
// the one before it (as dump's writer waits for the output of job i) never
// waits for a job that no worker has taken.
func TestEachInOrder(t *testing.T) {
	const n = 300
	finished := make([]chan struct{}, n)
	for i := range finished {
		finished[i] = make(chan struct{})
	}
	done := make(chan error)
	go func() {
		done <- Each(n, 2, func(i int) error {
			if i > 0 {
				<-finished[i-1]
			}
			close(finished[i])
			return nil
		})
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("deadlock: a job waits for one not taken")
	}
}

// TestEachStopsOnError: after a failure no new call starts, and the error
// returned is the lowest failed index's.
func TestEachStopsOnError(t *testing.T) {
	var calls atomic.Int32
	errAt := func(i int) error { return errors.New("failed " + string(rune('0'+i))) }
	err := Each(100, 1, func(i int) error {
		calls.Add(1)
		if i == 5 || i == 7 {
			return errAt(i)
		}
		return nil
	})
	if err == nil || err.Error() != "failed 5" {
		t.Fatalf("err = %v, want failed 5", err)
	}
	if c := calls.Load(); c != 6 {
		t.Errorf("%d calls, want 6 (none after the failure)", c)
	}
}

// TestOrdered: results come out in index order although they finish out of
// order, on the caller's goroutine, and an emit error stops new jobs.
func TestOrdered(t *testing.T) {
	const n = 50
	var got []int
	err := Ordered(n, 4, func(i int) int {
		time.Sleep(time.Duration((n-i)%7) * 100 * time.Microsecond)
		return i * i
	}, func(i, v int) error {
		if v != i*i {
			t.Errorf("emit(%d, %d)", i, v)
		}
		got = append(got, i)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, g := range got {
		if g != i {
			t.Fatalf("emitted %v", got)
		}
	}
	if len(got) != n {
		t.Fatalf("emitted %d, want %d", len(got), n)
	}

	stop := errors.New("stop")
	var ran atomic.Int32
	err = Ordered(1000, 2, func(i int) int {
		ran.Add(1)
		time.Sleep(100 * time.Microsecond)
		return i
	}, func(i, _ int) error {
		if i == 3 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) {
		t.Fatalf("err = %v", err)
	}
	if r := ran.Load(); r > 100 {
		t.Errorf("%d jobs ran after emit failed at 3", r)
	}
}

// TestOrderedBounded: while emit is held up, no more than ahead(w, n) jobs
// start, so results cannot pile up in memory behind a stalled reader.
func TestOrderedBounded(t *testing.T) {
	const n, w = 100, 3
	var started atomic.Int32
	release := make(chan struct{})
	done := make(chan error)
	go func() {
		done <- Ordered(n, w, func(i int) int {
			started.Add(1)
			return i
		}, func(i, _ int) error {
			if i == 0 {
				<-release
			}
			return nil
		})
	}()
	time.Sleep(50 * time.Millisecond)
	if s := started.Load(); s > int32(ahead(w, n)) {
		t.Errorf("%d jobs started while the first result waited, want at most %d", s, ahead(w, n))
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if s := started.Load(); s != n {
		t.Errorf("%d jobs ran, want %d", s, n)
	}
}

// TestOrderedMemoryFlat: Ordered's own memory does not grow with the
// number of jobs, which for grep is the number of 2 MiB units of a log.
func TestOrderedMemoryFlat(t *testing.T) {
	allocs := func(n int) float64 {
		return testing.AllocsPerRun(3, func() {
			sum := 0
			if err := Ordered(n, 2, func(i int) int { return i }, func(_ int, v int) error { sum += v; return nil }); err != nil {
				t.Fatal(err)
			}
		})
	}
	if small, large := allocs(100), allocs(20000); large > small+50 {
		t.Errorf("Ordered made %.0f allocations for 20,000 jobs against %.0f for 100", large, small)
	}
}

// TestOrderedRing: with the result slots reused, every n against the
// slots (fewer jobs, more workers than jobs) gives each job's own result in
// order, with jobs finishing out of order, and an emit failing anywhere
// returns its error with no worker left behind.
func TestOrderedRing(t *testing.T) {
	stop := errors.New("stop")
	base := runtime.NumGoroutine()
	for _, n := range []int{1, 2, 3, 5, 7, 17, 64} {
		for _, w := range []int{0, 1, 2, 3, 8, 20} {
			for _, at := range []int{-1, 0, min(1, n-1), n / 2, n - 1} {
				emitted := 0
				res := make(chan error, 1)
				go func() {
					res <- Ordered(n, w, func(i int) int {
						time.Sleep(time.Duration((i*7919)%5) * 50 * time.Microsecond)
						return i*3 + 1
					}, inOrder(t, fmt.Sprintf("n %d, w %d", n, w), func(i int) int { return i*3 + 1 }, at, stop, &emitted))
				}()
				select {
				case err := <-res:
					if want := at >= 0; errors.Is(err, stop) != want || !want && err != nil {
						t.Errorf("n %d, w %d, failing at %d: err %v", n, w, at, err)
					}
					if at < 0 && emitted != n || at >= 0 && emitted != at+1 {
						t.Errorf("n %d, w %d, failing at %d: %d emitted", n, w, at, emitted)
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("n %d, w %d, failing at %d: Ordered hangs", n, w, at)
				}
			}
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > base && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if g := runtime.NumGoroutine(); g > base {
		t.Errorf("%d goroutines left, %d before", g, base)
	}
}

// TestStream: jobs found as the work goes come out in order, a failing
// emit stops the work, and nothing is left running once the producer the
// caller drains has finished.
func TestStream(t *testing.T) {
	stop := errors.New("stop")
	base := runtime.NumGoroutine()
	for _, n := range []int{0, 1, 2, 5, 40} {
		for _, w := range []int{0, 1, 3} {
			for _, at := range []int{-1, 0, n / 2, n - 1} {
				if at >= n {
					continue
				}
				ch := make(chan int)
				go func() {
					defer close(ch)
					for i := range n {
						time.Sleep(time.Duration(i%3) * 30 * time.Microsecond)
						ch <- i * 10
					}
				}()
				emitted := 0
				err := Stream(w, func() (int, bool) { j, ok := <-ch; return j, ok }, func(j int) int {
					time.Sleep(time.Duration((j*7919)%5) * 40 * time.Microsecond)
					return j + 1
				}, inOrder(t, fmt.Sprintf("n %d, w %d", n, w), func(i int) int { return i*10 + 1 }, at, stop, &emitted))
				for range ch {
				}
				if want := at >= 0; errors.Is(err, stop) != want || !want && err != nil {
					t.Errorf("n %d, w %d, failing at %d: err %v", n, w, at, err)
				}
				if at < 0 && emitted != n || at >= 0 && emitted != at+1 {
					t.Errorf("n %d, w %d, failing at %d: %d emitted", n, w, at, emitted)
				}
			}
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > base && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if g := runtime.NumGoroutine(); g > base {
		t.Errorf("%d goroutines left running", g-base)
	}
}

// inOrder is an emit that wants the values want(i) in index order, counts
// them in *emitted, and fails with stop at index at.
func inOrder(t *testing.T, name string, want func(i int) int, at int, stop error, emitted *int) func(i, v int) error {
	return func(i, v int) error {
		if i != *emitted || v != want(i) {
			t.Errorf("%s: emit(%d, %d) after %d emitted", name, i, v, *emitted)
		}
		*emitted++
		if i == at {
			return stop
		}
		return nil
	}
}

// BenchmarkCeiling is work that divides perfectly: checksums of a buffer
// that stays in the core's cache, in 64 jobs over GOMAXPROCS goroutines,
// with no I/O and nothing handed between them. Its time at GOMAXPROCS=1
// over its time at 2 is the most a second core can give on the machine, at
// the moment: scripts/bench.sh sets the deep reads' speed-ups beside it.
// One op is about as much CPU as a deep dump of the bench's small-batch
// partitions.
func BenchmarkCeiling(b *testing.B) {
	const jobs, calls = 64, 100000
	buf := make([]byte, 2048)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	tab := crc32.MakeTable(crc32.Castagnoli)
	b.SetBytes(jobs * calls * int64(len(buf)))
	for b.Loop() {
		var sum atomic.Uint32
		Each(jobs, runtime.GOMAXPROCS(0), func(int) error {
			var c uint32
			for range calls {
				c = crc32.Update(c, tab, buf)
			}
			sum.Add(c)
			return nil
		})
		if sum.Load() == 0 {
			b.Fatal("no work done")
		}
	}
}
