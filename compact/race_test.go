//go:build race

package compact

// The race detector makes sync.Pool drop what it is given, so allocation
// counts mean nothing under it.
const raceOn = true
