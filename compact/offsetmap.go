package compact

import (
	"hash/maphash"
	"math"
	"math/bits"

	"github.com/logtool/logtool/internal/fielderr"
	"github.com/logtool/logtool/internal/hugemem"
)

// offsetMap is the cleaner's key → latest offset map, sized the way Kafka's
// SkimpyOffsetMap is: every entry takes 24 bytes (a 16-byte key digest and an
// 8-byte offset), the map has memory/24 slots, and it counts as full once it
// holds 90% of them (log.cleaner.io.buffer.load.factor). Keeping Kafka's
// arithmetic keeps the pass boundaries of a partial clean where Kafka has
// them.
//
// The digest is two independently seeded 64-bit maphashes rather than MD5:
// it is about twenty times faster, and like MD5 it is 128 bits wide, so two
// keys merge only with a probability near 2^-128 per pair. The seeds are
// random per process; nothing derived from them is written to disk.
//
// Collisions of slots are resolved by linear probing. An entry whose stored
// offset is 0 is empty, so offsets are kept plus one.
//
// The slots are allocated for the keys a pass can meet, and grow up to the
// memory's when there are more, so that a small partition does not pay for
// a map sized for a large one while the map fills, and so ends a pass,
// exactly where Kafka's does.
type offsetMap struct {
	seed1, seed2 maphash.Seed
	slots        []mapEntry
	limit        int // entries at which the map is full: 90% of the slots its memory gives
	room         int // entries at which the slots grow: limit once they are all there
	maxSlots     int // the slots of its memory
	n            int
	latest       int64 // the latest offset put or skipped to, -1 when none
	touched      int64 // sink of touch, so the compiler keeps its loads
	free         func()
}

type mapEntry struct {
	h1, h2 uint64
	off1   int64 // offset + 1; 0 marks an empty slot
}

// bytesPerEntry is SkimpyOffsetMap's hashSize (MD5, 16) + 8.
const bytesPerEntry = 24

// loadFactor is log.cleaner.io.buffer.load.factor's default.
const loadFactor = 0.9

// mapSlots is the number of slots memory bytes give, checked the way
// Kafka's Cleaner asserts that a map can hold at least one key.
func mapSlots(memory int64) (int64, error) {
	slots := memory / bytesPerEntry
	if float64(slots)*loadFactor <= 1 {
		return 0, fielderr.New("OffsetMapMemory", "%d bytes are too few to hold a single key (%d bytes per key at %.0f%% load)",
			memory, bytesPerEntry, loadFactor*100)
	}
	if slots > math.MaxInt32 {
		// SkimpyOffsetMap's slots are an int; Kafka caps the memory likewise.
		slots = math.MaxInt32
	}
	return slots, nil
}

// newOffsetMap returns a map using at most memory bytes, with slots for
// keys keys to start with.
func newOffsetMap(memory, keys int64) (*offsetMap, error) {
	slots, err := mapSlots(memory)
	if err != nil {
		return nil, err
	}
	m := &offsetMap{seed1: maphash.MakeSeed(), seed2: maphash.MakeSeed(), limit: int(float64(slots) * loadFactor),
		maxSlots: int(slots), latest: -1}
	m.allocate(slotsFor(keys, int(slots)))
	return m, nil
}

// slotsFor is how many slots hold keys keys under the load factor, at
// least a page's worth and at most maxSlots.
func slotsFor(keys int64, maxSlots int) int {
	if keys >= int64(maxSlots) {
		return maxSlots
	}
	return min(max(int(float64(keys+1)/loadFactor)+1, keyMapSlots), maxSlots)
}

// allocate gives the map n empty slots.
func (m *offsetMap) allocate(n int) {
	// Probed at random, the slots get memory of their own, in huge pages
	// where the kernel has them: a dry run on the bench partition took a
	// quarter less time.
	m.slots, m.free = hugemem.Slice[mapEntry](n)
	m.room = m.limit
	if n < m.maxSlots {
		m.room = int(float64(n) * loadFactor)
	}
}

// grow doubles the slots, up to those of the map's memory, moving every
// entry by its digest.
func (m *offsetMap) grow() {
	old, free := m.slots, m.free
	m.allocate(min(2*len(old), m.maxSlots))
	m.rehash(old)
	free()
}

// rehash puts the entries of old, which are none of the map's, in its slots.
func (m *offsetMap) rehash(old []mapEntry) {
	for i := range old {
		if e := &old[i]; e.off1 != 0 {
			*m.find(e.h1, e.h2) = *e
		}
	}
}

// release frees the slots; the map must not be used after.
func (m *offsetMap) release() {
	m.slots = nil
	if m.free != nil {
		m.free()
	}
}

