package retention

import (
	"github.com/logtool/logtool/logfmt"
	"github.com/logtool/logtool/logfmt/checkpoint"
)

// loadEpochs builds the epoch list a broker holds after reading a
// leader-epoch-checkpoint: LeaderEpochFileCache feeds each line to assign,
// which skips an entry that repeats the latest epoch at a later offset and
// first drops every later entry that the new one contradicts (an epoch or a
// start offset not below it). Kafka refuses negative values, and so does
// this.
func loadEpochs(lines []checkpoint.EpochEntry, file string) ([]checkpoint.EpochEntry, error) {
	var epochs []checkpoint.EpochEntry
	for i, e := range lines {
		if e.Epoch < 0 || e.StartOffset < 0 {
			return nil, logfmt.Corruptf(file, -1, "entry %d (epoch %d, start offset %d) is negative, which Kafka refuses to load",
				i+1, e.Epoch, e.StartOffset)
		}
		if n := len(epochs); n > 0 && e.Epoch == epochs[n-1].Epoch && e.StartOffset >= epochs[n-1].StartOffset {
			continue
		}
		for n := len(epochs); n > 0 && (epochs[n-1].Epoch >= e.Epoch || epochs[n-1].StartOffset >= e.StartOffset); n-- {
			epochs = epochs[:n-1]
		}
		epochs = append(epochs, e)
	}
	return epochs, nil
}

// truncateFromStart is LeaderEpochFileCache.truncateFromStart: the entries
// starting at or below start are removed, and the last of them comes back
// with start as its start offset, since its epoch still covers the new
// first offset. It reports whether anything was removed, which is when
// Kafka writes the file again.
func truncateFromStart(epochs []checkpoint.EpochEntry, start int64) ([]checkpoint.EpochEntry, bool) {
	n := 0
	for n < len(epochs) && epochs[n].StartOffset <= start {
		n++
	}
	if n == 0 {
		return epochs, false
	}
	out := make([]checkpoint.EpochEntry, 0, len(epochs)-n+1)
	out = append(out, checkpoint.EpochEntry{Epoch: epochs[n-1].Epoch, StartOffset: start})
	return append(out, epochs[n:]...), true
}
