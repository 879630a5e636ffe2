package compact

import (
	"errors"
	"fmt"
	"testing"
)

// TestKeyMap holds a KeyMap to a Go map through its growth, and to its
// limit.
func TestKeyMap(t *testing.T) {
	k, err := NewKeyMap(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	start := k.Bytes()
	want := map[string]int64{}
	for i := range 30_000 {
		key := fmt.Sprint("key-", i%20_000)
		h := k.Hash([]byte(key))
		prev, had, err := k.Put(h, int64(i))
		if err != nil {
			t.Fatalf("put %d: %v", i, err)
		}
		if w, ok := want[key]; had != ok || had && prev != w {
			t.Fatalf("put %s: previous %d %v, want %d %v", key, prev, had, w, ok)
		}
		want[key] = int64(i)
	}
	if k.Len() != len(want) || k.Bytes() <= start || k.Bytes() > 1<<20 {
		t.Fatalf("%d keys in %d bytes (from %d); want %d keys within 1 MiB", k.Len(), k.Bytes(), start, len(want))
	}
	for key, v := range want {
		if got, ok := k.Get(k.Hash([]byte(key))); !ok || got != v {
			t.Fatalf("get %s = %d %v, want %d", key, got, ok, v)
		}
	}
	if _, ok := k.Get(k.Hash([]byte("absent"))); ok {
		t.Error("an absent key is present")
	}
	n := 0
	for h, v := range k.All() {
		if got, _ := k.Get(h); got != v {
			t.Fatalf("All yields %d, Get says %d", v, got)
		}
		n++
	}
	if n != len(want) {
		t.Errorf("All yields %d keys, want %d", n, len(want))
	}

	// At the limit, a new key fails and changes nothing; known keys still
	// take new values.
	small, _ := NewKeyMap(2 * keyMapSlots * bytesPerEntry)
	var full error
	i := 0
	for ; full == nil; i++ {
		_, _, full = small.Put(small.Hash(fmt.Appendf(nil, "k%d", i)), 1)
	}
	if !errors.Is(full, ErrKeyMapFull) || small.Len() != i-1 {
		t.Fatalf("at %d keys: %v, %d keys kept", i, full, small.Len())
	}
	if _, had, err := small.Put(small.Hash([]byte("k0")), 7); err != nil || !had {
		t.Errorf("a known key in a full map: %v %v", had, err)
	}
	if _, _, err := small.Put(small.Hash([]byte("k0")), -1); err == nil {
		t.Error("a negative value is taken")
	}
}

// TestKeyMapHashWhilePut: workers hash keys while the map grows under
// another goroutine's Puts, as grep's key pass does (run with -race).
func TestKeyMapHashWhilePut(t *testing.T) {
	k, err := NewKeyMap(64 << 20)
	if err != nil {
		t.Fatal(err)
	}
	want := k.Hash([]byte("key-7"))
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 20_000 {
			if got := k.Hash(fmt.Appendf(nil, "key-%d", i%10)); i%10 == 7 && got != want {
				t.Errorf("Hash changed while the map grew")
				return
			}
		}
	}()
	for i := range 50_000 {
		if _, _, err := k.Put(k.Hash(fmt.Appendf(nil, "k%d", i)), 1); err != nil {
			t.Fatal(err)
		}
	}
	<-done
}
