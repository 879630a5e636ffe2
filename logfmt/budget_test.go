package logfmt

import (
	"bytes"
	"sync"
	"testing"
	"time"

	"github.com/logtool/logtool/internal/parallel"
)

// TestBudgetWaits: a job that holds nothing and is not the earliest waits
// while the others hold more than the budget; the earliest, and a job that
// holds, never wait.
func TestBudgetWaits(t *testing.T) {
	b := NewBudget(8)
	first, second, third := b.Start(0), b.Start(1), b.Start(2)
	second.acquire(8)
	first.acquire(100) // the earliest
	second.acquire(100)
	took := make(chan struct{})
	go func() {
		third.acquire(1)
		close(took)
	}()
	select {
	case <-took:
		t.Fatal("a job holding nothing took memory while the others held 208 bytes of a budget of 8")
	case <-time.After(50 * time.Millisecond):
	}
	first.Done()
	second.release(100)
	select {
	case <-took:
		t.Fatal("took memory while the others held 8 bytes, more than the budget less 1")
	case <-time.After(50 * time.Millisecond):
	}
	second.release(8)
	<-took
	third.Done()
	second.Done()
	// A reader closed after its job ended gives back nothing twice.
	third.release(1)
	if b.held != 0 || len(b.running) != 0 {
		t.Fatalf("after every job: %d bytes held, %d jobs", b.held, len(b.running))
	}
}

// TestBudgetManyJobsFinish runs many jobs on 8 workers, each reading a
// segment of entries larger than the budget with two readers that feed
// one another (the second reads an entry once the first has), and each
// waiting, still holding, for the job before it to end, as a command
// writes its jobs' output in order. They all finish, and only one job at a
// time holds entries.
func TestBudgetManyJobsFinish(t *testing.T) {
	const entries, size = 3, 3 << 20
	var seg []byte
	for i := range entries {
		var err error
		if seg, err = AppendBatch(seg, DefaultBatchOptions(int64(i)), []Record{{Offset: int64(i), Value: make([]byte, size)}}); err != nil {
			t.Fatal(err)
		}
	}
	b := NewBudget(size)
	const n = 24
	ended := make([]chan struct{}, n)
	for i := range ended {
		ended[i] = make(chan struct{})
	}
	var (
		mu   sync.Mutex
		most int // jobs holding entries at once
	)
	done := make(chan error, 1)
	go func() {
		done <- parallel.Each(n, 8, func(i int) error {
			job := b.Start(int64(i))
			defer close(ended[i])
			defer job.Done()
			first := NewSegmentReader(bytes.NewReader(seg), int64(len(seg)), "seg")
			second := NewSegmentReader(bytes.NewReader(seg), int64(len(seg)), "seg", ReadAheadWindows)
			defer second.Close()
			first.Job, second.Job = job, job
			fed := make(chan struct{})
			go func() {
				defer close(fed)
				for first.Next() {
					fed <- struct{}{}
				}
			}()
			for range fed {
				if !second.Next() {
					t.Errorf("job %d: second reader stopped: %v", i, second.Err())
				}
				b.mu.Lock()
				holders := 0
				for _, r := range b.running {
					if r.held > 0 {
						holders++
					}
				}
				b.mu.Unlock()
				mu.Lock()
				most = max(most, holders)
				mu.Unlock()
			}
			first.Close()
			if i > 0 {
				<-ended[i-1]
			}
			return first.Err()
		})
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("jobs still waiting after a minute")
	}
	if b.held != 0 {
		t.Errorf("%d bytes held after every job", b.held)
	}
	if most != 1 {
		t.Errorf("%d jobs held entries larger than the budget at once, want 1", most)
	}
}
