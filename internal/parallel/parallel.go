// Package parallel is logtool's one worker pool: partitions (or any other
// independent jobs) are processed by at most --workers goroutines, started in
// input order, and their results are used in input order.
//
// Starting jobs in input order is what lets a caller stream the output of job
// i while later jobs run: job i has always been taken by a worker before any
// job after it.
package parallel

import "sync"

// Workers is the number of goroutines a run of n jobs with the --workers
// value w uses: w, but no more than there are jobs, and at least one. Work
// that is itself parallel inside a job divides the machine by it, so that
// jobs × inner workers stays within the cores.
func Workers(w, n int) int { return max(1, min(w, n)) }

// PerJob is how many goroutines each of the Workers(w, n) jobs running at
// once may use inside it (logfmt.DeepReader's batch workers): w shared out
// among them, at least one.
func PerJob(w, n int) int { return max(1, w/Workers(w, n)) }

// Each calls f(0), ..., f(n-1) on Workers(w, n) goroutines, taking the jobs in
// index order, and waits for them. Once a call returns an error no new call
// starts (a failing disk is not handed the rest of the batch), and Each
// returns the error of the lowest index that failed. Callers whose jobs fail
// independently record the failure in the job's result and return nil.
func Each(n, w int, f func(i int) error) error {
	if n <= 0 {
		return nil
	}
	var (
		mu     sync.Mutex
		next   int
		failed = n // lowest failed index
		errs   = make(map[int]error)
		wg     sync.WaitGroup
	)
	take := func() (int, bool) {
		mu.Lock()
		defer mu.Unlock()
		if next >= n || len(errs) > 0 {
			return 0, false
		}
		next++
		return next - 1, true
	}
	for range Workers(w, n) {
		wg.Go(func() {
			for {
				i, ok := take()
				if !ok {
					return
				}
				if err := f(i); err != nil {
					mu.Lock()
					errs[i] = err
					failed = min(failed, i)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return errs[failed]
}

// Ordered calls f(0), ..., f(n-1) on Workers(w, n) goroutines and hands each
// result to emit in index order, on the calling goroutine, as soon as it and
// every result before it are in. When emit fails no new job starts, and
// Ordered returns that error once the jobs already running have finished.
// A job starts only while fewer than ahead(w, n) results wait to be emitted,
// so a slow emit (a reader of the output that stopped reading) holds the
// workers back instead of letting them fill memory with results.
func Ordered[T any](n, w int, f func(i int) T, emit func(i int, v T) error) error {
	if n <= 0 {
		return nil
	}
	i := 0
	next := func() (int, bool) {
		i++
		return i - 1, i <= n
	}
	return Stream(Workers(w, n), next, f, emit)
}

// Stream is Ordered over jobs found as the work goes: next, called on one
// goroutine, gives them out in order until it returns false, and may block
// until the next is found. The i given to emit counts the jobs from 0.
// Once emit fails Stream stops calling next (a call already under way may
// still give a job, which is dropped), and returns when the jobs running
// and that call have finished.
func Stream[J, T any](w int, next func() (J, bool), f func(J) T, emit func(i int, v T) error) error {
	w = max(1, w)
	// Job i+k starts only once job i is emitted (k = ahead), so k result
	// slots, reused in turn, are enough: memory does not grow with the jobs.
	k := ahead(w, w)
	done := make([]chan T, k)
	for i := range done {
		done[i] = make(chan T, 1)
	}
	type job struct {
		i int
		j J
	}
	quit := make(chan struct{})
	jobs := make(chan job)
	slots := make(chan struct{}, k)
	total := make(chan int, 1) // the number of jobs, once next has said
	var wg sync.WaitGroup
	for range w {
		wg.Go(func() {
			for j := range jobs {
				done[j.i%k] <- f(j.j)
			}
		})
	}
	go func() {
		defer close(jobs)
		for i := 0; ; i++ {
			select {
			case slots <- struct{}{}:
			case <-quit:
				return
			}
			select {
			case <-quit:
				return
			default:
			}
			j, ok := next()
			if !ok {
				total <- i
				return
			}
			select {
			case <-quit:
				return
			default:
			}
			select {
			case jobs <- job{i, j}:
			case <-quit:
				return
			}
		}
	}()
	var err error
	n := -1
	for i := 0; n < 0 || i < n; i++ {
		var v T
		select {
		case v = <-done[i%k]:
		case n = <-total:
			if i >= n {
				continue
			}
			v = <-done[i%k]
		}
		if err = emit(i, v); err != nil {
			break
		}
		<-slots
	}
	close(quit)
	// The buffered channels let workers busy with a job nobody waits for
	// finish it.
	wg.Wait()
	return err
}

// ahead is how many jobs of Ordered may be started and not yet emitted:
// enough that every worker has one and the next waits, ready, for the
// emitter.
func ahead(w, n int) int { return 2 * Workers(w, n) }
