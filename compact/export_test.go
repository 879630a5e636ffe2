package compact

import (
	"math"
	"testing"
)

// put records offset as the latest for key, and as the map's latest offset.
func (m *offsetMap) put(key []byte, offset int64) {
	h1, h2 := m.hash(key)
	m.putHashed(h1, h2, offset)
}

// newTestMap is newOffsetMap for a test, freed when it ends.
func newTestMap(tb testing.TB, memory int64) *offsetMap {
	tb.Helper()
	m, err := newOffsetMap(memory, math.MaxInt64) // whole: put does not grow it
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(m.release)
	return m
}

// Compact plans and, unless o.DryRun, compacts the partition directory dir,
// one job as Run does it, without Run's workers and progress: the tests'
// entry point. On error the result, when not nil, has Result.Error set.
func Compact(dir string, o Options) (*Result, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	c := &cleaner{o: &o}
	defer c.freeMap()
	return c.compact(dir)
}
