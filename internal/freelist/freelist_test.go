package freelist

import (
	"sync"
	"testing"
)

func TestList(t *testing.T) {
	l := List[*int]{Max: 2}
	if _, ok := l.Get(); ok {
		t.Fatal("an empty list gave a value")
	}
	a, b, c := new(int), new(int), new(int)
	l.Put(a)
	l.Put(b)
	l.Put(c) // past Max: dropped
	for _, want := range []*int{b, a} {
		if got, ok := l.Get(); !ok || got != want {
			t.Fatalf("Get = %p, %v; want %p", got, ok, want)
		}
	}
	if _, ok := l.Get(); ok {
		t.Fatal("the value past Max was kept")
	}
}

// Each value is given to one getter at a time (run with -race).
func TestListConcurrent(t *testing.T) {
	l := List[*int]{Max: 4}
	for range 4 {
		l.Put(new(int))
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				if v, ok := l.Get(); ok {
					*v++
					l.Put(v)
				}
			}
		})
	}
	wg.Wait()
}
