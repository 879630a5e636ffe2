package compact

import (
	"errors"
	"fmt"
	"hash/maphash"
	"iter"
	"math"
)

// KeyMap is the cleaner's offset map lent to other readers of a partition
// that ask, key by key, where its versions are (grep): the same 128-bit key
// digests in the same 24-byte slots, holding a value of the caller's per
// key rather than an offset. Where the cleaner's map has the fixed size
// Kafka's arithmetic gives it, a KeyMap starts small and doubles as keys
// arrive, up to a limit, so that a map of a few keys stays a few pages.
//
// Hash may be called from any number of goroutines at once, also while one
// other goroutine calls Put; Get and All only while none does.
type KeyMap struct {
	m     *offsetMap
	limit int64 // bytes the slots may take
	// The seeds of m, which grow replaces: Hash reads only these.
	seed1, seed2 maphash.Seed
}

// KeyHash is a key's digest.
type KeyHash struct{ h1, h2 uint64 }

// ErrKeyMapFull is returned by Put when another key would take the map past
// its limit.
var ErrKeyMapFull = errors.New("the key map is full")

// MaxKeyValue is the largest value a KeyMap holds.
const MaxKeyValue = math.MaxInt64 - 1

// keyMapSlots is the size a KeyMap starts at: a page's worth of the
// smallest maps, which most lookups of a few keys need.
const keyMapSlots = 1 << 10

// NewKeyMap returns an empty map whose slots may take up to limit bytes.
func NewKeyMap(limit int64) (*KeyMap, error) {
	if _, err := mapSlots(limit); err != nil {
		return nil, err
	}
	m, err := newOffsetMap(min(limit, keyMapSlots*bytesPerEntry), 0)
	if err != nil {
		return nil, err
	}
	return &KeyMap{m: m, limit: limit, seed1: m.seed1, seed2: m.seed2}, nil
}

// Hash is the digest of key.
func (k *KeyMap) Hash(key []byte) KeyHash {
	return KeyHash{maphash.Bytes(k.seed1, key), maphash.Bytes(k.seed2, key)}
}

// Len is the number of keys in the map.
func (k *KeyMap) Len() int { return k.m.n }

// Bytes is the memory the slots take.
func (k *KeyMap) Bytes() int64 { return int64(len(k.m.slots)) * bytesPerEntry }

// Get returns the value of a key; ok is false when it is absent.
func (k *KeyMap) Get(h KeyHash) (v int64, ok bool) {
	e := k.m.find(h.h1, h.h2)
	return e.off1 - 1, e.off1 != 0
}

// Put sets the value of a key, v in [0, MaxKeyValue], and returns the one
// it replaced, if any. It fails with ErrKeyMapFull, changing nothing, when
// a new key would need more room than the limit allows.
func (k *KeyMap) Put(h KeyHash, v int64) (prev int64, had bool, err error) {
	if v < 0 || v > MaxKeyValue {
		return 0, false, fmt.Errorf("key map value %d out of range", v)
	}
	e := k.m.find(h.h1, h.h2)
	if e.off1 == 0 && k.m.full() {
		if err := k.grow(); err != nil {
			return 0, false, err
		}
		e = k.m.find(h.h1, h.h2)
	}
	prev, had = e.off1-1, e.off1 != 0
	if !had {
		e.h1, e.h2 = h.h1, h.h2
		k.m.n++
	}
	e.off1 = v + 1
	return prev, had, nil
}

// grow doubles the slots, moving every entry by its digest.
func (k *KeyMap) grow() error {
	old := k.m
	n := int64(len(old.slots)) * 2
	if n*bytesPerEntry > k.limit {
		return fmt.Errorf("%w: %d keys take the %d bytes allowed", ErrKeyMapFull, old.n, k.limit)
	}
	limit := int(float64(n) * loadFactor)
	m := &offsetMap{seed1: old.seed1, seed2: old.seed2, slots: make([]mapEntry, n), limit: limit, room: limit, maxSlots: int(n), latest: -1}
	m.rehash(old.slots)
	m.n = old.n
	k.m = m
	return nil
}

// All yields every key and its value, in no particular order.
func (k *KeyMap) All() iter.Seq2[KeyHash, int64] {
	return func(yield func(KeyHash, int64) bool) {
		for i := range k.m.slots {
			if e := &k.m.slots[i]; e.off1 != 0 && !yield(KeyHash{e.h1, e.h2}, e.off1-1) {
				return
			}
		}
	}
}
