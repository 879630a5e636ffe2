package logfmt

import (
	"cmp"
	"slices"
	"sync"
)

// The entries larger than keptLarge that the jobs of a command hold
// (a job: one partition, or one unit of one, of a command's worker pool)
// share one budget, so that memory follows the largest entry rather than
// the number of workers: a job that holds nothing waits to read a large
// entry while the others hold more than the budget. Waiting is safe only
// for jobs that hold nothing, as the readers of one job feed one another
// (a job's readers share its Job, and a job that holds never waits), and
// only for jobs that no other job waits on: a command writes its jobs'
// output in order, so a later job may wait for an earlier one to be
// written, and the earliest job running never waits.

// budgetBytes is what the jobs that are not the earliest may hold in
// large entries at once (those over keptLarge, which Kafka's defaults
// never write): a few of some MiB, or the earliest job's alone when
// records are tens of MiB, so that the jobs' copies of what they hold
// (records, output) stay within a few of the largest record.
const budgetBytes = 8 << 20

// Budget is a byte budget shared by the jobs of a command.
type Budget struct {
	limit   int64
	mu      sync.Mutex
	cond    sync.Cond
	held    int64
	running []*Job // by order
}

// NewBudget returns a budget of limit bytes.
func NewBudget(limit int64) *Budget {
	b := &Budget{limit: limit}
	b.cond.L = &b.mu
	return b
}

// jobs is the process's budget: the goal it serves is the process's peak
// memory.
var jobs = NewBudget(budgetBytes)

// A Job holds large entries against a Budget; a nil Job holds them
// without one.
type Job struct {
	b     *Budget
	order int64
	held  int64
	done  bool
}

// StartJob registers a job of the process's budget. order is the job's
// place in the order its command writes the jobs' output (the pool's job
// index): the earliest job running never waits. Done must be called.
func StartJob(order int64) *Job { return jobs.Start(order) }

// Start registers a job; see StartJob.
func (b *Budget) Start(order int64) *Job {
	j := &Job{b: b, order: order}
	b.mu.Lock()
	i, _ := slices.BinarySearchFunc(b.running, order, func(r *Job, o int64) int { return cmp.Compare(r.order, o) })
	b.running = slices.Insert(b.running, i, j)
	b.mu.Unlock()
	return j
}

// Done ends the job; what it still holds is given back.
func (j *Job) Done() {
	if j == nil {
		return
	}
	b := j.b
	b.mu.Lock()
	b.running = slices.DeleteFunc(b.running, func(r *Job) bool { return r == j })
	b.held -= j.held
	j.held, j.done = 0, true
	b.cond.Broadcast()
	b.mu.Unlock()
}

// acquire takes n bytes, first waiting, when j holds nothing and is not
// the earliest job, until the others hold at most the budget less n.
func (j *Job) acquire(n int64) {
	if j == nil {
		return
	}
	b := j.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if j.done {
		// A reader that outlived its job: it holds against nothing.
		return
	}
	for j.held == 0 && b.running[0] != j && b.held+n > b.limit {
		b.cond.Wait()
	}
	j.held += n
	b.held += n
}

// release gives back n bytes acquired.
func (j *Job) release(n int64) {
	if j == nil {
		return
	}
	b := j.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if j.done {
		return
	}
	j.held -= n
	b.held -= n
	b.cond.Broadcast()
}