// reset empties the map for a new pass.
func (m *offsetMap) reset() {
	// Slots are only written together with n++, so an unused map is still
	// zero: skipping the clear keeps its pages untouched.
	if m.n > 0 {
		clear(m.slots)
	}
	m.n, m.latest = 0, -1
}

// full reports whether another new key would exceed the load factor.
// Kafka checks it before every put, also of a key already present.
func (m *offsetMap) full() bool { return m.n >= m.limit }

func (m *offsetMap) hash(key []byte) (uint64, uint64) {
	return maphash.Bytes(m.seed1, key), maphash.Bytes(m.seed2, key)
}

// home maps h onto [0, len(slots)) without a division.
func (m *offsetMap) home(h uint64) int {
	hi, _ := bits.Mul64(h, uint64(len(m.slots)))
	return int(hi)
}

// touch loads the home slots of hashes. Touching the slots of a run of keys
// before putting them lets their cache misses overlap instead of following
// one another: the map is far larger than any cache, and the misses are
// most of the cost of building it.
func (m *offsetMap) touch(hs []keyHash) {
	var sum int64
	for _, h := range hs {
		sum += m.slots[m.home(h.h1)].off1
	}
	m.touched += sum
}

// keyHash is a key's digest with the offset to put it at.
type keyHash struct {
	h1, h2 uint64
	offset int64
}

func (m *offsetMap) putHashed(h1, h2 uint64, offset int64) {
	e := m.find(h1, h2)
	if e.off1 == 0 {
		e.h1, e.h2 = h1, h2
		m.n++
	}
	e.off1 = offset + 1
	m.latest = offset
}

// find returns the slot holding the digest, or the empty slot where it
// would go. The map is never more than 90% full, so the probe meets an
// empty slot before it wraps around.
func (m *offsetMap) find(h1, h2 uint64) *mapEntry {
	i := m.home(h1)
	for {
		e := &m.slots[i]
		if e.off1 == 0 || e.h1 == h1 && e.h2 == h2 {
			return e
		}
		if i++; i == len(m.slots) {
			i = 0
		}
	}
}

// get returns the latest offset of key, or -1 when the key is absent.
func (m *offsetMap) get(key []byte) int64 {
	h1, h2 := m.hash(key)
	return m.find(h1, h2).off1 - 1
}

// maxOffsetSetBytes bounds the bitmap of an offsetSet; a pass over more
// offsets does without (looking each key up, parsing each batch).
const maxOffsetSetBytes = 8 << 20

// offsetSet is a bitmap of offsets in [base, end).
type offsetSet struct {
	base, end int64
	bits      []uint64
}

// newOffsetSet returns an empty set for [from, to), or a nil one (bits nil,
// covering nothing) when the range is empty or too large.
func newOffsetSet(from, to int64) offsetSet {
	n := to - from
	if n <= 0 || n > maxOffsetSetBytes*8 {
		return offsetSet{}
	}
	return offsetSet{base: from, end: to, bits: make([]uint64, (n+63)/64)}
}

// covers tells whether [from, to] lies in the set's range.
func (s offsetSet) covers(from, to int64) bool {
	return s.bits != nil && from >= s.base && to < s.end && from <= to
}

// add marks offset, when it is in range.
func (s offsetSet) add(offset int64) {
	if offset >= s.base && offset < s.end {
		o := offset - s.base
		s.bits[o/64] |= 1 << (o % 64)
	}
}

// has tells whether offset, which must be covered, is marked.
func (s offsetSet) has(offset int64) bool {
	o := offset - s.base
	return s.bits[o/64]&(1<<(o%64)) != 0
}

// count is how many offsets of [from, to], which must be covered, are
// marked.
func (s offsetSet) count(from, to int64) int {
	lo, hi := from-s.base, to-s.base
	n := 0
	for w := lo / 64; w <= hi/64; w++ {
		word := s.bits[w]
		if w == lo/64 {
			word &^= 1<<(lo%64) - 1
		}
		if w == hi/64 && hi%64 < 63 {
			word &= 1<<(hi%64+1) - 1
		}
		n += bits.OnesCount64(word)
	}
	return n
}

// latestSet marks the offsets in [from, to) that the map holds as the
// latest of their key. Every keyed record of the dirty range that the
// cleaner looks up was put in the map, so a record there is the latest of
// its key exactly when its offset is marked: the clean pass then reads a
// bitmap in offset order instead of probing the map at random, which is
// where a pass over a large log spends its time. The set is nil when the
// range is too large.
func (m *offsetMap) latestSet(from, to int64) offsetSet {
	if m.n == 0 {
		return offsetSet{}
	}
	ls := newOffsetSet(from, to)
	if ls.bits == nil {
		return ls
	}
	for i := range m.slots {
		ls.add(m.slots[i].off1 - 1)
	}
	return ls
}
