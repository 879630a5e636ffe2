package replicas

// SetMaxFrame bounds digest frames for a test, so that a fuzzed length
// costs little to read; it returns the function that restores the bound.
func SetMaxFrame(n uint64) func() {
	old := maxFrame
	maxFrame = n
	return func() { maxFrame = old }
}
