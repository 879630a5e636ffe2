package replicas

// SetMaxFrame bounds digest frames for a test, so that a fuzzed length
// costs little to read; it returns the function that restores the bound.
func SetMaxFrame(n uint64) func() {
	old := maxFrame
	maxFrame = n
	return func() { maxFrame = old }
}

// SetJobBytes sets which partitions a digest makes on its workers (below
// stream bytes of .log) and the frames such a job may hold, so that a test
// takes every path on small logs; it returns the function that restores them.
func SetJobBytes(stream int64, frames int) func() {
	s, f := streamBytes, jobFrameBytes
	streamBytes, jobFrameBytes = stream, frames
	return func() { streamBytes, jobFrameBytes = s, f }
}

// SetBlockShift sets the blocks that cut a digest's batches into frames, so
// that a test can have ranges begin at a block's first batch as well as
// within a block; it returns the function that restores it.
func SetBlockShift(n int) func() {
	old := blockShift
	blockShift = n
	return func() { blockShift = old }
}

// SetSyncBytes sets how much of a digest is written between the fsyncs
// started behind it, so that a small digest crosses several; it returns the
// function that restores it.
func SetSyncBytes(n int64) func() {
	old := syncBytes
	syncBytes = n
	return func() { syncBytes = old }
}
